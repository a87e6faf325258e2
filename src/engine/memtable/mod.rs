//! The in-memory sorted write buffer: a concurrent skip list of internal keys
//! (user key ascending, seq descending) plus the range tombstones written since the last flush.

mod arena;
mod skiplist;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::RwLock;

use self::skiplist::{NodeRef, SkipList, SkipPos};
use super::batch::BatchOp;
use super::{RangeTombstone, RunVisitor, Seq, ValueKind};

/// Bytes charged for a range tombstone on top of its bounds.
const ENTRY_OVERHEAD_BYTES: usize = 64;

/// One internal entry copied out of a memtable (the same shape as an SST entry; tests).
#[cfg(test)]
pub use crate::engine::sst::SstEntry as MemEntry;

/// A memtable. Writers insert one at a time (the engine's write pipeline; the skip list
/// serialises them anyway); readers read concurrently, without locks, and see only entries at
/// or below their read sequence number.
#[derive(Debug, Default)]
pub struct Memtable {
    list: SkipList,
    range_tombstones: RwLock<Vec<RangeTombstone>>,
    /// Bytes of the range tombstones (the skip list counts its own).
    tombstone_bytes: AtomicUsize,
    max_seq: AtomicU64,
}

impl Memtable {
    /// An empty memtable.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies the operations of one batch, operation `i` taking sequence number `first_seq + i`.
    pub fn apply(&self, first_seq: Seq, ops: &[BatchOp<'_>]) {
        let mut last = None;
        for (seq, op) in (first_seq..).zip(ops) {
            match *op {
                BatchOp::Put { key, value } => self.list.insert(key, seq, ValueKind::Put, value),
                BatchOp::Delete { key } => self.list.insert(key, seq, ValueKind::Delete, &[]),
                BatchOp::DeleteRange { start, end } => {
                    self.tombstone_bytes.fetch_add(
                        start.len() + end.len() + ENTRY_OVERHEAD_BYTES,
                        Ordering::Relaxed,
                    );
                    self.range_tombstones.write().push(RangeTombstone {
                        start: start.to_vec(),
                        end: end.to_vec(),
                        seq,
                    });
                }
            }
            last = Some(seq);
        }
        if let Some(seq) = last {
            self.max_seq.fetch_max(seq, Ordering::Relaxed);
        }
    }

    /// Inserts one internal entry.
    pub fn insert(&self, key: &[u8], seq: Seq, kind: ValueKind, value: &[u8]) {
        self.list.insert(key, seq, kind, value);
        self.max_seq.fetch_max(seq, Ordering::Relaxed);
    }

    /// The newest version of `key` with `seq <= read_seq`: its sequence number and kind,
    /// with its value copied into `value` (replacing its contents). Copied straight from the
    /// node into the caller's buffer: an owned entry cost a point read two allocations and
    /// two more copies.
    pub fn get_into(
        &self,
        key: &[u8],
        read_seq: Seq,
        value: &mut Vec<u8>,
    ) -> Option<(Seq, ValueKind)> {
        let node = self.list.lower_bound(key, read_seq)?;
        if node.key() != key {
            return None;
        }
        value.clear();
        value.extend_from_slice(node.value());
        Some((node.seq(), node.kind()))
    }

    /// The newest entry for `key` with `seq <= read_seq`, owned (tests).
    #[cfg(test)]
    pub fn get(&self, key: &[u8], read_seq: Seq) -> Option<MemEntry> {
        let mut value = vec![0xA5; 3];
        let (seq, kind) = self.get_into(key, read_seq, &mut value)?;
        Some(MemEntry {
            key: key.to_vec(),
            seq,
            kind,
            value,
        })
    }

    /// Every entry in internal order, copied (tests; a flush lends them through `MemCursor`).
    #[cfg(test)]
    pub fn entries(&self) -> impl Iterator<Item = MemEntry> + '_ {
        std::iter::successors(self.list.first(), |n| n.successor()).map(to_entry)
    }

