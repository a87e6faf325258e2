//! Flushes: frozen memtables written to L0 SSTs, oldest first.

use std::sync::Arc;

use super::DropRules;
use super::merge::MemEntries;
use super::reclaim::Reclaim;
use crate::engine::Result;
use crate::engine::inner::Inner;
use crate::engine::version::Version;

impl Inner {
    /// Freezes a non-empty memtable (with `force`, even an empty one) and flushes every
    /// frozen memtable. The memtable is frozen without a WAL rotation (see
    /// [`Inner::freeze_for_flush`]): nothing waits for the disk before its SST is built, and
    /// the log stays in its segment (use [`Inner::flush_rotating`] to move it).
    pub fn flush(&self, force: bool) -> Result<()> {
        let _guard = self.flushing.lock();
        {
            let mut writer = self.writer.lock();
            if force || !self.view.read().mem.is_empty() {
                self.freeze_for_flush(&mut writer)?;
            }
        }
        self.flush_frozen_reclaiming(Reclaim::Now)
    }

    /// As [`Inner::flush`], but the log moves to a fresh segment (see [`Inner::freeze`]).
    pub fn flush_rotating(&self, force: bool) -> Result<()> {
        self.flush_punching(force, true)
    }

    /// As [`Inner::flush`], but the WAL's next segment goes into the lowest free extent
    /// (synced); the space freed is punched out of the file only with `punch`.
    pub(super) fn flush_punching(&self, force: bool, punch: bool) -> Result<()> {
        let _guard = self.flushing.lock();
        {
            let mut writer = self.writer.lock();
            if force || !self.view.read().mem.is_empty() {
                self.freeze(&mut writer)?;
            }
        }
        self.flush_frozen_reclaiming(if punch { Reclaim::Now } else { Reclaim::Keep })
    }

    /// Writes every frozen memtable to an L0 SST, oldest first; the space freed is punched out
    /// of the file once flushes and compactions have caught up. Caller holds `flushing`.
    pub fn flush_frozen(&self) -> Result<()> {
        self.flush_frozen_reclaiming(Reclaim::WhenCaughtUp)
    }

    /// As [`Inner::flush_frozen`]; the space freed is punched out of the file per `reclaim`.
    fn flush_frozen_reclaiming(&self, reclaim: Reclaim) -> Result<()> {
        loop {
            let Some(frozen) = self.frozen.lock().first().cloned() else {
                return Ok(());
            };
            // Snapshots pin the memtable itself, so only the newest version of each key (all
            // `write_ssts` keeps) needs to move on.
            let mut entries = MemEntries::new(Arc::clone(&frozen.mem));
            let rules = DropRules {
                tombstones: false,
                split: false,
                preemptible: false,
                yield_to_sync: false,
            };
            let capacity = frozen.mem.approximate_bytes() as u64;
            let outputs = self.write_ssts(&mut entries, 0, rules, &[], capacity)?;
            let edit = |current: &Version| {
                let mut version = current.clone();
                if let Some(l0) = version.levels.first_mut() {
                    for sst in outputs {
                        l0.insert(0, sst);
                    }
                }
                version
                    .range_tombstones
                    .extend(frozen.mem.range_tombstones());
                version
            };
            self.install(edit, Vec::new(), Some(&frozen))?;
            match reclaim {
                Reclaim::Keep => {}
                Reclaim::Now => self.punch_free_space_unless_syncing(),
                Reclaim::WhenCaughtUp => self.punch_free_space_when_caught_up(),
            }
        }
    }
}
