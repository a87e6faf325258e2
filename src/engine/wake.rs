//! Where queued writers sleep: one futex word for all of them, each writer on one bit of the
//! futex bitset, so a group-commit leader wakes its whole group and the next leader with one
//! system call.
//!
//! One wake per member cost the leader a system call each, and on a virtual machine every
//! wake of a thread on the other core an inter-processor interrupt; woken in one call, the
//! kernel queues them together and interrupts each core at most once. A leader's
//! `futex(FUTEX_WAKE_BITSET)` wakes exactly the sleepers whose bit is in its mask; two writers
//! that share a bit (more than 32 queued at once) cost a spurious wake-up, never a lost one.
//!
//! A sleeper reads [`Sleepers::epoch`], checks its own state, and sleeps only while the word
//! still holds that epoch; a waker publishes the state first and then bumps the word, so a
//! wake that lands between the check and the sleep makes the sleep return at once.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// The futex word queued writers sleep on.
#[derive(Debug, Default)]
pub struct Sleepers {
    word: AtomicU32,
    /// Hands out the sleepers' bits round robin.
    tickets: AtomicU32,
    /// How many batches the next `Sync` leader gathers before it commits (the larger of the
    /// last two `Sync` groups), published by each leader for the next.
    pub gather_expected: AtomicUsize,
    /// Longest a gathering leader waits, in nanoseconds (its recent syncs' moving average).
    pub gather_nanos: AtomicU64,
    #[cfg(not(target_os = "linux"))]
    fallback: (parking_lot::Mutex<()>, parking_lot::Condvar),
}

impl Sleepers {
    /// The bit a new sleeper waits on: consecutive writers get different bits.
    pub fn next_bit(&self) -> u32 {
        1 << (self.tickets.fetch_add(1, Ordering::Relaxed) % 32)
    }

    /// The word's value, to be read before a sleeper checks its state.
    pub fn epoch(&self) -> u32 {
        self.word.load(Ordering::SeqCst)
    }

    /// Sleeps while the word still holds `epoch`, until a wake names `bit` or `timeout` passes
    /// (spurious returns are allowed: the caller rechecks its state).
    pub fn wait(&self, epoch: u32, bit: u32, timeout: Duration) {
        #[cfg(target_os = "linux")]
        {
            let mut now = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime only writes the timespec it is given.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut now) };
            let nanos = now
                .tv_nsec
                .saturating_add(i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX));
            let deadline = libc::timespec {
                tv_sec: now.tv_sec.saturating_add(nanos / 1_000_000_000),
                tv_nsec: nanos % 1_000_000_000,
            };
            // SAFETY: the word lives as long as `self`; FUTEX_WAIT_BITSET reads it, compares
            // with `epoch` and sleeps until a matching wake or the absolute `deadline`.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.word.as_ptr(),
                    libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG,
                    epoch,
                    &raw const deadline,
                    std::ptr::null::<u32>(),
                    bit,
                )
            };
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = bit;
            let mut guard = self.fallback.0.lock();
            if self.word.load(Ordering::SeqCst) == epoch {
                self.fallback.1.wait_for(&mut guard, timeout);
            }
        }
    }

    /// Bumps the word and wakes every sleeper whose bit is in `mask` (nothing if it is 0).
    /// Call it after publishing what the sleepers wait for.
    pub fn wake(&self, mask: u32) {
        if mask == 0 {
            return;
        }
        self.word.fetch_add(1, Ordering::SeqCst);
        #[cfg(target_os = "linux")]
        // SAFETY: as in `wait`; FUTEX_WAKE_BITSET only reads the word's address.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word.as_ptr(),
                libc::FUTEX_WAKE_BITSET | libc::FUTEX_PRIVATE_FLAG,
                i32::MAX,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                mask,
            )
        };
        #[cfg(not(target_os = "linux"))]
        {
            let _guard = self.fallback.0.lock();
            self.fallback.1.notify_all();
        }
    }
}
