//! CPU priority of background merge threads (RocksDB lowers its compaction pool's priority
//! for the same reason).
//!
//! Right after a bulk load the compaction backlog keeps a merge thread on each core; a `Sync`
//! writer sleeps in every device flush, and each time it wakes it waited for a core behind
//! the merges: run delay, not I/O, was most of its latency. While `Sync` writers are active a
//! merge that was not urgent when it started drops to the lowest CPU priority, so a waking
//! writer takes the core at once, while the merge still gets every cycle the foreground
//! leaves. Other foreground work (buffered loads, reads) shares the cores with merges as
//! before: there a slower merge only moves the backlog to later reads.
//!
//! Unprivileged threads cannot raise their priority again, so the background thread itself
//! never lowers its own: such a merge runs every part on a thread spawned for that job (a few
//! tens of microseconds against a job of hundreds of milliseconds), which ends with it. Urgency
//! wins: a merge started while writers are held back keeps normal priority, and a lowered one
//! stops, writing nothing durable, once they are, to be picked again at normal priority.

/// Lowers the calling thread to the lowest CPU priority the system offers for background
/// work. Only a hint: where the calls are refused or absent the thread keeps its priority.
pub fn lower_current_thread() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sched_param` is plain data; the calls only read it and change the policy
        // of the calling thread (pid 0), which outlives them.
        let param: libc::sched_param = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let idle = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &raw const param) };
        if idle != 0 {
            // SAFETY: a plain syscall on the calling thread's id; no memory is passed.
            unsafe {
                let tid = libc::gettid();
                libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19);
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::lower_current_thread;

    #[test]
    fn lowered_thread_runs_idle_or_at_nice_19_and_others_keep_their_priority() {
        // SAFETY: plain syscalls about the calling thread.
        let (policy, nice) = std::thread::spawn(|| {
            lower_current_thread();
            unsafe {
                (
                    libc::sched_getscheduler(0),
                    libc::getpriority(libc::PRIO_PROCESS, 0),
                )
            }
        })
        .join()
        .unwrap_or((-1, -1));
        assert!(
            policy == libc::SCHED_IDLE || nice == 19,
            "policy {policy}, nice {nice}"
        );
        // SAFETY: as above.
        let here = unsafe { libc::sched_getscheduler(0) };
        assert_eq!(
            here,
            libc::SCHED_OTHER,
            "the caller's own policy must not change"
        );
    }
}
