//! An in-memory [`Storage`](super::Storage) that injects faults: torn writes, failed writes
//! and syncs, a full disk, and crashes that drop everything not synced.
//!
//! The model: a *live* image (what reads see: the page cache) and a *durable* image (what
//! survives a crash), plus the list of writes and truncations issued since the last sync.
//! A sync applies that list to the durable image; a crash rebuilds the live image from the
//! durable one after letting none, a prefix, or a random subset of the unsynced operations
//! reach it ([`CrashMode`]). Handles are `Arc`-shared: a test keeps a clone, lets the engine
//! fail, calls [`FaultyStorage::crash`] and reopens the engine on the same storage.

use std::io;
use std::sync::Arc;

use parking_lot::Mutex;

use super::Storage;
use super::format::PAGE_SIZE;

/// Largest image the in-memory storage agrees to hold, so a wild offset is an error rather
/// than an attempt to allocate the address space.
const MAX_IMAGE_BYTES: u64 = 1 << 32;

/// A fault to inject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// The next write reaches the disk only up to its first `keep` bytes; then the machine
    /// crashes (as [`FaultyStorage::crash`]) and the write fails with an I/O error. A `keep`
    /// of at least the write's length is a crash just after a complete (unsynced) write.
    TornWrite {
        /// Bytes of the write that persist (clamped to its length).
        keep: usize,
    },
    /// The next write fails with an I/O error and changes nothing.
    FailWrite,
    /// The next sync fails with an I/O error, and the writes it should have persisted are
    /// dropped from the durable path for good (a later sync does not persist them: the
    /// "fsyncgate" behaviour of Linux), while reads still see them until a crash.
    FailSync,
}

/// Which unsynced operations survive a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CrashMode {
    /// Nothing that was not synced survives (the default).
    #[default]
    DropUnsynced,
    /// A random prefix of the unsynced operations survives, the next one torn at a random byte.
    KeepPrefix {
        /// Seed of the random choices.
        seed: u64,
    },
    /// Each page of each unsynced write (and each truncation) survives with probability 1/2,
    /// independently: the adversarial model of a disk that reorders writes.
    KeepRandomPages {
        /// Seed of the random choices.
        seed: u64,
    },
}

/// An operation issued since the last sync.
#[derive(Debug, Clone)]
enum Op {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug, Default)]
struct State {
    live: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Op>,
    /// Armed faults, each with the number of matching operations to let pass first.
    armed: Vec<(u64, Fault)>,
    disk_limit: Option<u64>,
    crash_mode: CrashMode,
    rng: u64,
    writes: u64,
    syncs: u64,
    crashes: u64,
    punches: u64,
}

/// An in-memory file with a live image and a durable image.
///
/// ```
/// use strata::engine::file::{Fault, FaultyStorage, Storage};
///
/// let disk = FaultyStorage::new();
/// disk.write_all_at(b"durable", 0)?;
/// disk.sync_data()?;
/// disk.write_all_at(b"lost", 7)?;
/// disk.inject(Fault::FailSync);
/// assert!(disk.sync_data().is_err());
/// disk.crash();
/// assert_eq!(disk.live_image(), b"durable");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Default, Clone)]
pub struct FaultyStorage {
    state: Arc<Mutex<State>>,
}

fn eio(what: &str) -> io::Error {
    io::Error::other(format!("injected fault: {what}"))
}

fn enospc() -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        "injected fault: no space left on device",
    )
}

fn end_of(offset: u64, len: usize) -> io::Result<u64> {
    offset
        .checked_add(len as u64)
        .filter(|&end| end <= MAX_IMAGE_BYTES)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("offset {offset} + {len} bytes is past the in-memory storage limit"),
            )
        })
}

/// Copies the bytes of `new` (at file offset `new_at`) over the part of `old` (at `old_at`)
/// they overlap.
fn overlay(old: &mut [u8], old_at: u64, new: &[u8], new_at: u64) {
    let start = old_at.max(new_at);
    let end = (old_at + old.len() as u64).min(new_at + new.len() as u64);
    if start >= end {
        return;
    }
    let (Ok(dst), Ok(src), Ok(len)) = (
        usize::try_from(start - old_at),
        usize::try_from(start - new_at),
        usize::try_from(end - start),
    ) else {
        return;
    };
    if let (Some(dst), Some(src)) = (old.get_mut(dst..dst + len), new.get(src..src + len)) {
        dst.copy_from_slice(src);
    }
}

/// Writes `data` at `offset` into `image`, zero-filling any gap.
fn apply_write(image: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let (Ok(start), Ok(end)) = (
        usize::try_from(offset),
        usize::try_from(offset + data.len() as u64),
    ) else {
        return;
    };
    if image.len() < end {
        image.resize(end, 0);
    }
    if let Some(dst) = image.get_mut(start..end) {
        dst.copy_from_slice(data);
    }
}

fn apply_set_len(image: &mut Vec<u8>, len: u64) {
    image.resize(usize::try_from(len).unwrap_or(usize::MAX), 0);
}

