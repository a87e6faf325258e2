//! The full integrity check of a database file: every problem, each with its file offset.
//!
//! The check keeps going after a problem wherever the rest of the file can still be read: a
//! bad SST does not hide a bad WAL record, a bad WAL batch does not hide the next one. Only
//! damage that leaves nothing to walk stops it early (no valid superblock: nothing else can
//! be located; no manifest: the SSTs cannot be found, yet the WAL is still checked).

use std::path::Path;
use std::sync::Arc;

use super::batch::decode_ops;
use super::file::{ExtentAllocator, FileStorage, OpenMode, Storage, read_superblock};
use super::inner::io;
use super::manifest::SstMeta;
use super::recovery::load_manifest;
use super::sst::{BlockCache, SstReader};
use super::wal::replay;
use super::{Engine, Error, Result};

/// Block cache used by the check (blocks are read once).
const CHECK_CACHE_BYTES: usize = 1 << 20;

/// Most problems a report lists; beyond it they are only counted, so a file of garbage
/// cannot make the report itself unbounded.
pub const CHECK_MAX_PROBLEMS: usize = 1_000;

/// One problem found by a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckProblem {
    /// File offset of the damaged structure (or of the first bad byte, when known).
    pub offset: u64,
    /// What is wrong there.
    pub what: String,
}

/// What a check covered and every problem it found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Generation of the superblock in force.
    pub generation: u64,
    /// SSTs verified without a problem.
    pub ssts: usize,
    /// Entries read from them.
    pub entries: u64,
    /// WAL records replayed.
    pub wal_records: u64,
    /// Length of the file.
    pub file_bytes: u64,
    /// The problems found, in file-walk order, at most [`CHECK_MAX_PROBLEMS`].
    pub problems: Vec<CheckProblem>,
    /// Problems found beyond [`CHECK_MAX_PROBLEMS`], counted but not listed.
    pub problems_omitted: u64,
}

impl CheckReport {
    /// Whether the check found nothing wrong.
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && self.problems_omitted == 0
    }

    fn record(&mut self, offset: u64, what: String) {
        if self.problems.len() < CHECK_MAX_PROBLEMS {
            self.problems.push(CheckProblem { offset, what });
        } else {
            self.problems_omitted += 1;
        }
    }

    /// Records a corruption as a problem (at `fallback` for errors that carry no offset);
    /// passes I/O errors and the like through, since they say nothing about the file's bytes.
    fn absorb(&mut self, err: Error, fallback: u64) -> Result<()> {
        match err {
            Error::Corruption { offset, what } => self.record(offset, what),
            Error::InvalidArgument(what) => self.record(fallback, what),
            other => return Err(other),
        }
        Ok(())
    }
}

impl Engine {
    /// Checks the file at `path` like [`Engine::check`], but lists every problem (up to
    /// [`CHECK_MAX_PROBLEMS`]) instead of failing at the first one.
    ///
    /// # Errors
    /// [`Error::NotADatabase`] when the file holds no database, [`Error::Io`] when it cannot
    /// be read. Damage is reported in [`CheckReport::problems`], not as an error.
    pub fn check_all(path: impl AsRef<Path>) -> Result<CheckReport> {
        let storage: Arc<dyn Storage> = Arc::new(FileStorage::open(path, OpenMode::ReadOnly)?);
        check_storage_all(&storage)
    }
}

/// Verifies the file and fails with the first problem found as [`Error::Corruption`].
pub fn check_storage(shared: &Arc<dyn Storage>) -> Result<CheckReport> {
    let report = check_storage_all(shared)?;
    match report.problems.first() {
        Some(first) => Err(Error::Corruption {
            offset: first.offset,
            what: first.what.clone(),
        }),
        None => Ok(report),
    }
}

