//! Background merges giving way to small `Sync` writes (RocksDB's rate limiter, scoped to
//! the writers it protects).
//!
//! Right after a bulk load a merge of tens of MiB is under way, on both cores, while a lone
//! durable writer starts. Each of the writer's device cache flushes must persist whatever
//! merge output the kernel wrote back since the previous one (no FUA on the measured virtio
//! disk), and the writer waits for a core behind the merge when it wakes: a few writes take
//! milliseconds and make most of the phase's time. So while such a writer is active, every
//! background merge (also one started before it came, on any thread, at any priority) is
//! held to `SYNC_PACE_RATE` merged bytes per second, its output stays in the page cache (no
//! `bytes_per_sync` writeback: `Inner::write_at`), and free space is not punched (with a
//! `discard` mount every punch is a device discard in front of the writer's flushes). It
//! goes back to full speed as soon as the writer leaves, a memtable waits for its flush, the
//! controller holds writers back, or L0 reaches the slowdown: the merge never stops, and
//! urgency always wins.

use crate::engine::inner::Inner;
use crate::engine::stall::Mode;

impl Inner {
    /// Whether background merges give way to small `Sync` writes (see
    /// `WriteController::pace_merge`): one is active, nobody is held back, no memtable waits
    /// for its flush (the background thread flushes it only once its job ends, so the
    /// writer's own flushes never meet a paced merge), and L0 is under the slowdown. Urgency
    /// wins at once, and so does a shutdown. Never without a background thread (the writer merges
    /// inline). No wider L0 margin: a bulk load of 1M entries leaves L0 anywhere from
    /// 10 to 20 SSTs under the default options, and a margin of 4 left a third of the
    /// measured runs unpaced.
    pub(super) fn pace_for_sync(&self) -> bool {
        // A close waits for the running merge: it must not wait for the pace as well.
        let shutting_down = self.bg.flags.lock().1;
        // Without a background thread the merge runs inline in that very writer.
        !shutting_down
            && self.options.background_compaction
            && self.stall.sync_writers_active()
            && self.stall.mode() == Some(Mode::Normal)
            && self.frozen.lock().is_empty()
            && self.view().version.levels.first().map_or(0, Vec::len)
                < self.options.l0_slowdown_at()
    }

    /// Punches free space (see [`Inner::punch_free_space`]) unless small `Sync` writes are
    /// active: the holes stay listed and are punched by the next flush or merge after it.
    pub(super) fn punch_free_space_unless_syncing(&self) {
        if !self.stall.sync_writers_active() {
            self.punch_free_space();
        }
    }
}