    /// True when a range tombstone of this memtable, visible at `read_seq`, deletes `key`@`entry_seq`.
    #[must_use]
    pub fn range_deletes(&self, key: &[u8], entry_seq: Seq, read_seq: Seq) -> bool {
        self.range_tombstones
            .read()
            .iter()
            .any(|t| t.deletes(key, entry_seq, read_seq))
    }

    /// The range tombstones applied so far.
    #[must_use]
    pub fn range_tombstones(&self) -> Vec<RangeTombstone> {
        self.range_tombstones.read().clone()
    }

    /// True when at least one range tombstone was applied.
    #[must_use]
    pub fn has_range_tombstones(&self) -> bool {
        !self.range_tombstones.read().is_empty()
    }

    /// Memory used, in bytes: what the skip list took from the allocator for its entries
    /// (whole entries: node, key and value in one arena slot) plus the range tombstones.
    #[must_use]
    pub fn approximate_bytes(&self) -> usize {
        self.list.charged() + self.tombstone_bytes.load(Ordering::Relaxed)
    }

    /// True when nothing was ever applied.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && self.range_tombstones.read().is_empty()
    }

    /// Highest sequence number applied (0 when empty).
    #[must_use]
    pub fn max_seq(&self) -> Seq {
        self.max_seq.load(Ordering::Relaxed)
    }
}

/// How a [`MemCursor::run_while`] ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemRun {
    /// The cursor stepped at least once.
    pub moved: bool,
    /// The visitor stopped the run; the cursor is on the entry it stopped at.
    pub stopped: bool,
}

/// A cursor over a memtable's entries in internal order that lends them in place: it holds
/// the memtable, so every entry it reaches stays valid (nodes are freed only with their
/// list) and nothing is copied per entry.
#[derive(Debug)]
pub struct MemCursor {
    mem: Arc<Memtable>,
    /// The current node of `mem.list`; `None` before a seek and past the end.
    pos: Option<SkipPos>,
    /// The node `step` left (`None` after a seek): versions of one key are neighbours, so
    /// comparing with it tells an older version without a copy of the previous key.
    prev: Option<SkipPos>,
}

impl MemCursor {
    /// A cursor over `mem`, not yet positioned.
    #[must_use]
    pub fn new(mem: Arc<Memtable>) -> Self {
        Self {
            mem,
            pos: None,
            prev: None,
        }
    }

    /// Moves to the first entry with user key `>= start`; false when there is none.
    pub fn seek(&mut self, start: &[u8]) -> bool {
        self.pos = self.mem.list.lower_bound(start, Seq::MAX).map(NodeRef::pos);
        self.prev = None;
        self.pos.is_some()
    }

    /// Moves to the next entry; false at the end (and then stays there).
    #[inline]
    pub fn step(&mut self) -> bool {
        self.prev = self.pos;
        let here = self.node();
        let next = here.and_then(NodeRef::successor);
        if let (Some(here), Some(next)) = (here, next) {
            next.prefetch_ahead(here);
        }
        self.pos = next.map(NodeRef::pos);
        self.pos.is_some()
    }

    /// Steps on, as [`MemCursor::step`] does, while `in_bounds` holds for the next key,
    /// handing each entry reached to `visit` ([`RunVisitor::visit`]) until it returns true. The walk keeps its nodes in locals and stores the cursor's
    /// position once at the end: a filtered scan passes most entries, and per-entry stores
    /// and reloads of the position were a good part of each step.
    #[inline(always)]
    pub fn run_while(
        &mut self,
        in_bounds: impl Fn(&[u8]) -> bool,
        visit: &mut impl RunVisitor,
    ) -> MemRun {
        let list = &self.mem.list;
        // SAFETY: as in `node`: `pos` was set from a node of `list`, which `self.mem` keeps.
        let Some(mut here) = self.pos.map(|pos| unsafe { pos.node(list) }) else {
            return MemRun::default();
        };
        let mut left = here;
        let mut run = MemRun::default();
        while let Some(next) = here.successor() {
            let key = next.key();
            if !in_bounds(key) {
                break;
            }
            next.prefetch_ahead(here);
            let previous = here.key();
            let same =
                previous.len() == key.len() && previous.last() == key.last() && previous == key;
            (left, here) = (here, next);
            run.moved = true;
            if visit.visit(same, next.seq(), next.kind(), next.value()) {
                run.stopped = true;
                break;
            }
        }
        if run.moved {
            self.prev = Some(left.pos());
            self.pos = Some(here.pos());
        }
        run
    }

