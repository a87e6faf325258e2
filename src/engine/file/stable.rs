//! Which pages of the file are known to sit on blocks whose allocation is already durable, so
//! that a durable overwrite of them needs the data write and a device flush, nothing else.
//!
//! A page becomes stable once a sync of the whole file (`fdatasync`) that started after the
//! page was written completes, or once a synced write of the page itself completes: either
//! wrote the file system's mapping of the page (and the file length) to disk. Giving pages
//! back (hole punching) or changing the file length makes them unstable again. The record is
//! only ever positive knowledge, so forgetting any of it is safe: the writer then takes the
//! full synced path.

use std::collections::BTreeMap;

use super::format::PAGE_SIZE;

/// Bound on the disjoint stable runs (and on the pending ones); past it the record is dropped.
const MAX_RUNS: usize = 1 << 14;

/// Stable page runs, and the page runs written since the last whole-file sync began.
#[derive(Debug, Default)]
pub struct StableRanges {
    /// Disjoint, non-adjacent runs: first byte → one past the last, page-aligned.
    stable: BTreeMap<u64, u64>,
    /// Whole pages written (completed) and not yet covered by a sync.
    pending: Vec<(u64, u64)>,
    /// Bumped whenever pages are given back or the length changes: a sync that began under an
    /// older epoch may have seen pages that are no longer allocated.
    epoch: u64,
}

/// What a whole-file sync covers: the pending runs when it began.
#[derive(Debug)]
pub struct SyncTicket {
    runs: Vec<(u64, u64)>,
    epoch: u64,
}

/// The whole pages inside `offset..offset + len` (a partial page may still hold a hole).
fn whole_pages(offset: u64, len: u64) -> Option<(u64, u64)> {
    let start = offset.checked_next_multiple_of(PAGE_SIZE)?;
    let end = offset.checked_add(len)?;
    let end = end - end % PAGE_SIZE;
    (start < end).then_some((start, end))
}

impl StableRanges {
    /// Records a completed write of `len` bytes at `offset`: its whole pages are pending.
    pub fn written(&mut self, offset: u64, len: u64) {
        if let Some(run) = whole_pages(offset, len) {
            if self.pending.len() >= MAX_RUNS {
                self.pending.clear();
            }
            self.pending.push(run);
        }
    }

    /// A whole-file sync is about to start: it covers every write recorded so far.
    pub fn begin_sync(&mut self) -> SyncTicket {
        SyncTicket {
            runs: std::mem::take(&mut self.pending),
            epoch: self.epoch,
        }
    }

    /// The sync of `ticket` ended: on success its runs are stable, unless pages were given
    /// back meanwhile (they may be among them: the runs are dropped); on failure they stay
    /// pending for the next sync.
    pub fn end_sync(&mut self, ticket: SyncTicket, synced: bool) {
        if !synced {
            if ticket.epoch == self.epoch {
                self.pending.extend(ticket.runs);
            }
            return;
        }
        if ticket.epoch != self.epoch {
            return;
        }
        for (start, end) in ticket.runs {
            self.insert(start, end);
        }
    }

    /// The epoch a synced write of the caller's pages begins under.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// A synced write of `len` bytes at `offset`, begun under `epoch`, completed: its whole
    /// pages are stable (if nothing was given back meanwhile).
    pub fn synced_write(&mut self, offset: u64, len: u64, epoch: u64) {
        if epoch != self.epoch {
            return;
        }
        if let Some((start, end)) = whole_pages(offset, len) {
            self.insert(start, end);
        }
    }

    /// Pages of `offset..offset + len` are given back to the file system (or may be).
    pub fn forget(&mut self, offset: u64, len: u64) {
        self.epoch += 1;
        let end = offset.saturating_add(len);
        self.pending.retain(|&(s, e)| e <= offset || s >= end);
        let overlapping: Vec<(u64, u64)> = self
            .stable
            .range(..end)
            .rev()
            .take_while(|&(_, &e)| e > offset)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in overlapping {
            self.stable.remove(&s);
            // Only whole pages outside the range stay stable.
            if s < offset
                && let Some((ks, ke)) = whole_pages(s, offset - s)
            {
                self.stable.insert(ks, ke);
            }
            if e > end
                && let Some((ks, ke)) = whole_pages(end, e - end)
            {
                self.stable.insert(ks, ke);
            }
        }
    }

