//! Forward iteration over an SST, block by block through the cache.

use std::sync::Arc;

use super::block::BlockCursor;
use super::{SstEntry, SstReader};
use crate::engine::{Result, RunVisitor, Seq, ValueKind};

/// A forward iterator over an SST's entries.
///
/// Three ways to consume it: as an `Iterator` of owned [`SstEntry`] values (two allocations
/// per entry); through [`SstIter::next_into`], which refills one caller-owned entry; or with
/// no copy at all through [`SstIter::advance`] and the borrowed accessors [`SstIter::key`],
/// [`SstIter::seq`], [`SstIter::kind`], [`SstIter::value`].
#[derive(Debug)]
pub struct SstIter {
    reader: Arc<SstReader>,
    /// The start key, until the first `advance` seeks to it.
    start: Option<Vec<u8>>,
    /// Index of the block under `cursor`.
    block_idx: usize,
    cursor: Option<BlockCursor>,
    /// Set after the end or an error: the iterator is fused.
    done: bool,
    /// Exclusive upper bound on user keys, if any.
    end: Option<Box<[u8]>>,
    /// The first block whose separator is `>= end` (`usize::MAX` without a bound): blocks
    /// before it lie wholly below the bound and need no per-entry check, blocks after it
    /// wholly above it and are never read.
    end_block: usize,
    /// Whether blocks read from storage are inserted into the block cache.
    fill_cache: bool,
}

impl SstIter {
    pub(super) fn new(reader: Arc<SstReader>, start: &[u8]) -> Self {
        Self {
            reader,
            start: Some(start.to_vec()),
            block_idx: 0,
            cursor: None,
            done: false,
            end: None,
            end_block: usize::MAX,
            fill_cache: true,
        }
    }

    /// Stops the iterator before the first user key `>= end`. Only the last block of the
    /// range compares keys with the bound; the blocks past it are not read at all.
    #[must_use]
    pub fn with_upper_bound(mut self, end: &[u8]) -> Self {
        self.end_block = self.reader.find_block(end);
        self.end = Some(end.into());
        self
    }

    /// Blocks this iterator reads from storage are not inserted into the block cache (blocks
    /// already cached are still used): for one-pass scans such as compaction inputs, whose
    /// blocks would otherwise evict the readers' hot set and fill the cache to its bound.
    #[must_use]
    pub fn without_cache_fill(mut self) -> Self {
        self.fill_cache = false;
        self
    }

    fn load(&mut self, idx: usize) -> Result<&mut BlockCursor> {
        let block = self.reader.block_filling(idx, self.fill_cache)?;
        self.block_idx = idx;
        let cursor = match self.cursor.take() {
            Some(mut c) => {
                c.reset(block);
                c
            }
            None => BlockCursor::new(block),
        };
        Ok(self.cursor.insert(cursor))
    }

    /// The next entry: the common case, another entry of the current block, is handled
    /// here and small enough to inline; the first seek and block changes are out of line.
    #[inline]
    fn step(&mut self) -> Result<bool> {
        let found = match (&self.start, self.cursor.as_mut()) {
            (None, Some(cursor)) => cursor.advance()?,
            (None, None) => return Ok(false),
            (Some(_), _) => return self.seek_start(),
        };
        if !found {
            return self.next_block();
        }
        Ok(self.below_end())
    }

    /// Whether the current entry lies below the upper bound.
    #[inline]
    fn below_end(&self) -> bool {
        if self.block_idx < self.end_block {
            return true;
        }
        match (&self.end, &self.cursor) {
            (Some(end), Some(cursor)) => cursor.key() < &**end,
            _ => true,
        }
    }

    /// The first entry `>= start`.
    #[cold]
    #[inline(never)]
    fn seek_start(&mut self) -> Result<bool> {
        let Some(start) = self.start.take() else {
            return Ok(false);
        };
        let idx = self.reader.find_block(&start);
        if idx >= self.reader.data_blocks() {
            return Ok(false);
        }
        if self.load(idx)?.seek(&start)? {
            return Ok(self.below_end());
        }
        self.next_block()
    }

    /// The first entry of the next block holding one, once the current block is done.
    #[cold]
    #[inline(never)]
    fn next_block(&mut self) -> Result<bool> {
        loop {
            let next = self.block_idx + 1;
            if next >= self.reader.data_blocks() || next > self.end_block {
                return Ok(false);
            }
            if self.load(next)?.advance()? {
                return Ok(self.below_end());
            }
        }
    }

