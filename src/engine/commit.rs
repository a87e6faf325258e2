//! The write pipeline: one queue, group commit by a leader (WAL rotation and memtable
//! freezing live in `rotate.rs`).
//!
//! A writer queues its encoded batch, then takes the writer lock. Whoever holds it is the
//! leader: it drains the queue, frames every batch as one WAL record (one append for the
//! group, one `sync_data` if any batch asked for `Sync`), applies them to the memtable and
//! publishes the last sequence number, so readers see whole batches only.
//!
//! A writer that finds a leader at work sleeps on its own bit of a shared futex word, not on
//! the writer lock: the leader wakes every member of its group with its outcome and the first
//! batch still queued, whose writer leads next, with one system call (see
//! [`Sleepers`](super::wake::Sleepers)). Waiting on the lock instead made every
//! member of a group take the lock in turn just to learn it was done — one context switch
//! each, during which nobody synced — and capped group commit far below the sync rate.
//!
//! A `Sync` leader that finds fewer batches queued than its recent groups held waits a little
//! for the rest (a bounded gather): the members of the group just committed are still waking
//! and will be back with their next batch within microseconds. Without it, with N threads
//! doing durable writes, a full group alternates with a lone leader that started syncing
//! while everyone else was still waking up — roughly two syncs for every N writes. The
//! gatherer waits as a member, without the writer lock: the writer whose batch completes the
//! group leads it at once, already running, instead of waking the gatherer (a wake-up on the
//! critical path of every group); only a gather that times out is led by its gatherer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::batch::decode_ops;
use super::inner::{Counters, Inner};
use super::limits::{MAX_BATCH_BYTES, MAX_GROUP_BATCHES, MAX_GROUP_BYTES, WAL_SEGMENT_MIN_BYTES};
use super::stall::{Debt, Mode};
use super::wal::{WalRecord, WalWriter};
use super::{Durability, Error, Result, Seq, WriteBatch};

/// `Sync` batches up to this size are latency-bound: while they come, non-urgent background
/// merges give way to them (lowest CPU priority, paced output). One thread or eight makes no
/// difference: a group's sync waits behind merge writeback all the same.
const SMALL_SYNC_MAX_BYTES: usize = 64 << 10;

/// Longest a stopped writer waits before it looks again without being woken (a safety net:
/// every version install and every poison wakes it).
const STOP_RECHECK: Duration = Duration::from_millis(100);

/// Longest a queued writer waits for a leader's word before it looks at the writer lock
/// again (a safety net: leaders wake their members and the next queued writer; other holders
/// of the writer lock, such as a WAL sync or a memtable switch, do not).
const LEADER_RECHECK: Duration = Duration::from_millis(1);

/// Longest a `Sync` leader waits for the writers of its recent groups to queue up again. A
/// bound, not the usual wait: returning writers queue within tens of microseconds, and a
/// writer that stopped writing costs at most this once or twice before the recent group
/// sizes forget it. A leader never waits longer than its recent syncs took either: past
/// that, syncing the stragglers in a group of their own costs no more time.
const GATHER_MAX: Duration = Duration::from_micros(200);

/// One queued batch and the slot its leader fills with the outcome.
#[derive(Debug)]
pub struct Pending {
    payload: Vec<u8>,
    ops: u64,
    sync: bool,
    /// The writer's bit of the futex bitset it sleeps on (see [`Sleepers`](super::wake::Sleepers)).
    bit: u32,
    /// [`DONE`] once `result` holds the outcome, [`LEAD`] when called to lead.
    flags: AtomicU32,
    result: Mutex<Option<Result<Seq>>>,
}

/// `Pending::flags`: the outcome is in place.
const DONE: u32 = 1;
/// `Pending::flags`: the writer is to lead the next group.
const LEAD: u32 = 2;

impl Pending {
    /// Hands the writer its outcome; a wake of its bit lets it see it.
    fn finish(&self, result: Result<Seq>) {
        *self.result.lock() = Some(result);
        self.flags.fetch_or(DONE, Ordering::SeqCst);
    }
}

