//! The superblock pair at the start of the file.
//!
//! ```text
//! slot (4096 bytes, at offset 0 for even generations, 4096 for odd ones), little-endian:
//! +0    magic [8]        \x89 S D B \r \n \x1a \n
//! +8    version u32      1
//! +12   page size u32    4096
//! +16   generation u64
//! +24   flushed_seq u64
//! +32   next_segment_id u64
//! +40   manifest offset u64 | extent len u64 | byte len u64 | crc u32   (all 0 = none)
//! +68   WAL segment count u32 (≤ 167)
//! +72   count × { offset u64, len u64, id u64 }, oldest first
//! ...   zero
//! +4092 crc32 u32 of bytes 0..4092
//! ```

use super::Extent;
use super::Storage;
use super::format::{
    DATA_START, FORMAT_VERSION, MAGIC, MAX_WAL_SEGMENTS, MIN_FORMAT_VERSION, PAGE_SIZE,
    SLOT_OFFSETS, SLOT_SIZE, slot,
};
use crate::engine::{Error, Result, Seq};

/// A pointer to a checksummed structure inside the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtentRef {
    /// Where it lives.
    pub extent: Extent,
    /// Its exact length in bytes (≤ `extent.len`).
    pub len: u64,
    /// CRC32 of those bytes.
    pub crc: u32,
}

/// One WAL segment: an extent plus the unique id folded into the CRC of each of its records,
/// so records left in a reused extent by an earlier segment are never replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalSegmentRef {
    /// Where the segment lives.
    pub extent: Extent,
    /// The segment's unique id (strictly increasing over the file's life).
    pub id: u64,
}

/// The root of the file: which manifest and which WAL segments are live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superblock {
    /// Incremented on every superblock write; the valid slot with the highest one wins.
    pub generation: u64,
    /// The current manifest, if any SST/range tombstone has ever been flushed.
    pub manifest: Option<ExtentRef>,
    /// Live WAL segments, oldest first; replay starts in the first.
    pub wal_segments: Vec<WalSegmentRef>,
    /// Records with `seq <= flushed_seq` are already in SSTs and skipped on replay.
    pub flushed_seq: Seq,
    /// The next WAL segment id to hand out.
    pub next_segment_id: u64,
}

impl Superblock {
    /// Every extent this superblock references (manifest and WAL segments), for
    /// [`ExtentAllocator::rebuild`](super::ExtentAllocator::rebuild).
    #[must_use]
    pub fn extents(&self) -> Vec<Extent> {
        self.manifest
            .iter()
            .map(|m| m.extent)
            .chain(self.wal_segments.iter().map(|s| s.extent))
            .collect()
    }

    /// The slot bytes of this superblock, or `InvalidArgument` when it lists more WAL
    /// segments than a slot holds.
    pub fn encode(&self) -> Result<[u8; SLOT_SIZE]> {
        if self.wal_segments.len() > MAX_WAL_SEGMENTS {
            return Err(Error::InvalidArgument(format!(
                "a superblock lists at most {MAX_WAL_SEGMENTS} WAL segments, got {}",
                self.wal_segments.len()
            )));
        }
        let mut buf = [0u8; SLOT_SIZE];
        let mut w = SlotWriter { buf: &mut buf };
        w.put(slot::MAGIC, &MAGIC);
        w.put(slot::VERSION, &FORMAT_VERSION.to_le_bytes());
        w.put(slot::PAGE_SIZE, &(PAGE_SIZE as u32).to_le_bytes());
        w.put(slot::GENERATION, &self.generation.to_le_bytes());
        w.put(slot::FLUSHED_SEQ, &self.flushed_seq.to_le_bytes());
        w.put(slot::NEXT_SEGMENT_ID, &self.next_segment_id.to_le_bytes());
        if let Some(m) = self.manifest {
            w.put(slot::MANIFEST_OFFSET, &m.extent.offset.to_le_bytes());
            w.put(slot::MANIFEST_EXTENT_LEN, &m.extent.len.to_le_bytes());
            w.put(slot::MANIFEST_LEN, &m.len.to_le_bytes());
            w.put(slot::MANIFEST_CRC, &m.crc.to_le_bytes());
        }
        // The count fits: it was checked against MAX_WAL_SEGMENTS above.
        w.put(
            slot::WAL_COUNT,
            &(self.wal_segments.len() as u32).to_le_bytes(),
        );
        for (i, s) in self.wal_segments.iter().enumerate() {
            let at = slot::WAL_SEGMENTS + i * slot::WAL_ENTRY_LEN;
            w.put(at, &s.extent.offset.to_le_bytes());
            w.put(at + 8, &s.extent.len.to_le_bytes());
            w.put(at + 16, &s.id.to_le_bytes());
        }
        let crc = crc32fast::hash(buf.get(..slot::CRC).unwrap_or_default());
        SlotWriter { buf: &mut buf }.put(slot::CRC, &crc.to_le_bytes());
        Ok(buf)
    }

