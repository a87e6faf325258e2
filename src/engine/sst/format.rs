//! Byte-level constants and small codecs of the SST format (see `docs/FORMAT.md`, "Sorted
//! tables"): varints, block handles, block trailers and the footer.
//!
//! ```text
//! SST image (one extent, `len` bytes):
//! +-------------+-----+-------------+-------+--------+-------+------------+--------+
//! | data blk 0  | ... | data blk n  | bloom | prefix | index | properties | footer |
//! +-------------+-----+-------------+-------+--------+-------+------------+--------+
//! every block = contents | compression type u8 | crc32(contents ++ type) u32 LE
//!
//! footer (FOOTER_LEN = 80 bytes):
//! bloom (offset u64, len u64) | prefix (offset u64, len u64) | index (offset u64, len u64)
//! | properties (offset u64, len u64) | format version u32 | magic u64 | crc32 u32
//! ```

use crate::engine::{Error, Result};

/// Magic number ending every SST footer ("strataSS" little-endian-ish tag).
pub const SST_MAGIC: u64 = 0x5353_6174_6172_7473;
/// Version of the SST layout written by this code: 2 added LZ4 data blocks (type 2).
pub const SST_FORMAT_VERSION: u32 = 2;
/// Oldest SST layout this code reads: version 1 is version 2 without LZ4 blocks.
pub const SST_MIN_FORMAT_VERSION: u32 = 1;
/// Size of one fixed-width block handle (offset u64, len u64) in the footer.
pub const HANDLE_LEN: usize = 16;
/// Number of block handles in the footer (bloom, prefix, index, properties).
pub const FOOTER_HANDLES: usize = 4;
/// Position of the format version in the footer.
pub const FOOTER_VERSION_POS: usize = FOOTER_HANDLES * HANDLE_LEN;
/// Position of the magic number in the footer.
pub const FOOTER_MAGIC_POS: usize = FOOTER_VERSION_POS + 4;
/// Position of the footer's CRC32.
pub const FOOTER_CRC_POS: usize = FOOTER_MAGIC_POS + 8;
/// Size of the fixed footer at the end of every SST.
pub const FOOTER_LEN: usize = FOOTER_CRC_POS + 4;
/// Size of the trailer after each block's contents: type byte + CRC32.
pub const BLOCK_TRAILER_LEN: usize = 1 + 4;
/// Trailer type byte: contents stored as they are.
pub const BLOCK_TYPE_RAW: u8 = 0;
/// Trailer type byte: contents = decoded length u32 LE ++ one zstd frame.
pub const BLOCK_TYPE_ZSTD: u8 = 1;
/// Trailer type byte: contents = decoded length u32 LE ++ one LZ4 block (no frame).
pub const BLOCK_TYPE_LZ4: u8 = 2;
/// Size of the decoded-length prefix of a compressed (zstd or LZ4) block.
pub const DECODED_LEN_PREFIX: usize = 4;
/// An LZ4 sequence of `n` input bytes expands to at most `255 * n` output bytes (a one-byte
/// match-length extension codes 255 more bytes); a larger declared length is corruption.
pub const LZ4_MAX_EXPANSION: usize = 255;
/// Largest decoded size a compressed block may declare; larger blocks are stored raw, so a
/// corrupt length can never make the reader allocate more than this.
pub const MAX_DECOMPRESSED_BLOCK: usize = 64 << 20;
/// A compressed form is kept only when it saves at least `1 / COMPRESSION_MIN_SAVING_DIV`.
pub const COMPRESSION_MIN_SAVING_DIV: usize = 8;
/// Acceleration of the LZ4 encoder (1 = the reference default): 2 skips ahead faster through
/// bytes that find no match, ~22 % less encoder CPU for ~0.3 % larger blocks on the bench's
/// values; the block format, and so the decoder, is the same whatever the acceleration.
pub const LZ4_ACCELERATION: i32 = 2;
/// Size of one restart offset and of the restart count at the end of a data block.
pub const RESTART_ENTRY_LEN: usize = 4;
/// Kind tag byte of an entry (see `ValueKind`).
pub const KIND_LEN: usize = 1;
/// Probes of a bloom filter are capped so a corrupt or absurd setting stays cheap.
pub const MAX_BLOOM_PROBES: u8 = 30;
/// Bloom filters are at most this many bits: a probe is mapped onto the bits by a 32-bit
/// multiply-shift.
pub const MAX_BLOOM_BITS: u64 = 1 << 32;
/// Probes per bit of a bloom filter, in percent: k = bits_per_key * ln 2 minimises the
/// false-positive rate.
pub const BLOOM_PROBES_PER_BIT_PERCENT: u64 = 69;
/// Expected size of a cached block, to size the block cache's tables up front.
pub const TYPICAL_BLOCK_BYTES: usize = 4096;
/// Bloom filters are at least this many bits so tiny SSTs still filter well.
pub const MIN_BLOOM_BITS: u64 = 64;
/// Bits per prefix of the partition-prefix filter when the whole-key bloom is disabled.
pub const DEFAULT_PREFIX_BITS_PER_KEY: usize = 10;
/// Seed of the bloom hash for whole keys (xxh3-64 with seed); part of the on-disk format.
pub const BLOOM_KEY_SEED: u64 = 0;
/// Seed of the bloom hash for partition prefixes; different from keys so the two filters are
/// independent.
pub const BLOOM_PREFIX_SEED: u64 = 0x7072_6566_6978;