/// The WAL tail, owned by the current leader.
#[derive(Debug, Default)]
pub struct WriterState {
    /// Appends to the current segment (`None` on read-only engines).
    pub wal: Option<WalWriter>,
    /// Size of the next segment (doubles up to the maximum).
    pub next_segment_len: u64,
    /// The frames of the group being committed (kept to reuse its allocation).
    pub frames: Vec<u8>,
    /// Writers busy in each of the last two `Sync` groups (its members and the writers that
    /// queued during its commit), which a gathering leader waits for (published in
    /// [`Sleepers::gather_expected`](super::wake::Sleepers::gather_expected)).
    pub recent_sync_groups: [usize; 2],
    /// Moving average of how long a `Sync` group's append took, in nanoseconds.
    pub sync_nanos: u64,
}

impl WriterState {
    /// State before the first segment exists.
    pub fn new() -> Self {
        Self {
            wal: None,
            next_segment_len: WAL_SEGMENT_MIN_BYTES,
            frames: Vec::new(),
            recent_sync_groups: [0; 2],
            sync_nanos: GATHER_MAX.as_nanos() as u64,
        }
    }
}

impl Inner {
    /// Commits `batch`; returns the sequence number of its last operation.
    pub fn write(&self, batch: &WriteBatch, durability: Durability) -> Result<Seq> {
        if let Some(seq) = self.admit(batch, durability)? {
            return Ok(seq);
        }
        let mut payload = Vec::with_capacity(batch.size());
        batch.encode(&mut payload);
        self.write_encoded(payload, batch.len() as u64, durability)
    }

    /// As [`Inner::write`], committing the batch's own buffer as the WAL payload: no copy of
    /// the batch, no allocation for it.
    pub fn write_owned(&self, batch: WriteBatch, durability: Durability) -> Result<Seq> {
        if let Some(seq) = self.admit(&batch, durability)? {
            return Ok(seq);
        }
        let ops = batch.len() as u64;
        self.write_encoded(batch.into_encoded(), ops, durability)
    }

    /// Checks `batch` against the limits and holds its writer back as the write controller
    /// asks; `Some` when there is nothing to queue (an empty batch, made durable with the
    /// WAL if asked), with the sequence number to return.
    fn admit(&self, batch: &WriteBatch, durability: Durability) -> Result<Option<Seq>> {
        self.check_writable()?;
        batch.validate()?;
        if batch.size() > MAX_BATCH_BYTES {
            return Err(Error::InvalidArgument(format!(
                "batch of {} bytes exceeds the limit of {MAX_BATCH_BYTES}",
                batch.size()
            )));
        }
        if batch.is_empty() {
            if durability == Durability::Sync {
                self.sync_wal()?;
            }
            return Ok(Some(self.last_seq()));
        }
        self.throttle(batch.size())?;
        Ok(None)
    }

    /// Queues the encoded batch `payload` of `ops` operations and waits for its group.
    fn write_encoded(&self, payload: Vec<u8>, ops: u64, durability: Durability) -> Result<Seq> {
        self.counters
            .user_bytes
            .fetch_add(payload.len() as u64, Ordering::Relaxed);
        let pending = Arc::new(Pending {
            payload,
            ops,
            sync: durability == Durability::Sync,
            bit: self.sleepers.next_bit(),
            flags: AtomicU32::new(0),
            result: Mutex::new(None),
        });
        {
            let mut queue = self.queue.lock();
            if pending.sync {
                // Small durable writes are latency-bound; large batches make debt that merges
                // must keep up with.
                self.stall
                    .note_sync_write(pending.payload.len() <= SMALL_SYNC_MAX_BYTES);
            }
            queue.push(Arc::clone(&pending));
            let target = self.gather_target.load(Ordering::Relaxed);
            if target != 0 && queue.len() >= target {
                // This batch completes the group a writer is gathering: lead it now, already
                // running, rather than wake the gatherer to do it.
                self.gather_target.store(0, Ordering::Relaxed);
                drop(queue);
                self.lead(&pending, false);
            }
        }
        loop {
            // Read before the flags: a wake that comes after this read makes the sleep below
            // return at once, so none is lost between the check and the sleep.
            let epoch = self.sleepers.epoch();
            let flags = pending.flags.load(Ordering::SeqCst);
            if flags & DONE != 0 {
                let result = pending.result.lock().take();
                if !self.options.background_compaction && !self.frozen.lock().is_empty() {
                    self.maintain()?;
                }
                return result.unwrap_or_else(|| {
                    Err(Error::Poisoned {
                        cause: "a group-commit leader lost a batch's outcome".into(),
                    })
                });
            }
            // A leader at work either takes this batch into its group or, once done, calls
            // the first queued writer to lead; both set a flag before they wake this bit.
            // A gather under way is led by whoever completes it, or by its gatherer.
            if flags & LEAD != 0 {
                pending.flags.fetch_and(!LEAD, Ordering::SeqCst);
            } else if self.writer.is_locked() || self.gather_target.load(Ordering::Relaxed) != 0 {
                self.sleepers.wait(epoch, pending.bit, LEADER_RECHECK);
                continue;
            }
            self.lead(&pending, true);
        }
    }