    /// Whether the current entry's user key is the one of the entry `step` left (false
    /// after a seek and at the end).
    #[inline(always)]
    #[must_use]
    pub fn same_key_as_previous(&self) -> bool {
        // SAFETY: as in `node`: `prev` was set from a node of `self.mem.list`.
        let prev = self.prev.map(|pos| unsafe { pos.node(&self.mem.list) });
        match (prev, self.node()) {
            (Some(prev), Some(node)) => {
                let (a, b) = (prev.key(), node.key());
                a.len() == b.len() && a.last() == b.last() && a == b
            }
            _ => false,
        }
    }

    /// Leaves the entries: the cursor is past the end.
    pub fn finish(&mut self) {
        self.pos = None;
    }

    #[inline]
    fn node(&self) -> Option<NodeRef<'_>> {
        // SAFETY: `pos` is only ever set from nodes of `self.mem.list` (`seek`, `step`), and
        // `self.mem` keeps that list, hence its nodes, alive for the borrow of `self`.
        self.pos.map(|pos| unsafe { pos.node(&self.mem.list) })
    }

    /// The current user key (empty when not positioned).
    #[inline]
    #[must_use]
    pub fn key(&self) -> &[u8] {
        self.node().map_or(&[], NodeRef::key)
    }

    /// The current value (empty when not positioned, or for a tombstone).
    #[inline]
    #[must_use]
    pub fn value(&self) -> &[u8] {
        self.node().map_or(&[], NodeRef::value)
    }

    /// The current user key, sequence number and kind in one look at the node (an empty
    /// key, 0 and Put when not positioned).
    #[inline]
    #[must_use]
    pub fn head(&self) -> (&[u8], Seq, ValueKind) {
        self.node()
            .map_or((&[], 0, ValueKind::Put), |n| (n.key(), n.seq(), n.kind()))
    }

    /// The current sequence number (0 when not positioned).
    #[inline]
    #[must_use]
    pub fn seq(&self) -> Seq {
        self.node().map_or(0, NodeRef::seq)
    }

    /// The current kind.
    #[inline]
    #[must_use]
    pub fn kind(&self) -> ValueKind {
        self.node().map_or(ValueKind::Put, NodeRef::kind)
    }
}