    /// Decodes the slot at file offset `base` (used only to name offsets in errors).
    pub fn decode(bytes: &[u8], base: u64) -> Result<Self, SlotError> {
        // An absent slot, or one whose first bytes are not (a prefix of) the magic, is foreign.
        let head = bytes.get(..MAGIC.len()).unwrap_or(bytes);
        if head.is_empty() || MAGIC.get(..head.len()) != Some(head) {
            return Err(SlotError::BadMagic);
        }
        if bytes.len() < SLOT_SIZE {
            return Err(SlotError::Invalid {
                offset: base + bytes.len() as u64,
                what: format!("slot is cut short at {} of {SLOT_SIZE} bytes", bytes.len()),
            });
        }
        let r = SlotReader { bytes, base };
        let stored_crc = r.u32(slot::CRC)?;
        let crc = crc32fast::hash(bytes.get(..slot::CRC).unwrap_or_default());
        if crc != stored_crc {
            return Err(SlotError::Invalid {
                offset: base,
                what: format!(
                    "slot crc mismatch (stored {stored_crc:#010x}, computed {crc:#010x})"
                ),
            });
        }
        let version = r.u32(slot::VERSION)?;
        if !(MIN_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(SlotError::Version(version));
        }
        let page_size = r.u32(slot::PAGE_SIZE)?;
        if u64::from(page_size) != PAGE_SIZE {
            return Err(r.invalid(
                slot::PAGE_SIZE,
                format!("page size {page_size}, expected {PAGE_SIZE}"),
            ));
        }
        let generation = r.u64(slot::GENERATION)?;
        let flushed_seq = r.u64(slot::FLUSHED_SEQ)?;
        let next_segment_id = r.u64(slot::NEXT_SEGMENT_ID)?;
        let manifest_extent = Extent {
            offset: r.u64(slot::MANIFEST_OFFSET)?,
            len: r.u64(slot::MANIFEST_EXTENT_LEN)?,
        };
        let manifest_len = r.u64(slot::MANIFEST_LEN)?;
        let manifest_crc = r.u32(slot::MANIFEST_CRC)?;
        let manifest = if manifest_extent.offset == 0 {
            if manifest_extent.len != 0 || manifest_len != 0 || manifest_crc != 0 {
                return Err(r.invalid(
                    slot::MANIFEST_OFFSET,
                    "manifest fields set without a manifest offset".into(),
                ));
            }
            None
        } else {
            if !manifest_extent.is_well_formed() || manifest_len > manifest_extent.len {
                return Err(r.invalid(
                    slot::MANIFEST_OFFSET,
                    format!(
                        "manifest {}+{} (len {manifest_len}) is not a valid extent",
                        manifest_extent.offset, manifest_extent.len
                    ),
                ));
            }
            Some(ExtentRef {
                extent: manifest_extent,
                len: manifest_len,
                crc: manifest_crc,
            })
        };
        let count = r.u32(slot::WAL_COUNT)? as usize;
        if count > MAX_WAL_SEGMENTS {
            return Err(r.invalid(
                slot::WAL_COUNT,
                format!("{count} WAL segments, at most {MAX_WAL_SEGMENTS} fit"),
            ));
        }
        let mut wal_segments = Vec::with_capacity(count);
        for i in 0..count {
            let at = slot::WAL_SEGMENTS + i * slot::WAL_ENTRY_LEN;
            let extent = Extent {
                offset: r.u64(at)?,
                len: r.u64(at + 8)?,
            };
            let id = r.u64(at + 16)?;
            if !extent.is_well_formed() {
                return Err(r.invalid(
                    at,
                    format!(
                        "WAL segment {i} at {}+{} is not a valid extent",
                        extent.offset, extent.len
                    ),
                ));
            }
            if id >= next_segment_id {
                return Err(r.invalid(
                    at + 16,
                    format!("WAL segment id {id} is not below next_segment_id {next_segment_id}"),
                ));
            }
            wal_segments.push(WalSegmentRef { extent, id });
        }
        let sb = Self {
            generation,
            manifest,
            wal_segments,
            flushed_seq,
            next_segment_id,
        };
        if extents_overlap(&sb.extents()) {
            return Err(r.invalid(slot::MANIFEST_OFFSET, "referenced extents overlap".into()));
        }
        Ok(sb)
    }
}

fn extents_overlap(extents: &[Extent]) -> bool {
    let mut sorted = extents.to_vec();
    sorted.sort_unstable();
    sorted
        .windows(2)
        .any(|w| matches!(w, [a, b] if a.end() > b.offset))
}