    /// Takes the writer lock and commits the queued batches as one group (nothing if an
    /// earlier leader took them all), then calls the next queued writer to lead. `me` is the
    /// leader's own batch, which needs no wake-up. With `may_gather`, a `Sync` group first
    /// gathers (see [`Inner::gather`]) and is left to whoever completes it.
    fn lead(&self, me: &Arc<Pending>, may_gather: bool) {
        if may_gather && self.gather(me) {
            return;
        }
        let mut writer = self.writer.lock();
        let group = self.take_group(me);
        if group.is_empty() {
            return;
        }
        let committed = self.commit_group(&mut writer, &group);
        if group.iter().any(|member| member.sync) {
            self.count_sync_writers(&mut writer, group.len());
        }
        match committed {
            Ok(first_seq) => {
                // Each batch's sequence number is its last operation's.
                let mut seq = first_seq;
                for member in &group {
                    seq += member.ops;
                    member.finish(Ok(seq - 1));
                }
            }
            Err(err) => {
                let cause = self.poisoned(err).to_string();
                for member in &group {
                    member.finish(Err(Error::Poisoned {
                        cause: cause.clone(),
                    }));
                }
            }
        }
        // Outcomes are in place before the lock is released (a writer that takes it next and
        // finds its batch gone reads its outcome); the next leader and the members are woken
        // after, all with one system call.
        drop(writer);
        let mut mask = group
            .iter()
            .filter(|member| !Arc::ptr_eq(member, me))
            .fold(0, |mask, member| mask | member.bit);
        if let Some(next) = self.queue.lock().first() {
            next.flags.fetch_or(LEAD, Ordering::SeqCst);
            mask |= next.bit;
        }
        self.sleepers.wake(mask);
    }

    /// Makes every acknowledged `Buffered` batch durable with one WAL sync (what an empty
    /// `Sync` batch asks for): cheaper than a flush, which writes an SST.
    fn sync_wal(&self) -> Result<()> {
        let mut writer = self.writer.lock();
        if let Some(wal) = writer.wal.as_mut() {
            self.sync_covering_seals("sync WAL")
                .map_err(|err| self.poisoned(err))?;
            wal.mark_synced();
        }
        Ok(())
    }

    /// Holds a writer of `bytes` back as the write controller asks: not at all, by a delay in
    /// proportion to `bytes`, or until background work brings the debt under its hard bound.
    fn throttle(&self, bytes: usize) -> Result<()> {
        loop {
            match self.stall.mode() {
                Some(Mode::Normal) => return Ok(()),
                Some(Mode::Delayed) => {
                    let slept = self.stall.delay(bytes);
                    let counters = &self.counters;
                    Counters::note_stall(&counters.delayed_writes, &counters.delayed_micros, slept);
                    return Ok(());
                }
                Some(Mode::Stopped) => {
                    let started = Instant::now();
                    self.wait_for_progress()?;
                    let counters = &self.counters;
                    let spent = started.elapsed();
                    Counters::note_stall(&counters.stopped_waits, &counters.stopped_micros, spent);
                }
                None => self.refresh_stall(),
            }
        }
    }

