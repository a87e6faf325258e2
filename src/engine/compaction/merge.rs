//! The entries a flush or compaction writes, lent one at a time (no copy per entry).
//!
//! Compaction inputs are merged by [`SstMerge`]: inputs with disjoint key ranges (the SSTs of
//! one level 1+) are chained into one run read back to back, so a job of four L0 SSTs and
//! eight L1 SSTs compares five cursors per entry, not twelve, and entries are borrowed from
//! the decoded blocks instead of copied into two fresh buffers each.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::engine::sst::{SstEntry, SstIter};
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

/// Owned entries (a memtable's) seen through the cursor interface.
#[derive(Debug)]
pub struct OwnedEntries<I> {
    entries: I,
    current: Option<SstEntry>,
}

impl<I: Iterator<Item = SstEntry>> OwnedEntries<I> {
    /// A cursor over `entries`, which must be in internal order.
    pub fn new(entries: I) -> Self {
        Self {
            entries,
            current: None,
        }
    }
}

impl<I: Iterator<Item = SstEntry>> EntrySource for OwnedEntries<I> {
    fn advance(&mut self) -> Result<bool> {
        self.current = self.entries.next();
        Ok(self.current.is_some())
    }
    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |e| &e.key)
    }
    fn seq(&self) -> Seq {
        self.current.as_ref().map_or(0, |e| e.seq)
    }
    fn kind(&self) -> ValueKind {
        self.current.as_ref().map_or(ValueKind::Put, |e| e.kind)
    }
    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |e| &e.value)
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
    /// Runs not yet exhausted, each positioned on its current entry once started.
    runs: Vec<Run>,
    /// Index in `runs` of the current (smallest) entry.
    current: usize,
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
            current: 0,
            started: false,
        }
    }

    fn run(&self) -> Option<&SstIter> {
        self.runs.get(self.current).map(|run| &run.iter)
    }
}

/// Internal order: user key ascending, then newest (highest seq) first.
fn internal_cmp(a: &SstIter, b: &SstIter) -> Ordering {
    a.key().cmp(b.key()).then_with(|| b.seq().cmp(&a.seq()))
}

impl EntrySource for SstMerge {
    fn advance(&mut self) -> Result<bool> {
        if self.started {
            if let Some(run) = self.runs.get_mut(self.current)
                && !run.advance()?
            {
                self.runs.swap_remove(self.current);
            }
        } else {
            self.started = true;
            let mut at = 0;
            while let Some(run) = self.runs.get_mut(at) {
                if run.advance()? {
                    at += 1;
                } else {
                    self.runs.swap_remove(at);
                }
            }
        }
        let mut best = 0;
        for (i, run) in self.runs.iter().enumerate().skip(1) {
            if let Some(top) = self.runs.get(best)
                && internal_cmp(&run.iter, &top.iter) == Ordering::Less
            {
                best = i;
            }
        }
        self.current = best;
        Ok(!self.runs.is_empty())
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
