//! Merging iterators over memtables and SSTs.

/// Live (key, value) pairs of a range at one sequence number, ascending.
#[derive(Debug)]
pub struct RangeIter {}