    /// Measures the compaction debt and publishes what it asks of writers. Called whenever
    /// the debt changes: a version installed, a memtable frozen.
    pub fn refresh_stall(&self) {
        let mut controller = self.stall.lock();
        let debt = self.debt();
        controller.update(debt, &self.options);
    }

    fn debt(&self) -> Debt {
        let frozen = self.frozen.lock().len();
        Debt::of(&self.view.read().version, frozen, &self.options)
    }

    /// One step of a stopped writer: flushes frozen memtables itself when no one else is (a
    /// background thread busy with a long compaction must not hold writers up), runs all
    /// maintenance itself without a background thread, and otherwise waits for the
    /// background thread to publish a new version.
    fn wait_for_progress(&self) -> Result<()> {
        self.check_writable()?;
        let shutting_down = self.bg.flags.lock().1;
        if !self.options.background_compaction || shutting_down {
            self.maintain()?;
            self.refresh_stall();
            return Ok(());
        }
        let mut controller = self.stall.lock();
        let debt = self.debt();
        controller.update(debt, &self.options);
        if debt.mode(&self.options) != Mode::Stopped {
            return Ok(());
        }
        if debt.frozen >= super::stall::FROZEN_LIMIT
            && let Some(_flushing) = self.flushing.try_lock()
        {
            drop(controller);
            return self.flush_frozen();
        }
        self.signal_work();
        controller.wait(STOP_RECHECK);
        Ok(())
    }

    /// Waits, as a member, for the queue to hold as many batches as the recent `Sync` groups
    /// did (for at most their recent sync time, and [`GATHER_MAX`]) when a `Sync` batch is
    /// queued and fewer are: the writer whose batch completes the group leads it. Returns
    /// whether the caller is to wait for its outcome (another leader took its batch, or took
    /// the lead of this gather or of one already under way); `false` when there is nothing
    /// to gather or the gather timed out unclaimed, and the caller leads.
    fn gather(&self, me: &Arc<Pending>) -> bool {
        let expected = self.sleepers.gather_expected.load(Ordering::Relaxed);
        let deadline = {
            let queue = self.queue.lock();
            // Taken by another leader, or in a gather under way: wait for the outcome.
            if self.gather_target.load(Ordering::Relaxed) != 0
                || !queue.iter().any(|member| Arc::ptr_eq(member, me))
            {
                return true;
            }
            if !queue.iter().any(|member| member.sync) || queue.len() >= expected {
                return false;
            }
            self.gather_target.store(expected, Ordering::Relaxed);
            let nanos = self.sleepers.gather_nanos.load(Ordering::Relaxed);
            Instant::now() + GATHER_MAX.min(Duration::from_nanos(nanos))
        };
        loop {
            let epoch = self.sleepers.epoch();
            if me.flags.load(Ordering::SeqCst) & DONE != 0 {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                let _queue = self.queue.lock();
                // Still unclaimed: lead what is there. Claimed: wait for the outcome.
                return self.gather_target.swap(0, Ordering::Relaxed) == 0;
            }
            self.sleepers.wait(epoch, me.bit, deadline - now);
        }
    }

    /// Drains the next group from the queue (ending any gather: its batches are taken), or
    /// nothing if `me` was taken by an earlier leader: its writer is a member now, and leading
    /// the batches queued since would commit them in a small group without gathering them.
    fn take_group(&self, me: &Arc<Pending>) -> Vec<Arc<Pending>> {
        let mut queue = self.queue.lock();
        if !queue.iter().any(|member| Arc::ptr_eq(member, me)) {
            return Vec::new();
        }
        self.gather_target.store(0, Ordering::Relaxed);
        let mut bytes = 0;
        let mut count = 0;
        for member in queue.iter() {
            if count > 0
                && (count >= MAX_GROUP_BATCHES || bytes + member.payload.len() > MAX_GROUP_BYTES)
            {
                break;
            }
            bytes += member.payload.len();
            count += 1;
        }
        queue.drain(..count).collect()
    }