#[cfg(test)]
fn to_entry(node: NodeRef<'_>) -> MemEntry {
    MemEntry {
        key: node.key().to_vec(),
        seq: node.seq(),
        kind: node.kind(),
        value: node.value().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn memtable_charge_counts_whole_entries_and_chunk_tails() {
        let mem = Memtable::new();
        assert_eq!(mem.approximate_bytes(), 0);
        mem.insert(b"k", 1, ValueKind::Put, &[7; 180]);
        let one = mem.approximate_bytes();
        // Header, at least one tower slot, key and value, rounded to 8.
        assert!(one >= 32 + 8 + 1 + 180, "{one}");
        assert!(one <= 32 + 12 * 8 + 1 + 180 + 8, "{one}");
        // Many entries: the charge tracks the payload within the node overhead, and covers
        // every byte of every chunk handed out so far (the current chunk's free tail aside).
        for seq in 2..5_000u64 {
            mem.insert(&seq.to_be_bytes(), seq, ValueKind::Put, &[1; 180]);
        }
        let bytes = mem.approximate_bytes();
        let payload = 5_000 * (8 + 180);
        assert!(bytes >= payload + 5_000 * 40, "{bytes}");
        assert!(bytes <= payload + 5_000 * 64, "{bytes}");
    }

    #[test]
    fn memtable_large_entry_gets_its_own_allocation_and_reads_back() {
        let mem = Memtable::new();
        let big = vec![9u8; 1 << 20];
        mem.insert(b"a", 1, ValueKind::Put, b"small");
        mem.insert(b"b", 2, ValueKind::Put, &big);
        mem.insert(b"c", 3, ValueKind::Put, b"small");
        assert_eq!(mem.get(b"b", 9).unwrap().value, big);
        assert_eq!(mem.get(b"c", 9).unwrap().value, b"small");
        assert!(mem.approximate_bytes() >= big.len());
        assert!(mem.approximate_bytes() < big.len() + (64 << 10));
    }

    #[test]
    fn memtable_keeps_internal_order_for_any_insert_order() {
        // Ascending runs (the finger's fast path), descending keys, and versions of one key
        // arriving in any order must all end up in (key asc, seq desc) order.
        let mem = Memtable::new();
        let mut expected = Vec::new();
        let mut state = 7u64;
        for i in 0..3_000u64 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let key = match i % 3 {
                0 => (i / 3).to_be_bytes().to_vec(),
                1 => (u64::MAX - i).to_be_bytes().to_vec(),
                _ => (state >> 54).to_be_bytes().to_vec(),
            };
            let seq = state >> 20;
            mem.insert(&key, seq, ValueKind::Put, &i.to_le_bytes());
            expected.push((key, seq));
        }
        expected.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let got: Vec<_> = mem.entries().map(|e| (e.key, e.seq)).collect();
        assert_eq!(got, expected);
        for (key, seq) in expected.iter().step_by(7) {
            let found = mem.get(key, *seq).unwrap();
            assert_eq!((&found.key, found.seq), (key, *seq));
        }
    }

    /// Key and value of the `i`-th write of the concurrency test: interleaved ascending and
    /// scattered keys, values derived from the key so a reader can check every byte.
    fn concurrent_entry(i: u64) -> (Vec<u8>, Vec<u8>) {
        let k = if i.is_multiple_of(2) {
            i
        } else {
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        };
        let key = k.to_be_bytes().to_vec();
        let len = usize::try_from(k % 300).unwrap();
        let value = key.iter().copied().cycle().take(len).collect();
        (key, value)
    }

    #[test]
    fn memtable_readers_see_whole_entries_while_a_writer_inserts() {
        use std::sync::atomic::AtomicBool;
        let writes: u64 = if cfg!(miri) { 300 } else { 20_000 };
        let mem = Arc::new(Memtable::new());
        let published = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..3)
            .map(|r| {
                let (mem, published, done) = (mem.clone(), published.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut rounds = 0u64;
                    while !done.load(Ordering::Acquire) || rounds < 2 {
                        rounds += 1;
                        let seen = published.load(Ordering::Acquire);
                        // Every published write is found, whole.
                        for i in (0..seen)
                            .rev()
                            .step_by(1 + usize::try_from(r).unwrap())
                            .take(50)
                        {
                            let (key, value) = concurrent_entry(i);
                            let entry = mem.get(&key, Seq::MAX).unwrap();
                            assert_eq!((entry.seq, entry.value), (i + 1, value));
                        }
                        // A scan is in order and every entry it meets is whole.
                        let entries = walk(&mem, b"");
                        assert!(entries.len() as u64 >= seen);
                        for pair in entries.windows(2) {
                            assert!(pair[0].0 < pair[1].0);
                        }
                        for (got_key, seq, _, got_value) in &entries {
                            let (key, value) = concurrent_entry(seq - 1);
                            assert_eq!((got_key, got_value), (&key, &value));
                        }
                    }
                })
            })
            .collect();
        for i in 0..writes {
            let (key, value) = concurrent_entry(i);
            mem.insert(&key, i + 1, ValueKind::Put, &value);
            published.store(i + 1, Ordering::Release);
        }
        done.store(true, Ordering::Release);
        for reader in readers {
            reader.join().unwrap();
        }
        assert_eq!(mem.entries().count() as u64, writes);
    }

    #[test]
    fn memtable_get_returns_newest_version_at_or_below_read_seq() {
        let mem = Memtable::new();
        mem.insert(b"k", 1, ValueKind::Put, b"one");
        mem.insert(b"k", 3, ValueKind::Put, b"three");
        mem.insert(b"k", 5, ValueKind::Delete, b"");
        assert_eq!(mem.get(b"k", 0), None);
        assert_eq!(mem.get(b"k", 2).unwrap().value, b"one");
        assert_eq!(mem.get(b"k", 4).unwrap().value, b"three");
        assert_eq!(mem.get(b"k", 9).unwrap().kind, ValueKind::Delete);
        assert_eq!(mem.get(b"j", 9), None);
        assert_eq!(mem.get(b"kk", 9), None);
    }

    #[test]
    fn memtable_apply_gives_each_operation_its_own_seq() {
        let mem = Memtable::new();
        let ops = [
            BatchOp::Put {
                key: b"a",
                value: b"1",
            },
            BatchOp::Delete { key: b"a" },
            BatchOp::DeleteRange {
                start: b"b",
                end: b"c",
            },
        ];
        mem.apply(10, &ops);
        assert_eq!(mem.get(b"a", 10).unwrap().kind, ValueKind::Put);
        assert_eq!(mem.get(b"a", 11).unwrap().kind, ValueKind::Delete);
        assert_eq!(mem.range_tombstones()[0].seq, 12);
        assert_eq!(mem.max_seq(), 12);
        assert!(mem.approximate_bytes() > 0);
    }

    /// Every entry a cursor meets from `start` on, as (key, seq, kind, value).
    fn walk(mem: &Arc<Memtable>, start: &[u8]) -> Vec<(Vec<u8>, Seq, ValueKind, Vec<u8>)> {
        let mut cursor = MemCursor::new(Arc::clone(mem));
        let mut out = Vec::new();
        let mut more = cursor.seek(start);
        while more {
            out.push((
                cursor.key().to_vec(),
                cursor.seq(),
                cursor.kind(),
                cursor.value().to_vec(),
            ));
            more = cursor.step();
        }
        // Past the end the cursor lends nothing and stays there.
        assert!(!cursor.step());
        assert_eq!(
            (cursor.key(), cursor.value(), cursor.seq()),
            (&b""[..], &b""[..], 0)
        );
        out
    }

    #[test]
    fn memtable_cursor_lends_entries_in_internal_order_from_its_seek_key() {
        let mem = Arc::new(Memtable::new());
        for (key, seq) in [(b"a", 1), (b"b", 2), (b"b", 3), (b"c", 4)] {
            mem.insert(key, seq, ValueKind::Put, &[key[0]; 3]);
        }
        mem.insert(b"d", 5, ValueKind::Delete, b"");
        let got = walk(&mem, b"b");
        let keys: Vec<_> = got.iter().map(|(k, s, _, _)| (k.clone(), *s)).collect();
        assert_eq!(
            keys,
            vec![
                (b"b".to_vec(), 3),
                (b"b".to_vec(), 2),
                (b"c".to_vec(), 4),
                (b"d".to_vec(), 5)
            ]
        );
        assert_eq!(got[2].3, b"ccc");
        assert_eq!(
            (got[3].2, got[3].3.as_slice()),
            (ValueKind::Delete, &b""[..])
        );
        assert!(walk(&mem, b"e").is_empty());
        assert_eq!(walk(&mem, b"").len(), 5);
    }

    #[test]
    fn memtable_cursor_keeps_its_entries_alive_after_other_handles_drop() {
        let mem = Arc::new(Memtable::new());
        for i in 0..2_000u32 {
            mem.insert(&i.to_be_bytes(), u64::from(i), ValueKind::Put, &[7; 100]);
        }
        let mut cursor = MemCursor::new(Arc::clone(&mem));
        assert!(cursor.seek(&1_000u32.to_be_bytes()));
        drop(mem);
        let mut seen = 0u32;
        loop {
            assert_eq!(cursor.key(), (1_000 + seen).to_be_bytes());
            assert_eq!(cursor.value(), [7; 100]);
            seen += 1;
            if !cursor.step() {
                break;
            }
        }
        assert_eq!(seen, 1_000);
    }
}
