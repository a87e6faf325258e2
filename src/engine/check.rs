//! The full integrity check of a database file.

use std::sync::Arc;

use super::batch::decode_ops;
use super::file::{ExtentAllocator, Storage, read_superblock};
use super::inner::io;
use super::recovery::load_manifest;
use super::sst::{BlockCache, SstReader};
use super::wal::replay;
use super::{Error, Result};

/// Block cache used by the check (blocks are read once).
const CHECK_CACHE_BYTES: usize = 1 << 20;

/// What a successful check covered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Generation of the superblock in force.
    pub generation: u64,
    /// SSTs verified.
    pub ssts: usize,
    /// Entries read from them.
    pub entries: u64,
    /// WAL records replayed.
    pub wal_records: u64,
    /// Length of the file.
    pub file_bytes: u64,
}

/// Verifies superblock, manifest, every SST block and entry order, the WAL, and that no two
/// extents overlap and none lies past the end of the file.
pub fn check_storage(shared: &Arc<dyn Storage>) -> Result<CheckReport> {
    let storage: &dyn Storage = &**shared;
    let sb = read_superblock(storage)?.ok_or_else(|| Error::NotADatabase {
        path: storage.path().to_path_buf(),
        what: "the file is empty".into(),
    })?;
    let manifest = load_manifest(storage, &sb)?;
    let file_bytes = storage.len().map_err(io("read file length"))?;
    let mut used = sb.extents();
    used.extend(manifest.ssts().map(|sst| sst.extent));
    ExtentAllocator::rebuild(&used)?;
    let mut report = CheckReport {
        generation: sb.generation,
        file_bytes,
        ..CheckReport::default()
    };
    let cache = Arc::new(BlockCache::new(CHECK_CACHE_BYTES));
    for (level, ssts) in manifest.levels.iter().enumerate() {
        for (index, meta) in ssts.iter().enumerate() {
            let corrupt = |what: String| Error::Corruption {
                offset: meta.extent.offset,
                what,
            };
            if meta.extent.offset.saturating_add(meta.len) > file_bytes {
                return Err(corrupt(format!(
                    "SST {} runs past the end of the file",
                    meta.id
                )));
            }
            if level > 0
                && let Some(next) = ssts.get(index + 1)
                && next.props.min_key <= meta.props.max_key
            {
                return Err(corrupt(format!(
                    "SST {} overlaps SST {} in level {level}",
                    meta.id, next.id
                )));
            }
            let reader = Arc::new(SstReader::open(
                Arc::clone(shared),
                meta.extent,
                meta.len,
                meta.id,
                Arc::clone(&cache),
            )?);
            let mut previous: Option<(Vec<u8>, u64)> = None;
            let mut entries = 0u64;
            for entry in reader.iter(&[]) {
                let entry = entry?;
                if let Some((key, seq)) = &previous
                    && (entry.key < *key || (entry.key == *key && entry.seq >= *seq))
                {
                    return Err(corrupt(format!(
                        "SST {} entries out of order at entry {entries}",
                        meta.id
                    )));
                }
                if entry.key < meta.props.min_key || entry.key > meta.props.max_key {
                    return Err(corrupt(format!(
                        "SST {} entry {entries} outside its key range",
                        meta.id
                    )));
                }
                previous = Some((entry.key, entry.seq));
                entries += 1;
            }
            if entries != meta.props.entries {
                return Err(corrupt(format!(
                    "SST {} holds {entries} entries, manifest says {}",
                    meta.id, meta.props.entries
                )));
            }
            report.ssts += 1;
            report.entries += entries;
        }
    }
    replay(storage, &sb.wal_segments, &mut |seq, payload, offset| {
        decode_ops(payload).map_err(|err| Error::Corruption {
            offset,
            what: format!("WAL record with seq {seq} holds a bad batch: {err}"),
        })?;
        report.wal_records += 1;
        Ok(())
    })?;
    Ok(report)
}
