//! Filtered range scans that walk the merge's lead in runs: where no other source can
//! interleave (an SST block below every other source's key, or memtable nodes below it), the
//! lead's entries are read in one loop instead of one merge step each.

use super::keys::{self, head_word, key_cmp};
use super::{Advance, RangeIter, Source};
use crate::engine::{Result, Seq, ValueKind};

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
    pub fn advance_where_or_pause(
        &mut self,
        mut wanted: impl FnMut(&[u8]) -> bool,
    ) -> Result<Advance> {
        let runs = self.tombstones.is_empty();
        self.valid = false;
        self.paused = false;
        loop {
            // From where the merge stands (the entry last returned, or the end of the last
            // run), a run goes first: the per-entry step is only for what it cannot walk.
            if runs && !self.done && self.merge.current.is_some() {
                match self.run_lead_block(&mut wanted) {
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
                Advance::Entry if !wanted(self.value()) => {
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
    fn run_lead_block(
        &mut self,
        wanted: &mut impl FnMut(&[u8]) -> bool,
    ) -> Result<Option<Advance>> {
        let merge = &mut self.merge;
        let Some(current) = merge.current else {
            return Ok(None);
        };
        let (read_seq, mut key_done) = (self.read_seq, self.key_done);
        // A countdown to the first entry that may pause (one register, no compare against a
        // loaded bound per entry): below zero exactly when `visited > pause_after`.
        let start =
            i64::try_from(self.pause_after.saturating_sub(self.visited)).unwrap_or(i64::MAX);
        let mut left = start;
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
        let (mut same, mut paused) = (false, false);
        let mut offer = |same_key: bool, seq: Seq, kind: ValueKind, value: &[u8]| {
            left -= 1;
            same = same_key;
            if same_key && key_done {
                return false;
            }
            if !same_key {
                key_done = false;
            }
            if seq <= read_seq {
                key_done = true;
                if kind == ValueKind::Put && wanted(value) {
                    return true;
                }
            }
            // Not an older version of a key already judged, so its key was not returned.
            if left < 0 {
                paused = true;
                return true;
            }
            false
        };
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
