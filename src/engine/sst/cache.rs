//! A bounded cache of decoded data blocks shared by all SSTs, and the one memory budget that
//! also covers every open SST's resident index and filters.
//!
//! Built on `quick_cache` (sharded, S3-FIFO eviction, weighted by bytes): readers on many
//! threads hit different shards, and a one-off scan cannot flush the hot set the way LRU can.
//!
//! The index, bloom filter and prefix filter of an open SST stay in memory (every read
//! consults them), but their bytes are *pinned* against the same budget, as RocksDB does with
//! `cache_index_and_filter_blocks` and as SQLite's interior pages share its page cache. The
//! engine also charges its memtables to the budget, as RocksDB's write buffer manager does
//! with `cost_to_cache` and as SQLite's dirty pages live in its page cache: data blocks get
//! the capacity minus the pinned and charged bytes, never less than
//! `1 / MIN_DATA_SHARE_DIVISOR` of it. So the budget bounds the real memory of blocks,
//! metadata and write buffers together, as long as those fit in the rest. Memtables are still
//! bounded by their own option; the cache yields to them, never the reverse.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use super::block::Block;
use super::format::TYPICAL_BLOCK_BYTES;

/// Data blocks always keep at least this fraction (1/n) of the capacity, however much
/// metadata is pinned: a cache with no room for blocks would read every block twice per scan.
const MIN_DATA_SHARE_DIVISOR: u64 = 4;
/// The data capacity is moved in steps of 1/n of the capacity: every resize scales the
/// cache's ghost-queue size with float rounding, so resizing on every SST open would erode it.
const RESIZE_STEPS: u64 = 64;
/// What glibc adds to each allocation (chunk header and 16-byte rounding, on average).
const MALLOC_OVERHEAD_BYTES: usize = 16;
/// `quick_cache`'s own memory per resident entry: a 48-byte slab slot that grows by doubling
/// (up to twice that), its hash-table slot and the ghost keys S3-FIFO remembers (measured
/// with its `memory_used`: 56 bytes per entry at a steady state, 84 in all at a doubling).
const CACHE_ENTRY_BYTES: usize = 128;
/// A cached block's memory besides its contents: the `Arc` allocation holding the `Block`
/// (two counters and the struct), the allocator's overhead on it and on the contents, and
/// the cache's entry.
const ENTRY_OVERHEAD_BYTES: usize =
    size_of::<[usize; 2]>() + size_of::<Block>() + 2 * MALLOC_OVERHEAD_BYTES + CACHE_ENTRY_BYTES;

/// The memory a cached block holds: what the weighter charges.
fn charged_bytes(block: &Block) -> u64 {
    (block.allocated_len() + ENTRY_OVERHEAD_BYTES) as u64
}

#[derive(Debug, Clone, Copy)]
struct BlockWeighter;

impl quick_cache::Weighter<(u64, u64), Arc<Block>> for BlockWeighter {
    fn weight(&self, _key: &(u64, u64), block: &Arc<Block>) -> u64 {
        charged_bytes(block)
    }
}

type Blocks = quick_cache::sync::Cache<(u64, u64), Arc<Block>, BlockWeighter>;

/// Decoded data blocks keyed by (SST id, block offset), bounded in bytes together with the
/// pinned index and filter bytes of the open SSTs.
///
/// ```
/// let cache = strata::engine::sst::BlockCache::new(1 << 20);
/// assert_eq!(cache.capacity_bytes(), 1 << 20);
/// assert_eq!(cache.used_bytes() + cache.pinned_bytes(), 0);
/// ```
#[derive(Debug)]
pub struct BlockCache {
    /// `None` when the capacity is zero: every read goes to storage.
    inner: Option<Blocks>,
    capacity: u64,
    /// Bytes of index and filters held by open SSTs.
    pinned: AtomicU64,
    /// Bytes of write buffers (memtables) charged by the engine, in resize steps.
    write_buffers: AtomicU64,
    /// The data capacity last given to `inner`; the lock also orders concurrent resizes.
    data_capacity: Mutex<u64>,
}

