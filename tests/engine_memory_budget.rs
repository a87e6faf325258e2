//! The block cache's budget bounds real memory: cached blocks are charged at least the heap
//! they hold, and the index and filters of open SSTs are pinned against the same budget.
//!
//! A counting global allocator measures the heap each step really takes; the tests that
//! read it run one at a time (they share the counter).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod engine_sst_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use engine_sst_support::{Entry, MemStorage, SST_OFFSET, build, options};
use strata::engine::file::{Extent, PAGE_SIZE, Storage};
use strata::engine::sst::{BlockCache, SstReader};
use strata::engine::{Compression, Engine, Options, ValueKind, WriteBatch};

/// Counts the bytes currently requested from the system allocator.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

// SAFETY: forwards every call to `System` unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs the tests one at a time: the counter is process-wide.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

fn entries(n: u32) -> Vec<Entry> {
    (0..n)
        .map(|i| {
            let value = format!("{i:08}").repeat(16).into_bytes();
            (format!("key{i:08}").into_bytes(), 3, ValueKind::Put, value)
        })
        .collect()
}

fn stored(image: &[u8]) -> (Arc<MemStorage>, Extent) {
    let storage = Arc::new(MemStorage::default());
    storage.write_all_at(image, SST_OFFSET).unwrap();
    let extent = Extent {
        offset: SST_OFFSET,
        len: (image.len() as u64).div_ceil(PAGE_SIZE) * PAGE_SIZE,
    };
    (storage, extent)
}

fn open(
    storage: &Arc<MemStorage>,
    extent: Extent,
    len: usize,
    id: u64,
    cache: &Arc<BlockCache>,
) -> Arc<SstReader> {
    let storage: Arc<dyn Storage> = storage.clone();
    Arc::new(SstReader::open(storage, extent, len as u64, id, Arc::clone(cache)).unwrap())
}

#[test]
fn cached_blocks_are_charged_at_least_the_heap_they_hold() {
    let _serial = serial();
    for compression in [Compression::None, Compression::Lz4] {
        let image = build(options(4096, 16, compression), &entries(20_000));
        let (storage, extent) = stored(&image);
        // Room for every block: what is charged is then exactly what the scan left behind.
        let cache = Arc::new(BlockCache::new(64 << 20));
        let reader = open(&storage, extent, image.len(), 1, &cache);
        // Warm the per-thread read buffer so it is not counted as cache memory.
        reader.iter(&[]).without_cache_fill().count();
        let before = live();
        assert_eq!(reader.iter(&[]).count(), 20_000);
        let held = live() - before;
        let charged = cache.used_bytes() as usize;
        assert!(
            held <= charged,
            "{compression:?}: cached blocks hold {held} bytes of heap, the cache charges {charged}"
        );
        // Charged for what it holds, not a multiple of it: the budget stays usable.
        assert!(
            charged <= held + held / 20,
            "{compression:?}: {charged} charged for {held} held"
        );
    }
}

#[test]
fn open_sst_metadata_is_pinned_against_the_cache_budget() {
    let _serial = serial();
    let image = build(options(1024, 16, Compression::Lz4), &entries(20_000));
    let (storage, extent) = stored(&image);
    let capacity = 1 << 20;
    let cache = Arc::new(BlockCache::new(capacity));
    let mut readers = Vec::with_capacity(4);
    let before = live();
    for id in 1..=4 {
        readers.push(open(&storage, extent, image.len(), id, &cache));
    }
    let held = live() - before;
    let pinned: u64 = readers.iter().map(|r| r.pinned_bytes()).sum();
    assert_eq!(cache.pinned_bytes(), pinned);
    // Every byte an open reader keeps is pinned (the per-reader `Arc` header aside).
    assert!(
        held as u64 <= pinned,
        "open readers hold {held} bytes, {pinned} pinned"
    );
    assert!(
        pinned > 4 * 20_000 * 10 / 8,
        "four bloom filters alone exceed {pinned}"
    );

    for reader in &readers {
        assert_eq!(reader.iter(&[]).count(), 20_000);
    }
    let used = cache.used_bytes();
    assert!(used > 0);
    assert!(
        used + pinned <= capacity as u64,
        "blocks {used} + pinned metadata {pinned} exceed the budget {capacity}"
    );
    assert!(cache.data_capacity_bytes() <= capacity as u64 - pinned);

    drop(readers);
    assert_eq!(
        cache.pinned_bytes(),
        0,
        "dropped readers unpin their metadata"
    );
    assert_eq!(cache.data_capacity_bytes(), capacity as u64);
}