/// Why one slot was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotError {
    /// The magic bytes are not ours.
    BadMagic,
    /// Our magic, but a format version this build does not know.
    Version(u32),
    /// Our magic, but a bad checksum, a cut-short slot or an impossible field.
    Invalid {
        /// File offset of the bad field (or of the slot for a checksum mismatch).
        offset: u64,
        /// What was wrong.
        what: String,
    },
}

struct SlotWriter<'a> {
    buf: &'a mut [u8; SLOT_SIZE],
}

impl SlotWriter<'_> {
    /// Every `at` is a constant field offset well inside the slot.
    fn put(&mut self, at: usize, bytes: &[u8]) {
        if let Some(dst) = self.buf.get_mut(at..at + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }
}

struct SlotReader<'a> {
    bytes: &'a [u8],
    base: u64,
}

impl SlotReader<'_> {
    fn invalid(&self, at: usize, what: String) -> SlotError {
        SlotError::Invalid {
            offset: self.base + at as u64,
            what,
        }
    }
    fn array<const N: usize>(&self, at: usize) -> Result<[u8; N], SlotError> {
        self.bytes
            .get(at..at + N)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| self.invalid(at, format!("field of {N} bytes past the slot end")))
    }
    fn u32(&self, at: usize) -> Result<u32, SlotError> {
        self.array(at).map(u32::from_le_bytes)
    }
    fn u64(&self, at: usize) -> Result<u64, SlotError> {
        self.array(at).map(u64::from_le_bytes)
    }
}

/// Reads both slots and returns the valid one with the highest generation, or `Ok(None)` for
/// a file that holds no database yet: empty, or no longer than the superblock area and all
/// zeroes (a crash during creation, before the first superblock was synced).
///
/// With no valid slot: `NotADatabase` when neither slot carries our magic or a valid slot has
/// an unknown format version, else `Corruption` at the first bad slot's offending offset.
pub fn read_superblock(storage: &dyn Storage) -> Result<Option<Superblock>> {
    let file_len = storage.len().map_err(|source| Error::Io {
        op: "read file length",
        source,
    })?;
    if file_len == 0 {
        return Ok(None);
    }
    let area_len = usize::try_from(file_len.min(DATA_START)).unwrap_or(SLOT_SIZE * 2);
    let mut area = vec![0u8; area_len];
    storage
        .read_exact_at(&mut area, 0)
        .map_err(|source| Error::Io {
            op: "read superblocks",
            source,
        })?;
    if file_len <= DATA_START && area.iter().all(|&b| b == 0) {
        return Ok(None);
    }
    let results = SLOT_OFFSETS.map(|base| {
        let start = usize::try_from(base).unwrap_or(usize::MAX).min(area.len());
        let bytes = area.get(start..).unwrap_or_default();
        let bytes = bytes.get(..SLOT_SIZE).unwrap_or(bytes);
        Superblock::decode(bytes, base).and_then(|sb| {
            // A slot only ever holds generations of its own parity; anything else is stale or
            // misplaced data and must not win.
            if sb.generation % 2 == base / SLOT_SIZE as u64 {
                Ok(sb)
            } else {
                Err(SlotError::Invalid {
                    offset: base + slot::GENERATION as u64,
                    what: format!("generation {} stored in the wrong slot", sb.generation),
                })
            }
        })
    });
    if let Some(v) = results.iter().find_map(|r| match r {
        Err(SlotError::Version(v)) => Some(*v),
        _ => None,
    }) {
        return Err(Error::NotADatabase {
            path: storage.path().to_path_buf(),
            what: format!(
                "unsupported format version {v} (this build reads {MIN_FORMAT_VERSION} to {FORMAT_VERSION})"
            ),
        });
    }
    let best = results
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .max_by_key(|sb| sb.generation);
    if let Some(sb) = best {
        return Ok(Some(sb.clone()));
    }
    if results
        .iter()
        .all(|r| matches!(r, Err(SlotError::BadMagic)))
    {
        return Err(Error::NotADatabase {
            path: storage.path().to_path_buf(),
            what: "no superblock magic in either slot".into(),
        });
    }
    let (offset, what) = results
        .iter()
        .zip(["A", "B"])
        .find_map(|(r, name)| match r {
            Err(SlotError::Invalid { offset, what }) => {
                Some((*offset, format!("superblock slot {name}: {what}")))
            }
            _ => None,
        })
        .unwrap_or((0, "no valid superblock".into()));
    Err(Error::Corruption { offset, what })
}

/// Writes `sb` into slot `sb.generation % 2` (the caller syncs).
pub fn write_superblock(storage: &dyn Storage, sb: &Superblock) -> Result<()> {
    let bytes = sb.encode()?;
    let offset = SLOT_OFFSETS
        .get((sb.generation % 2) as usize)
        .copied()
        .unwrap_or_default();
    storage
        .write_all_at(&bytes, offset)
        .map_err(|source| Error::Io {
            op: "write superblock",
            source,
        })
}
