//! Background merges giving way to a lone `Sync` writer (RocksDB's rate limiter, scoped to
//! the writers it protects).
//!
//! Right after a bulk load a merge of tens of MiB is under way, on both cores, while a lone
//! durable writer starts. Each of the writer's device cache flushes must persist whatever
//! merge output the kernel wrote back since the previous one (no FUA on the measured virtio
//! disk), and the writer waits for a core behind the merge when it wakes: a few writes take
//! milliseconds and make most of the phase's time. So while such a writer is active, every
//! background merge (also one started before it came, on any thread, at any priority) is
//! held to `SYNC_PACE_RATE` merged bytes per second, and free space is not punched (with a
//! `discard` mount every punch is a device discard in front of the writer's flushes). It
//! goes back to full speed as soon as the writer leaves, a memtable waits for its flush, the
//! controller holds writers back, or L0 comes within `SYNC_PACE_L0_MARGIN` SSTs of the
//! slowdown: the merge never stops, and urgency always wins.

use crate::engine::inner::Inner;
use crate::engine::stall::Mode;

/// Background merges are paced beside a lone `Sync` writer only while L0 is at least this
/// many SSTs short of the slowdown: closer, they run at full speed to keep writers unhindered.
const SYNC_PACE_L0_MARGIN: usize = 4;

impl Inner {
    /// Whether background merges give way to a lone `Sync` writer (see
    /// `WriteController::pace_merge`): one is active, nobody is held back, no memtable waits
    /// for its flush (the background thread flushes it only once its job ends), and L0 is
    /// `SYNC_PACE_L0_MARGIN` SSTs short of the slowdown. Urgency wins at once.
    pub(super) fn pace_for_sync(&self) -> bool {
        self.stall.sync_writers_active()
            && self.stall.mode() == Some(Mode::Normal)
            && self.frozen.lock().is_empty()
            && self
                .view()
                .version
                .levels
                .first()
                .map_or(0, Vec::len)
                .saturating_add(SYNC_PACE_L0_MARGIN)
                < self.options.l0_slowdown_at()
    }

    /// Punches free space (see [`Inner::punch_free_space`]) unless a lone `Sync` writer is
    /// active: the holes stay listed and are punched by the next flush or merge after it.
    pub(super) fn punch_free_space_unless_syncing(&self) {
        if !self.stall.sync_writers_active() {
            self.punch_free_space();
        }
    }
}
