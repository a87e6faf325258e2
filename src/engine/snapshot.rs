//! Consistent read views.

use std::ops::Range;
use std::sync::Arc;

use super::iter::RangeIter;
use super::version::ReadView;
use super::{PrefixExtractor, Result, Seq};

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
    /// Lets a scan inside one prefix skip SSTs by their partition-prefix filter.
    prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
}

impl Snapshot {
    pub(crate) fn new(
        view: Arc<ReadView>,
        seq: Seq,
        prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
    ) -> Self {
        Self {
            view,
            seq,
            prefix_extractor,
        }
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
        let prefix = self
            .prefix_extractor
            .as_deref()
            .and_then(|extractor| scan_prefix(extractor, range.start, range.end));
        RangeIter::new(
            Arc::clone(&self.view),
            range.start,
            Some(range.end),
            self.seq,
            prefix,
        )
    }

    /// Iterates every live key as of the snapshot.
    pub fn range_all(&self) -> RangeIter {
        RangeIter::new(Arc::clone(&self.view), &[], None, self.seq, None)
    }
}

/// The prefix every key of `[start, end)` starts with, when that is the prefix of `start`:
/// such a scan only needs SSTs whose partition-prefix filter may hold it. Relies on prefixes
/// being self-delimiting (see [`PrefixExtractor`]).
fn scan_prefix<'k>(
    extractor: &dyn PrefixExtractor,
    start: &'k [u8],
    end: &[u8],
) -> Option<&'k [u8]> {
    let prefix = extractor.prefix(start)?;
    if !start.starts_with(prefix) {
        return None;
    }
    // The smallest key above every key that starts with `prefix`: drop trailing 0xFF bytes,
    // then increment the last one (none left: no key is above them all).
    let kept = prefix.len() - prefix.iter().rev().take_while(|&&b| b == 0xFF).count();
    let (last, head) = prefix.get(..kept)?.split_last()?;
    let mut upper = Vec::with_capacity(kept);
    upper.extend_from_slice(head);
    upper.push(last + 1);
    (end <= upper.as_slice()).then_some(prefix)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[derive(Debug)]
    struct UpToSlash;

    impl PrefixExtractor for UpToSlash {
        fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
            let i = key.iter().position(|&b| b == b'/')?;
            key.get(..=i)
        }
    }

    #[test]
    fn scan_prefix_is_found_only_when_the_whole_range_shares_it() {
        fn p<'k>(start: &'k [u8], end: &[u8]) -> Option<&'k [u8]> {
            scan_prefix(&UpToSlash, start, end)
        }
        assert_eq!(p(b"a/", b"a0"), Some(&b"a/"[..]));
        assert_eq!(p(b"a/x", b"a/y"), Some(&b"a/"[..]));
        assert_eq!(p(b"a/", b"a1"), None);
        assert_eq!(p(b"a/", b"b"), None);
        assert_eq!(p(b"a", b"a0"), None);
        assert_eq!(p(b"a\xff/", b"a\xff0"), Some(&b"a\xff/"[..]));
    }

    #[test]
    fn scan_prefix_of_trailing_ff_bytes_increments_the_last_other_byte() {
        #[derive(Debug)]
        struct Two;
        impl PrefixExtractor for Two {
            fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
                key.get(..2)
            }
        }
        assert_eq!(scan_prefix(&Two, b"a\xffz", b"b"), Some(&b"a\xff"[..]));
        assert_eq!(scan_prefix(&Two, b"a\xffz", b"b\x00"), None);
        assert_eq!(scan_prefix(&Two, b"\xff\xff", b"\xff\xff\xff"), None);
    }
}