/// Verifies superblock, manifest, every SST block and entry order, the WAL, and that no two
/// extents overlap and none lies past the end of the file; collects every problem.
pub fn check_storage_all(shared: &Arc<dyn Storage>) -> Result<CheckReport> {
    let storage: &dyn Storage = &**shared;
    let mut report = CheckReport {
        file_bytes: storage.len().map_err(io("read file length"))?,
        ..CheckReport::default()
    };
    let sb = match read_superblock(storage) {
        Ok(Some(sb)) => sb,
        Ok(None) => {
            return Err(Error::NotADatabase {
                path: storage.path().to_path_buf(),
                what: "the file is empty".into(),
            });
        }
        Err(err) => {
            report.absorb(err, 0)?;
            return Ok(report);
        }
    };
    report.generation = sb.generation;
    match load_manifest(storage, &sb) {
        Ok(manifest) => {
            let mut used = sb.extents();
            used.extend(manifest.ssts().map(|sst| sst.extent));
            if let Err(err) = ExtentAllocator::rebuild(&used) {
                report.absorb(err, 0)?;
            }
            let cache = Arc::new(BlockCache::new(CHECK_CACHE_BYTES));
            for (level, ssts) in manifest.levels.iter().enumerate() {
                for (index, meta) in ssts.iter().enumerate() {
                    if level > 0
                        && let Some(next) = ssts.get(index + 1)
                        && next.props.min_key <= meta.props.max_key
                    {
                        report.record(
                            meta.extent.offset,
                            format!("SST {} overlaps SST {} in level {level}", meta.id, next.id),
                        );
                    }
                    check_sst(shared, meta, &cache, &mut report)?;
                }
            }
        }
        Err(err) => report.absorb(err, 0)?,
    }
    let replayed = replay(storage, &sb.wal_segments, &mut |seq, payload, offset| {
        match decode_ops(payload) {
            Ok(_) => report.wal_records += 1,
            // A bad batch in an intact frame does not stop the walk through the log.
            Err(err) => report.record(
                offset,
                format!("WAL record with seq {seq} holds a bad batch: {err}"),
            ),
        }
        Ok(())
    });
    if let Err(err) = replayed {
        report.absorb(err, 0)?;
    }
    Ok(report)
}

/// Checks one SST: its bounds, every block, entry order and count. Problems inside go to
/// `report`; a block that fails its checksum ends the walk of this SST (its successors are
/// reached only through the iterator that just failed), not of the file.
fn check_sst(
    shared: &Arc<dyn Storage>,
    meta: &SstMeta,
    cache: &Arc<BlockCache>,
    report: &mut CheckReport,
) -> Result<()> {
    let at = meta.extent.offset;
    let problems_before = report.problems.len() as u64 + report.problems_omitted;
    if at.saturating_add(meta.len) > report.file_bytes {
        report.record(at, format!("SST {} runs past the end of the file", meta.id));
        return Ok(());
    }
    let reader = match SstReader::open(
        Arc::clone(shared),
        meta.extent,
        meta.len,
        meta.id,
        Arc::clone(cache),
    ) {
        Ok(reader) => Arc::new(reader),
        Err(err) => return report.absorb(err, at),
    };
    let mut iter = reader.iter(&[]);
    let mut previous: Option<(Vec<u8>, u64)> = None;
    let mut entries = 0u64;
    loop {
        match iter.advance() {
            Ok(true) => {}
            Ok(false) => break,
            Err(err) => {
                report.absorb(err, at)?;
                return Ok(());
            }
        }
        let (key, seq) = (iter.key(), iter.seq());
        let entry_at = iter.block_offset().unwrap_or(at);
        if let Some((prev_key, prev_seq)) = &previous
            && (key < prev_key.as_slice() || (key == prev_key.as_slice() && seq >= *prev_seq))
        {
            report.record(
                entry_at,
                format!("SST {} entries out of order at entry {entries}", meta.id),
            );
        }
        if key < meta.props.min_key.as_slice() || key > meta.props.max_key.as_slice() {
            report.record(
                entry_at,
                format!("SST {} entry {entries} outside its key range", meta.id),
            );
        }
        match &mut previous {
            Some((prev_key, prev_seq)) => {
                prev_key.clear();
                prev_key.extend_from_slice(key);
                *prev_seq = seq;
            }
            None => previous = Some((key.to_vec(), seq)),
        }
        entries += 1;
    }
    if entries != meta.props.entries {
        report.record(
            at,
            format!(
                "SST {} holds {entries} entries, manifest says {}",
                meta.id, meta.props.entries
            ),
        );
    }
    if report.problems.len() as u64 + report.problems_omitted == problems_before {
        report.ssts += 1;
        report.entries += entries;
    }
    Ok(())
}
