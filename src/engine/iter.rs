//! Merging iterators over memtables and SSTs.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use super::memtable::Memtable;
use super::sst::{SstEntry, SstIter};
use super::version::{ReadView, SstHandle};
use super::{RangeTombstone, Result, Seq, ValueKind};

/// Entries fetched from a memtable per refill: bounds the copy while keeping iteration lock-free.
const MEM_SCAN_CHUNK: usize = 64;
/// A key above every valid key (longer than the key limit), standing for "no end".
const MAX_KEY_BOUND: &[u8] = &[0xFF; super::limits::MAX_KEY_BYTES + 1];

/// One sorted input of a merge.
#[derive(Debug)]
pub enum Source {
    /// A memtable read in chunks from `start`.
    Mem {
        /// The memtable.
        mem: Arc<Memtable>,
        /// First user key of interest.
        start: Vec<u8>,
        /// Entries fetched but not yet returned.
        buf: VecDeque<SstEntry>,
        /// The internal key of the last fetched entry.
        last: Option<(Vec<u8>, Seq)>,
        /// No more entries.
        exhausted: bool,
    },
    /// An SST iterator.
    Sst(SstIter),
}

impl Source {
    /// A memtable source starting at `start`.
    pub fn mem(mem: Arc<Memtable>, start: &[u8]) -> Self {
        Self::Mem {
            mem,
            start: start.to_vec(),
            buf: VecDeque::new(),
            last: None,
            exhausted: false,
        }
    }

    fn next_entry(&mut self) -> Option<Result<SstEntry>> {
        match self {
            Self::Sst(iter) => iter.next(),
            Self::Mem {
                mem,
                start,
                buf,
                last,
                exhausted,
            } => {
                if buf.is_empty() && !*exhausted {
                    let after = last.as_ref().map(|(key, seq)| (key.as_slice(), *seq));
                    let chunk = mem.scan(start, after, MEM_SCAN_CHUNK);
                    *exhausted = chunk.len() < MEM_SCAN_CHUNK;
                    if let Some(entry) = chunk.last() {
                        *last = Some((entry.key.clone(), entry.seq));
                    }
                    buf.extend(chunk);
                }
                buf.pop_front().map(Ok)
            }
        }
    }
}

#[derive(Debug)]
struct HeapItem {
    entry: SstEntry,
    source: usize,
}

impl HeapItem {
    /// Internal order: user key ascending, seq descending, then source (newer first).
    fn internal_cmp(&self, other: &Self) -> Ordering {
        self.entry
            .key
            .cmp(&other.entry.key)
            .then_with(|| other.entry.seq.cmp(&self.entry.seq))
            .then_with(|| self.source.cmp(&other.source))
    }
}

impl PartialEq for HeapItem {
    fn eq(&self, other: &Self) -> bool {
        self.internal_cmp(other) == Ordering::Equal
    }
}
impl Eq for HeapItem {}
impl PartialOrd for HeapItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapItem {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the smallest internal key pops first.
        other.internal_cmp(self)
    }
}

/// Merges sorted sources into one stream in internal order (every version of every key).
#[derive(Debug)]
pub struct MergeIter {
    sources: Vec<Source>,
    heap: BinaryHeap<HeapItem>,
    primed: bool,
}

impl MergeIter {
    /// A merge of `sources`, listed newest first.
    pub fn new(sources: Vec<Source>) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(sources.len()),
            sources,
            primed: false,
        }
    }

    fn pull(&mut self, source: usize) -> Result<()> {
        if let Some(next) = self.sources.get_mut(source).and_then(Source::next_entry) {
            self.heap.push(HeapItem {
                entry: next?,
                source,
            });
        }
        Ok(())
    }
}

impl Iterator for MergeIter {
    type Item = Result<SstEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.primed {
            self.primed = true;
            for source in 0..self.sources.len() {
                if let Err(err) = self.pull(source) {
                    return Some(Err(err));
                }
            }
        }
        let item = self.heap.pop()?;
        if let Err(err) = self.pull(item.source) {
            return Some(Err(err));
        }
        Some(Ok(item.entry))
    }
}

/// Live (key, value) pairs of a range at one sequence number, ascending. Holds the read view
/// it iterates, so the SSTs it reads stay alive and their extents are not reused meanwhile.
#[derive(Debug)]
pub struct RangeIter {
    _view: Arc<ReadView>,
    merge: MergeIter,
    end: Option<Vec<u8>>,
    read_seq: Seq,
    tombstones: Vec<RangeTombstone>,
    /// The user key of the last entry returned or skipped (only its newest version counts).
    last_key: Vec<u8>,
    has_last: bool,
    done: bool,
}

impl RangeIter {
    /// Iterates `[start, end)` of `view` at `read_seq` (`end = None`: to the last key). With
    /// `prefix`, every key of the range starts with it: SSTs whose partition-prefix filter
    /// rules it out are skipped.
    pub fn new(
        view: Arc<ReadView>,
        start: &[u8],
        end: Option<&[u8]>,
        read_seq: Seq,
        prefix: Option<&[u8]>,
    ) -> Self {
        let empty = end.is_some_and(|end| start >= end);
        let bound = end.map_or(MAX_KEY_BOUND, |end| end);
        let mut sources: Vec<Source> = std::iter::once(&view.mem)
            .chain(&view.imms)
            .map(|mem| Source::mem(Arc::clone(mem), start))
            .collect();
        let ssts: Vec<Arc<SstHandle>> = if empty {
            Vec::new()
        } else {
            view.version.ssts_in_range(start, end, prefix)
        };
        sources.extend(ssts.iter().map(|sst| Source::Sst(sst.reader.iter(start))));
        let tombstones = view.range_tombstones(start, bound, read_seq);
        Self {
            merge: MergeIter::new(sources),
            end: end.map(<[u8]>::to_vec),
            read_seq,
            tombstones,
            last_key: Vec::new(),
            has_last: false,
            done: empty,
            _view: view,
        }
    }
}

impl Iterator for RangeIter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let entry = match self.merge.next() {
                None => break,
                Some(Err(err)) => {
                    self.done = true;
                    return Some(Err(err));
                }
                Some(Ok(entry)) => entry,
            };
            if self.end.as_ref().is_some_and(|end| entry.key >= *end) {
                break;
            }
            if entry.seq > self.read_seq || (self.has_last && self.last_key == entry.key) {
                continue;
            }
            self.last_key.clear();
            self.last_key.extend_from_slice(&entry.key);
            self.has_last = true;
            let deleted = entry.kind == ValueKind::Delete
                || self
                    .tombstones
                    .iter()
                    .any(|t| t.deletes(&entry.key, entry.seq, self.read_seq));
            if !deleted {
                return Some(Ok((entry.key, entry.value)));
            }
        }
        self.done = true;
        None
    }
}
