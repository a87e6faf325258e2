//! Opening a file: superblock, manifest, SSTs, allocator, WAL replay.
//!
//! A writable open flushes whatever the WAL replays into an L0 SST and moves the log to a fresh
//! segment, so a torn tail left by a crash is never followed by newer records.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

use parking_lot::{Mutex, RwLock};

use super::batch::decode_ops;
use super::commit::WriterState;
use super::file::{ExtentAllocator, Storage, Superblock, read_superblock};
use super::inner::{BgSignal, Counters, Frozen, Inner, MetaState, WalSpare, io};
use super::limits::NUM_LEVELS;
use super::manifest::{Manifest, decode_manifest};
use super::memtable::Memtable;
use super::sst::{BlockCache, SstReader};
use super::stall::WriteController;
use super::version::{Graveyard, ReadView, SstHandle, Version};
use super::wal::{WalWriter, replay};
use super::{Error, Options, Result, Seq};

/// Reads and verifies the manifest the superblock points at (empty when it points nowhere).
pub fn load_manifest(storage: &dyn Storage, sb: &Superblock) -> Result<Manifest> {
    let Some(pointer) = sb.manifest else {
        return Ok(Manifest::default());
    };
    let corrupt = |what: String| Error::Corruption {
        offset: pointer.extent.offset,
        what,
    };
    if pointer.len > pointer.extent.len {
        return Err(corrupt(format!(
            "manifest length {} exceeds its extent of {}",
            pointer.len, pointer.extent.len
        )));
    }
    let file_len = storage.len().map_err(io("read file length"))?;
    if pointer.extent.offset.saturating_add(pointer.len) > file_len {
        return Err(corrupt(format!(
            "manifest of {} bytes runs past the end of the file ({file_len})",
            pointer.len
        )));
    }
    let mut bytes =
        vec![0u8; usize::try_from(pointer.len).map_err(|_| corrupt("manifest too large".into()))?];
    storage
        .read_exact_at(&mut bytes, pointer.extent.offset)
        .map_err(io("read manifest"))?;
    let crc = crc32fast::hash(&bytes);
    if crc != pointer.crc {
        return Err(corrupt(format!(
            "manifest checksum {crc:#010x} differs from the superblock's {:#010x}",
            pointer.crc
        )));
    }
    let manifest = decode_manifest(&bytes, pointer.extent.offset)?;
    if manifest.levels.len() != NUM_LEVELS {
        return Err(corrupt(format!(
            "manifest has {} levels",
            manifest.levels.len()
        )));
    }
    Ok(manifest)
}

/// Opens every SST of `manifest` as a version.
fn open_version(
    storage: &Arc<dyn Storage>,
    manifest: &Manifest,
    cache: &Arc<BlockCache>,
    graveyard: &Arc<Graveyard>,
) -> Result<Version> {
    let mut version = Version {
        range_tombstones: manifest.range_tombstones.clone(),
        ..Version::default()
    };
    for (level, metas) in version.levels.iter_mut().zip(&manifest.levels) {
        for meta in metas {
            let reader = SstReader::open(
                Arc::clone(storage),
                meta.extent,
                meta.len,
                meta.id,
                Arc::clone(cache),
            )?;
            level.push(Arc::new(SstHandle::new(
                meta.clone(),
                reader,
                Arc::clone(graveyard),
            )));
        }
    }
    Ok(version)
}

