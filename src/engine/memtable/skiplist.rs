//! An arena-backed skip list of internal entries for one writer at a time and any number of
//! lock-free readers (LevelDB's memtable design).
//!
//! Every entry is one node carved from a chunk of the list's arena: header, tower, key and
//! value bytes together, so an insert allocates nothing of its own (a chunk every ~250
//! entries), and dropping the list frees its chunks rather than every entry (the first
//! `POOL_CHUNKS` of them go to a pool the next lists' arenas draw from). A writer keeps a
//! *finger* (the predecessors and successors of its last insert at every level), so keys
//! inserted in ascending order, as a sorted batch is, are linked without a search.
//!
//! ```text
//! node (8-byte aligned, NODE_HEADER_BYTES + 8 * height + key + value, rounded up to 8):
//! +--------+---------+-----------+--------+------+-----+------------------+-----+-------+
//! | seq u64| key_len | value_len | height | kind | pad | tower[height]    | key | value |
//! |        | usize   | usize     | u8     | u8   |     | AtomicPtr<Node>  |     |       |
//! +--------+---------+-----------+--------+------+-----+------------------+-----+-------+
//! ```
//!
//! Why the `unsafe` here is sound (it is the only `unsafe` of the memtable):
//! - chunks are freed (or pooled) only when the list is dropped, so a node reached through `&SkipList`
//!   stays valid, and never moves, for as long as that borrow;
//! - a node's header, key and value are written before the node is published by a `Release`
//!   store into its predecessors' towers, and never written again; readers load tower slots
//!   with `Acquire`, so every node they reach is fully written;
//! - tower slots are atomics: the only memory changed after publication;
//! - inserts are serialised by the writer mutex, which owns the arena cursor and the finger.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cmp::Ordering as KeyOrdering;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::arena::{Arena, CHUNK_POOL, ChunkPool};
use crate::engine::{Seq, ValueKind};

/// Tallest tower: with a branching factor of 4, searches stay logarithmic up to ~16M entries.
const MAX_HEIGHT: usize = 12;
/// A tower grows one more level with probability 1 / `BRANCHING`.
const BRANCHING: u32 = 4;
/// Alignment of every node: its header holds a u64 and its tower atomic pointers.
pub(super) const NODE_ALIGN: usize = 8;
/// Bytes of a node before its tower.
const NODE_HEADER_BYTES: usize = size_of::<Node>();
/// Seed of the tower-height generator (any non-zero value; fixed so runs are reproducible).
const HEIGHT_SEED: u32 = 0x9E37_79B9;

/// The fixed part of a node; the tower, key and value follow it in the same allocation.
#[repr(C)]
struct Node {
    seq: u64,
    key_len: usize,
    value_len: usize,
    height: u8,
    kind: u8,
}

/// Bytes a node of `height` levels with these key and value lengths takes in the arena.
/// `None` only for lengths no batch can carry (the engine bounds keys and values far below).
fn node_bytes(height: usize, key_len: usize, value_len: usize) -> Option<usize> {
    NODE_HEADER_BYTES
        .checked_add(height.checked_mul(size_of::<AtomicPtr<Node>>())?)?
        .checked_add(key_len)?
        .checked_add(value_len)?
        .checked_next_multiple_of(NODE_ALIGN)
}

/// Hints the cache lines at `at` and the two after it (a node's header, tower, key and the
/// head of its value, what a scan step reads) to the CPU without waiting for them.
#[inline(always)]
fn prefetch_lines(at: *const i8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint with no architectural effect: it never faults, even on
        // an address outside any allocation, and `sse` is in every x86_64 target.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(at);
            _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(64));
            _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(128));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// A published node, valid for `'a` (the borrow of its list).
#[derive(Clone, Copy)]
pub struct NodeRef<'a> {
    ptr: NonNull<Node>,
    list: PhantomData<&'a SkipList>,
}