impl BlockCache {
    /// A cache holding at most `capacity_bytes` of blocks and pinned metadata.
    pub fn new(capacity_bytes: usize) -> Self {
        let capacity = capacity_bytes as u64;
        let inner = (capacity_bytes > 0).then(|| {
            Blocks::with_weighter(
                (capacity_bytes / TYPICAL_BLOCK_BYTES).max(1),
                capacity,
                BlockWeighter,
            )
        });
        Self {
            inner,
            capacity,
            pinned: AtomicU64::new(0),
            write_buffers: AtomicU64::new(0),
            data_capacity: Mutex::new(capacity),
        }
    }

    /// The configured bound.
    pub fn capacity_bytes(&self) -> usize {
        usize::try_from(self.capacity).unwrap_or(usize::MAX)
    }

    /// Bytes of blocks currently held, charged at their real allocation size (contents,
    /// `Arc`, allocator and cache book-keeping).
    pub fn used_bytes(&self) -> u64 {
        self.inner.as_ref().map_or(0, Blocks::weight)
    }

    /// Bytes of index and filters pinned by open SSTs against the capacity.
    pub fn pinned_bytes(&self) -> u64 {
        self.pinned.load(Ordering::Acquire)
    }

    /// Bytes of write buffers charged by [`BlockCache::charge_write_buffers`] (rounded down
    /// to a resize step).
    pub fn write_buffer_bytes(&self) -> u64 {
        self.write_buffers.load(Ordering::Acquire)
    }

    /// Sets the memory the engine's memtables hold, charged against the budget in place of
    /// data blocks. Cheap when the figure stays within the same resize step (one atomic
    /// load), so the engine calls it after every write.
    pub fn charge_write_buffers(&self, bytes: u64) {
        let step = self.step();
        let rounded = bytes / step * step;
        // A load first: concurrent writers then share the cache line instead of bouncing it.
        if self.write_buffers.load(Ordering::Acquire) != rounded
            && self.write_buffers.swap(rounded, Ordering::AcqRel) != rounded
        {
            self.resize();
        }
    }

    /// The share of the capacity data blocks may use now.
    pub fn data_capacity_bytes(&self) -> u64 {
        *self.data_capacity.lock()
    }

    /// Charges `bytes` of SST metadata against the budget (undone by [`BlockCache::unpin`]).
    pub(super) fn pin(&self, bytes: u64) {
        self.pinned.fetch_add(bytes, Ordering::AcqRel);
        self.resize();
    }

    /// Releases metadata bytes charged by [`BlockCache::pin`].
    pub(super) fn unpin(&self, bytes: u64) {
        let _ = self
            .pinned
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| {
                Some(p.saturating_sub(bytes))
            });
        self.resize();
    }

    /// Gives data blocks what the pinned metadata leaves, rounded down to a resize step.
    fn resize(&self) {
        let Some(blocks) = &self.inner else {
            return;
        };
        let mut current = self.data_capacity.lock();
        let step = self.step();
        let floor = self.capacity / MIN_DATA_SHARE_DIVISOR;
        let left = self
            .capacity
            .saturating_sub(self.pinned_bytes())
            .saturating_sub(self.write_buffer_bytes());
        let target = (left / step * step).max(floor).max(1);
        if target != *current {
            blocks.set_capacity(target);
            *current = target;
        }
    }

    fn step(&self) -> u64 {
        (self.capacity / RESIZE_STEPS).max(1)
    }

    pub(super) fn get(&self, sst_id: u64, offset: u64) -> Option<Arc<Block>> {
        self.inner.as_ref()?.get(&(sst_id, offset))
    }

    pub(super) fn insert(&self, sst_id: u64, offset: u64, block: Arc<Block>) {
        if let Some(c) = &self.inner {
            c.insert((sst_id, offset), block);
        }
    }
}