/// Appends `v` as an LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes a varint at `*pos`, advancing it; `None` if truncated or longer than 10 bytes.
#[inline]
pub fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    // Lengths in blocks are almost always < 128: one byte, no loop.
    let first = *buf.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    get_varint_slow(buf, pos)
}

fn get_varint_slow(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut result = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if shift == 63 && b > 1 {
            return None;
        }
        result |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(result);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Reads a little-endian u32 at `pos`.
#[inline]
pub fn get_u32(buf: &[u8], pos: usize) -> Option<u32> {
    let bytes = buf.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

/// Reads a little-endian u64 at `pos`.
#[inline]
pub fn get_u64(buf: &[u8], pos: usize) -> Option<u64> {
    let bytes = buf.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// A Corruption error at `offset` (absolute in the file, or relative for `decode_block`).
pub fn corruption(offset: u64, what: impl Into<String>) -> Error {
    Error::Corruption {
        offset,
        what: what.into(),
    }
}

/// Where a block lives inside an SST: `offset` of its first byte and `len` including the
/// trailer. A zero `len` means "absent" (for optional filter blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset inside the SST.
    pub offset: u64,
    /// Stored length, trailer included.
    pub len: u64,
}

impl BlockHandle {
    /// Appends the fixed 16-byte form.
    pub fn put_fixed(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
    }

    /// One past the last byte, or `None` on overflow.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.len)
    }
}

/// The fixed-size tail of an SST pointing at its metadata blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footer {
    /// Whole-key bloom filter (len 0 = none).
    pub bloom: BlockHandle,
    /// Partition-prefix bloom filter (len 0 = none).
    pub prefix: BlockHandle,
    /// Index block.
    pub index: BlockHandle,
    /// Properties block.
    pub properties: BlockHandle,
}

impl Footer {
    /// Appends the `FOOTER_LEN`-byte encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        for h in [self.bloom, self.prefix, self.index, self.properties] {
            h.put_fixed(out);
        }
        out.extend_from_slice(&SST_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&SST_MAGIC.to_le_bytes());
        let crc = crc32fast::hash(out.get(start..).unwrap_or_default());
        out.extend_from_slice(&crc.to_le_bytes());
    }

    /// Decodes a footer from exactly `FOOTER_LEN` bytes found at absolute file `offset`.
    pub fn decode(buf: &[u8], offset: u64) -> Result<Self> {
        if buf.len() != FOOTER_LEN {
            return Err(corruption(offset, "SST footer truncated"));
        }
        let crc_pos = FOOTER_CRC_POS;
        let stored = get_u32(buf, crc_pos).ok_or_else(|| corruption(offset, "SST footer"))?;
        let body = buf.get(..crc_pos).unwrap_or_default();
        if crc32fast::hash(body) != stored {
            return Err(corruption(offset, "SST footer checksum mismatch"));
        }
        let magic = get_u64(buf, FOOTER_MAGIC_POS).unwrap_or_default();
        if magic != SST_MAGIC {
            return Err(corruption(
                offset,
                format!("SST footer magic {magic:#018x} is not {SST_MAGIC:#018x}"),
            ));
        }
        let version = get_u32(buf, FOOTER_VERSION_POS).unwrap_or_default();
        if !(SST_MIN_FORMAT_VERSION..=SST_FORMAT_VERSION).contains(&version) {
            return Err(corruption(
                offset,
                format!("unsupported SST format version {version}"),
            ));
        }
        let handle = |i: usize| BlockHandle {
            offset: get_u64(buf, i * HANDLE_LEN).unwrap_or_default(),
            len: get_u64(buf, i * HANDLE_LEN + 8).unwrap_or_default(),
        };
        Ok(Self {
            bloom: handle(0),
            prefix: handle(1),
            index: handle(2),
            properties: handle(3),
        })
    }
}

