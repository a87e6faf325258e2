//! Merging cursors over memtables and SSTs.
//!
//! Every level is a lending cursor: `advance()` moves to the next entry and the accessors
//! borrow it in place (from a cached SST block, or from the memtable's own node, which the
//! cursor keeps alive by holding the memtable), so a scan copies nothing per entry: older
//! versions of a key are told by each source (an SST entry sharing its whole predecessor key,
//! a memtable node with its predecessor's key) and by the merge's own comparisons. The owned
//! `Iterator` impls are thin wrappers for callers that want `(Vec, Vec)` items.

use std::sync::Arc;

use super::version::{ReadView, SstHandle};
use super::{RangeTombstone, Result, Seq, ValueKind};

mod keys;
mod merge;
mod run;
mod source;

use merge::MergeIter;
pub use run::ValueTest;
use source::Source;

/// Where a pausable advance of a [`RangeIter`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advance {
    /// On a live entry: [`RangeIter::key`] and [`RangeIter::value`] borrow it.
    Entry,
    /// On an entry passed over after the visit count went past the caller's mark
    /// ([`RangeIter::pause_after`]); [`RangeIter::paused_key`] names its key, which this
    /// range has not returned. The next advance goes on from there.
    Paused,
    /// Past the last entry of the range.
    End,
}

