//! Merging cursors over memtables and SSTs.
//!
//! Every level is a lending cursor: `advance()` moves to the next entry and the accessors
//! borrow it in place (from a cached SST block or a reused memtable chunk), so a scan copies
//! nothing per entry but the user key it must remember to skip older versions. The owned
//! `Iterator` impls are thin wrappers for callers that want `(Vec, Vec)` items.

use std::cmp::Ordering;
use std::sync::Arc;

use super::memtable::{MemEntry, Memtable};
use super::sst::{SstEntry, SstIter};
use super::version::{ReadView, SstHandle};
use super::{RangeTombstone, Result, Seq, ValueKind};

/// Entries fetched from a memtable per refill: bounds the copy while keeping iteration lock-free.
const MEM_SCAN_CHUNK: usize = 64;
/// A key above every valid key (longer than the key limit), standing for "no end".
const MAX_KEY_BOUND: &[u8] = &[0xFF; super::limits::MAX_KEY_BYTES + 1];

/// A memtable read in chunks into buffers that are reused from one chunk to the next.
#[derive(Debug)]
pub struct MemSource {
    mem: Arc<Memtable>,
    /// First user key of interest.
    start: Vec<u8>,
    /// Exclusive upper bound on user keys, if any.
    end: Option<Vec<u8>>,
    /// The current chunk; only `buf[..len]` is filled.
    buf: Vec<MemEntry>,
    len: usize,
    /// Position in the chunk; `len` before the first `advance`.
    pos: usize,
    /// The skip list held fewer entries than asked for on the last refill.
    exhausted: bool,
    started: bool,
}

impl MemSource {
    fn advance(&mut self) -> Result<bool> {
        if self.started {
            self.pos += 1;
        }
        if self.pos < self.len {
            return Ok(true);
        }
        if self.exhausted {
            self.pos = self.len;
            return Ok(false);
        }
        // Resume strictly after the last entry of the previous chunk; `buf` is rewritten
        // in place, so the key is moved out first.
        let after = match self.len.checked_sub(1).and_then(|i| self.buf.get_mut(i)) {
            Some(last) if self.started => Some((std::mem::take(&mut last.key), last.seq)),
            _ => None,
        };
        self.started = true;
        let after_ref = after.as_ref().map(|(key, seq)| (key.as_slice(), *seq));
        self.len = self.mem.scan_into(
            &self.start,
            after_ref,
            self.end.as_deref(),
            MEM_SCAN_CHUNK,
            &mut self.buf,
        );
        self.exhausted = self.len < MEM_SCAN_CHUNK;
        self.pos = 0;
        Ok(self.len > 0)
    }

    fn current(&self) -> Option<&MemEntry> {
        self.buf.get(self.pos).filter(|_| self.pos < self.len)
    }
}

/// One sorted input of a merge.
#[derive(Debug)]
pub enum Source {
    /// A memtable read in chunks from a start key.
    Mem(MemSource),
    /// An SST iterator.
    Sst(SstIter),
}

impl Source {
    /// A memtable source over user keys `[start, end)` (`end = None`: to the last key).
    pub fn mem(mem: Arc<Memtable>, start: &[u8], end: Option<&[u8]>) -> Self {
        Self::Mem(MemSource {
            mem,
            start: start.to_vec(),
            end: end.map(<[u8]>::to_vec),
            buf: Vec::new(),
            len: 0,
            pos: 0,
            exhausted: false,
            started: false,
        })
    }

    /// Moves to the next entry in internal order; false at the end.
    #[inline]
    fn advance(&mut self) -> Result<bool> {
        match self {
            Self::Sst(iter) => iter.advance(),
            Self::Mem(mem) => mem.advance(),
        }
    }

    #[inline]
    fn key(&self) -> &[u8] {
        match self {
            Self::Sst(iter) => iter.key(),
            Self::Mem(mem) => mem.current().map_or(&[], |e| e.key.as_slice()),
        }
    }