impl State {
    /// splitmix64: tiny, seedable and good enough to pick crash survivors.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Takes the first armed fault matching `pick`, counting down the ones not yet due.
    fn take_fault(&mut self, pick: fn(&Fault) -> bool) -> Option<Fault> {
        let idx = self.armed.iter().position(|(_, f)| pick(f))?;
        let (skip, _) = self.armed.get_mut(idx)?;
        if *skip > 0 {
            *skip -= 1;
            return None;
        }
        Some(self.armed.remove(idx).1)
    }

    fn crash(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        match self.crash_mode {
            CrashMode::DropUnsynced => {}
            CrashMode::KeepPrefix { .. } => {
                let n = pending.len() as u64;
                let keep = usize::try_from(self.next_random() % (n + 1)).unwrap_or(0);
                let mut ops = pending.into_iter();
                for op in ops.by_ref().take(keep) {
                    self.apply_durable(&op);
                }
                if let Some(Op::Write { offset, data }) = ops.next() {
                    let cut =
                        usize::try_from(self.next_random() % (data.len() as u64 + 1)).unwrap_or(0);
                    apply_write(
                        &mut self.durable,
                        offset,
                        data.get(..cut).unwrap_or_default(),
                    );
                }
            }
            CrashMode::KeepRandomPages { .. } => {
                for op in pending {
                    match op {
                        Op::SetLen(len) => {
                            if self.next_random() & 1 == 1 {
                                apply_set_len(&mut self.durable, len);
                            }
                        }
                        Op::Write { offset, data } => self.apply_random_pages(offset, &data),
                    }
                }
            }
        }
        self.live = self.durable.clone();
        self.armed.clear();
        self.crashes += 1;
    }

    fn apply_random_pages(&mut self, offset: u64, data: &[u8]) {
        let mut at = 0usize;
        while at < data.len() {
            let file_pos = offset + at as u64;
            let to_page_end = PAGE_SIZE - file_pos % PAGE_SIZE;
            let n = usize::try_from(to_page_end)
                .unwrap_or(usize::MAX)
                .min(data.len() - at);
            if self.next_random() & 1 == 1 {
                apply_write(
                    &mut self.durable,
                    file_pos,
                    data.get(at..at + n).unwrap_or_default(),
                );
            }
            at += n;
        }
    }

    /// A write issued to the live image (faults, disk limit), pending until a sync.
    fn write(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.writes += 1;
        let end = end_of(offset, buf.len())?;
        match self.take_fault(|f| matches!(f, Fault::TornWrite { .. } | Fault::FailWrite)) {
            Some(Fault::FailWrite) => return Err(eio("write failed")),
            Some(Fault::TornWrite { keep }) => {
                self.crash();
                let torn = buf.get(..keep.min(buf.len())).unwrap_or_default();
                apply_write(&mut self.durable, offset, torn);
                self.live = self.durable.clone();
                return Err(eio("torn write, then crash"));
            }
            Some(Fault::FailSync) | None => {}
        }
        if let Some(limit) = self.disk_limit
            && end > limit
            && end > self.live.len() as u64
        {
            return Err(enospc());
        }
        apply_write(&mut self.live, offset, buf);
        self.pending.push(Op::Write {
            offset,
            data: buf.to_vec(),
        });
        Ok(())
    }

    fn apply_durable(&mut self, op: &Op) {
        match op {
            Op::Write { offset, data } => apply_write(&mut self.durable, *offset, data),
            Op::SetLen(len) => apply_set_len(&mut self.durable, *len),
        }
    }
}

impl FaultyStorage {
    /// An empty storage.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A storage whose live and durable images are `bytes` (e.g. a fuzz input).
    #[must_use]
    pub fn from_image(bytes: Vec<u8>) -> Self {
        let s = Self::new();
        {
            let mut st = s.state.lock();
            st.durable.clone_from(&bytes);
            st.live = bytes;
        }
        s
    }

    /// Arms `fault` for the next write (or sync, for `FailSync`).
    pub fn inject(&self, fault: Fault) {
        self.inject_after(0, fault);
    }

    /// Arms `fault` for the write (or sync) after the next `skip` ones.
    pub fn inject_after(&self, skip: u64, fault: Fault) {
        self.state.lock().armed.push((skip, fault));
    }

    /// Disarms every pending fault.
    pub fn clear_faults(&self) {
        self.state.lock().armed.clear();
    }

    /// Writes or truncations that would make the file longer than `limit` bytes fail with
    /// `StorageFull` (ENOSPC); `None` lifts the limit.
    pub fn set_disk_limit(&self, limit: Option<u64>) {
        self.state.lock().disk_limit = limit;
    }

    /// Chooses what survives the next crashes (and reseeds their random choices).
    pub fn set_crash_mode(&self, mode: CrashMode) {
        let mut st = self.state.lock();
        st.crash_mode = mode;
        if let CrashMode::KeepPrefix { seed } | CrashMode::KeepRandomPages { seed } = mode {
            st.rng = seed;
        }
    }

    /// Simulates power loss: the live image becomes the durable image plus whatever unsynced
    /// operations the [`CrashMode`] lets through. Armed faults are disarmed; the disk limit stays.
    pub fn crash(&self) {
        self.state.lock().crash();
    }

