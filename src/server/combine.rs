//! Concurrent single-entity writes committed together (flat combining): requests queue their
//! parsed write, and one blocking worker drains the queue, committing everything queued at
//! once as one engine batch (one WAL sync) and answering each request with its own outcome.
//!
//! Handing each write to its own worker cost, per write, a worker wake-up and the engine's
//! leader/follower hand-offs of its group commit (~5 futex calls and ~4 context switches),
//! while writes that arrive together share one sync either way. Here a worker is woken once
//! per drain, not per write, and the writes that arrive during a sync are the next group.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::error::{Result, ServerError};
use super::service::State;
use crate::table::{self, Account, ETag, GroupWrite};

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

impl Combiner {
    /// Commits `write` in the next group and returns its new ETag once it is durable.
    ///
    /// # Errors
    /// The write's own table error, or `Internal` if the draining worker failed.
    pub(crate) async fn commit(state: &Arc<State>, write: GroupWrite) -> Result<ETag> {
        let (done, outcome) = oneshot::channel();
        let start = {
            let mut queue = state.combiner.queue.lock();
            queue.jobs.push_back(Job { write, done });
            !std::mem::replace(&mut queue.draining, true)
        };
        if start {
            let state = Arc::clone(state);
            drop(tokio::task::spawn_blocking(move || {
                state.combiner.drain(&state.account);
            }));
        }
        match outcome.await {
            Ok(result) => Ok(result?),
            Err(_) => Err(ServerError::Internal {
                reason: "the write worker stopped before answering".to_owned(),
            }),
        }
    }

    /// Commits queued groups until the queue is empty.
    fn drain(&self, account: &Account) {
        let guard = DrainGuard(self);
        while let Some(jobs) = self.take() {
            let (writes, dones): (Vec<_>, Vec<_>) =
                jobs.into_iter().map(|job| (job.write, job.done)).unzip();
            let results = account.commit_group(&writes);
            for (done, result) in dones.into_iter().zip(results) {
                // A request that went away (its connection closed) drops its receiver.
                let _ = done.send(result);
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