/// A key above every valid key (longer than the key limit), standing for "no end".
const MAX_KEY_BOUND: &[u8] = &[0xFF; super::limits::MAX_KEY_BYTES + 1];
/// Live (key, value) pairs of a range at one sequence number, ascending. Holds the read view
/// it iterates, so the SSTs it reads stay alive and their extents are not reused meanwhile.
///
/// Two ways to consume it: as an `Iterator` of owned `(key, value)` pairs, or as a lending
/// cursor ([`RangeIter::advance`], then [`RangeIter::key`] and [`RangeIter::value`] borrow
/// the entry in place, with no copy of the value and no allocation per entry).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use strata::engine::{Durability, Engine, Options, WriteBatch};
/// let dir = tempfile::tempdir()?;
/// let engine = Engine::open(dir.path().join("db"), Options::default())?;
/// let mut batch = WriteBatch::new();
/// batch.put(b"a", b"1");
/// batch.put(b"b", b"22");
/// engine.write(&batch, Durability::Sync)?;
/// let mut cursor = engine.range(b"a"..b"z")?;
/// let mut total = 0;
/// while cursor.advance()? {
///     total += cursor.key().len() + cursor.value().len();
/// }
/// assert_eq!(total, 5);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct RangeIter {
    _view: Arc<ReadView>,
    merge: MergeIter,
    read_seq: Seq,
    tombstones: Vec<RangeTombstone>,
    /// A version of the current user key visible at `read_seq` was seen (returned or
    /// deleted): older versions of it are skipped.
    key_done: bool,
    /// Positioned on a live entry.
    valid: bool,
    /// Stopped on a passed-over entry by a pause ([`Advance::Paused`]).
    paused: bool,
    /// Entries the merge has handed over so far: live, deleted, or older or newer versions.
    /// A tick per entry, so a caller can bound the work of a scan through long runs of
    /// entries it never sees (tombstones, deleted ranges).
    visited: u64,
    /// An advance pauses at an entry it passes over once `visited` exceeds this.
    pause_after: u64,
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
            .map(|mem| Source::mem(Arc::clone(mem), start, end))
            .collect();
        let ssts: Vec<Arc<SstHandle>> = if empty {
            Vec::new()
        } else {
            view.version.ssts_in_range(start, end, prefix)
        };
        // Every source stops at `end` itself, so the merge never compares keys with it.
        sources.extend(ssts.iter().map(|sst| {
            let iter = sst.reader.iter(start);
            Source::Sst(match end {
                Some(end) => iter.with_upper_bound(end),
                None => iter,
            })
        }));
        let tombstones = view.range_tombstones(start, bound, read_seq);
        Self {
            merge: MergeIter::new(sources),
            read_seq,
            tombstones,
            key_done: false,
            valid: false,
            paused: false,
            visited: 0,
            pause_after: u64::MAX,
            done: empty,
            _view: view,
        }
    }

    /// Moves to the next live entry of the range; false at the end. After an error or the
    /// end, further calls return `Ok(false)`.
    ///
    /// # Errors
    /// The first read or corruption error of any source.
    pub fn advance(&mut self) -> Result<bool> {
        loop {
            match self.advance_or_pause()? {
                Advance::Entry => return Ok(true),
                Advance::End => return Ok(false),
                Advance::Paused => {}
            }
        }
    }

    /// [`RangeIter::advance`] that may also stop on an entry it passes over, once more than
    /// [`RangeIter::pause_after`] entries have been visited. Only an entry whose key this
    /// range has not returned is paused on (one deleted at the read sequence, by a point or
    /// range tombstone, or newer than it): a caller may resume a later scan from that key
    /// without losing or repeating a key. The older versions of one key are never paused on.
    ///
    /// # Errors
    /// The first read or corruption error of any source.
    pub fn advance_or_pause(&mut self) -> Result<Advance> {
        self.valid = false;
        self.paused = false;
        while !self.done {
            match self.merge.advance() {
                Ok(true) => {}
                Ok(false) => break,
                Err(err) => {
                    self.done = true;
                    return Err(err);
                }
            }
            self.visited += 1;
            let (key, seq, kind) = self.merge.head();
            // Versions of a key come newest first and together: the merge tells where a key
            // starts, so no copy of the previous key is kept to compare with.
            if !self.merge.same_key_as_previous() {
                self.key_done = false;
            } else if self.key_done {
                continue;
            }
            if seq <= self.read_seq {
                self.key_done = true;
                let deleted = kind == ValueKind::Delete
                    || self
                        .tombstones
                        .iter()
                        .any(|t| t.deletes(key, seq, self.read_seq));
                if !deleted {
                    self.valid = true;
                    return Ok(Advance::Entry);
                }
            }
            if self.visited > self.pause_after {
                self.paused = true;
                return Ok(Advance::Paused);
            }
        }
        self.done = true;
        Ok(Advance::End)
    }

    /// Entries visited so far (returned, passed over as deleted, older or newer versions,
    /// and those [`RangeIter::advance_where`] offered and was refused).
    #[inline]
    #[must_use]
    pub fn visited(&self) -> u64 {
        self.visited
    }

    /// Lets the pausable advances ([`RangeIter::advance_or_pause`],
    /// [`RangeIter::advance_where_or_pause`]) stop on an entry they pass over once more than
    /// `visits` entries ([`RangeIter::visited`]) have been visited: a scan through a long run
    /// of entries its caller never sees returns to the caller that often to let it look at a
    /// clock. Without a call, they never pause.
    #[inline]
    pub fn pause_after(&mut self, visits: u64) {
        self.pause_after = visits;
    }

    /// The key of the entry the last advance paused on ([`Advance::Paused`]); empty when it
    /// did not pause.
    #[must_use]
    pub fn paused_key(&self) -> &[u8] {
        if self.paused { self.merge.key() } else { &[] }
    }

    /// The key of the current entry (empty when not positioned).
    #[inline]
    pub fn key(&self) -> &[u8] {
        if self.valid { self.merge.key() } else { &[] }
    }

    /// The value of the current entry, borrowed from its block or memtable node (empty
    /// when not positioned).
    #[inline]
    pub fn value(&self) -> &[u8] {
        if self.valid { self.merge.value() } else { &[] }
    }
}

impl Iterator for RangeIter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.advance() {
            Ok(true) => Some(Ok((self.key().to_vec(), self.value().to_vec()))),
            Ok(false) => None,
            Err(err) => Some(Err(err)),
        }
    }
}

impl std::iter::FusedIterator for RangeIter {}
