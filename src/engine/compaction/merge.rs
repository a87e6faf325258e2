//! The entries a flush or compaction writes, lent one at a time (no copy per entry).
//!
//! Compaction inputs are merged by [`SstMerge`]: inputs with disjoint key ranges (the SSTs of
//! one level 1+) are chained into one run read back to back, so a job of four L0 SSTs and
//! eight L1 SSTs compares five cursors per entry, not twelve, and entries are borrowed from
//! the decoded blocks instead of copied into two fresh buffers each.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::engine::memtable::{MemCursor, Memtable};
use crate::engine::sst::SstIter;
use crate::engine::version::SstHandle;
use crate::engine::{Result, Seq, ValueKind};

/// A cursor over entries in internal order (user key ascending, seq descending).
pub trait EntrySource {
    /// Moves to the next entry (the first call moves to the first one); false at the end.
    fn advance(&mut self) -> Result<bool>;
    /// The current user key.
    fn key(&self) -> &[u8];
    /// The current sequence number.
    fn seq(&self) -> Seq;
    /// The current kind.
    fn kind(&self) -> ValueKind;
    /// The current value.
    fn value(&self) -> &[u8];
}

/// A frozen memtable's entries, lent in place from its skip list (a flush copies nothing
/// per entry: copying every key and value into fresh vectors cost two allocations and two
/// frees per entry, about a tenth of a flush's CPU).
#[derive(Debug)]
pub struct MemEntries {
    cursor: MemCursor,
    started: bool,
}

impl MemEntries {
    /// A cursor over every entry of `mem`, in internal order.
    pub fn new(mem: Arc<Memtable>) -> Self {
        Self {
            cursor: MemCursor::new(mem),
            started: false,
        }
    }
}

impl EntrySource for MemEntries {
    fn advance(&mut self) -> Result<bool> {
        if self.started {
            return Ok(self.cursor.step());
        }
        self.started = true;
        Ok(self.cursor.seek(&[]))
    }
    fn key(&self) -> &[u8] {
        self.cursor.key()
    }
    fn seq(&self) -> Seq {
        self.cursor.seq()
    }
    fn kind(&self) -> ValueKind {
        self.cursor.kind()
    }
    fn value(&self) -> &[u8] {
        self.cursor.value()
    }
}

/// A key range `[start, end)` of a merge; `None` ends are unbounded.
#[derive(Debug, Clone, Default)]
pub struct KeyRange {
    /// First user key included.
    pub start: Option<Vec<u8>>,
    /// First user key excluded.
    pub end: Option<Vec<u8>>,
}

impl KeyRange {
    /// Whether `sst` holds keys in the range.
    fn overlaps(&self, sst: &SstHandle) -> bool {
        let props = &sst.meta.props;
        self.start.as_ref().is_none_or(|s| props.max_key >= *s)
            && self.end.as_ref().is_none_or(|e| props.min_key < *e)
    }
}

/// SSTs with disjoint key ranges, ascending, read one after another.
#[derive(Debug)]
struct Run {
    ssts: Vec<Arc<SstHandle>>,
    /// Index of the SST under `iter`.
    at: usize,
    iter: SstIter,
    range: Arc<KeyRange>,
}

impl Run {
    fn open(sst: &Arc<SstHandle>, range: &KeyRange) -> SstIter {
        let start = range.start.as_deref().unwrap_or_default();
        let iter = sst.reader.iter(start).without_cache_fill();
        match &range.end {
            Some(end) => iter.with_upper_bound(end),
            None => iter,
        }
    }

    /// Advances, moving on to the next SST at the end of one; false when all are done.
    fn advance(&mut self) -> Result<bool> {
        loop {
            if self.iter.advance()? {
                return Ok(true);
            }
            self.at += 1;
            let Some(next) = self.ssts.get(self.at) else {
                return Ok(false);
            };
            self.iter = Self::open(next, &self.range);
        }
    }
}

/// A k-way merge of SSTs in internal order; the inputs bypass the block cache.
#[derive(Debug)]
pub struct SstMerge {
    /// Every run, positioned on its current entry once started (exhausted ones stay put).
    runs: Vec<Run>,
    /// Indexes in `runs` of the runs not yet exhausted, as a binary min-heap in internal order
    /// of their current entries: a compaction behind on L0 merges twenty runs or more, where
    /// a linear scan for the smallest cost a key comparison per run per entry.
    heap: Vec<usize>,
    started: bool,
}