    /// A copy of what reads currently see.
    #[must_use]
    pub fn live_image(&self) -> Vec<u8> {
        self.state.lock().live.clone()
    }

    /// A copy of what would survive a crash with [`CrashMode::DropUnsynced`].
    #[must_use]
    pub fn durable_image(&self) -> Vec<u8> {
        self.state.lock().durable.clone()
    }

    /// Flips bit `bit % 8` of the byte at `offset` in both images (bit rot on the medium).
    /// Returns `false` when `offset` is past the end.
    pub fn flip_bit(&self, offset: u64, bit: u8) -> bool {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let Ok(at) = usize::try_from(offset) else {
            return false;
        };
        let mut flipped = false;
        for image in [&mut st.live, &mut st.durable] {
            if let Some(b) = image.get_mut(at) {
                *b ^= 1 << (bit % 8);
                flipped = true;
            }
        }
        flipped
    }

    /// Overwrites bytes at `offset` in both images, bypassing faults and limits.
    pub fn write_raw(&self, offset: u64, bytes: &[u8]) {
        let mut st = self.state.lock();
        apply_write(&mut st.live, offset, bytes);
        apply_write(&mut st.durable, offset, bytes);
    }

    /// Writes issued so far (successful or not).
    #[must_use]
    pub fn write_count(&self) -> u64 {
        self.state.lock().writes
    }

    /// Syncs issued so far (successful or not).
    #[must_use]
    pub fn sync_count(&self) -> u64 {
        self.state.lock().syncs
    }

    /// Punches so far that covered at least one byte of the file.
    #[must_use]
    pub fn punch_count(&self) -> u64 {
        self.state.lock().punches
    }

    /// Crashes so far (explicit or caused by a torn write).
    #[must_use]
    pub fn crash_count(&self) -> u64 {
        self.state.lock().crashes
    }
}

impl Storage for FaultyStorage {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        // Like pread: an empty read succeeds anywhere.
        if buf.is_empty() {
            return Ok(());
        }
        let st = self.state.lock();
        let src = usize::try_from(offset)
            .ok()
            .and_then(|start| st.live.get(start..start.checked_add(buf.len())?))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "read of {} bytes at {offset} past the end ({})",
                        buf.len(),
                        st.live.len()
                    ),
                )
            })?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.state.lock().write(buf, offset)
    }

    fn write_all_at_durable(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        // As `RWF_DSYNC`: this write (and only it) is durable on success.
        let mut st = self.state.lock();
        st.write(buf, offset)?;
        st.syncs += 1;
        // The write just made is the last pending one: it is durable now, not pending.
        st.pending.pop();
        if st.take_fault(|f| matches!(f, Fault::FailSync)).is_some() {
            return Err(eio("durable write failed to sync"));
        }
        apply_write(&mut st.durable, offset, buf);
        // An older unsynced write of the same bytes can no longer bring them back: the page
        // cache already holds the new ones, which is what its writeback would carry.
        for op in &mut st.pending {
            if let Op::Write { offset: at, data } = op {
                overlay(data, *at, buf, offset);
            }
        }
        Ok(())
    }

    /// As `write_all_at_durable` (a direct write leaves no cached copy that a later
    /// writeback could carry), but refuses what `O_DIRECT` refuses: a range that is not whole
    /// pages, so a caller that misaligns fails here instead of silently taking a slow path.
    fn write_pages_durable(&self, pages: &[u8], offset: u64) -> io::Result<()> {
        if !offset.is_multiple_of(PAGE_SIZE) || !(pages.len() as u64).is_multiple_of(PAGE_SIZE) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "direct write of {} bytes at {offset} is not whole pages",
                    pages.len()
                ),
            ));
        }
        self.write_all_at_durable(pages, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut st = self.state.lock();
        st.syncs += 1;
        let pending = std::mem::take(&mut st.pending);
        if st.take_fault(|f| matches!(f, Fault::FailSync)).is_some() {
            return Err(eio("sync failed"));
        }
        for op in &pending {
            st.apply_durable(op);
        }
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().live.len() as u64)
    }

    fn start_writeback(&self, _offset: u64, _len: u64) -> io::Result<()> {
        // Writeback changes nothing a crash keeps: only `sync_data` makes writes durable.
        Ok(())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.state.lock();
        end_of(len, 0)?;
        if let Some(limit) = st.disk_limit
            && len > limit
            && len > st.live.len() as u64
        {
            return Err(enospc());
        }
        apply_set_len(&mut st.live, len);
        st.pending.push(Op::SetLen(len));
        Ok(())
    }

    /// Zeros the range inside the file, as a write of zeros that no fault applies to: a hole
    /// punched into live data then shows up as corruption in the tests.
    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        let mut st = self.state.lock();
        let end = offset.saturating_add(len).min(st.live.len() as u64);
        if end <= offset {
            return Ok(());
        }
        st.punches += 1;
        let zeros = vec![0u8; (end - offset) as usize];
        apply_write(&mut st.live, offset, &zeros);
        st.pending.push(Op::Write {
            offset,
            data: zeros,
        });
        Ok(())
    }
}