    /// The file length changes to `len`: nothing at or past it is stable any more.
    pub fn resized(&mut self, len: u64) {
        self.forget(len, u64::MAX - len);
    }

    /// Whether every byte of `offset..offset + len` lies on stable pages.
    pub fn contains(&self, offset: u64, len: u64) -> bool {
        let Some(end) = offset.checked_add(len) else {
            return false;
        };
        self.stable
            .range(..=offset)
            .next_back()
            .is_some_and(|(&s, &e)| s <= offset && end <= e)
    }

    fn insert(&mut self, mut start: u64, mut end: u64) {
        // Absorb every run that overlaps or touches `start..end`.
        let touching: Vec<(u64, u64)> = self
            .stable
            .range(..=end)
            .rev()
            .take_while(|&(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.stable.remove(&s);
            start = start.min(s);
            end = end.max(e);
        }
        if self.stable.len() >= MAX_RUNS {
            self.stable.clear();
        }
        self.stable.insert(start, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = PAGE_SIZE;

    fn synced(ranges: &mut StableRanges) {
        let ticket = ranges.begin_sync();
        ranges.end_sync(ticket, true);
    }

    #[test]
    fn a_write_is_stable_only_after_a_sync_that_began_after_it() {
        let mut r = StableRanges::default();
        let ticket = r.begin_sync();
        r.written(4 * P, 2 * P);
        r.end_sync(ticket, true);
        assert!(!r.contains(4 * P, P));
        synced(&mut r);
        assert!(r.contains(4 * P, 2 * P));
        assert!(!r.contains(4 * P, 3 * P));
    }

    #[test]
    fn partial_pages_never_become_stable() {
        let mut r = StableRanges::default();
        r.written(P + 1, 2 * P);
        synced(&mut r);
        assert!(!r.contains(P, P));
        assert!(r.contains(2 * P, P - 1));
        assert!(!r.contains(3 * P, 1));
    }

    #[test]
    fn pages_given_back_during_a_sync_are_not_made_stable() {
        let mut r = StableRanges::default();
        r.written(0, 8 * P);
        let ticket = r.begin_sync();
        r.forget(2 * P, P);
        r.end_sync(ticket, true);
        assert!(!r.contains(0, P));
        assert!(!r.contains(2 * P, P));
    }

    #[test]
    fn a_failed_sync_leaves_its_writes_pending() {
        let mut r = StableRanges::default();
        r.written(0, P);
        let ticket = r.begin_sync();
        r.end_sync(ticket, false);
        assert!(!r.contains(0, P));
        synced(&mut r);
        assert!(r.contains(0, P));
    }

    #[test]
    fn forgetting_splits_a_run_at_page_bounds() {
        let mut r = StableRanges::default();
        r.written(0, 10 * P);
        synced(&mut r);
        r.forget(3 * P + 5, P);
        assert!(r.contains(0, 3 * P));
        assert!(!r.contains(3 * P, 1));
        assert!(!r.contains(4 * P, 1));
        assert!(r.contains(5 * P, 5 * P));
    }

    #[test]
    fn a_synced_write_is_stable_unless_pages_were_given_back_meanwhile() {
        let mut r = StableRanges::default();
        let epoch = r.epoch();
        r.synced_write(P, P, epoch);
        assert!(r.contains(P, P));
        let epoch = r.epoch();
        r.forget(100 * P, P);
        r.synced_write(2 * P, P, epoch);
        assert!(!r.contains(2 * P, P));
        assert!(r.contains(P, P));
    }

    #[test]
    fn adjacent_runs_merge_and_truncation_drops_the_tail() {
        let mut r = StableRanges::default();
        r.written(0, P);
        r.written(P, P);
        r.written(3 * P, P);
        synced(&mut r);
        assert!(r.contains(0, 2 * P));
        assert!(!r.contains(0, 4 * P));
        r.written(2 * P, P);
        synced(&mut r);
        assert!(r.contains(0, 4 * P));
        r.resized(2 * P + 7);
        assert!(r.contains(0, 2 * P));
        assert!(!r.contains(2 * P, 1));
    }
}
