//! CPU priority of background merge threads (RocksDB lowers its compaction pool's priority
//! for the same reason).
//!
//! Right after a bulk load the compaction backlog keeps a merge thread on each core; a `Sync`
//! writer sleeps in every device flush, and each time it wakes it waited for a core behind
//! the merges: run delay, not I/O, was most of its latency. A merge that starts beside small
//! `Sync` writes (see `WriteController::note_sync_write`) and is not urgent drops to the
//! lowest CPU priority, so a waking writer takes the core at once, while the merge still gets
//! every cycle the foreground leaves. Other foreground work (buffered loads, reads) shares
//! the cores with merges as before: there a slower merge only moves the backlog to later reads.
//!
//! A lowered merge takes its priority back once the `Sync` writers are gone or the write
//! controller holds writers back. Unprivileged threads cannot raise their priority, so the
//! background thread itself never lowers its own: such a merge runs every part on a thread
//! spawned for that job (a few tens of microseconds against a job of hundreds of
//! milliseconds), which ends with it. Urgency wins: a merge started while writers are held
//! back keeps normal priority, and a lowered one that cannot get its priority back stops,
//! writing nothing durable, once they are, to be picked again at normal priority.
//!
//! Known trade-off: a lowered merge still takes the allocator mutex briefly per output
//! extent; on saturated cores an idle-class holder can delay the writer's WAL rotation or a
//! flush that needs the same mutex (priority inversion). It is bounded by the give-back rule
//! above and was not seen in the measurements, but it is why urgency always wins.

/// The priority a thread had before [`lower_current_thread`], to go back to.
#[derive(Debug, Clone, Copy)]
pub struct Lowered {
    /// The thread's nice value before.
    nice: i32,
}

/// Lowers the calling thread to the lowest CPU priority the system offers for background
/// work. Only a hint: where the calls are refused or absent the thread keeps its priority.
pub fn lower_current_thread() -> Lowered {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain syscalls about the calling thread (pid 0 / its own tid); the
        // `sched_param` they read is plain data that outlives them.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            let nice = libc::getpriority(libc::PRIO_PROCESS, tid);
            let param: libc::sched_param = std::mem::zeroed();
            if libc::sched_setscheduler(0, libc::SCHED_IDLE, &raw const param) != 0 {
                libc::setpriority(libc::PRIO_PROCESS, tid, 19);
            }
            Lowered { nice }
        }
    }
    #[cfg(not(target_os = "linux"))]
    Lowered { nice: 0 }
}

impl Lowered {
    /// Gives the calling thread its priority back; false where the system refuses (raising a
    /// priority needs `CAP_SYS_NICE` or a large enough `RLIMIT_NICE`), and it stays low.
    pub fn restore(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: as in `lower_current_thread`.
            unsafe {
                let tid = libc::gettid() as libc::id_t;
                let param: libc::sched_param = std::mem::zeroed();
                libc::sched_setscheduler(0, libc::SCHED_OTHER, &raw const param) == 0
                    && libc::setpriority(libc::PRIO_PROCESS, tid, self.nice) == 0
            }
        }
        #[cfg(not(target_os = "linux"))]
        true
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::lower_current_thread;

    #[test]
    fn lowered_thread_runs_idle_or_at_nice_19_others_keep_theirs_and_restore_undoes_it() {
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
