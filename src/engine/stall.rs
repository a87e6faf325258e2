//! The write controller: how hard writers are held back while flushes and compactions fall
//! behind (RocksDB's write controller, not LevelDB's fixed per-write sleep).
//!
//! Compaction debt (L0 SSTs, frozen memtables, bytes over the level budgets) puts the engine in
//! one of three modes. `Normal` costs a writer one atomic load. `Delayed` meters writers by
//! the bytes they write at a rate that shrinks while the debt keeps growing and recovers
//! while it falls, so a 200-byte write waits a few microseconds where a 2 MiB batch waits
//! ~100 ms. `Stopped` (L0 at its hard bound, or frozen memtables at their memory bound) holds
//! writers on a condition variable until background work publishes a new version.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::Options;
use super::limits::NUM_LEVELS;
use super::version::Version;

/// Frozen memtables at which writers stop (and flush them themselves if no one else is):
/// bounds memtable memory to `FROZEN_LIMIT + 1` memtables.
pub const FROZEN_LIMIT: usize = 2;

/// How long after a `Sync` write background merges still count `Sync` writers as active:
/// longer than any gap between the writes of one durable writer, short enough that a merge
/// starting after the last one runs at normal priority.
const SYNC_ACTIVE_WINDOW: Duration = Duration::from_millis(100);

/// Merged bytes per second background merges are held to beside small `Sync` writes: each
/// of the writers' device cache flushes (no FUA on the measured disk) must persist whatever
/// merge output was written back since the last one, so an unpaced merge puts tens of MiB
/// in front of a few of its writes.
const SYNC_PACE_RATE: f64 = 8.0 * 1024.0 * 1024.0;
/// Longest single sleep of a paced merge: it looks again this often whether the writer left
/// or debt grew.
const SYNC_PACE_MAX_SLEEP: Duration = Duration::from_millis(5);

/// Slowest delayed rate (bytes/s): a floor so a writer never waits minutes for one batch.
const STALL_MIN_RATE: f64 = 16.0 * 1024.0;
/// Shorter waits are carried over to the next delayed write instead of slept.
const STALL_MIN_SLEEP: Duration = Duration::from_millis(1);

/// Factor applied to the delayed rate each time the debt grows (RocksDB's 0.8).
const RATE_DOWN: f64 = 0.8;
/// Factor applied to the delayed rate each time the debt shrinks.
const RATE_UP: f64 = 1.25;

const MODE_UNKNOWN: u8 = 0;
const MODE_NORMAL: u8 = 1;
const MODE_DELAYED: u8 = 2;
const MODE_STOPPED: u8 = 3;

/// How much work flushes and compactions are behind by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Debt {
    /// SSTs in L0.
    pub l0: usize,
    /// Frozen memtables waiting for their flush.
    pub frozen: usize,
    /// Bytes compaction must move before every level is within its budget (L0 counts whole
    /// once it reaches its trigger).
    pub pending_bytes: u64,
}

impl Debt {
    /// The debt of `version` with `frozen` memtables waiting.
    #[must_use]
    pub fn of(version: &Version, frozen: usize, options: &Options) -> Self {
        let l0 = version.levels.first().map_or(0, Vec::len);
        let mut pending_bytes = 0u64;
        if l0 >= options.l0_compaction_trigger {
            pending_bytes = version.level_bytes(0);
        }
        let mut target = options.l1_target_bytes;
        for level in 1..NUM_LEVELS - 1 {
            pending_bytes =
                pending_bytes.saturating_add(version.level_bytes(level).saturating_sub(target));
            target = target.saturating_mul(options.level_size_ratio.max(2));
        }
        Self {
            l0,
            frozen,
            pending_bytes,
        }
    }

    /// L0 SSTs counting frozen memtables, each of which becomes one when flushed: bounding
    /// this sum bounds L0 even while flushes run during a stop.
    #[must_use]
    pub fn files(&self) -> usize {
        self.l0.saturating_add(self.frozen)
    }

    /// What this debt asks of writers.
    #[must_use]
    pub fn mode(&self, options: &Options) -> Mode {
        if self.frozen >= FROZEN_LIMIT || self.files() >= options.l0_stop_at() {
            Mode::Stopped
        } else if self.files() >= options.l0_slowdown_at()
            || self.pending_bytes >= options.pending_compaction_slowdown_bytes
        {
            Mode::Delayed
        } else {
            Mode::Normal
        }
    }

    /// True when the debt grew since `earlier`: more files, or as many and more bytes.
    fn grew_since(&self, earlier: &Self) -> bool {
        (self.files(), self.pending_bytes) > (earlier.files(), earlier.pending_bytes)
    }