    /// Moves to the next entry (the first call moves to the first entry `>= start`); false
    /// at the end. After an error or the end, further calls return `Ok(false)`.
    pub fn advance(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        match self.step() {
            Ok(true) => Ok(true),
            other => {
                self.done = true;
                self.cursor = None;
                other
            }
        }
    }

    /// Walks the rest of the current block in one tight loop, for a caller that knows no
    /// other source holds a key below `below` (`None`: no other source left): each entry
    /// after the current one is handed to `stop` ([`RunVisitor::visit`]) until it returns
    /// true, which leaves the iterator on that entry (`Ok(Some(true))`), or
    /// the block ends with the iterator on its last entry (`Ok(Some(false))`). `Ok(None)`,
    /// with nothing moved, when the block cannot be walked so: not positioned, at its last
    /// entry, the block reaching the upper bound, or the block's separator not below `below`.
    ///
    /// # Errors
    /// A corrupt entry; the iterator is then fused.
    #[inline]
    pub fn run_block(
        &mut self,
        below: Option<&[u8]>,
        stop: &mut impl RunVisitor,
    ) -> Result<Option<bool>> {
        if self.done || self.start.is_some() || self.block_idx >= self.end_block {
            return Ok(None);
        }
        // Every key of the block is at most its separator, so a separator below the other
        // sources' least key puts the whole block ahead of them.
        if let Some(below) = below
            && self
                .reader
                .separator(self.block_idx)
                .is_none_or(|sep| sep >= below)
        {
            return Ok(None);
        }
        let Some(cursor) = self.cursor.as_mut().filter(|c| c.valid() && !c.at_end()) else {
            return Ok(None);
        };
        while !cursor.at_end() {
            if let Err(err) = cursor.advance() {
                self.done = true;
                self.cursor = None;
                return Err(err);
            }
            if stop.visit(
                cursor.same_key_as_previous(),
                cursor.seq(),
                cursor.kind(),
                cursor.value(),
            ) {
                return Ok(Some(true));
            }
        }
        Ok(Some(false))
    }

    /// Advances and copies the entry into `entry`, reusing its buffers: an owned entry per
    /// step without an allocation once the buffers have grown. False at the end.
    pub fn next_into(&mut self, entry: &mut SstEntry) -> Result<bool> {
        if !self.advance()? {
            return Ok(false);
        }
        entry.key.clear();
        entry.key.extend_from_slice(self.key());
        entry.value.clear();
        entry.value.extend_from_slice(self.value());
        entry.seq = self.seq();
        entry.kind = self.kind();
        Ok(true)
    }

    fn current(&self) -> Option<&BlockCursor> {
        self.cursor.as_ref().filter(|c| c.valid())
    }

    /// The current user key (empty when not positioned).
    pub fn key(&self) -> &[u8] {
        self.current().map(BlockCursor::key).unwrap_or_default()
    }

    /// Whether the current entry's user key is the previous entry's (another version of
    /// it); false for the first entry.
    pub fn same_key_as_previous(&self) -> bool {
        self.current()
            .is_some_and(BlockCursor::same_key_as_previous)
    }

    /// The current sequence number.
    pub fn seq(&self) -> Seq {
        self.current().map_or(0, BlockCursor::seq)
    }

    /// The current kind.
    pub fn kind(&self) -> ValueKind {
        self.current().map_or(ValueKind::Put, BlockCursor::kind)
    }

    /// The current value, borrowed from the cached block.
    pub fn value(&self) -> &[u8] {
        self.current().map(BlockCursor::value).unwrap_or_default()
    }

    /// Index of the block under the cursor.
    pub(super) fn block_index(&self) -> usize {
        self.block_idx
    }

    /// File offset of the block under the cursor (for error reports).
    pub fn block_offset(&self) -> Option<u64> {
        self.current().map(BlockCursor::block_file_offset)
    }
}

impl Iterator for SstIter {
    type Item = Result<SstEntry>;
    fn next(&mut self) -> Option<Self::Item> {
        match self.advance() {
            Ok(true) => Some(Ok(SstEntry::found(
                self.key(),
                (self.seq(), self.kind()),
                self.value().to_vec(),
            ))),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl std::iter::FusedIterator for SstIter {}