impl<'a> NodeRef<'a> {
    fn header(self) -> &'a Node {
        // SAFETY: the node is live for 'a (chunks outlive every borrow of the list) and its
        // header is never written after publication.
        unsafe { self.ptr.as_ref() }
    }

    /// Slot `level` of the tower; `level < height`.
    fn slot(self, level: usize) -> &'a AtomicPtr<Node> {
        debug_assert!(level < usize::from(self.header().height));
        // SAFETY: the tower starts right after the 8-aligned header and holds `height`
        // initialised slots; `level < height` is an invariant of every caller (a search only
        // descends levels of nodes it reached at that level or above).
        unsafe {
            &*self
                .ptr
                .as_ptr()
                .cast::<u8>()
                .add(NODE_HEADER_BYTES)
                .cast::<AtomicPtr<Node>>()
                .add(level)
        }
    }

    /// The next node at `level`, if any.
    fn next(self, level: usize) -> Option<NodeRef<'a>> {
        NonNull::new(self.slot(level).load(Ordering::Acquire)).map(|ptr| NodeRef {
            ptr,
            list: PhantomData,
        })
    }

    fn data(self) -> *const u8 {
        let height = usize::from(self.header().height);
        // SAFETY: key and value follow the tower inside the node's allocation.
        unsafe {
            self.ptr
                .as_ptr()
                .cast::<u8>()
                .add(NODE_HEADER_BYTES + height * size_of::<AtomicPtr<Node>>())
        }
    }

    /// The user key.
    pub fn key(self) -> &'a [u8] {
        // SAFETY: `key_len` bytes written before publication, immutable since, live for 'a.
        unsafe { std::slice::from_raw_parts(self.data(), self.header().key_len) }
    }

    /// The value (empty for a tombstone).
    pub fn value(self) -> &'a [u8] {
        let header = self.header();
        // SAFETY: `value_len` bytes written right after the key, as for `key`.
        unsafe { std::slice::from_raw_parts(self.data().add(header.key_len), header.value_len) }
    }

    /// The sequence number.
    pub fn seq(self) -> Seq {
        self.header().seq
    }

    /// Put or delete.
    pub fn kind(self) -> ValueKind {
        ValueKind::from_tag(self.header().kind).unwrap_or(ValueKind::Put)
    }

    /// This node's position, to come back to it later through [`SkipPos::node`].
    pub fn pos(self) -> SkipPos {
        SkipPos(self.ptr)
    }

    /// The next node in internal order.
    pub fn successor(self) -> Option<NodeRef<'a>> {
        self.next(0)
    }

    /// Hints the nodes a scan reaches next, so their first touch overlaps the work on this
    /// one instead of stalling each step: the successor, and, when this node lies a short
    /// way past `came_from` (an arena filled in key order, as sorted batches fill it), the
    /// address three such strides ahead, where the node three steps on most likely is.
    #[inline(always)]
    pub fn prefetch_ahead(self, came_from: NodeRef<'a>) {
        /// Longest stride taken as "nodes laid out in order": a few nodes' worth.
        const MAX_STRIDE: usize = 4096;
        let here = self.ptr.as_ptr().cast::<i8>().cast_const();
        if let Some(next) = self.successor() {
            prefetch_lines(next.ptr.as_ptr().cast::<i8>().cast_const());
        }
        let stride = (here as usize).wrapping_sub(came_from.ptr.as_ptr() as usize);
        if (1..=MAX_STRIDE).contains(&stride) {
            prefetch_lines(here.wrapping_add(3 * stride));
        }
    }

    /// Internal order of this node against the internal key `(key, seq)`: user key ascending,
    /// then sequence number descending.
    fn cmp_to(self, key: &[u8], seq: Seq) -> KeyOrdering {
        self.key().cmp(key).then_with(|| seq.cmp(&self.seq()))
    }
}

/// Where a cursor stands in a list, kept without a borrow of it so a cursor can own the
/// list's memtable (an `Arc`) alongside: turned back into a [`NodeRef`] only by
/// [`SkipPos::node`], against the list it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkipPos(NonNull<Node>);

// SAFETY: a position is an address only; it is read through a `&SkipList` (which is `Sync`)
// and never written through.
unsafe impl Send for SkipPos {}
// SAFETY: as for `Send`.
unsafe impl Sync for SkipPos {}

impl SkipPos {
    /// The node at this position.
    ///
    /// # Safety
    /// `self` must come from [`NodeRef::pos`] of a node of `list` (the same list, not
    /// another): nodes live until their list is dropped, so the node is then valid for `'a`.
    pub unsafe fn node<'a>(self, list: &'a SkipList) -> NodeRef<'a> {
        let _ = list;
        NodeRef {
            ptr: self.0,
            list: PhantomData,
        }
    }
}

