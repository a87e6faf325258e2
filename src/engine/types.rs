//! Small vocabulary types shared by every part of the engine.

/// A sequence number: every committed batch takes the next one; a snapshot reads at one.
pub type Seq = u64;

/// What an internal entry records for its user key at its sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ValueKind {
    /// The key was deleted (a point tombstone).
    Delete = 0,
    /// The key was set to the entry's value.
    Put = 1,
}

impl ValueKind {
    /// The kind for an on-disk tag byte, or `None` for an unknown tag.
    #[must_use]
    pub const fn from_tag(tag: u8) -> Option<Self> {
        match tag {
            0 => Some(Self::Delete),
            1 => Some(Self::Put),
            _ => None,
        }
    }
}

/// What a source's run (a block of an SST, nodes of a memtable) hands each entry it reaches
/// to: `visit(same_key_as_previous, seq, kind, value)`, true to stop on that entry. A trait
/// rather than a closure so that its `#[inline(always)]` method is inlined into the run's
/// loop: a closure passed through two layers was left as a call per entry.
pub trait RunVisitor {
    /// Takes one entry; true stops the run on it.
    fn visit(&mut self, same_key: bool, seq: Seq, kind: ValueKind, value: &[u8]) -> bool;
}

/// A range deletion: every entry with `start <= key < end` and a sequence number below `seq`
/// is deleted. Kept outside SSTs (memtable, then manifest) because they are rare and cheap.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RangeTombstone {
    /// First deleted key (inclusive).
    pub start: Vec<u8>,
    /// End of the deleted range (exclusive).
    pub end: Vec<u8>,
    /// Sequence number of the deletion.
    pub seq: Seq,
}

impl RangeTombstone {
    /// True when `key` lies in `[start, end)`.
    #[must_use]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.start.as_slice() <= key && key < self.end.as_slice()
    }

    /// True when the tombstone, visible at `read_seq`, deletes the entry `key`@`entry_seq`.
    #[must_use]
    pub fn deletes(&self, key: &[u8], entry_seq: Seq, read_seq: Seq) -> bool {
        self.seq <= read_seq && entry_seq < self.seq && self.contains(key)
    }

    /// True when `[start, end)` intersects the closed key range `[min, max]`.
    #[must_use]
    pub fn overlaps(&self, min: &[u8], max: &[u8]) -> bool {
        self.start.as_slice() <= max && min < self.end.as_slice()
    }
}
