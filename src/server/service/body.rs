//! Reading a request body under its cap and deadline.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::HeaderMap;
use hyper::body::Incoming;
use hyper::header::CONTENT_LENGTH;

use super::super::error::{Result, ServerError};
use super::super::limits::{BODY_READ_TIMEOUT, HEADER_READ_TIMEOUT};

/// Reads a body of at most `limit` bytes within [`BODY_READ_TIMEOUT`]; a declared length
/// over the limit is refused before reading anything.
pub(super) async fn read_body(body: Incoming, headers: &HeaderMap, limit: usize) -> Result<Bytes> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(ServerError::RequestBodyTooLarge { limit });
    }
    let collect = std::pin::pin!(Limited::new(body, limit).collect());
    let first = BODY_READ_TIMEOUT.min(HEADER_READ_TIMEOUT);
    match deadline(collect, first, BODY_READ_TIMEOUT).await {
        Err(_) => Err(ServerError::BodyReadFailed {
            reason: "the body did not arrive in time".to_owned(),
        }),
        Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => {
            Err(ServerError::RequestBodyTooLarge { limit })
        }
        Ok(Err(error)) => Err(ServerError::BodyReadFailed {
            reason: error.to_string(),
        }),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// Runs `future` for at most `total`, armed as a first timer of `first` (at most `total`)
/// and, only if that one expires, a second for the rest.
///
/// tokio's timer wakes the runtime (an eventfd write and one more `epoll_wait`) whenever a
/// timer is set to expire before the earliest deadline the runtime parked with. A body's
/// deadline later than the next request's header deadline, which hyper sets right after the
/// response, was the runtime's parked deadline while the body arrived: every request with a
/// body cost that wake-up. With a first stage no longer than [`HEADER_READ_TIMEOUT`], the next
/// header deadline always falls after it.
async fn deadline<F: Future + Unpin>(
    mut future: F,
    first: Duration,
    total: Duration,
) -> std::result::Result<F::Output, tokio::time::error::Elapsed> {
    let first = first.min(total);
    match tokio::time::timeout(first, &mut future).await {
        Ok(output) => Ok(output),
        Err(_) => tokio::time::timeout(total.saturating_sub(first), future).await,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn run<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn a_body_deadline_spans_both_stages_not_only_the_first() {
        let (first, total) = (Duration::from_millis(20), Duration::from_millis(200));
        let slow = async {
            let late = Box::pin(tokio::time::sleep(Duration::from_millis(60)));
            deadline(late, first, total).await
        };
        assert!(run(slow).is_ok());
        let started = std::time::Instant::now();
        let never = Box::pin(std::future::pending::<()>());
        assert!(run(deadline(never, first, total)).is_err());
        assert!(started.elapsed() >= total, "{:?}", started.elapsed());
    }
}