/// What the single writer owns: the arena, the tower-height generator and the finger.
struct Writer {
    arena: Arena,
    rng: u32,
    /// At every level, the last insert's predecessor (the head when none) and successor:
    /// always adjacent at that level, since only this writer links nodes.
    prev: [NonNull<Node>; MAX_HEIGHT],
    next: [*mut Node; MAX_HEIGHT],
}

impl Writer {
    fn random_height(&mut self) -> usize {
        let mut height = 1;
        while height < MAX_HEIGHT {
            // xorshift32
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 17;
            self.rng ^= self.rng << 5;
            if !self.rng.is_multiple_of(BRANCHING) {
                break;
            }
            height += 1;
        }
        height
    }
}

/// The skip list: entries in internal order (user key ascending, sequence number descending).
pub struct SkipList {
    /// A node with a full tower and no entry, allocated apart from the arena.
    head: NonNull<Node>,
    head_layout: Layout,
    /// Levels in use (readers may see it before the links of a new tallest node: harmless,
    /// the head's upper slots are null until then).
    height: AtomicUsize,
    /// Bytes taken from the system for nodes (chunk tails abandoned included).
    charged: AtomicUsize,
    writer: Mutex<Writer>,
}

// SAFETY: nodes are immutable after publication except their atomic tower slots, every
// allocation lives until the list is dropped, and all writer state is behind the mutex; the
// raw pointers are never handed out beyond borrows of the list.
unsafe impl Send for SkipList {}
// SAFETY: as for `Send`: shared access only reads immutable bytes or goes through atomics
// (readers) or the writer mutex (inserts).
unsafe impl Sync for SkipList {}