impl SstMerge {
    /// A merge of `inputs`; each SST joins the first run whose last SST ends below its first
    /// key (so the SSTs of one level, given in key order, form a single run).
    pub fn new(inputs: &[Arc<SstHandle>]) -> Self {
        Self::bounded(inputs, KeyRange::default())
    }

    /// A merge of the entries of `inputs` whose user keys lie in `range`.
    pub fn bounded(inputs: &[Arc<SstHandle>], range: KeyRange) -> Self {
        let range = Arc::new(range);
        let mut chains: Vec<Vec<Arc<SstHandle>>> = Vec::new();
        for sst in inputs.iter().filter(|sst| range.overlaps(sst)) {
            let min = &sst.meta.props.min_key;
            let fits = chains.iter_mut().find(|chain| {
                chain
                    .last()
                    .is_some_and(|last| last.meta.props.max_key < *min)
            });
            match fits {
                Some(chain) => chain.push(Arc::clone(sst)),
                None => chains.push(vec![Arc::clone(sst)]),
            }
        }
        let runs = chains
            .into_iter()
            .filter_map(|ssts| {
                let iter = Run::open(ssts.first()?, &range);
                Some(Run {
                    ssts,
                    at: 0,
                    iter,
                    range: Arc::clone(&range),
                })
            })
            .collect();
        Self {
            runs,
            heap: Vec::new(),
            started: false,
        }
    }

    fn run(&self) -> Option<&SstIter> {
        let top = *self.heap.first()?;
        self.runs.get(top).map(|run| &run.iter)
    }

    /// True when the run at heap slot `a` is positioned before the one at slot `b`.
    fn before(&self, a: usize, b: usize) -> bool {
        let iter = |slot: usize| {
            let run = *self.heap.get(slot)?;
            self.runs.get(run).map(|run| &run.iter)
        };
        match (iter(a), iter(b)) {
            (Some(a), Some(b)) => internal_cmp(a, b) == Ordering::Less,
            _ => false,
        }
    }

    /// Moves the run at heap slot `at` down until neither child is positioned before it.
    fn sift_down(&mut self, mut at: usize) {
        loop {
            let (left, right) = (2 * at + 1, 2 * at + 2);
            let mut first = at;
            if left < self.heap.len() && self.before(left, first) {
                first = left;
            }
            if right < self.heap.len() && self.before(right, first) {
                first = right;
            }
            if first == at {
                return;
            }
            self.heap.swap(at, first);
            at = first;
        }
    }
}

/// Internal order: user key ascending, then newest (highest seq) first.
fn internal_cmp(a: &SstIter, b: &SstIter) -> Ordering {
    a.key().cmp(b.key()).then_with(|| b.seq().cmp(&a.seq()))
}

impl EntrySource for SstMerge {
    fn advance(&mut self) -> Result<bool> {
        if self.started {
            let Some(&top) = self.heap.first() else {
                return Ok(false);
            };
            let more = match self.runs.get_mut(top) {
                Some(run) => run.advance()?,
                None => false,
            };
            if !more {
                let last = self.heap.pop();
                if let (Some(slot), Some(last)) = (self.heap.first_mut(), last) {
                    *slot = last;
                }
            }
            self.sift_down(0);
        } else {
            self.started = true;
            for (index, run) in self.runs.iter_mut().enumerate() {
                if run.advance()? {
                    self.heap.push(index);
                }
            }
            for at in (0..self.heap.len() / 2).rev() {
                self.sift_down(at);
            }
        }
        Ok(!self.heap.is_empty())
    }
    fn key(&self) -> &[u8] {
        self.run().map(SstIter::key).unwrap_or_default()
    }
    fn seq(&self) -> Seq {
        self.run().map_or(0, SstIter::seq)
    }
    fn kind(&self) -> ValueKind {
        self.run().map_or(ValueKind::Put, SstIter::kind)
    }
    fn value(&self) -> &[u8] {
        self.run().map(SstIter::value).unwrap_or_default()
    }
}
