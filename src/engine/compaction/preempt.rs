//! `compact()` preempting background compaction.
//!
//! `compact()` merges every level into the last, so a background job still running when it
//! is called only writes SSTs that `compact()` rewrites at once, and the backlog behind that
//! job (the background loop holds `compaction` until no level is over budget) kept
//! `compact()` waiting for seconds after a bulk load. A waiting `compact()` announces itself
//! here; background jobs poll it, abandon their outputs (never named by a manifest, so
//! nothing durable changes) and give the lock up.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Entries merged between two polls of [`Preempt::requested`] (an atomic load each).
pub const PREEMPT_POLL_ENTRIES: u32 = 1 << 10;

/// Count of `compact()` calls waiting for the `compaction` lock.
#[derive(Debug, Default)]
pub struct Preempt {
    waiting: AtomicUsize,
}

/// Announces one waiting `compact()` for as long as it lives.
#[derive(Debug)]
pub struct PreemptRequest<'a> {
    preempt: &'a Preempt,
}

impl Preempt {
    /// Announces a `compact()` about to wait for the `compaction` lock; background jobs yield
    /// until the returned request is dropped (once the lock is held).
    pub fn request(&self) -> PreemptRequest<'_> {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        PreemptRequest { preempt: self }
    }

    /// Whether a `compact()` is waiting, so a background job should stop.
    pub fn requested(&self) -> bool {
        self.waiting.load(Ordering::Acquire) > 0
    }
}

impl Drop for PreemptRequest<'_> {
    fn drop(&mut self) {
        self.preempt.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::engine::compaction::CompactionJob;
    use crate::engine::compaction::test_engine::manual_engine;
    use crate::engine::file::FaultyStorage;
    use crate::engine::inner::Inner;
    use crate::engine::{Durability, Result, WriteBatch};

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    /// Ids of the SSTs of every level.
    fn layout(inner: &Inner) -> Vec<Vec<u64>> {
        let view = inner.view();
        view.version
            .levels
            .iter()
            .map(|level| level.iter().map(|sst| sst.meta.id).collect())
            .collect()
    }

    /// An engine without a background thread whose L0 holds `ssts` flushed SSTs of 3,000
    /// 320-byte entries each (more than a poll interval), over its compaction trigger of 2 (flushes
    /// called directly run no compaction).
    fn loaded(ssts: u64) -> Result<(Inner, Arc<FaultyStorage>)> {
        let (inner, faulty) = manual_engine()?;
        for sst in 0..ssts {
            let mut batch = WriteBatch::new();
            for row in 0..3_000u64 {
                let key = format!("key{:08}", row * 7 + sst);
                // Incompressible, so the first poll comes after a chunk reached the file.
                let value: Vec<u8> = (0..40u64)
                    .flat_map(|i| {
                        let z = ((sst * 3_000 + row) * 40 + i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                        (z ^ (z >> 29))
                            .wrapping_mul(0xbf58_476d_1ce4_e5b9)
                            .to_le_bytes()
                    })
                    .collect();
                batch.put(key.as_bytes(), &value);
            }
            inner.write(&batch, Durability::Buffered)?;
            // Rotating into the lowest hole, as `compact()` does: the WAL then never sits
            // allocated but unwritten past the end of the file, which the space check counts.
            inner.flush_punching(false, true)?;
        }
        Ok((inner, faulty))
    }

    fn l0_job(inner: &Inner) -> CompactionJob {
        let view = inner.view();
        CompactionJob {
            inputs: view.version.levels.first().cloned().unwrap_or_default(),
            output_level: 1,
            drop_tombstones: true,
        }
    }

    #[test]
    fn preempted_job_changes_no_level_and_frees_what_it_wrote() -> TestResult {
        let (inner, faulty) = loaded(3)?;
        let (before, free_before) = (layout(&inner), inner.alloc.lock().free_bytes());
        let len_before = inner.storage.len()?;
        let writes_before = faulty.write_count();
        let job = l0_job(&inner);
        {
            let _request = inner.preempt.request();
            let _guard = inner.compaction.lock();
            inner.run_compaction(&job)?;
        }
        assert_eq!(layout(&inner), before);
        assert!(
            faulty.write_count() > writes_before,
            "the job wrote before it stopped"
        );
        let grown = inner.storage.len()?.saturating_sub(len_before);
        assert_eq!(inner.alloc.lock().free_bytes(), free_before + grown);
        // Without a waiting `compact()` the same job does move L0 down.
        {
            let _guard = inner.compaction.lock();
            inner.run_compaction(&job)?;
        }
        assert_ne!(layout(&inner), before);
        assert!(layout(&inner).first().is_some_and(Vec::is_empty));
        Ok(())
    }

    #[test]
    fn maintenance_yields_to_a_waiting_compact() -> TestResult {
        let (inner, _) = loaded(3)?;
        let before = layout(&inner);
        {
            let _request = inner.preempt.request();
            inner.maintain()?;
        }
        assert_eq!(layout(&inner), before);
        inner.maintain()?;
        assert!(layout(&inner).first().is_some_and(Vec::is_empty));
        Ok(())
    }
}
