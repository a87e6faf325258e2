//! Filtered range scans that walk the merge's lead in runs: where no other source can
//! interleave (an SST block below every other source's key, or memtable nodes below it), the
//! lead's entries are read in one loop instead of one merge step each.

use super::keys::{self, head_word, key_cmp};
use super::{Advance, RangeIter, Source};
use crate::engine::{Result, RunVisitor, Seq, ValueKind};

/// The test [`RangeIter::advance_where`] offers each live entry's value to: any
/// `FnMut(&[u8]) -> bool`, or a caller's own type, whose `#[inline(always)]` method is then
/// inlined into the run loops (a closure wrapping it was left as a call per entry, ~25
/// instructions of register saves around a test of ~40).
pub trait ValueTest {
    /// Whether the entry whose value is `value` is wanted.
    fn wanted(&mut self, value: &[u8]) -> bool;
}

impl<F: FnMut(&[u8]) -> bool> ValueTest for F {
    #[inline(always)]
    fn wanted(&mut self, value: &[u8]) -> bool {
        self(value)
    }
}

impl RangeIter {
    /// Moves to the next live entry of the range whose value `wanted` accepts; false at the
    /// end. The same as calling [`RangeIter::advance`] until `wanted(value())` holds (each
    /// live entry is offered once, in order, and rejected ones are passed), but where no
    /// other source can interleave the merge's lead (an SST block or memtable nodes below
    /// every other source's key, no range tombstone in the range) the lead's entries are
    /// walked in one tight loop, without the merge's per-entry steps.
    ///
    /// # Errors
    /// The first read or corruption error of any source.
    pub fn advance_where(&mut self, mut wanted: impl FnMut(&[u8]) -> bool) -> Result<bool> {
        loop {
            match self.advance_where_or_pause(&mut wanted)? {
                Advance::Entry => return Ok(true),
                Advance::End => return Ok(false),
                Advance::Paused => {}
            }
        }
    }

    /// [`RangeIter::advance_where`] that may also stop on an entry it passes over (one
    /// `wanted` refused among them) once more than [`RangeIter::pause_after`] entries have
    /// been visited, as [`RangeIter::advance_or_pause`] does.
    ///
    /// # Errors
    /// The first read or corruption error of any source.
    pub fn advance_where_or_pause(&mut self, wanted: &mut impl ValueTest) -> Result<Advance> {
        let runs = self.tombstones.is_empty();
        self.valid = false;
        self.paused = false;
        loop {
            // From where the merge stands (the entry last returned, or the end of the last
            // run), a run goes first: the per-entry step is only for what it cannot walk.
            if runs && !self.done && self.merge.current.is_some() {
                match self.run_lead_block(wanted) {
                    Ok(Some(stop)) => return Ok(stop),
                    Ok(None) => {}
                    Err(err) => {
                        self.valid = false;
                        self.done = true;
                        return Err(err);
                    }
                }
            }
            match self.advance_or_pause()? {
                Advance::Entry if !wanted.wanted(self.value()) => {
                    if self.visited > self.pause_after {
                        self.valid = false;
                        self.paused = true;
                        return Ok(Advance::Paused);
                    }
                }
                stop => return Ok(stop),
            }
        }
    }

    /// A run of the merge's lead that no other source can interleave: the rest of the
    /// leading SST's current block when it lies wholly below every other source (see
    /// [`crate::engine::sst::SstIter::run_block`]), or the leading memtable's entries while
    /// they are below the other sources' least key and the range's end. Each entry gets
    /// [`RangeIter::advance_or_pause`]'s version, kind and pause rules, and each live one is
    /// offered to `wanted`. `Some` when the run stopped on an entry (one taken, or a pause:
    /// the range is positioned on it); `None`, with the merge consistent on the run's last
    /// entry, when it did not.
    fn run_lead_block(&mut self, wanted: &mut impl ValueTest) -> Result<Option<Advance>> {
        let merge = &mut self.merge;
        let Some(current) = merge.current else {
            return Ok(None);
        };
        // A countdown to the first entry that may pause (one register, no compare against a
        // loaded bound per entry): below zero exactly when `visited > pause_after`.
        let start =
            i64::try_from(self.pause_after.saturating_sub(self.visited)).unwrap_or(i64::MAX);
        let mut offer = Offer {
            wanted,
            read_seq: self.read_seq,
            key_done: self.key_done,
            left: start,
            same: false,
            paused: false,
        };
        let runner = merge.runner_up;
        // The lead's keys stay below the runner-up's for the whole run, so none ties.
        let (before, after) = merge.sources.split_at_mut(current);
        let Some((lead, after)) = after.split_first_mut() else {
            return Ok(None);
        };
        let below = match runner {
            Some(r) if r < current => before.get(r).map(Source::key),
            Some(r) => after.get(r - current - 1).map(Source::key),
            None => None,
        };
        if runner.is_some() && below.is_none() {
            return Ok(None);
        }
        let stopped = match lead {
            Source::Sst(lead) => match lead.run_block(below, &mut offer)? {
                Some(stopped) => stopped,
                None => return Ok(None),
            },
            Source::Mem(lead) => {
                // The run ends before the smaller of the range's end and the runner-up.
                let limit = match (below, lead.end.as_deref()) {
                    (Some(a), Some(b)) => Some(if key_cmp(a, b).is_lt() { a } else { b }),
                    (a, b) => a.or(b),
                };
                let run = match limit {
                    Some(limit) => {
                        let limit_word = head_word(limit);
                        lead.cursor
                            .run_while(|key| keys::below(key, limit, limit_word), &mut offer)
                    }
                    None => lead.cursor.run_while(|_| true, &mut offer),
                };
                if !run.moved {
                    return Ok(None);
                }
                run.stopped
            }
        };
        let Offer {
            key_done,
            left,
            same,
            paused,
            ..
        } = offer;
        merge.same = same;
        merge.tie = false;
        self.key_done = key_done;
        self.visited += start.abs_diff(left);
        self.valid = stopped && !paused;
        self.paused = paused;
        Ok(stopped.then_some(if paused {
            Advance::Paused
        } else {
            Advance::Entry
        }))
    }
}

/// [`RangeIter::advance_or_pause`]'s rules for one entry of a run, with the state they keep
/// across the run's entries: the run's loop holds it in registers.
struct Offer<'w, W> {
    wanted: &'w mut W,
    read_seq: Seq,
    /// A version of the current key visible at `read_seq` was seen.
    key_done: bool,
    /// Entries before the first that may pause; below zero past it.
    left: i64,
    /// The last entry's key is the one before it.
    same: bool,
    /// The run stopped on an entry it passes over.
    paused: bool,
}

impl<W: ValueTest> RunVisitor for Offer<'_, W> {
    #[inline(always)]
    fn visit(&mut self, same_key: bool, seq: Seq, kind: ValueKind, value: &[u8]) -> bool {
        self.left -= 1;
        self.same = same_key;
        if same_key && self.key_done {
            return false;
        }
        if !same_key {
            self.key_done = false;
        }
        if seq <= self.read_seq {
            self.key_done = true;
            if kind == ValueKind::Put && self.wanted.wanted(value) {
                return true;
            }
        }
        // Not an older version of a key already judged, so its key was not returned.
        if self.left < 0 {
            self.paused = true;
            return true;
        }
        false
    }
}