/// Appends the trailer (type byte + CRC32 over contents and type) of a block whose contents
/// start at `start` in `out`.
pub fn seal_block(out: &mut Vec<u8>, start: usize, block_type: u8) {
    out.push(block_type);
    let crc = crc32fast::hash(out.get(start..).unwrap_or_default());
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Checks the trailer of a stored block and returns (contents, type byte). `offset` is where
/// the block starts (for the error).
pub fn open_block(stored: &[u8], offset: u64) -> Result<(&[u8], u8)> {
    let Some(body_len) = stored.len().checked_sub(4) else {
        return Err(corruption(
            offset,
            format!(
                "block of {} bytes is shorter than its trailer",
                stored.len()
            ),
        ));
    };
    let (body, crc_bytes) = stored.split_at_checked(body_len).unwrap_or_default();
    let stored_crc = get_u32(crc_bytes, 0).unwrap_or_default();
    if crc32fast::hash(body) != stored_crc {
        return Err(corruption(offset, "block checksum mismatch"));
    }
    let Some((&block_type, contents)) = body.split_last() else {
        return Err(corruption(offset, "block has no type byte"));
    };
    Ok((contents, block_type))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn varint_roundtrips_boundaries() {
        for v in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            let mut pos = 0;
            assert_eq!(get_varint(&buf, &mut pos), Some(v));
            assert_eq!(pos, buf.len());
            for cut in 0..buf.len() {
                assert_eq!(get_varint(&buf[..cut], &mut 0), None, "{v} cut at {cut}");
            }
        }
    }

    #[test]
    fn varint_overlong_or_overflowing_is_rejected() {
        assert_eq!(get_varint(&[0xff; 11], &mut 0), None);
        // Ten bytes whose last carries more than the one bit left of a u64.
        let mut too_big = vec![0xff; 9];
        too_big.push(0x02);
        assert_eq!(get_varint(&too_big, &mut 0), None);
    }

    #[test]
    fn footer_of_version_1_is_read_and_of_version_3_is_rejected() {
        let mut buf = Vec::new();
        Footer::default().encode(&mut buf);
        for (version, ok) in [(1u32, true), (2, true), (0, false), (3, false)] {
            buf[FOOTER_VERSION_POS..FOOTER_VERSION_POS + 4].copy_from_slice(&version.to_le_bytes());
            let crc = crc32fast::hash(&buf[..FOOTER_CRC_POS]);
            buf[FOOTER_CRC_POS..].copy_from_slice(&crc.to_le_bytes());
            let decoded = Footer::decode(&buf, 0);
            assert_eq!(decoded.is_ok(), ok, "version {version}: {decoded:?}");
        }
    }

    #[test]
    fn footer_roundtrips_and_rejects_bad_magic() {
        let footer = Footer {
            bloom: BlockHandle { offset: 1, len: 2 },
            prefix: BlockHandle { offset: 3, len: 4 },
            index: BlockHandle { offset: 5, len: 6 },
            properties: BlockHandle { offset: 7, len: 8 },
        };
        let mut buf = Vec::new();
        footer.encode(&mut buf);
        assert_eq!(buf.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&buf, 0).unwrap(), footer);
        buf[70] ^= 1;
        let crc = crc32fast::hash(&buf[..FOOTER_LEN - 4]);
        buf[FOOTER_LEN - 4..].copy_from_slice(&crc.to_le_bytes());
        assert!(
            Footer::decode(&buf, 0)
                .unwrap_err()
                .to_string()
                .contains("magic")
        );
    }
}