impl std::fmt::Debug for SkipList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkipList")
            .field("height", &self.height.load(Ordering::Relaxed))
            .field("charged", &self.charged.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Default for SkipList {
    fn default() -> Self {
        Self::new()
    }
}

impl SkipList {
    /// An empty list.
    pub fn new() -> Self {
        Self::with_pool(&CHUNK_POOL)
    }

    /// An empty list whose arena draws on and returns chunks to `pool`.
    fn with_pool(pool: &'static ChunkPool) -> Self {
        let size = node_bytes(MAX_HEIGHT, 0, 0).unwrap_or(NODE_HEADER_BYTES);
        let Ok(head_layout) = Layout::from_size_align(size, NODE_ALIGN) else {
            handle_alloc_error(Layout::new::<Node>())
        };
        // SAFETY: the layout is non-zero.
        let Some(raw) = NonNull::new(unsafe { alloc(head_layout) }) else {
            handle_alloc_error(head_layout)
        };
        let head = raw.cast::<Node>();
        // SAFETY: `head` is a fresh allocation sized for the header and MAX_HEIGHT slots.
        unsafe { init_node(head, MAX_HEIGHT, 0, ValueKind::Put, &[], &[]) };
        Self {
            head,
            head_layout,
            height: AtomicUsize::new(1),
            charged: AtomicUsize::new(0),
            writer: Mutex::new(Writer {
                arena: Arena::new(pool),
                rng: HEIGHT_SEED,
                prev: [head; MAX_HEIGHT],
                next: [ptr::null_mut(); MAX_HEIGHT],
            }),
        }
    }

    fn head(&self) -> NodeRef<'_> {
        NodeRef {
            ptr: self.head,
            list: PhantomData,
        }
    }

    /// Bytes taken from the system for entries.
    pub fn charged(&self) -> usize {
        self.charged.load(Ordering::Relaxed)
    }

    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.first().is_none()
    }

    /// The first node in internal order.
    pub fn first(&self) -> Option<NodeRef<'_>> {
        self.head().next(0)
    }

    /// The first node at or after the internal key `(key, seq)`.
    pub fn lower_bound(&self, key: &[u8], seq: Seq) -> Option<NodeRef<'_>> {
        let mut x = self.head();
        let mut level = self.height.load(Ordering::Relaxed).clamp(1, MAX_HEIGHT) - 1;
        // The node that ended the search at the level above (at or after the key): one level
        // down it is often `x`'s successor again, and need not be compared twice.
        let mut not_before: Option<NonNull<Node>> = None;
        loop {
            let next = x.next(level);
            match next {
                Some(n) if Some(n.ptr) != not_before && n.cmp_to(key, seq) == KeyOrdering::Less => {
                    x = n;
                }
                _ if level == 0 => return next,
                _ => {
                    not_before = next.map(|n| n.ptr);
                    level -= 1;
                }
            }
        }
    }

    /// Inserts an entry. An entry equal to one already present (same key and sequence number)
    /// goes before it, so lookups find the later insert.
    pub fn insert(&self, key: &[u8], seq: Seq, kind: ValueKind, value: &[u8]) {
        let mut guard = self.writer.lock();
        let w = &mut *guard;
        let height = w.random_height();
        let Some(size) = node_bytes(height, key.len(), value.len()) else {
            handle_alloc_error(Layout::new::<Node>())
        };
        let node = w.arena.allocate(size, &self.charged).cast::<Node>();
        // SAFETY: `node` is `size` fresh bytes of the arena, 8-aligned, sized for this
        // height, key and value; nobody can reach it before it is linked below.
        unsafe { init_node(node, height, seq, kind, key, value) };
        let node = NodeRef {
            ptr: node,
            list: PhantomData,
        };
        // The finger still brackets the key from some level up; search only below that.
        let brackets = |level: usize, w: &Writer| {
            let prev = NodeRef {
                ptr: *w.prev.get(level).unwrap_or(&self.head),
                list: PhantomData,
            };
            let next = w.next.get(level).copied().and_then(NonNull::new);
            (prev.ptr == self.head || prev.cmp_to(key, seq) == KeyOrdering::Less)
                && next.is_none_or(|n| {
                    NodeRef {
                        ptr: n,
                        list: PhantomData,
                    }
                    .cmp_to(key, seq)
                        != KeyOrdering::Less
                })
        };
        let mut valid = 0;
        while valid < MAX_HEIGHT && !brackets(valid, w) {
            valid += 1;
        }
        for level in (0..valid).rev() {
            let mut x = NodeRef {
                ptr: w.prev.get(level + 1).copied().unwrap_or(self.head),
                list: PhantomData,
            };
            let mut next = x.next(level);
            while let Some(n) = next.filter(|n| n.cmp_to(key, seq) == KeyOrdering::Less) {
                x = n;
                next = n.next(level);
            }
            if let (Some(p), Some(s)) = (w.prev.get_mut(level), w.next.get_mut(level)) {
                *p = x.ptr;
                *s = next.map_or(ptr::null_mut(), |n| n.ptr.as_ptr());
            }
        }
        for level in 0..height {
            let (Some(p), Some(s)) = (w.prev.get_mut(level), w.next.get_mut(level)) else {
                break;
            };
            node.slot(level).store(*s, Ordering::Relaxed);
            NodeRef {
                ptr: *p,
                list: PhantomData,
            }
            .slot(level)
            .store(node.ptr.as_ptr(), Ordering::Release);
            *p = node.ptr;
        }
        if height > self.height.load(Ordering::Relaxed) {
            self.height.store(height, Ordering::Relaxed);
        }
    }
}

/// Writes a node's header, null tower, key and value.
///
/// # Safety
/// `node` must point to at least `node_bytes(height, key.len(), value.len())` writable,
/// 8-aligned bytes that nothing else references.
unsafe fn init_node(
    node: NonNull<Node>,
    height: usize,
    seq: Seq,
    kind: ValueKind,
    key: &[u8],
    value: &[u8],
) {
    // SAFETY: the caller guarantees room for the header, `height` slots, key and value.
    unsafe {
        node.as_ptr().write(Node {
            seq,
            key_len: key.len(),
            value_len: value.len(),
            height: u8::try_from(height).unwrap_or(u8::MAX),
            kind: kind as u8,
        });
        let tower = node
            .as_ptr()
            .cast::<u8>()
            .add(NODE_HEADER_BYTES)
            .cast::<AtomicPtr<Node>>();
        for level in 0..height {
            tower.add(level).write(AtomicPtr::new(ptr::null_mut()));
        }
        let data = tower.add(height).cast::<u8>();
        ptr::copy_nonoverlapping(key.as_ptr(), data, key.len());
        ptr::copy_nonoverlapping(value.as_ptr(), data.add(key.len()), value.len());
    }
}

