//! Total decoding of a manifest read from the file.

use super::{Manifest, SstMeta};
use crate::engine::file::{Extent, PAGE_SIZE};
use crate::engine::limits::{MANIFEST_MAGIC, MANIFEST_VERSION, MAX_KEY_BYTES, NUM_LEVELS};
use crate::engine::sst::SstProperties;
use crate::engine::{Error, RangeTombstone, Result};

/// Fixed bytes of one SST record (nine u64 and two key lengths), bounds the count a level may claim.
const SST_RECORD_MIN_BYTES: usize = 9 * 8 + 2 * 4;
/// Fixed bytes of one range tombstone record.
const TOMBSTONE_RECORD_MIN_BYTES: usize = 8 + 2 * 4;

/// Decodes the manifest `bytes` stored at file offset `file_offset`. Every failure is
/// `Error::Corruption` naming the file offset of the bad field.
pub fn decode_manifest(bytes: &[u8], file_offset: u64) -> Result<Manifest> {
    let corrupt = |pos: usize, what: String| Error::Corruption {
        offset: file_offset + pos as u64,
        what,
    };
    let Some(body_len) = bytes.len().checked_sub(4) else {
        return Err(corrupt(
            0,
            format!(
                "manifest of {} bytes is shorter than its checksum",
                bytes.len()
            ),
        ));
    };
    let (body, crc_bytes) = bytes.split_at(body_len);
    let stored = u32::from_le_bytes(
        crc_bytes
            .try_into()
            .map_err(|_| corrupt(body_len, "crc".to_owned()))?,
    );
    let actual = crc32fast::hash(body);
    if stored != actual {
        return Err(corrupt(
            body_len,
            format!("manifest checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"),
        ));
    }
    let mut r = Reader {
        bytes: body,
        pos: 0,
        file_offset,
    };
    let magic = r.u32("magic")?;
    if magic != MANIFEST_MAGIC {
        return Err(corrupt(0, format!("bad manifest magic {magic:#010x}")));
    }
    let version = r.u32("version")?;
    if version != MANIFEST_VERSION {
        return Err(corrupt(
            4,
            format!("unsupported manifest version {version}"),
        ));
    }
    let next_sst_id = r.u64("next_sst_id")?;
    let level_count = r.count("level count", 4)?;
    if level_count != NUM_LEVELS {
        return Err(r.error(format!(
            "manifest has {level_count} levels, expected {NUM_LEVELS}"
        )));
    }
    let mut levels = Vec::with_capacity(level_count);
    for _ in 0..level_count {
        let sst_count = r.count("sst count", SST_RECORD_MIN_BYTES)?;
        let mut level = Vec::with_capacity(sst_count);
        for _ in 0..sst_count {
            level.push(r.sst()?);
        }
        levels.push(level);
    }
    let tombstone_count = r.count("range tombstone count", TOMBSTONE_RECORD_MIN_BYTES)?;
    let mut range_tombstones = Vec::with_capacity(tombstone_count);
    for _ in 0..tombstone_count {
        let seq = r.u64("tombstone seq")?;
        let start = r.key("tombstone start")?;
        let end = r.key("tombstone end")?;
        range_tombstones.push(RangeTombstone { start, end, seq });
    }
    if r.pos != body.len() {
        return Err(r.error(format!("{} trailing bytes in manifest", body.len() - r.pos)));
    }
    Ok(Manifest {
        next_sst_id,
        levels,
        range_tombstones,
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    file_offset: u64,
}

impl<'a> Reader<'a> {
    fn error(&self, what: String) -> Error {
        Error::Corruption {
            offset: self.file_offset + self.pos as u64,
            what,
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let slice = self
            .pos
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.pos..end))
            .ok_or_else(|| {
                self.error(format!(
                    "manifest {what}: needs {n} bytes, {} left",
                    self.bytes.len().saturating_sub(self.pos)
                ))
            })?;
        self.pos += n;
        Ok(slice)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let mut buf = [0u8; 4];
        buf.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(buf))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(buf))
    }

    /// A count of records each at least `min_record` bytes long, checked against the bytes left.
    fn count(&mut self, what: &str, min_record: usize) -> Result<usize> {
        let count = self.u32(what)? as usize;
        let room = self.bytes.len().saturating_sub(self.pos) / min_record.max(1);
        if count > room {
            self.pos -= 4;
            return Err(self.error(format!(
                "manifest {what} {count} exceeds the {room} records that fit"
            )));
        }
        Ok(count)
    }

    fn key(&mut self, what: &str) -> Result<Vec<u8>> {
        let len = self.u32(what)? as usize;
        if len > MAX_KEY_BYTES {
            self.pos -= 4;
            return Err(self.error(format!(
                "manifest {what} length {len} exceeds {MAX_KEY_BYTES}"
            )));
        }
        Ok(self.take(len, what)?.to_vec())
    }

    fn sst(&mut self) -> Result<SstMeta> {
        let start = self.pos;
        let id = self.u64("sst id")?;
        let extent = Extent {
            offset: self.u64("sst offset")?,
            len: self.u64("sst extent length")?,
        };
        let len = self.u64("sst length")?;
        let min_seq = self.u64("sst min_seq")?;
        let max_seq = self.u64("sst max_seq")?;
        let entries = self.u64("sst entries")?;
        let tombstones = self.u64("sst tombstones")?;
        let raw_bytes = self.u64("sst raw_bytes")?;
        let min_key = self.key("sst min_key")?;
        let max_key = self.key("sst max_key")?;
        let valid = extent.offset.is_multiple_of(PAGE_SIZE)
            && extent.len.is_multiple_of(PAGE_SIZE)
            && extent.offset >= 2 * PAGE_SIZE
            && len > 0
            && len <= extent.len
            && extent.offset.checked_add(extent.len).is_some()
            && min_seq <= max_seq
            && min_key <= max_key;
        if !valid {
            self.pos = start;
            return Err(self.error(format!(
                "sst {id} record is inconsistent (extent {extent:?}, len {len})"
            )));
        }
        Ok(SstMeta {
            id,
            extent,
            len,
            props: SstProperties {
                min_key,
                max_key,
                min_seq,
                max_seq,
                entries,
                tombstones,
                raw_bytes,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    fn sample() -> Manifest {
        let mut manifest = Manifest {
            next_sst_id: 7,
            ..Manifest::default()
        };
        manifest.levels[0].push(SstMeta {
            id: 3,
            extent: Extent {
                offset: 8192,
                len: 8192,
            },
            len: 5000,
            props: SstProperties {
                min_key: b"a".to_vec(),
                max_key: b"z".to_vec(),
                min_seq: 1,
                max_seq: 9,
                entries: 4,
                tombstones: 1,
                raw_bytes: 40,
            },
        });
        manifest.range_tombstones.push(RangeTombstone {
            start: b"b".to_vec(),
            end: b"c".to_vec(),
            seq: 5,
        });
        manifest
    }

    #[test]
    fn manifest_encoding_round_trips() {
        let manifest = sample();
        assert_eq!(decode_manifest(&manifest.encode(), 0).unwrap(), manifest);
    }

    #[test]
    fn manifest_flipped_bit_anywhere_is_corruption_with_offset() {
        let bytes = sample().encode();
        for bit in 0..bytes.len() * 8 {
            let mut bad = bytes.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            match decode_manifest(&bad, 1 << 20) {
                Err(Error::Corruption { offset, .. }) => assert!(offset >= 1 << 20),
                other => panic!("bit {bit}: {other:?}"),
            }
        }
    }

    #[test]
    fn manifest_truncated_is_corruption() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            assert!(matches!(
                decode_manifest(&bytes[..cut], 0),
                Err(Error::Corruption { .. })
            ));
        }
    }
}
