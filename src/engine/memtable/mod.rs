//! The in-memory sorted write buffer: a concurrent skip list of internal keys
//! (user key ascending, seq descending) plus the range tombstones written since the last flush.

use std::borrow::Borrow;
use std::cmp::Reverse;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_skiplist::SkipMap;
use parking_lot::RwLock;

use super::batch::BatchOp;
use super::{RangeTombstone, Seq, ValueKind};

/// Bytes charged for a range tombstone on top of its bounds.
const ENTRY_OVERHEAD_BYTES: usize = 64;
/// Words of a skip-list node besides its key and value: the reference count / height word and
/// two tower pointers (the expected height).
const NODE_EXTRA_WORDS: usize = 3;
/// Per-allocation header and alignment of the system allocator (glibc: 8 and 16, at least 32).
const MALLOC_HEADER_BYTES: usize = 8;
/// See [`MALLOC_HEADER_BYTES`].
const MALLOC_ALIGN_BYTES: usize = 16;
/// See [`MALLOC_HEADER_BYTES`].
const MALLOC_MIN_CHUNK_BYTES: usize = 32;

/// Bytes the allocator really hands out for a request of `n` bytes.
const fn chunk(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let rounded = (n + MALLOC_HEADER_BYTES).next_multiple_of(MALLOC_ALIGN_BYTES);
    if rounded < MALLOC_MIN_CHUNK_BYTES {
        MALLOC_MIN_CHUNK_BYTES
    } else {
        rounded
    }
}

/// Memory one entry really takes: the skip-list node and the key and value buffers, each
/// rounded as the allocator rounds it, so `memtable_bytes` bounds resident memory rather than
/// payload (for 21-byte keys and 180-byte values: 320 bytes charged for 201 of payload).
const fn entry_charge(key_len: usize, value_len: usize) -> usize {
    let node = std::mem::size_of::<MemKey>()
        + std::mem::size_of::<MemValue>()
        + NODE_EXTRA_WORDS * std::mem::size_of::<usize>();
    chunk(node) + chunk(key_len) + chunk(value_len)
}

/// An internal key: ordered by user key ascending, then sequence number descending, so the
/// newest version of a key comes first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct MemKey {
    user_key: Vec<u8>,
    seq: Reverse<Seq>,
}

/// A view of an internal key, so lookups can compare a borrowed probe with the stored keys
/// without building an owned key (no allocation per `get`).
trait KeyView {
    fn user_key(&self) -> &[u8];
    fn seq(&self) -> Seq;
}

impl KeyView for MemKey {
    fn user_key(&self) -> &[u8] {
        &self.user_key
    }
    fn seq(&self) -> Seq {
        self.seq.0
    }
}

/// A borrowed internal key to search for.
struct Probe<'a> {
    user_key: &'a [u8],
    seq: Seq,
}

impl KeyView for Probe<'_> {
    fn user_key(&self) -> &[u8] {
        self.user_key
    }
    fn seq(&self) -> Seq {
        self.seq
    }
}

impl<'a> Borrow<dyn KeyView + 'a> for MemKey {
    fn borrow(&self) -> &(dyn KeyView + 'a) {
        self
    }
}

/// The same order as `MemKey`'s: user key ascending, then sequence number descending.
impl Ord for dyn KeyView + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.user_key()
            .cmp(other.user_key())
            .then_with(|| other.seq().cmp(&self.seq()))
    }
}
impl PartialOrd for dyn KeyView + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for dyn KeyView + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for dyn KeyView + '_ {}

#[derive(Debug, Clone)]
struct MemValue {
    kind: ValueKind,
    value: Vec<u8>,
}

/// One internal entry copied out of a memtable (the same shape as an SST entry).
pub use crate::engine::sst::SstEntry as MemEntry;