impl Drop for SkipList {
    fn drop(&mut self) {
        // The arena's chunks go back to the pool or the allocator when `writer` drops.
        // SAFETY: allocated in `new` with `head_layout`, freed once, here.
        unsafe { dealloc(self.head.as_ptr().cast(), self.head_layout) };
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::engine::memtable::arena::{POOL_CHUNKS, chunk_layout};

    /// Addresses of the arena chunks of `list`.
    fn chunks(list: &SkipList) -> Vec<usize> {
        let writer = list.writer.lock();
        let chunk = chunk_layout();
        writer
            .arena
            .blocks
            .iter()
            .filter(|(_, layout)| *layout == chunk)
            .map(|(block, _)| block.as_ptr() as usize)
            .collect()
    }

    #[test]
    fn lower_bound_finds_the_first_entry_at_or_after_every_key() {
        // Tall lists (so searches descend past nodes they already compared), versions of
        // one key, and keys between, before and after the stored ones.
        let list = SkipList::new();
        let mut stored = Vec::new();
        for i in 0..5_000u64 {
            let key = (i * 2).to_be_bytes();
            for seq in [3 * i + 2, 3 * i + 1] {
                list.insert(&key, seq, ValueKind::Put, &[]);
                stored.push((key.to_vec(), seq));
            }
        }
        stored.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        for probe in 0..10_002u64 {
            let key = probe.to_be_bytes();
            for seq in [0, 3 * (probe / 2) + 1, Seq::MAX] {
                // Internal order: an entry is at or after (key, seq) when its key is greater,
                // or equal with a sequence number at or below `seq`.
                let before = |(k, s): &(Vec<u8>, Seq)| {
                    k.as_slice() < key.as_slice() || (k.as_slice() == key.as_slice() && *s > seq)
                };
                let expected = stored.get(stored.partition_point(before));
                let found = list
                    .lower_bound(&key, seq)
                    .map(|n| (n.key().to_vec(), n.seq()));
                assert_eq!(found.as_ref(), expected, "key {probe} seq {seq}");
            }
        }
    }

    #[test]
    fn dropped_list_chunks_are_pooled_up_to_the_bound_and_reused_whole() {
        static POOL: ChunkPool = Mutex::new(Vec::new());
        let list = SkipList::with_pool(&POOL);
        for i in 0..8_000u64 {
            list.insert(&i.to_be_bytes(), i, ValueKind::Put, &[7; 1_000]);
        }
        let old = chunks(&list);
        assert!(old.len() > POOL_CHUNKS, "{}", old.len());
        drop(list);
        let pooled: Vec<usize> = POOL.lock().iter().map(|c| c.0.as_ptr() as usize).collect();
        assert_eq!(pooled.len(), POOL_CHUNKS);
        assert!(pooled.iter().all(|c| old.contains(c)));
        // The next list takes every pooled chunk before allocating any, and reads back
        // exactly what it wrote over their stale bytes.
        let next = SkipList::with_pool(&POOL);
        let value = |i: u64| {
            i.to_le_bytes()
                .repeat(1 + usize::try_from(i % 100).unwrap())
        };
        for i in (0..12_000u64).rev() {
            next.insert(&i.to_be_bytes(), i + 1, ValueKind::Put, &value(i));
        }
        let taken = chunks(&next);
        assert!(taken.len() > POOL_CHUNKS, "{}", taken.len());
        let mut first: Vec<usize> = taken.iter().copied().take(POOL_CHUNKS).collect();
        let mut expected = pooled;
        first.sort_unstable();
        expected.sort_unstable();
        assert_eq!(first, expected);
        assert!(POOL.lock().is_empty());
        let mut node = next.first();
        for i in 0..12_000u64 {
            let n = node.unwrap();
            assert_eq!(
                (n.key(), n.seq(), n.value()),
                (&i.to_be_bytes()[..], i + 1, &value(i)[..])
            );
            node = n.successor();
        }
        assert!(node.is_none());
    }
}