    /// True when the debt shrank since `earlier`.
    fn shrank_since(&self, earlier: &Self) -> bool {
        (self.files(), self.pending_bytes) < (earlier.files(), earlier.pending_bytes)
    }
}

/// What writers must do before they write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write at once.
    Normal,
    /// Wait in proportion to the bytes written.
    Delayed,
    /// Wait for background progress.
    Stopped,
}

#[derive(Debug)]
struct State {
    /// Bytes per second delayed writers may write.
    rate: f64,
    /// The debt the rate was last adapted to.
    last: Debt,
    /// When the delayed byte stream will have paid for every byte admitted so far.
    next_free: Instant,
}

/// Shared by every writer of an engine and the threads that publish versions.
#[derive(Debug)]
pub struct WriteController {
    mode: AtomicU8,
    state: Mutex<State>,
    progress: Condvar,
    max_rate: f64,
    /// Origin of `last_sync_nanos`.
    epoch: Instant,
    /// Nanoseconds after `epoch` of the latest small `Sync` write plus one (0: none yet).
    last_sync_nanos: AtomicU64,
    /// As `last_sync_nanos`, for the latest large `Sync` write.
    last_large_nanos: AtomicU64,
    /// When the paced merge bytes admitted so far are paid for (see [`Self::pace_merge`]).
    pace_next_free: Mutex<Instant>,
    /// Nanoseconds paced merges have slept, for stats and tests.
    paced_nanos: AtomicU64,
}

impl WriteController {
    /// A controller metering delayed writers at `options.delayed_write_rate` at most.
    #[must_use]
    pub fn new(options: &Options) -> Self {
        #[allow(clippy::cast_precision_loss)] // rates far below 2^52 bytes/s
        let max_rate = options.delayed_write_rate as f64;
        Self {
            mode: AtomicU8::new(MODE_UNKNOWN),
            state: Mutex::new(State {
                rate: max_rate,
                last: Debt::default(),
                next_free: Instant::now(),
            }),
            progress: Condvar::new(),
            max_rate,
            epoch: Instant::now(),
            last_sync_nanos: AtomicU64::new(0),
            last_large_nanos: AtomicU64::new(0),
            pace_next_free: Mutex::new(Instant::now()),
            paced_nanos: AtomicU64::new(0),
        }
    }

    /// Records a `Sync` write starting now: `small` for a latency-bound batch (background
    /// merges give way to such writes only).
    pub fn note_sync_write(&self, small: bool) {
        let nanos = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let slot = if small {
            &self.last_sync_nanos
        } else {
            &self.last_large_nanos
        };
        slot.store(nanos.saturating_add(1), Ordering::Relaxed);
    }

    /// Whether a small `Sync` write came within the last `SYNC_ACTIVE_WINDOW`, and no large
    /// one came within it.
    #[must_use]
    pub fn sync_writers_active(&self) -> bool {
        let now = u64::try_from(self.epoch.elapsed().as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let window = SYNC_ACTIVE_WINDOW.as_nanos() as u64;
        let recent = |slot: &AtomicU64| {
            let at = slot.load(Ordering::Relaxed);
            at != 0 && now.saturating_sub(at) <= window
        };
        recent(&self.last_sync_nanos) && !recent(&self.last_large_nanos)
    }

    /// Holds a background merge that just merged `bytes` to `SYNC_PACE_RATE` (shared by every
    /// part of a job) for as long as `pace()` stays true, looked at again every
    /// `SYNC_PACE_MAX_SLEEP`: small `Sync` writes then find the cores and the device
    /// nearly free, and the merge never stops outright. Returns the time slept.
    pub fn pace_merge(&self, bytes: u64, mut pace: impl FnMut() -> bool) -> Duration {
        if !pace() {
            return Duration::ZERO;
        }
        #[allow(clippy::cast_precision_loss)] // merged bytes far below 2^52
        let cost = Duration::from_secs_f64(bytes as f64 / SYNC_PACE_RATE);
        let until = {
            let mut next_free = self.pace_next_free.lock();
            *next_free = (*next_free).max(Instant::now()) + cost;
            *next_free
        };
        let mut slept = Duration::ZERO;
        loop {
            let now = Instant::now();
            let wait = until.saturating_duration_since(now);
            if wait < STALL_MIN_SLEEP {
                break;
            }
            std::thread::sleep(wait.min(SYNC_PACE_MAX_SLEEP));
            slept += now.elapsed();
            if !pace() {
                // Unpaced from here on: what was not slept is not owed later.
                *self.pace_next_free.lock() = Instant::now();
                break;
            }
        }
        let nanos = u64::try_from(slept.as_nanos()).unwrap_or(u64::MAX);
        self.paced_nanos.fetch_add(nanos, Ordering::Relaxed);
        slept
    }

    /// Total time background merges slept in [`Self::pace_merge`].
    #[must_use]
    pub fn paced(&self) -> Duration {
        Duration::from_nanos(self.paced_nanos.load(Ordering::Relaxed))
    }

    /// The mode writers follow, or `None` before the first `update`.
    #[must_use]
    pub fn mode(&self) -> Option<Mode> {
        match self.mode.load(Ordering::Acquire) {
            MODE_NORMAL => Some(Mode::Normal),
            MODE_DELAYED => Some(Mode::Delayed),
            MODE_STOPPED => Some(Mode::Stopped),
            _ => None,
        }
    }

    /// Locks the controller; `debt` must be measured under this lock so that two threads
    /// publishing versions at once cannot leave the older measure in force.
    pub fn lock(&self) -> ControllerGuard<'_> {
        ControllerGuard {
            controller: self,
            state: self.state.lock(),
        }
    }

