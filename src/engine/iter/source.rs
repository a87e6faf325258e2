//! The sorted inputs of a merge: memtables read in place and SST iterators.

use std::sync::Arc;

use super::keys::{below, head_word};
use crate::engine::memtable::{MemCursor, Memtable};
use crate::engine::sst::SstIter;
use crate::engine::{Result, Seq, ValueKind};

/// A memtable read in place over user keys `[start, end)`.
#[derive(Debug)]
pub struct MemSource {
    pub(super) cursor: MemCursor,
    /// First user key of interest.
    pub(super) start: Vec<u8>,
    /// Exclusive upper bound on user keys, if any.
    pub(super) end: Option<Vec<u8>>,
    /// [`head_word`] of `end`: a key whose head word is below it is in range without a
    /// comparison of the whole key.
    pub(super) end_word: u64,
    pub(super) started: bool,
}

impl MemSource {
    #[inline(always)]
    pub(super) fn advance(&mut self) -> bool {
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
    pub(super) fn advance(&mut self) -> Result<bool> {
        match self {
            Self::Sst(iter) => iter.advance(),
            Self::Mem(mem) => Ok(mem.advance()),
        }
    }

    #[inline]
    pub(super) fn key(&self) -> &[u8] {
        match self {
            Self::Sst(iter) => iter.key(),
            Self::Mem(mem) => mem.cursor.key(),
        }
    }

    /// Key, sequence number and kind of the current entry, in one dispatch.
    #[inline]
    pub(super) fn head(&self) -> (&[u8], Seq, ValueKind) {
        match self {
            Self::Sst(iter) => (iter.key(), iter.seq(), iter.kind()),
            Self::Mem(mem) => mem.cursor.head(),
        }
    }

    /// Whether the current entry's user key is this source's previous entry's.
    #[inline]
    pub(super) fn same_key_as_previous(&self) -> bool {
        match self {
            Self::Sst(iter) => iter.same_key_as_previous(),
            Self::Mem(mem) => mem.cursor.same_key_as_previous(),
        }
    }

    #[inline]
    pub(super) fn seq(&self) -> Seq {
        match self {
            Self::Sst(iter) => iter.seq(),
            Self::Mem(mem) => mem.cursor.seq(),
        }
    }

    #[inline]
    pub(super) fn kind(&self) -> ValueKind {
        match self {
            Self::Sst(iter) => iter.kind(),
            Self::Mem(mem) => mem.cursor.kind(),
        }
    }

    #[inline]
    pub(super) fn value(&self) -> &[u8] {
        match self {
            Self::Sst(iter) => iter.value(),
            Self::Mem(mem) => mem.cursor.value(),
        }
    }
}
