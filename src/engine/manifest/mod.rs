//! The copy-on-write manifest: live SSTs per level and range tombstones.
//!
//! Written whole into a fresh extent on every flush or compaction; the superblock then points
//! at it (`ExtentRef` with its exact length and CRC). Layout (little-endian):
//!
//! ```text
//! +-------+---------+-------------+-------------+---------------------------+
//! | magic | version | next_sst_id | level_count | level * level_count       |
//! | u32   | u32     | u64         | u32         |                           |
//! +-------+---------+-------------+-------------+---------------------------+
//! level     := sst_count:u32 sst*
//! sst       := id:u64 offset:u64 extent_len:u64 len:u64 min_seq:u64 max_seq:u64
//!              entries:u64 tombstones:u64 raw_bytes:u64
//!              min_key_len:u32 min_key max_key_len:u32 max_key
//! trailer   := tombstone_count:u32 tombstone* crc:u32
//! tombstone := seq:u64 start_len:u32 start end_len:u32 end
//! ```
//!
//! `crc` is CRC32 of every byte before it.

mod decode;

pub use decode::decode_manifest;

use super::RangeTombstone;
use super::file::Extent;
use super::limits::{MANIFEST_MAGIC, MANIFEST_VERSION, NUM_LEVELS};
use super::sst::SstProperties;

/// What the manifest records about one live SST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstMeta {
    /// Unique id (keys its blocks in the block cache).
    pub id: u64,
    /// The extent holding it.
    pub extent: Extent,
    /// Exact length of the SST image.
    pub len: u64,
    /// Its properties.
    pub props: SstProperties,
}

/// The decoded manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The next SST id to hand out.
    pub next_sst_id: u64,
    /// SSTs per level; L0 newest first, deeper levels sorted by `min_key`, non-overlapping.
    pub levels: Vec<Vec<SstMeta>>,
    /// Range tombstones that may still delete entries of some SST.
    pub range_tombstones: Vec<RangeTombstone>,
}

impl Default for Manifest {
    fn default() -> Self {
        Self {
            next_sst_id: 1,
            levels: vec![Vec::new(); NUM_LEVELS],
            range_tombstones: Vec::new(),
        }
    }
}

impl Manifest {
    /// The encoded manifest.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MANIFEST_MAGIC.to_le_bytes());
        out.extend_from_slice(&MANIFEST_VERSION.to_le_bytes());
        out.extend_from_slice(&self.next_sst_id.to_le_bytes());
        put_u32(&mut out, self.levels.len());
        for level in &self.levels {
            put_u32(&mut out, level.len());
            for sst in level {
                for value in [
                    sst.id,
                    sst.extent.offset,
                    sst.extent.len,
                    sst.len,
                    sst.props.min_seq,
                    sst.props.max_seq,
                    sst.props.entries,
                    sst.props.tombstones,
                    sst.props.raw_bytes,
                ] {
                    out.extend_from_slice(&value.to_le_bytes());
                }
                put_bytes(&mut out, &sst.props.min_key);
                put_bytes(&mut out, &sst.props.max_key);
            }
        }
        put_u32(&mut out, self.range_tombstones.len());
        for tombstone in &self.range_tombstones {
            out.extend_from_slice(&tombstone.seq.to_le_bytes());
            put_bytes(&mut out, &tombstone.start);
            put_bytes(&mut out, &tombstone.end);
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Every SST of every level.
    pub fn ssts(&self) -> impl Iterator<Item = &SstMeta> {
        self.levels.iter().flatten()
    }
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    // Counts and key lengths are bounded far below u32::MAX by the engine limits.
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len());
    out.extend_from_slice(bytes);
}
