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