/// Opens the engine state over `storage`.
pub fn open(storage: Arc<dyn Storage>, options: Options, read_only: bool) -> Result<Inner> {
    options.validate()?;
    let (sb, fresh) = match read_superblock(&*storage)? {
        Some(sb) => (sb, false),
        None if read_only => {
            return Err(Error::NotADatabase {
                path: storage.path().to_path_buf(),
                what: "the file is empty".into(),
            });
        }
        None => (
            Superblock {
                generation: 0,
                manifest: None,
                wal_segments: Vec::new(),
                flushed_seq: 0,
                next_segment_id: 1,
            },
            true,
        ),
    };
    let manifest = load_manifest(&*storage, &sb)?;
    let cache = Arc::new(BlockCache::new(options.block_cache_bytes));
    let graveyard = Arc::new(Graveyard::default());
    let version = open_version(&storage, &manifest, &cache, &graveyard)?;
    let mut used = sb.extents();
    used.extend(manifest.ssts().map(|sst| sst.extent));
    let alloc = ExtentAllocator::rebuild(&used)?;

    let mem = Arc::new(Memtable::new());
    let mut last_seq: Seq = manifest
        .ssts()
        .map(|sst| sst.props.max_seq)
        .chain(manifest.range_tombstones.iter().map(|t| t.seq))
        .fold(sb.flushed_seq, Seq::max);
    let end = replay(&*storage, &sb.wal_segments, &mut |seq, payload, offset| {
        let ops = decode_ops(payload).map_err(|err| Error::Corruption {
            offset,
            what: format!("WAL record with seq {seq} holds a bad batch: {err}"),
        })?;
        if seq > sb.flushed_seq {
            mem.apply(seq, &ops);
            last_seq = last_seq.max(seq + ops.len() as u64 - 1);
        }
        Ok(())
    })?;

    // Segments listed after the one replay ended in (a spare, or one whose predecessor's
    // seal never reached the disk) hold nothing replayed: the first superblock this open
    // commits no longer lists them, and a writable open frees them after it.
    let mut sb = sb;
    let abandoned = if sb.wal_segments.is_empty() {
        Vec::new()
    } else {
        sb.wal_segments.split_off(end.segment_index + 1)
    };
    let next_sst_id = manifest
        .next_sst_id
        .max(manifest.ssts().map(|sst| sst.id + 1).max().unwrap_or(1));
    let stall = WriteController::new(&options);
    let inner = Inner {
        storage,
        options,
        read_only,
        cache,
        view: RwLock::new(Arc::new(ReadView {
            mem,
            imms: Vec::new(),
            version: Arc::new(version),
        })),
        last_seq: AtomicU64::new(last_seq),
        queue: Mutex::new(Vec::new()),
        gather_target: AtomicUsize::new(0),
        sleepers: super::wake::Sleepers::default(),
        writer: Mutex::new(WriterState {
            // Resumed only to seal it before the log moves on to a fresh segment.
            wal: sb
                .wal_segments
                .get(end.segment_index)
                .map(|segment| WalWriter::new(*segment, end.pos)),
            ..WriterState::new()
        }),
        poison: Mutex::new(None),
        meta: Mutex::new(MetaState { sb, next_sst_id }),
        alloc: Mutex::new(alloc),
        graveyard,
        frozen: Mutex::new(Vec::new()),
        compaction: Mutex::new(()),
        flushing: Mutex::new(()),
        preempt: super::compaction::Preempt::default(),
        bg: BgSignal::default(),
        counters: Counters::default(),
        closed: AtomicBool::new(false),
        stall,
        unsynced_bytes: AtomicU64::new(0),
        spare: Mutex::new(WalSpare::default()),
        seals_written: AtomicU64::new(0),
        seals_synced: AtomicU64::new(0),
    };
    if !read_only {
        if !abandoned.is_empty() {
            // Before the resumed segment gets its seal: a crash after that seal but before a
            // superblock without the abandoned segments would let the next replay follow the
            // seal into them and apply records this replay dropped (not a prefix any more).
            inner.commit_superblock(&mut inner.meta.lock())?;
        }
        start_writable(&inner, fresh)?;
        inner.free(&abandoned.iter().map(|s| s.extent).collect::<Vec<_>>());
    }
    Ok(inner)
}

/// Moves the log to a fresh segment and flushes what replay recovered into an L0 SST.
fn start_writable(inner: &Inner, fresh: bool) -> Result<()> {
    let _guard = inner.flushing.lock();
    let mut writer = inner.writer.lock();
    if fresh {
        inner.rotate(&mut writer, 0, false)?;
        return Ok(());
    }
    inner.freeze(&mut writer)?;
    drop(writer);
    let frozen: Vec<Frozen> = inner.frozen.lock().clone();
    debug_assert_eq!(frozen.len(), 1);
    inner.flush_frozen()
}