    #[inline]
    fn seq(&self) -> Seq {
        match self {
            Self::Sst(iter) => iter.seq(),
            Self::Mem(mem) => mem.current().map_or(0, |e| e.seq),
        }
    }

    #[inline]
    fn kind(&self) -> ValueKind {
        match self {
            Self::Sst(iter) => iter.kind(),
            Self::Mem(mem) => mem.current().map_or(ValueKind::Put, |e| e.kind),
        }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        match self {
            Self::Sst(iter) => iter.value(),
            Self::Mem(mem) => mem.current().map_or(&[], |e| e.value.as_slice()),
        }
    }
}

/// Merges sorted sources into one stream in internal order (every version of every key).
///
/// The minimum is found without a heap: the merge remembers the current source and the
/// smallest of the others (the runner-up), so a run of entries from one source costs one
/// comparison each, and none once a single source is left. Only when the lead changes are
/// the remaining sources scanned, as LevelDB's merging iterator does.
#[derive(Debug)]
pub struct MergeIter {
    sources: Vec<Source>,
    /// Indices of the sources positioned on an entry.
    live: Vec<usize>,
    current: Option<usize>,
    runner_up: Option<usize>,
    primed: bool,
    /// Set after an error: the merge is fused.
    failed: bool,
}

impl MergeIter {
    /// A merge of `sources`, listed newest first.
    pub fn new(sources: Vec<Source>) -> Self {
        Self {
            live: Vec::with_capacity(sources.len()),
            sources,
            current: None,
            runner_up: None,
            primed: false,
            failed: false,
        }
    }

    /// Internal order of the entries under sources `a` and `b`: user key ascending, seq
    /// descending, then source (newer first).
    #[inline]
    fn order(&self, a: usize, b: usize) -> Ordering {
        match (self.sources.get(a), self.sources.get(b)) {
            (Some(x), Some(y)) => x
                .key()
                .cmp(y.key())
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
            self.runner_up = self.min_except(self.current);
            return Ok(self.current.is_some());
        }
        let Some(current) = self.current else {
            return Ok(false);
        };
        let Some(source) = self.sources.get_mut(current) else {
            return Ok(false);
        };
        if !source.advance()? {
            self.live.retain(|&i| i != current);
            self.current = self.runner_up;
            self.runner_up = self.min_except(self.current);
            return Ok(self.current.is_some());
        }
        if let Some(runner_up) = self.runner_up
            && self.order(runner_up, current) == Ordering::Less
        {
            self.current = Some(runner_up);
            self.runner_up = self.min_except(Some(runner_up));
        }
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
    /// The user key of the last entry returned or skipped (only its newest version counts);
    /// also the key [`RangeIter::key`] lends.
    last_key: Vec<u8>,
    has_last: bool,
    /// Positioned on a live entry.
    valid: bool,
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
            last_key: Vec::new(),
            has_last: false,
            valid: false,
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
        self.valid = false;
        while !self.done {
            match self.merge.advance() {
                Ok(true) => {}
                Ok(false) => break,
                Err(err) => {
                    self.done = true;
                    return Err(err);
                }
            }
            let key = self.merge.key();
            // An older version of the key just returned or skipped.
            // Neighbouring keys mostly differ in their last byte: look there first.
            if self.has_last
                && key.last() == self.last_key.last()
                && self.last_key.as_slice() == key
            {
                continue;
            }
            let seq = self.merge.seq();
            if seq > self.read_seq {
                continue;
            }
            self.last_key.clear();
            self.last_key.extend_from_slice(key);
            self.has_last = true;
            let deleted = self.merge.kind() == ValueKind::Delete
                || self
                    .tombstones
                    .iter()
                    .any(|t| t.deletes(key, seq, self.read_seq));
            if !deleted {
                self.valid = true;
                return Ok(true);
            }
        }
        self.done = true;
        Ok(false)
    }

    /// The key of the current entry (empty when not positioned).
    #[inline]
    pub fn key(&self) -> &[u8] {
        if self.valid { &self.last_key } else { &[] }
    }

    /// The value of the current entry, borrowed from its block or memtable chunk (empty
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
