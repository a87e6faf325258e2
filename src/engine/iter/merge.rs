//! The merge of sorted sources into one stream in internal order.

use std::cmp::Ordering;

use super::keys::{head_words, key_cmp, same_key};
use super::source::Source;
use crate::engine::Result;
use crate::engine::sst::SstEntry;
use crate::engine::{Seq, ValueKind};

/// Merges sorted sources into one stream in internal order (every version of every key).
///
/// The minimum is found without a heap: the merge remembers the current source and the
/// smallest of the others (the runner-up), so a run of entries from one source costs one
/// comparison each, and none once a single source is left. Only when the lead changes are
/// the remaining sources scanned, as LevelDB's merging iterator does.
#[derive(Debug)]
pub struct MergeIter {
    pub(super) sources: Vec<Source>,
    /// Indices of the sources positioned on an entry.
    pub(super) live: Vec<usize>,
    pub(super) current: Option<usize>,
    pub(super) runner_up: Option<usize>,
    /// The runner-up key's first sixteen bytes as two big-endian words (`None` for a
    /// shorter key): the lead's next key is ordered against them without a look at the
    /// runner-up, whose key stays put while it waits.
    pub(super) runner_words: Option<(u64, u64)>,
    /// The current entry's user key is the runner-up's.
    pub(super) tie: bool,
    /// The current entry's user key is the previous entry's.
    pub(super) same: bool,
    pub(super) primed: bool,
    /// Set after an error: the merge is fused.
    pub(super) failed: bool,
}

impl MergeIter {
    /// A merge of `sources`, listed newest first.
    pub fn new(sources: Vec<Source>) -> Self {
        Self {
            live: Vec::with_capacity(sources.len()),
            sources,
            current: None,
            runner_up: None,
            runner_words: None,
            tie: false,
            same: false,
            primed: false,
            failed: false,
        }
    }

    /// Internal order of the entries under sources `a` and `b`: user key ascending, seq
    /// descending, then source (newer first).
    #[inline]
    fn order(&self, a: usize, b: usize) -> Ordering {
        match (self.sources.get(a), self.sources.get(b)) {
            (Some(x), Some(y)) => key_cmp(x.key(), y.key())
                .then_with(|| y.seq().cmp(&x.seq()))
                .then_with(|| a.cmp(&b)),
            _ => a.cmp(&b),
        }
    }

    /// The smallest live source other than `except`.
    fn min_except(&self, except: Option<usize>) -> Option<usize> {
        let mut best: Option<usize> = None;
        for &i in &self.live {
            if Some(i) == except {
                continue;
            }
            best = match best {
                Some(b) if self.order(b, i) != Ordering::Greater => Some(b),
                _ => Some(i),
            };
        }
        best
    }

    /// Makes `runner_up` the runner-up of the current source: caches its head words and
    /// whether the current entry shares its key.
    fn set_runner_up(&mut self, runner_up: Option<usize>) {
        self.runner_up = runner_up;
        let runner = runner_up.and_then(|i| self.sources.get(i)).map(Source::key);
        self.runner_words = runner.and_then(head_words);
        let current = self
            .current
            .and_then(|i| self.sources.get(i))
            .map(Source::key);
        self.tie = matches!((runner, current), (Some(r), Some(c)) if same_key(r, c));
    }

    /// Whether the runner-up's entry comes before the current source's (just advanced)
    /// one; records whether their keys are equal.
    #[inline]
    fn runner_leads(&mut self, runner_up: usize, current: usize) -> bool {
        let key = self.sources.get(current).map_or(&[][..], Source::key);
        if let (Some(runner), Some(words)) = (self.runner_words, head_words(key))
            && runner != words
        {
            self.tie = false;
            return runner < words;
        }
        let (Some(x), Some(y)) = (self.sources.get(runner_up), self.sources.get(current)) else {
            return false;
        };
        let by_key = key_cmp(x.key(), y.key());
        self.tie = by_key == Ordering::Equal;
        by_key
            .then_with(|| y.seq().cmp(&x.seq()))
            .then_with(|| runner_up.cmp(&current))
            == Ordering::Less
    }

    #[inline]
    fn step(&mut self) -> Result<bool> {
        if !self.primed {
            self.primed = true;
            for i in 0..self.sources.len() {
                if let Some(source) = self.sources.get_mut(i)
                    && source.advance()?
                {
                    self.live.push(i);
                }
            }
            self.current = self.min_except(None);
            self.set_runner_up(self.min_except(self.current));
            self.same = false;
            return Ok(self.current.is_some());
        }
        let Some(current) = self.current else {
            return Ok(false);
        };
        let Some(source) = self.sources.get_mut(current) else {
            return Ok(false);
        };
        // The entry just passed is the previous one of whichever source leads next.
        let passed_tie = self.tie;
        if !source.advance()? {
            self.live.retain(|&i| i != current);
            self.current = self.runner_up;
            self.set_runner_up(self.min_except(self.current));
            self.same = passed_tie;
            return Ok(self.current.is_some());
        }
        if let Some(runner_up) = self.runner_up
            && self.runner_leads(runner_up, current)
        {
            self.current = Some(runner_up);
            self.set_runner_up(self.min_except(Some(runner_up)));
            self.same = passed_tie;
            return Ok(true);
        }
        if self.runner_up.is_none() {
            self.tie = false;
        }
        self.same = self
            .sources
            .get(current)
            .is_some_and(Source::same_key_as_previous);
        Ok(true)
    }

    /// Moves to the next entry; false at the end. After an error, further calls return
    /// `Ok(false)`.
    pub fn advance(&mut self) -> Result<bool> {
        if self.failed {
            return Ok(false);
        }
        let moved = self.step();
        if !matches!(moved, Ok(true)) {
            self.failed = moved.is_err();
            self.current = None;
        }
        moved
    }

    fn source(&self) -> Option<&Source> {
        self.current.and_then(|i| self.sources.get(i))
    }

    /// The current user key (empty when not positioned).
    #[inline]
    pub fn key(&self) -> &[u8] {
        self.source().map_or(&[], Source::key)
    }

    /// The current sequence number.
    #[inline]
    pub fn seq(&self) -> Seq {
        self.source().map_or(0, Source::seq)
    }

    /// Whether the current entry's user key is the previous entry's (another version of
    /// it): told by the sources and the merge's own comparisons, without keeping a copy.
    #[inline]
    pub fn same_key_as_previous(&self) -> bool {
        self.same
    }

    /// The current key, sequence number and kind (empty, 0 and Put when not positioned).
    #[inline]
    pub fn head(&self) -> (&[u8], Seq, ValueKind) {
        self.source().map_or((&[], 0, ValueKind::Put), Source::head)
    }

    /// The current kind.
    #[inline]
    pub fn kind(&self) -> ValueKind {
        self.source().map_or(ValueKind::Put, Source::kind)
    }

    /// The current value, borrowed from its source.
    #[inline]
    pub fn value(&self) -> &[u8] {
        self.source().map_or(&[], Source::value)
    }
}

impl Iterator for MergeIter {
    type Item = Result<SstEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.advance() {
            Ok(true) => Some(Ok(SstEntry::found(
                self.key(),
                (self.seq(), self.kind()),
                self.value().to_vec(),
            ))),
            Ok(false) => None,
            Err(err) => Some(Err(err)),
        }
    }
}
