//! Filtered range scans that walk the merge's lead in runs: where no other source can
//! interleave (an SST block below every other source's key, or memtable nodes below it), the
//! lead's entries are read in one loop instead of one merge step each.

use super::keys::key_cmp;
use super::{RangeIter, Source};
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
        let runs = self.tombstones.is_empty();
        loop {
            // From where the merge stands (the entry last returned, or the end of the last
            // run), a run goes first: the per-entry step is only for what it cannot walk.
            if runs && !self.done && self.merge.current.is_some() {
                match self.run_lead_block(&mut wanted) {
                    Ok(true) => return Ok(true),
                    Ok(false) => {}
                    Err(err) => {
                        self.valid = false;
                        self.done = true;
                        return Err(err);
                    }
                }
            }
            if !self.advance()? {
                return Ok(false);
            }
            if wanted(self.value()) {
                return Ok(true);
            }
        }
    }

    /// A run of the merge's lead that no other source can interleave: the rest of the
    /// leading SST's current block when it lies wholly below every other source (see
    /// [`crate::engine::sst::SstIter::run_block`]), or the leading memtable's entries while
    /// they are below the other sources' least key and the range's end. Each entry gets
    /// [`RangeIter::advance`]'s version and kind rules, and each live one is offered to
    /// `wanted`. True when one was taken (the range is positioned on it); false, with the
    /// merge consistent on the run's last entry, when none was.
    fn run_lead_block(&mut self, wanted: &mut impl FnMut(&[u8]) -> bool) -> Result<bool> {
        let merge = &mut self.merge;
        let Some(current) = merge.current else {
            return Ok(false);
        };
        let (read_seq, mut key_done) = (self.read_seq, self.key_done);
        let runner = merge.runner_up;
        // The lead's keys stay below the runner-up's for the whole run, so none ties.
        let (before, after) = merge.sources.split_at_mut(current);
        let Some((lead, after)) = after.split_first_mut() else {
            return Ok(false);
        };
        let below = match runner {
            Some(r) if r < current => before.get(r).map(Source::key),
            Some(r) => after.get(r - current - 1).map(Source::key),
            None => None,
        };
        if runner.is_some() && below.is_none() {
            return Ok(false);
        }
        let mut same = false;
        let mut offer = |same_key: bool, seq: Seq, kind: ValueKind, value: &[u8]| {
            same = same_key;
            if same_key && key_done {
                return false;
            }
            if !same_key {
                key_done = false;
            }
            if seq > read_seq {
                return false;
            }
            key_done = true;
            kind == ValueKind::Put && wanted(value)
        };
        let taken = match lead {
            Source::Sst(lead) => match lead.run_block(below, &mut offer)? {
                Some(taken) => taken,
                None => return Ok(false),
            },
            Source::Mem(lead) => {
                // The run ends before the smaller of the range's end and the runner-up.
                let limit = match (below, lead.end.as_deref()) {
                    (Some(a), Some(b)) => Some(if key_cmp(a, b).is_lt() { a } else { b }),
                    (a, b) => a.or(b),
                };
                let cursor = &mut lead.cursor;
                let mut taken = false;
                let mut moved = false;
                while cursor.step_if(|key| limit.is_none_or(|limit| key_cmp(key, limit).is_lt())) {
                    moved = true;
                    let (_, seq, kind) = cursor.head();
                    if offer(cursor.same_key_as_previous(), seq, kind, cursor.value()) {
                        taken = true;
                        break;
                    }
                }
                if !moved {
                    return Ok(false);
                }
                taken
            }
        };
        merge.same = same;
        merge.tie = false;
        self.key_done = key_done;
        self.valid = taken;
        Ok(taken)
    }
}
