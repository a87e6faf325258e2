//! Closing connections that send no request head in time, with one timer per connection
//! instead of one per request.
//!
//! hyper's own `header_read_timeout` arms a fresh timer for every request head it waits for
//! (an allocation, a timer-wheel insert and removal: ~1,200 instructions of a ~41,000
//! instruction point read). Here each connection keeps one timer that wakes every
//! `IDLE_CHECK_INTERVAL` (see `limits`) and compares counters the requests move: a connection
//! that has begun no request and has no response left to send for `IDLE_CHECKS` checks in a
//! row is closed, as hyper closes it on a header timeout (no response is sent).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::{Instant, sleep};

/// The requests of one connection, as its watchdog sees them.
#[derive(Debug, Default)]
pub struct Activity {
    /// Requests whose head has been parsed.
    begun: AtomicU64,
    /// Requests whose response has been handed over whole (its body dropped by hyper).
    ended: AtomicU64,
}

impl Activity {
    /// Counts a request whose head has been parsed.
    pub fn begin(&self) {
        self.begun.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request whose response has been handed over.
    pub fn end(&self) {
        self.ended.fetch_add(1, Ordering::Relaxed);
    }

    /// Requests begun and ended so far.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.begun.load(Ordering::Relaxed),
            self.ended.load(Ordering::Relaxed),
        )
    }
}

/// Runs `connection` until it completes (`Some` of its output), or until it has been idle
/// for `checks` checks `interval` apart in a row (`None`: the connection is dropped, which
/// closes it). Idle means that between two checks no request began and every begun request
/// ended.
pub async fn close_when_idle<F: Future>(
    connection: F,
    activity: &Activity,
    interval: Duration,
    checks: u32,
) -> Option<F::Output> {
    let mut connection = pin!(connection);
    let mut timer = pin!(sleep(interval));
    let mut seen = activity.counts();
    let mut idle_checks = 0;
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(output) = connection.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(output));
        }
        while timer.as_mut().poll(cx).is_ready() {
            let now = activity.counts();
            if now == seen && now.0 == now.1 {
                idle_checks += 1;
            } else {
                idle_checks = 0;
                seen = now;
            }
            if idle_checks >= checks {
                return std::task::Poll::Ready(None);
            }
            timer.as_mut().reset(Instant::now() + interval);
        }
        std::task::Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::*;
    use crate::server::block_on_with_timers;

    const INTERVAL: Duration = Duration::from_millis(10);
    const CHECKS: u32 = 3;

    #[test]
    fn a_connection_without_requests_is_closed_after_its_checks_in_a_row() {
        let activity = Activity::default();
        let started = std::time::Instant::now();
        let out = block_on_with_timers(close_when_idle(
            std::future::pending::<()>(),
            &activity,
            INTERVAL,
            CHECKS,
        ));
        assert_eq!(out, None);
        assert!(started.elapsed() >= INTERVAL * CHECKS);
    }

    #[test]
    fn a_connection_that_completes_returns_its_output() {
        let activity = Activity::default();
        assert_eq!(
            block_on_with_timers(close_when_idle(async { 7 }, &activity, INTERVAL, CHECKS)),
            Some(7)
        );
    }

    #[test]
    fn a_connection_with_a_response_still_to_send_is_not_closed() {
        let activity = Activity::default();
        activity.begin();
        let slow = async {
            sleep(INTERVAL * CHECKS * 4).await;
            7
        };
        assert_eq!(
            block_on_with_timers(close_when_idle(slow, &activity, INTERVAL, CHECKS)),
            Some(7)
        );
    }

    #[test]
    fn a_connection_is_closed_only_once_its_requests_stop() {
        // Checks further apart than the requests by ten times, so that a stalled test thread
        // does not pass for an idle connection.
        let interval = INTERVAL * 4;
        let activity = Arc::new(Activity::default());
        let started = std::time::Instant::now();
        let busy_for = interval * CHECKS * 2;
        let out = block_on_with_timers(async {
            let requests = Arc::clone(&activity);
            tokio::spawn(async move {
                while started.elapsed() < busy_for {
                    requests.begin();
                    requests.end();
                    sleep(interval / 10).await;
                }
            });
            close_when_idle(std::future::pending::<()>(), &activity, interval, CHECKS).await
        });
        assert_eq!(out, None);
        assert!(started.elapsed() >= busy_for + interval * (CHECKS - 1));
        assert_eq!(activity.counts().0, activity.counts().1);
    }
}