#[test]
fn data_blocks_keep_a_quarter_of_the_budget_when_metadata_outgrows_it() {
    let _serial = serial();
    let image = build(options(1024, 16, Compression::None), &entries(20_000));
    let (storage, extent) = stored(&image);
    let capacity = 64 << 10;
    let cache = Arc::new(BlockCache::new(capacity));
    let reader = open(&storage, extent, image.len(), 1, &cache);
    assert!(
        reader.pinned_bytes() > capacity as u64,
        "metadata larger than the budget"
    );
    assert_eq!(cache.data_capacity_bytes(), capacity as u64 / 4);
    assert_eq!(reader.iter(&[]).count(), 20_000);
    let used = cache.used_bytes();
    assert!(
        used > 0 && used <= capacity as u64 / 4,
        "blocks hold {used}"
    );
}

#[test]
fn engine_stats_keep_blocks_and_pinned_metadata_within_the_cache_budget() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let capacity = 2 << 20;
    let options = Options {
        memtable_bytes: 256 << 10,
        sst_target_bytes: 256 << 10,
        block_cache_bytes: capacity,
        background_compaction: false,
        ..Options::default()
    };
    let engine = Engine::open(dir.path().join("db"), options).unwrap();
    for batch in 0..200u32 {
        let mut b = WriteBatch::new();
        for i in 0..100u32 {
            let key = format!("key{:08}", (i * 7919 + batch * 104_729) % 1_000_000);
            b.put(key.as_bytes(), &[batch as u8; 150]);
        }
        engine
            .write(&b, strata::engine::Durability::Buffered)
            .unwrap();
    }
    engine.flush().unwrap();
    for i in (0..1_000_000u32).step_by(97) {
        engine.get(format!("key{i:08}").as_bytes()).unwrap();
    }
    let stats = engine.stats().unwrap();
    let files: usize = stats.levels.iter().map(|l| l.files).sum();
    assert!(files > 1 && stats.sst_pinned_bytes > 0 && stats.block_cache_bytes > 0);
    assert!(
        stats.block_cache_bytes + stats.sst_pinned_bytes <= capacity as u64,
        "blocks {} + metadata {} over {capacity}",
        stats.block_cache_bytes,
        stats.sst_pinned_bytes
    );
    engine.compact().unwrap();
    let after = engine.stats().unwrap();
    assert!(
        after.sst_pinned_bytes < stats.sst_pinned_bytes,
        "compacted-away SSTs unpin their metadata: {} -> {}",
        stats.sst_pinned_bytes,
        after.sst_pinned_bytes
    );
}

#[test]
fn memtables_are_charged_to_the_cache_budget_until_flushed() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let capacity: u64 = 4 << 20;
    let options = Options {
        memtable_bytes: 8 << 20,
        block_cache_bytes: capacity as usize,
        background_compaction: false,
        ..Options::default()
    };
    let engine = Engine::open(dir.path().join("db"), options).unwrap();
    let key = |i: u32| format!("key{:08}", i.wrapping_mul(2_654_435_761) % 10_000_000);
    let write = |from: u32, to: u32| {
        for chunk in (from..to).collect::<Vec<_>>().chunks(100) {
            let mut b = WriteBatch::new();
            for &i in chunk {
                b.put(key(i).as_bytes(), &[i as u8; 200]);
            }
            engine
                .write(&b, strata::engine::Durability::Buffered)
                .unwrap();
        }
    };
    let read_all = |to: u32| {
        for i in 0..to {
            assert!(engine.get(key(i).as_bytes()).unwrap().is_some());
        }
    };
    write(0, 60_000);
    engine.flush().unwrap();
    read_all(60_000);
    let idle = engine.stats().unwrap();
    assert_eq!(idle.memtable_bytes, 0);
    assert!(
        idle.block_cache_bytes + idle.sst_pinned_bytes > capacity * 3 / 4,
        "reads fill the cache: {} + {}",
        idle.block_cache_bytes,
        idle.sst_pinned_bytes
    );

    // Unflushed writes take their memory from the blocks, not on top of them.
    write(60_000, 70_000);
    let busy = engine.stats().unwrap();
    assert!(
        busy.memtable_bytes > 2 << 20,
        "memtable holds {}",
        busy.memtable_bytes
    );
    let total = busy.block_cache_bytes + busy.sst_pinned_bytes + busy.memtable_bytes;
    assert!(
        total <= capacity + capacity / 64,
        "blocks {} + metadata {} + memtables {} over {capacity}",
        busy.block_cache_bytes,
        busy.sst_pinned_bytes,
        busy.memtable_bytes
    );

    // Flushed, the memtable's share goes back to the blocks.
    engine.flush().unwrap();
    read_all(70_000);
    let after = engine.stats().unwrap();
    assert!(
        after.block_cache_bytes > busy.block_cache_bytes + (1 << 20),
        "blocks {} -> {} after the flush",
        busy.block_cache_bytes,
        after.block_cache_bytes
    );
}
