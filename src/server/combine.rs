//! Concurrent single-entity writes committed together (flat combining): requests queue their
//! parsed write, and one blocking worker drains the queue, committing everything queued at
//! once as one engine batch (one WAL sync) and answering each request with its own outcome.
//!
//! Handing each write to its own worker cost, per write, a worker wake-up and the engine's
//! leader/follower hand-offs of its group commit (~5 futex calls and ~4 context switches),
//! while writes that arrive together share one sync either way. Here a worker is woken once
//! per drain, not per write, or none when every request in flight is a queued write (the
//! HTTP thread then commits the group itself), and the writes that arrive during a sync are
//! the next group.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::error::{Result, ServerError};
use super::service::State;
use crate::table::{self, ETag, GroupWrite};

/// Most writes committed as one group: bounds the time a request waits behind the others'
/// stored-row reads and the size of the engine batch.
const MAX_GROUP_WRITES: usize = 64;

/// Most entity bytes (as counted by `Entity::size`) in one group, well under the engine's
/// batch limit; the first write of a group is taken whatever its size.
const MAX_GROUP_ENTITY_BYTES: usize = 4 << 20;

/// One queued write and where its outcome goes.
#[derive(Debug)]
struct Job {
    write: GroupWrite,
    done: oneshot::Sender<table::Result<ETag>>,
}

/// The queue and whether a worker is draining it.
#[derive(Debug, Default)]
struct Queue {
    jobs: VecDeque<Job>,
    draining: bool,
}

/// The server's write combiner.
#[derive(Debug, Default)]
pub(crate) struct Combiner {
    queue: Mutex<Queue>,
}

/// Clears a combiner whose drain unwound: the queued jobs are dropped (their requests get an
/// internal error) and the next write starts a new drain.
struct DrainGuard<'a>(&'a Combiner);

impl Drop for DrainGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut queue = self.0.queue.lock();
            queue.jobs.clear();
            queue.draining = false;
        }
    }
}

/// Starts a drain on a worker when dropped armed.
struct StartOnDrop<'a>(Option<&'a Arc<State>>);

impl Drop for StartOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            state.combiner.start(state, false);
        }
    }
}

impl Combiner {
    /// Commits `write` in the next group and returns its new ETag once it is durable.
    ///
    /// When every request in flight is a write queued here or one still reading its body (it
    /// cannot run before its body arrives, sync or not), the group is committed on this (the
    /// HTTP) thread: nothing else is waiting for it, and a worker would cost a wake-up there
    /// and one back per group. The decision follows one yield, so the runtime first
    /// parses every request that already arrived (a read among them keeps the thread free).
    /// Otherwise, or while the engine holds writes back (the sync could stall for a flush),
    /// a blocking worker drains the queue. A write alone in flight skips the queue.
    ///
    /// # Errors
    /// The write's own table error, or `Internal` if the draining worker failed.
    pub(crate) async fn commit(state: &Arc<State>, write: GroupWrite) -> Result<ETag> {
        let held_back = || state.account.engine().writes_held_back();
        let mut yielded = false;
        if state.alone() && !held_back() {
            // On the sole open connection nothing can arrive meanwhile: the yield would only
            // cost a `recvfrom` (EAGAIN) and a zero-timeout `epoll_wait`.
            if !state.surely_alone() {
                tokio::task::yield_now().await;
                yielded = true;
            }
            if state.alone() {
                // A lone write, the single-client case: committed here without the queue.
                return Ok(write.table.write_one(write.kind, &write.entity)?);
            }
        }
        let (done, mut outcome) = oneshot::channel();
        let idle = {
            let mut queue = state.combiner.queue.lock();
            queue.jobs.push_back(Job { write, done });
            !queue.draining
        };
        if idle {
            if !yielded {
                // Should the request be dropped during the yield, its queued write still gets
                // a drain rather than waiting for the next write to start one.
                let mut pending = StartOnDrop(Some(state));
                tokio::task::yield_now().await;
                pending.0 = None;
            }
            state.combiner.start(state, true);
        }
        if let Ok(result) = outcome.try_recv() {
            return Ok(result?);
        }
        match outcome.await {
            Ok(result) => Ok(result?),
            Err(_) => Err(ServerError::Internal {
                reason: "the write worker stopped before answering".to_owned(),
            }),
        }
    }

    /// Drains the queue here if every request in flight that has its body is queued in it,
    /// else on a worker;
    /// nothing if a drain is already running or the queue is empty.
    fn start(&self, state: &Arc<State>, may_inline: bool) {
        let inline = {
            let mut queue = self.queue.lock();
            if queue.draining || queue.jobs.is_empty() {
                return;
            }
            queue.draining = true;
            may_inline
                && state.ready_in_flight() <= queue.jobs.len()
                && !state.account.engine().writes_held_back()
        };
        if inline {
            self.drain(state, true);
        } else {
            self.spawn_drain(state);
        }
    }

    /// Drains the queue on a worker of the blocking pool (`draining` is already set).
    fn spawn_drain(&self, state: &Arc<State>) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let state = Arc::clone(state);
            drop(runtime.spawn_blocking(move || {
                state.combiner.drain(&state, false);
            }));
        } else {
            // Only a request dropped outside the runtime (shutdown) gets here: its write is
            // left queued, and the next write's drain takes it.
            self.queue.lock().draining = false;
        }
    }

    /// Commits queued groups until the queue is empty; `inline` (on an HTTP thread) commits
    /// one group and hands what arrived meanwhile to a worker, so the thread's own answer and
    /// its other connections never wait behind later requests' syncs.
    fn drain(&self, state: &Arc<State>, inline: bool) {
        let guard = DrainGuard(self);
        while let Some(jobs) = self.take() {
            let (writes, dones): (Vec<_>, Vec<_>) =
                jobs.into_iter().map(|job| (job.write, job.done)).unzip();
            let results = state.account.commit_group(&writes);
            for (done, result) in dones.into_iter().zip(results) {
                // A request that went away (its connection closed) drops its receiver.
                let _ = done.send(result);
            }
            if inline {
                let rest = {
                    let mut queue = self.queue.lock();
                    queue.draining = !queue.jobs.is_empty();
                    queue.draining
                };
                if rest {
                    self.spawn_drain(state);
                }
                break;
            }
        }
        drop(guard);
    }

    /// The next group, or `None` (and the drain ends) if nothing is queued.
    fn take(&self) -> Option<Vec<Job>> {
        let mut queue = self.queue.lock();
        if queue.jobs.is_empty() {
            queue.draining = false;
            return None;
        }
        let mut bytes = 0;
        let mut count = 0;
        for job in &queue.jobs {
            bytes += job.write.entity.size();
            if count == MAX_GROUP_WRITES || (count > 0 && bytes > MAX_GROUP_ENTITY_BYTES) {
                break;
            }
            count += 1;
        }
        Some(queue.jobs.drain(..count).collect())
    }
}
