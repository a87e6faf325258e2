//! Merging cursors over memtables and SSTs.
//!
//! Every level is a lending cursor: `advance()` moves to the next entry and the accessors
//! borrow it in place (from a cached SST block, or from the memtable's own node, which the
//! cursor keeps alive by holding the memtable), so a scan copies nothing per entry: older
//! versions of a key are told by each source (an SST entry sharing its whole predecessor key,
//! a memtable node with its predecessor's key) and by the merge's own comparisons. The owned
//! `Iterator` impls are thin wrappers for callers that want `(Vec, Vec)` items.

use std::cmp::Ordering;
use std::sync::Arc;

use super::memtable::{MemCursor, Memtable};
use super::sst::{SstEntry, SstIter};
use super::version::{ReadView, SstHandle};
use super::{RangeTombstone, Result, Seq, ValueKind};

mod run;

/// A key above every valid key (longer than the key limit), standing for "no end".
const MAX_KEY_BOUND: &[u8] = &[0xFF; super::limits::MAX_KEY_BYTES + 1];

/// A memtable read in place over user keys `[start, end)`.
#[derive(Debug)]
pub struct MemSource {
    cursor: MemCursor,
    /// First user key of interest.
    start: Vec<u8>,
    /// Exclusive upper bound on user keys, if any.
    end: Option<Vec<u8>>,
    /// [`head_word`] of `end`: a key whose head word is below it is in range without a
    /// comparison of the whole key.
    end_word: u64,
    started: bool,
}

impl MemSource {
    #[inline(always)]
    fn advance(&mut self) -> bool {
        let found = if self.started {
            self.cursor.step()
        } else {
            self.started = true;
            self.cursor.seek(&self.start)
        };
        if found
            && let Some(end) = self.end.as_deref()
            && !below(self.cursor.key(), end, self.end_word)
        {
            self.cursor.finish();
            return false;
        }
        found
    }
}

/// The first eight bytes of `key` as a big-endian word, zero-padded when shorter. When the
/// head words of two keys differ they order the keys as the keys' bytes do (a key that ends
/// inside the word is a prefix of the other up to there, hence the smaller); equal words
/// leave the order to the rest of the keys.
#[inline(always)]
fn head_word(key: &[u8]) -> u64 {
    if let Some(word) = key.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    // A short key (an entity key's tail after its whole words) as two overlapping loads
    // instead of a byte loop: the bytes both loads hold are the same, so OR-ing them in
    // place is exact.
    let len = key.len();
    let (head, tail) = if len >= 4 {
        let head = key.first_chunk::<4>().map_or(0, |b| u32::from_be_bytes(*b));
        let tail = key.last_chunk::<4>().map_or(0, |b| u32::from_be_bytes(*b));
        (u64::from(head) << 32, u64::from(tail))
    } else if len >= 2 {
        let head = key.first_chunk::<2>().map_or(0, |b| u16::from_be_bytes(*b));
        let tail = key.last_chunk::<2>().map_or(0, |b| u16::from_be_bytes(*b));
        (u64::from(head) << 48, u64::from(tail))
    } else {
        return key.first().map_or(0, |&b| u64::from(b) << 56);
    };
    // The tail load's last byte is the key's byte `len - 1`, whose place in the word is
    // 8 * (8 - len) bits up.
    head | tail << (8 * (8 - len))
}

/// The order of two user keys, as `a.cmp(b)`, eight bytes at a time as big-endian words:
/// entity keys share their first word (table id and the start of the PartitionKey), so a
/// `memcmp` call after the head word was the usual case; a few word compares cost less.
#[inline(always)]
fn key_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut a, mut b) = (a, b);
    while let (Some((x, a_rest)), Some((y, b_rest))) =
        (a.split_first_chunk::<8>(), b.split_first_chunk::<8>())
    {
        if x != y {
            return u64::from_be_bytes(*x).cmp(&u64::from_be_bytes(*y));
        }
        (a, b) = (a_rest, b_rest);
    }
    // One of them has under eight bytes left: zero-padded words order them unless equal,
    // and then the shorter is a prefix of the other.
    head_word(a)
        .cmp(&head_word(b))
        .then_with(|| a.len().cmp(&b.len()))
}

/// The first sixteen bytes of `key` as two big-endian words, ordered as those bytes are;
/// `None` for a shorter key.
#[inline(always)]
fn head_words(key: &[u8]) -> Option<(u64, u64)> {
    let (a, rest) = key.split_first_chunk::<8>()?;
    let b = rest.first_chunk::<8>()?;
    Some((u64::from_be_bytes(*a), u64::from_be_bytes(*b)))
}