    /// Sleeps a delayed writer for its `bytes`. Waits under a millisecond are carried over to
    /// the next writer rather than slept (a sleep costs more than that in wake-up latency), so
    /// small writes mostly pass and the average rate still holds. Returns the time slept.
    pub fn delay(&self, bytes: usize) -> Duration {
        let wait = {
            let mut state = self.state.lock();
            if self.mode.load(Ordering::Acquire) != MODE_DELAYED {
                return Duration::ZERO;
            }
            let now = Instant::now();
            #[allow(clippy::cast_precision_loss)] // batch sizes are far below 2^52
            let cost = Duration::from_secs_f64(bytes as f64 / state.rate);
            state.next_free = state.next_free.max(now) + cost;
            state.next_free.saturating_duration_since(now)
        };
        if wait < STALL_MIN_SLEEP {
            return Duration::ZERO;
        }
        std::thread::sleep(wait);
        wait
    }

    /// Wakes every stopped writer to look again (on poison, shutdown or new work).
    pub fn wake(&self) {
        let _state = self.state.lock();
        self.progress.notify_all();
    }
}

/// The locked controller.
#[derive(Debug)]
pub struct ControllerGuard<'c> {
    controller: &'c WriteController,
    state: MutexGuard<'c, State>,
}

impl ControllerGuard<'_> {
    /// Publishes the mode `debt` asks for, adapts the delayed rate to the debt's trend and
    /// wakes stopped writers to look again.
    pub fn update(&mut self, debt: Debt, options: &Options) {
        let controller = self.controller;
        let mode = debt.mode(options);
        let was = controller.mode.load(Ordering::Acquire);
        let state = &mut *self.state;
        match mode {
            Mode::Normal => state.rate = controller.max_rate,
            _ if was != MODE_DELAYED && was != MODE_STOPPED => {
                state.rate = controller.max_rate;
                state.next_free = Instant::now();
            }
            _ if debt.grew_since(&state.last) => {
                state.rate = (state.rate * RATE_DOWN).max(STALL_MIN_RATE);
            }
            _ if debt.shrank_since(&state.last) => {
                state.rate = (state.rate * RATE_UP).min(controller.max_rate);
            }
            _ => {}
        }
        state.last = debt;
        let code = match mode {
            Mode::Normal => MODE_NORMAL,
            Mode::Delayed => MODE_DELAYED,
            Mode::Stopped => MODE_STOPPED,
        };
        controller.mode.store(code, Ordering::Release);
        controller.progress.notify_all();
    }

    /// Waits until another thread calls `update` or `wake`, or `timeout` passes.
    pub fn wait(&mut self, timeout: Duration) {
        let _timed_out = self.controller.progress.wait_for(&mut self.state, timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(rate: u64) -> Options {
        Options {
            l0_compaction_trigger: 4,
            l0_slowdown_trigger: 8,
            l0_stop_trigger: 12,
            delayed_write_rate: rate,
            ..Options::default()
        }
    }

    fn debt(l0: usize, frozen: usize) -> Debt {
        Debt {
            l0,
            frozen,
            pending_bytes: 0,
        }
    }

    fn rate(controller: &WriteController) -> f64 {
        controller.state.lock().rate
    }

    #[test]
    fn paced_merges_sleep_to_the_pace_rate_and_wake_once_pacing_ends() {
        let controller = WriteController::new(&options(1 << 20));
        assert_eq!(
            controller.pace_merge(1 << 20, || false),
            Duration::ZERO,
            "no pacing: no sleep"
        );
        // 80 KiB at 8 MiB/s: about 10 ms.
        let slept = controller.pace_merge(80 << 10, || true);
        assert!(
            slept >= Duration::from_millis(8) && slept < Duration::from_secs(1),
            "{slept:?}"
        );
        assert_eq!(controller.paced(), slept);
        // Pacing ends after the first slice: the rest of a 1 s debt is not slept, nor owed.
        let mut polls = 0;
        let slept = controller.pace_merge(SYNC_PACE_RATE as u64, || {
            polls += 1;
            polls == 1
        });
        assert!(slept < Duration::from_millis(200), "{slept:?}");
        let next = controller.pace_merge(1, || true);
        assert!(next < Duration::from_millis(200), "{next:?}");
    }

    #[test]
    fn modes_follow_files_counting_frozen_memtables() {
        let options = options(1 << 20);
        assert_eq!(debt(7, 0).mode(&options), Mode::Normal);
        assert_eq!(debt(7, 1).mode(&options), Mode::Delayed);
        assert_eq!(debt(11, 0).mode(&options), Mode::Delayed);
        assert_eq!(debt(11, 1).mode(&options), Mode::Stopped);
        assert_eq!(debt(0, FROZEN_LIMIT).mode(&options), Mode::Stopped);
        let pending = Debt {
            pending_bytes: options.pending_compaction_slowdown_bytes,
            ..debt(0, 0)
        };
        assert_eq!(pending.mode(&options), Mode::Delayed);
    }

    #[test]
    fn delay_is_proportional_to_bytes_and_small_writes_pass() {
        let options = options(1 << 20);
        let controller = WriteController::new(&options);
        controller.lock().update(debt(9, 0), &options);
        assert_eq!(controller.delay(200), Duration::ZERO);
        // 100 KiB at 1 MiB/s is ~98 ms, less the 200 bytes' credit already spent.
        let slept = controller.delay(100 << 10);
        assert!(
            slept >= Duration::from_millis(90) && slept <= Duration::from_millis(110),
            "{slept:?}"
        );
    }

    #[test]
    fn normal_mode_never_delays() {
        let options = options(1);
        let controller = WriteController::new(&options);
        controller.lock().update(debt(1, 0), &options);
        assert_eq!(controller.mode(), Some(Mode::Normal));
        assert_eq!(controller.delay(64 << 20), Duration::ZERO);
    }

    #[test]
    fn rate_falls_while_debt_grows_and_recovers_as_it_shrinks() {
        let options = options(1 << 20);
        let max = f64::from(1u32 << 20);
        let controller = WriteController::new(&options);
        controller.lock().update(debt(8, 0), &options);
        assert!((rate(&controller) - max).abs() < 1.0);
        controller.lock().update(debt(9, 0), &options);
        controller.lock().update(debt(10, 0), &options);
        assert!((rate(&controller) - max * RATE_DOWN * RATE_DOWN).abs() < 1.0);
        controller.lock().update(debt(10, 0), &options);
        assert!((rate(&controller) - max * RATE_DOWN * RATE_DOWN).abs() < 1.0);
        controller.lock().update(debt(9, 0), &options);
        assert!((rate(&controller) - max * RATE_DOWN).abs() < 1.0);
        for _ in 0..5 {
            controller.lock().update(debt(8, 0), &options);
            controller.lock().update(debt(9, 0), &options);
            controller.lock().update(debt(8, 0), &options);
        }
        assert!(
            rate(&controller) <= max,
            "the rate never exceeds the option"
        );
        controller.lock().update(debt(0, 0), &options);
        assert!((rate(&controller) - max).abs() < 1.0);
    }

    #[test]
    fn small_sync_writes_count_as_active_within_the_window_unless_large_ones_came() {
        let controller = WriteController::new(&options(1 << 20));
        assert!(!controller.sync_writers_active(), "no Sync write yet");
        controller.note_sync_write(true);
        assert!(controller.sync_writers_active());
        controller.note_sync_write(false);
        assert!(!controller.sync_writers_active(), "a large Sync write came");
        std::thread::sleep(SYNC_ACTIVE_WINDOW + Duration::from_millis(20));
        controller.note_sync_write(true);
        assert!(controller.sync_writers_active(), "the large write is old");
        std::thread::sleep(SYNC_ACTIVE_WINDOW + Duration::from_millis(20));
        assert!(!controller.sync_writers_active(), "the window has passed");
    }

    #[test]
    fn rate_never_falls_below_its_floor() {
        let options = options(1 << 20);
        let controller = WriteController::new(&options);
        for pending in 0..200u64 {
            let growing = Debt {
                pending_bytes: options.pending_compaction_slowdown_bytes + pending,
                ..debt(0, 0)
            };
            controller.lock().update(growing, &options);
        }
        assert!((rate(&controller) - STALL_MIN_RATE).abs() < 1.0);
    }
}
