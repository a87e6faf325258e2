//! The memory a skip list's nodes are carved from: 64 KiB chunks, kept in a process-wide
//! pool when a list is dropped so the next memtable does not fault its pages in again.
//!
//! Sound for the same reasons as the skip list (see `skiplist.rs`): a chunk is freed or
//! pooled only when its arena is dropped, which happens only once no node of its list is
//! reachable.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::skiplist::NODE_ALIGN;

/// Size of an arena chunk. A node larger than a quarter of it gets an allocation of its own,
/// so no chunk leaves more than a quarter of itself unused at its tail.
pub(super) const CHUNK_BYTES: usize = 64 << 10;
/// Chunks of dropped lists kept for the arenas of lists to come, at most (one default 4 MiB
/// memtable's worth). A bulk load freezes a memtable every few milliseconds, and the flush
/// that drops it hands its chunks back to the allocator, which returns their pages to the OS
/// (`malloc_trim` after each flush): the next memtable then took a page fault and a zeroed
/// page per 4 KiB it filled, ~46k faults on the writer's thread per 1M-entry load.
pub(super) const POOL_CHUNKS: usize = 64;
/// A chunk (`CHUNK_BYTES`, aligned to `NODE_ALIGN`) no list uses, waiting in [`CHUNK_POOL`].
pub(super) struct PooledChunk(pub(super) NonNull<u8>);

// SAFETY: a pooled chunk is owned by the pool alone (no list references it); moving that
// ownership to another thread is what `Box<[u8]>` allows too.
unsafe impl Send for PooledChunk {}

/// Chunks of dropped lists waiting for new arenas (bounded by `POOL_CHUNKS`).
pub(super) type ChunkPool = Mutex<Vec<PooledChunk>>;

/// The pool every list of the process shares.
pub(super) static CHUNK_POOL: ChunkPool = Mutex::new(Vec::new());

/// The layout of an arena chunk.
pub(super) fn chunk_layout() -> Layout {
    Layout::from_size_align(CHUNK_BYTES, NODE_ALIGN)
        .unwrap_or_else(|_| handle_alloc_error(Layout::new::<u64>()))
}

/// The chunks nodes are carved from.
pub(super) struct Arena {
    /// Every allocation, freed (or pooled) when the list is dropped.
    pub(super) blocks: Vec<(NonNull<u8>, Layout)>,
    /// Where chunks come from first and go back to.
    pool: &'static ChunkPool,
    /// Next free byte of the current chunk.
    cursor: *mut u8,
    /// Free bytes left at `cursor`.
    remaining: usize,
}

impl Arena {
    /// An empty arena drawing on and returning chunks to `pool`.
    pub(super) fn new(pool: &'static ChunkPool) -> Self {
        Self {
            blocks: Vec::new(),
            pool,
            cursor: ptr::null_mut(),
            remaining: 0,
        }
    }

    /// `size` bytes (a multiple of `NODE_ALIGN`); adds what it takes from the system to `charged`.
    pub(super) fn allocate(&mut self, size: usize, charged: &AtomicUsize) -> NonNull<u8> {
        if size <= self.remaining {
            let at = self.cursor;
            // SAFETY: `size <= remaining`, so both stay inside the current chunk.
            self.cursor = unsafe { self.cursor.add(size) };
            self.remaining -= size;
            charged.fetch_add(size, Ordering::Relaxed);
            // SAFETY: `cursor` points into a live chunk, hence is non-null.
            return unsafe { NonNull::new_unchecked(at) };
        }
        if size > CHUNK_BYTES / 4 {
            charged.fetch_add(size, Ordering::Relaxed);
            return self.block(size);
        }
        // The tail of the current chunk is abandoned: charge it, it stays allocated.
        charged.fetch_add(self.remaining + size, Ordering::Relaxed);
        let chunk = self.chunk();
        // SAFETY: `size <= CHUNK_BYTES / 4`, inside the fresh chunk.
        self.cursor = unsafe { chunk.as_ptr().add(size) };
        self.remaining = CHUNK_BYTES - size;
        chunk
    }

    /// A chunk for the arena: one a dropped list left in the pool (its pages still mapped),
    /// else a fresh allocation.
    fn chunk(&mut self) -> NonNull<u8> {
        let pooled = self.pool.lock().pop();
        match pooled {
            Some(PooledChunk(chunk)) => {
                self.blocks.push((chunk, chunk_layout()));
                chunk
            }
            None => self.block(CHUNK_BYTES),
        }
    }

    fn block(&mut self, size: usize) -> NonNull<u8> {
        let Ok(layout) = Layout::from_size_align(size, NODE_ALIGN) else {
            handle_alloc_error(Layout::new::<u64>())
        };
        // SAFETY: `size` is non-zero (every node has a header).
        let Some(block) = NonNull::new(unsafe { alloc(layout) }) else {
            handle_alloc_error(layout)
        };
        self.blocks.push((block, layout));
        block
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let blocks = std::mem::take(&mut self.blocks);
        let mut pool = self.pool.lock();
        for (block, layout) in blocks {
            if layout == chunk_layout() && pool.len() < POOL_CHUNKS {
                // No node of the list is reachable any more (its arena is being dropped):
                // the chunk is the pool's alone, its stale bytes overwritten before any node
                // is published.
                pool.push(PooledChunk(block));
                continue;
            }
            // SAFETY: allocated by `Arena::block` with this layout (or taken from the pool,
            // where every chunk has it), freed once, here.
            unsafe { dealloc(block.as_ptr(), layout) };
        }
    }
}
