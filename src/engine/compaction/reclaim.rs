//! Gives the space flushes and compactions free back to the file system once the work that
//! would reuse it is done.

use super::pick::pick;
use crate::engine::inner::Inner;

/// When a flush gives the space it freed back to the file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reclaim {
    /// Not now: `compact()` refills the holes itself and punches once at its end.
    Keep,
    /// At once, unless small `Sync` writes are active: an explicit flush, after which the
    /// file's allocated size is expected to follow its data.
    Now,
    /// Once flushes and compactions have caught up (see
    /// [`Inner::punch_free_space_when_caught_up`]): background flushes.
    WhenCaughtUp,
}

impl Inner {
    /// Punches holes over the pages freed since the last call, so the file's allocated size
    /// follows its live data between compactions instead of keeping the high-water mark of
    /// every hole (the tail is truncated anyway; holes below it were only reused, never
    /// returned). The allocator lock is held throughout, so no page punched can be handed out
    /// and written meanwhile; every page it lists is free: no durable superblock, version or
    /// reader refers to it, exactly as for reuse. A failed punch costs nothing but the space,
    /// so it is not an error.
    pub fn punch_free_space(&self) {
        let mut alloc = self.alloc.lock();
        for extent in self.graveyard.drain() {
            alloc.free(extent);
        }
        for hole in alloc.take_unpunched() {
            if self.storage.punch_hole(hole.offset, hole.len).is_err() {
                // Not supported by the file system: later frees would fail the same way.
                break;
            }
        }
    }

    /// Punches free space (as [`Inner::punch_free_space_unless_syncing`]) only when no
    /// memtable waits for its flush and no compaction is due; otherwise the holes stay listed
    /// for the first flush or merge that finds the work done (or for [`Inner::punch_after_merge`]).
    ///
    /// While work is due, the next flushes and merges write into the lowest holes, so a punch
    /// only makes the file system allocate the same pages again. It is not free either: a
    /// punch holds the inode lock that every write to the file takes (the writer's WAL
    /// appends included) and, on a file system mounted with `discard`, waits for the device's
    /// discard. A 1M-entry bulk load made 150–200 punches of 2–16 ms each, on the flush path
    /// and under the allocator lock the flushes and merges allocate with.
    pub(super) fn punch_free_space_when_caught_up(&self) {
        let caught_up =
            self.frozen.lock().is_empty() && pick(&self.view().version, &self.options).is_none();
        if caught_up {
            self.punch_free_space_unless_syncing();
        }
    }

    /// After a merge: as [`Inner::punch_free_space_when_caught_up`], and also while work is
    /// still due once no write came since the last freeze (the active memtable is empty and
    /// none is frozen: a load is over, and the merges working off its backlog punch as they
    /// go, so the space the load left follows the data as before). Flushes do not take this
    /// path: the active memtable is also empty while the writer waits at the frozen-memtable
    /// stop, which is when the flush thread installs.
    pub(super) fn punch_after_merge(&self) {
        let view = self.view();
        let caught_up = self.frozen.lock().is_empty()
            && (view.mem.is_empty() || pick(&view.version, &self.options).is_none());
        if caught_up {
            self.punch_free_space_unless_syncing();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::engine::compaction::CompactionJob;
    use crate::engine::compaction::pick::pick;
    use crate::engine::compaction::test_engine::{
        manual_engine, manual_engine_with, manual_options,
    };
    use crate::engine::inner::Inner;
    use crate::engine::{Durability, Options, Result, ValueKind, WriteBatch};

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    /// Writes 200 KiB (more than the smallest WAL segment, so the segment freed is large
    /// enough to punch) and flushes it as the flush thread does during a load: the memtable
    /// frozen behind a new WAL segment, the next write arriving, then `flush_frozen`, whose
    /// install frees the old segment.
    fn background_flush(inner: &Inner, tag: u8) -> Result<()> {
        let mut batch = WriteBatch::new();
        for row in 0..200u32 {
            batch.put(format!("{tag}-{row:06}").as_bytes(), &[tag; 1024]);
        }
        let seq = inner.write(&batch, Durability::Buffered)?;
        inner.freeze(&mut inner.writer.lock())?;
        // Straight into the memtable: through `write`, an engine without a background thread
        // would flush and run the due merge itself before this test looks. The sequence number
        // was never issued, so a later flush records a `flushed_seq` past every real write:
        // these tests must never reopen the engine (replay would skip the writes below it).
        let key = format!("{tag}-next");
        let mem = Arc::clone(&inner.view().mem);
        mem.insert(key.as_bytes(), seq + 1_000, ValueKind::Put, b"arriving");
        inner.flush_frozen()
    }

    #[test]
    fn background_flush_punches_only_once_no_compaction_is_due() -> TestResult {
        let (inner, faulty) = manual_engine()?;
        background_flush(&inner, 1)?;
        let caught_up = faulty.punch_count();
        assert!(
            caught_up > 0,
            "nothing due: the freed WAL segment is punched"
        );
        background_flush(&inner, 2)?;
        assert_eq!(
            faulty.punch_count(),
            caught_up,
            "L0 at its trigger: the merge due writes into the freed space"
        );
        inner.maintain()?;
        assert!(
            inner
                .view()
                .version
                .levels
                .first()
                .is_some_and(Vec::is_empty),
            "the merge ran"
        );
        assert!(
            faulty.punch_count() > caught_up,
            "the merge that caught up punches what it and the flush freed"
        );
        Ok(())
    }

    #[test]
    fn merge_after_the_last_write_punches_though_more_work_is_due() -> TestResult {
        for writes_arriving in [true, false] {
            // L1 over its target once L0 lands there (the repeated values compress to ~10 KiB):
            // an L1 -> L2 merge is due after the first.
            let (inner, faulty) = manual_engine_with(Options {
                l1_target_bytes: 4 << 10,
                ..manual_options()
            })?;
            background_flush(&inner, 1)?;
            background_flush(&inner, 2)?;
            if !writes_arriving {
                inner.freeze(&mut inner.writer.lock())?;
                inner.flush_frozen()?;
            }
            let before = faulty.punch_count();
            let job = CompactionJob {
                inputs: inner
                    .view()
                    .version
                    .levels
                    .first()
                    .cloned()
                    .unwrap_or_default(),
                output_level: 1,
                drop_tombstones: true,
            };
            {
                let _guard = inner.compaction.lock();
                inner.run_compaction(&job)?;
            }
            assert!(pick(&inner.view().version, &inner.options).is_some());
            assert_eq!(
                faulty.punch_count() > before,
                !writes_arriving,
                "writes arriving: {writes_arriving}"
            );
        }
        Ok(())
    }

    #[test]
    fn explicit_flush_punches_even_while_a_compaction_is_due() -> TestResult {
        let (inner, faulty) = manual_engine()?;
        background_flush(&inner, 1)?;
        background_flush(&inner, 2)?;
        let before = faulty.punch_count();
        let mut batch = WriteBatch::new();
        batch.put(b"3", b"three");
        inner.write(&batch, Durability::Buffered)?;
        inner.flush(false)?;
        assert!(faulty.punch_count() > before);
        Ok(())
    }
}
