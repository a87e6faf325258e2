//! A bounded cache of decoded data blocks shared by all SSTs.
//!
//! Built on `quick_cache` (sharded, S3-FIFO eviction, weighted by bytes): readers on many
//! threads hit different shards, and a one-off scan cannot flush the hot set the way LRU can.

use std::sync::Arc;

use super::block::Block;

#[derive(Debug, Clone, Copy)]
struct BlockWeighter;

impl quick_cache::Weighter<(u64, u64), Arc<Block>> for BlockWeighter {
    fn weight(&self, _key: &(u64, u64), block: &Arc<Block>) -> u64 {
        block.memory_len() as u64
    }
}

/// Expected size of a cached block, to size the cache's tables up front.
const TYPICAL_BLOCK_BYTES: usize = 4096;

/// Decoded data blocks keyed by (SST id, block offset), bounded in bytes.
///
/// ```
/// let cache = strata::engine::sst::BlockCache::new(1 << 20);
/// assert_eq!(cache.capacity_bytes(), 1 << 20);
/// ```
#[derive(Debug)]
pub struct BlockCache {
    /// `None` when the capacity is zero: every read goes to storage.
    inner: Option<quick_cache::sync::Cache<(u64, u64), Arc<Block>, BlockWeighter>>,
    capacity: usize,
}

impl BlockCache {
    /// A cache holding at most `capacity_bytes` of blocks.
    pub fn new(capacity_bytes: usize) -> Self {
        let inner = (capacity_bytes > 0).then(|| {
            quick_cache::sync::Cache::with_weighter(
                (capacity_bytes / TYPICAL_BLOCK_BYTES).max(1),
                capacity_bytes as u64,
                BlockWeighter,
            )
        });
        Self {
            inner,
            capacity: capacity_bytes,
        }
    }

    /// The configured bound.
    pub fn capacity_bytes(&self) -> usize {
        self.capacity
    }

    /// Bytes of blocks currently held.
    pub fn used_bytes(&self) -> u64 {
        self.inner
            .as_ref()
            .map_or(0, quick_cache::sync::Cache::weight)
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