/// Whether two user keys are equal, looking first where neighbouring keys differ: their
/// lengths and last bytes.
#[inline(always)]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.last() == b.last() && a == b
}

/// Whether `key < end`, given `end_word = head_word(end)`.
#[inline(always)]
fn below(key: &[u8], end: &[u8], end_word: u64) -> bool {
    match head_word(key).cmp(&end_word) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => key < end,
    }
}

/// One sorted input of a merge.
#[derive(Debug)]
pub enum Source {
    /// A memtable read in place from a start key.
    Mem(MemSource),
    /// An SST iterator.
    Sst(SstIter),
}

impl Source {
    /// A memtable source over user keys `[start, end)` (`end = None`: to the last key).
    pub fn mem(mem: Arc<Memtable>, start: &[u8], end: Option<&[u8]>) -> Self {
        Self::Mem(MemSource {
            cursor: MemCursor::new(mem),
            start: start.to_vec(),
            end: end.map(<[u8]>::to_vec),
            end_word: end.map_or(0, head_word),
            started: false,
        })
    }

    /// Moves to the next entry in internal order; false at the end.
    #[inline]
    fn advance(&mut self) -> Result<bool> {
        match self {
            Self::Sst(iter) => iter.advance(),
            Self::Mem(mem) => Ok(mem.advance()),
        }
    }

    #[inline]
    fn key(&self) -> &[u8] {
        match self {
            Self::Sst(iter) => iter.key(),
            Self::Mem(mem) => mem.cursor.key(),
        }
    }

    /// Key, sequence number and kind of the current entry, in one dispatch.
    #[inline]
    fn head(&self) -> (&[u8], Seq, ValueKind) {
        match self {
            Self::Sst(iter) => (iter.key(), iter.seq(), iter.kind()),
            Self::Mem(mem) => mem.cursor.head(),
        }
    }

    /// Whether the current entry's user key is this source's previous entry's.
    #[inline]
    fn same_key_as_previous(&self) -> bool {
        match self {
            Self::Sst(iter) => iter.same_key_as_previous(),
            Self::Mem(mem) => mem.cursor.same_key_as_previous(),
        }
    }

    #[inline]
    fn seq(&self) -> Seq {
        match self {
            Self::Sst(iter) => iter.seq(),
            Self::Mem(mem) => mem.cursor.seq(),
        }
    }

    #[inline]
    fn kind(&self) -> ValueKind {
        match self {
            Self::Sst(iter) => iter.kind(),
            Self::Mem(mem) => mem.cursor.kind(),
        }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        match self {
            Self::Sst(iter) => iter.value(),
            Self::Mem(mem) => mem.cursor.value(),
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
    /// The runner-up key's first sixteen bytes as two big-endian words (`None` for a
    /// shorter key): the lead's next key is ordered against them without a look at the
    /// runner-up, whose key stays put while it waits.
    runner_words: Option<(u64, u64)>,
    /// The current entry's user key is the runner-up's.
    tie: bool,
    /// The current entry's user key is the previous entry's.
    same: bool,
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
            let (key, seq, kind) = self.merge.head();
            // Versions of a key come newest first and together: the merge tells where a key
            // starts, so no copy of the previous key is kept to compare with.
            if !self.merge.same_key_as_previous() {
                self.key_done = false;
            } else if self.key_done {
                continue;
            }
            if seq > self.read_seq {
                continue;
            }
            self.key_done = true;
            let deleted = kind == ValueKind::Delete
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::{below, head_word, key_cmp};

    #[test]
    fn key_order_by_head_words_is_the_byte_order() {
        let keys: Vec<Vec<u8>> = (0..400u32)
            .map(|i| {
                let len = (i % 23) as usize;
                (0..len)
                    .map(|j| [0u8, 1, 0x7F, 0x80, 0xFF][(i as usize / 23 + j * 3) % 5])
                    .collect()
            })
            .collect();
        for a in &keys {
            let mut padded = [0u8; 8];
            for (to, from) in padded.iter_mut().zip(a) {
                *to = *from;
            }
            assert_eq!(head_word(a), u64::from_be_bytes(padded), "{a:?}");
            for b in &keys {
                assert_eq!(key_cmp(a, b), a.cmp(b), "{a:?} {b:?}");
                assert_eq!(below(a, b, head_word(b)), a < b, "{a:?} {b:?}");
            }
        }
    }
}