    /// Records how many writers a `Sync` group of `members` batches had busy: its members and
    /// the writers that queued during its commit, who wait for the next group. Counting only
    /// the members would let two cohorts alternating around each other's syncs (4 + 4 of 8
    /// writers) gather for 4 forever: the writer that completes a gather leads it at once, so
    /// no group ever takes more than the target.
    fn count_sync_writers(&self, writer: &mut WriterState, members: usize) {
        let busy = (members + self.queue.lock().len()).min(MAX_GROUP_BATCHES);
        writer.recent_sync_groups = [writer.recent_sync_groups[1], busy];
        let expected = writer.recent_sync_groups.iter().copied().max().unwrap_or(0);
        self.sleepers
            .gather_expected
            .store(expected, Ordering::Relaxed);
    }

    /// Appends, syncs and applies one group; returns the sequence number of its first
    /// operation (the batches' operations are numbered on from it, in group order).
    fn commit_group(&self, writer: &mut WriterState, group: &[Arc<Pending>]) -> Result<Seq> {
        if let Some(cause) = self.poison.lock().clone() {
            return Err(Error::Poisoned { cause });
        }
        let first_seq = self.last_seq() + 1;
        let mut image = std::mem::take(&mut writer.frames);
        let durable = group.iter().any(|member| member.sync);
        let started = durable.then(Instant::now);
        let appended = self.append_group(writer, group, first_seq, &mut image, durable);
        if let Some(started) = started {
            let took = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
            writer.sync_nanos = (writer.sync_nanos.saturating_mul(3) / 4).saturating_add(took / 4);
            self.sleepers
                .gather_nanos
                .store(writer.sync_nanos, Ordering::Relaxed);
        }
        if image.capacity() <= MAX_GROUP_BYTES {
            writer.frames = image;
        }
        appended?;
        let mem = Arc::clone(&self.view.read().mem);
        let mut seq = first_seq;
        for member in group {
            let ops = decode_ops(&member.payload)
                .map_err(|err| Error::InvalidArgument(format!("batch encoding: {err}")))?;
            mem.apply(seq, &ops);
            seq += member.ops;
        }
        self.last_seq.store(seq - 1, Ordering::Release);
        if mem.approximate_bytes() >= self.options.memtable_bytes {
            self.freeze(writer)?;
        }
        Ok(first_seq)
    }

    /// Frames the group for the current segment (each frame carrying the writer's durability
    /// watermark) and appends it in one write (`durable`: made durable with the WAL before it),
    /// moving to a fresh segment when it does not fit.
    fn append_group(
        &self,
        writer: &mut WriterState,
        group: &[Arc<Pending>],
        first_seq: Seq,
        image: &mut Vec<u8>,
        durable: bool,
    ) -> Result<()> {
        let frame = |wal: &WalWriter, image: &mut Vec<u8>| {
            image.clear();
            let mut seq = first_seq;
            for member in group {
                let record = WalRecord {
                    seq,
                    payload: &member.payload,
                };
                wal.encode(&record, image);
                seq += member.ops;
            }
        };
        frame(writer.wal.as_ref().ok_or(Error::ReadOnly)?, image);
        if self.append(writer, image, durable)? {
            return Ok(());
        }
        self.rotate(writer, image.len() as u64, true)?;
        frame(writer.wal.as_ref().ok_or(Error::ReadOnly)?, image);
        if self.append(writer, image, durable)? {
            return Ok(());
        }
        Err(Error::InvalidArgument(format!(
            "a group of {} bytes does not fit in a fresh WAL segment",
            image.len()
        )))
    }

    fn append(&self, writer: &mut WriterState, image: &[u8], durable: bool) -> Result<bool> {
        if durable && self.seal_unsynced() {
            // The frames' own durable write would not cover the seal of the segment before
            // (a direct write skips the page cache), and a durable frame must never follow
            // a predecessor that replay could find unsealed.
            self.sync_covering_seals("sync sealed WAL segment")?;
        }
        let wal = writer.wal.as_mut().ok_or(Error::ReadOnly)?;
        let fitted = if durable {
            wal.append_durable(&*self.storage, image)?
        } else {
            wal.append(&*self.storage, image)?
        };
        if fitted {
            self.counters
                .file_bytes
                .fetch_add(image.len() as u64, Ordering::Relaxed);
        }
        Ok(fitted)
    }
}