/// A memtable. Writers insert under the engine's single write pipeline; readers read
/// concurrently and see only entries at or below their read sequence number.
#[derive(Debug, Default)]
pub struct Memtable {
    map: SkipMap<MemKey, MemValue>,
    range_tombstones: RwLock<Vec<RangeTombstone>>,
    bytes: AtomicUsize,
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
        for (seq, op) in (first_seq..).zip(ops) {
            match *op {
                BatchOp::Put { key, value } => self.insert(key, seq, ValueKind::Put, value),
                BatchOp::Delete { key } => self.insert(key, seq, ValueKind::Delete, &[]),
                BatchOp::DeleteRange { start, end } => {
                    self.bytes.fetch_add(
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
            self.max_seq.fetch_max(seq, Ordering::Relaxed);
        }
    }

    /// Inserts one internal entry.
    pub fn insert(&self, key: &[u8], seq: Seq, kind: ValueKind, value: &[u8]) {
        self.bytes
            .fetch_add(entry_charge(key.len(), value.len()), Ordering::Relaxed);
        self.max_seq.fetch_max(seq, Ordering::Relaxed);
        self.map.insert(
            MemKey {
                user_key: key.to_vec(),
                seq: Reverse(seq),
            },
            MemValue {
                kind,
                value: value.to_vec(),
            },
        );
    }

    /// The newest entry for `key` with `seq <= read_seq`.
    #[must_use]
    pub fn get(&self, key: &[u8], read_seq: Seq) -> Option<MemEntry> {
        let probe = Probe {
            user_key: key,
            seq: read_seq,
        };
        let entry = self
            .map
            .lower_bound(Bound::Included(&probe as &dyn KeyView))?;
        (entry.key().user_key == key).then(|| to_entry(entry.key(), entry.value()))
    }

    /// Up to `limit` entries in internal order starting at the first with user key `>= start`
    /// (or strictly after the internal key `after`, when given).
    #[must_use]
    pub fn scan(&self, start: &[u8], after: Option<(&[u8], Seq)>, limit: usize) -> Vec<MemEntry> {
        let mut out = Vec::new();
        let len = self.scan_into(start, after, None, limit, &mut out);
        out.truncate(len);
        out
    }

    /// As [`Memtable::scan`], but stopping before user key `end` (when given) and writing
    /// into `out[..n]`, reusing the entries (and their key and value buffers) already there;
    /// returns `n`. Entries past `n` are left as they were.
    pub fn scan_into(
        &self,
        start: &[u8],
        after: Option<(&[u8], Seq)>,
        end: Option<&[u8]>,
        limit: usize,
        out: &mut Vec<MemEntry>,
    ) -> usize {
        let probe = match after {
            Some((user_key, seq)) => Probe { user_key, seq },
            None => Probe {
                user_key: start,
                seq: Seq::MAX,
            },
        };
        let probe: &dyn KeyView = &probe;
        let lower = if after.is_some() {
            Bound::Excluded(probe)
        } else {
            Bound::Included(probe)
        };
        let mut len = 0;
        for entry in self
            .map
            .range::<dyn KeyView, _>((lower, Bound::Unbounded))
            .take(limit)
            .take_while(|entry| end.is_none_or(|end| entry.key().user_key.as_slice() < end))
        {
            let (key, value) = (entry.key(), entry.value());
            if let Some(slot) = out.get_mut(len) {
                slot.key.clear();
                slot.key.extend_from_slice(&key.user_key);
                slot.value.clear();
                slot.value.extend_from_slice(&value.value);
                slot.seq = key.seq.0;
                slot.kind = value.kind;
            } else {
                out.push(to_entry(key, value));
            }
            len += 1;
        }
        len
    }

    /// Every entry in internal order (for flushing a frozen memtable).
    pub fn entries(&self) -> impl Iterator<Item = MemEntry> + '_ {
        self.map
            .iter()
            .map(|entry| to_entry(entry.key(), entry.value()))
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

    /// Approximate memory used, in bytes.
    #[must_use]
    pub fn approximate_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// True when nothing was ever applied.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty() && self.range_tombstones.read().is_empty()
    }

    /// Highest sequence number applied (0 when empty).
    #[must_use]
    pub fn max_seq(&self) -> Seq {
        self.max_seq.load(Ordering::Relaxed)
    }
}

fn to_entry(key: &MemKey, value: &MemValue) -> MemEntry {
    MemEntry {
        key: key.user_key.clone(),
        seq: key.seq.0,
        kind: value.kind,
        value: value.value.clone(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn memtable_charge_covers_allocator_rounding_and_node() {
        // 21-byte key and 180-byte value: 32 + 192 for the buffers, 96 for the node.
        assert_eq!(entry_charge(21, 180), 320);
        // A tombstone has no value buffer.
        assert_eq!(entry_charge(21, 0), 128);
        let mem = Memtable::new();
        mem.insert(b"k", 1, ValueKind::Put, &[7; 180]);
        assert_eq!(mem.approximate_bytes(), entry_charge(1, 180));
        assert!(mem.approximate_bytes() >= 1 + 180 + 64);
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

    #[test]
    fn memtable_scan_resumes_after_internal_key_in_order() {
        let mem = Memtable::new();
        for (key, seq) in [(b"a", 1), (b"b", 2), (b"b", 3), (b"c", 4)] {
            mem.insert(key, seq, ValueKind::Put, b"");
        }
        let first = mem.scan(b"b", None, 1);
        assert_eq!((first[0].key.as_slice(), first[0].seq), (&b"b"[..], 3));
        let rest = mem.scan(b"b", Some((b"b", 3)), 10);
        let got: Vec<_> = rest.iter().map(|e| (e.key.clone(), e.seq)).collect();
        assert_eq!(got, vec![(b"b".to_vec(), 2), (b"c".to_vec(), 4)]);
    }

    #[test]
    fn memtable_scan_into_stops_at_end_and_overwrites_reused_entries() {
        let mem = Memtable::new();
        mem.insert(b"a", 1, ValueKind::Put, b"long value");
        mem.insert(b"b", 2, ValueKind::Delete, b"");
        let mut out = Vec::new();
        assert_eq!(mem.scan_into(b"", None, None, 10, &mut out), 2);
        assert_eq!(mem.scan_into(b"", None, Some(b"b"), 10, &mut out), 1);
        assert_eq!(mem.scan_into(b"b", None, None, 10, &mut out), 1);
        assert_eq!((out[0].key.as_slice(), out[0].seq), (&b"b"[..], 2));
        assert_eq!(
            (out[0].kind, out[0].value.as_slice()),
            (ValueKind::Delete, &b""[..])
        );
        assert_eq!(mem.scan_into(b"c", None, None, 10, &mut out), 0);
    }
}
