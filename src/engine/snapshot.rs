//! Consistent read views.

use std::ops::Range;
use std::sync::Arc;

use super::iter::RangeIter;
use super::version::ReadView;
use super::{Result, Seq};

/// A read view at one sequence number; keeps the data it sees alive (memtables and SSTs), so
/// later writes, flushes and compactions never change what it returns.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use strata::engine::{Durability, Engine, Options, WriteBatch};
/// let dir = tempfile::tempdir()?;
/// let engine = Engine::open(dir.path().join("db"), Options::default())?;
/// let mut batch = WriteBatch::new();
/// batch.put(b"k", b"old");
/// engine.write(&batch, Durability::Sync)?;
/// let snapshot = engine.snapshot();
/// batch.clear();
/// batch.put(b"k", b"new");
/// engine.write(&batch, Durability::Sync)?;
/// assert_eq!(snapshot.get(b"k")?, Some(b"old".to_vec()));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Snapshot {
    view: Arc<ReadView>,
    seq: Seq,
}

impl Snapshot {
    pub(crate) fn new(view: Arc<ReadView>, seq: Seq) -> Self {
        Self { view, seq }
    }

    /// The sequence number the snapshot reads at.
    #[must_use]
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// The value of `key` as of the snapshot.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.view.get(key, self.seq)
    }

    /// Iterates live keys in `range` in ascending order as of the snapshot.
    pub fn range(&self, range: Range<&[u8]>) -> RangeIter {
        RangeIter::new(
            Arc::clone(&self.view),
            range.start,
            Some(range.end),
            self.seq,
        )
    }

    /// Iterates every live key as of the snapshot.
    pub fn range_all(&self) -> RangeIter {
        RangeIter::new(Arc::clone(&self.view), &[], None, self.seq)
    }
}
