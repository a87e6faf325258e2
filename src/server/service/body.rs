//! Reading a request body under its cap and deadline.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::HeaderMap;
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, EXPECT};

use super::super::error::{Result, ServerError};
use super::super::limits::{
    BODY_READ_TIMEOUT, HEADER_READ_TIMEOUT, REFUSED_BODY_DISCARD_MAX_BYTES, REFUSED_BODY_DRAIN_MAX,
    REFUSED_BODY_IDLE_TIMEOUT,
};
use super::super::reply;

/// A request body: hyper's bytes when they came in one piece, else a pooled buffer they were
/// gathered into.
#[derive(Debug, Default)]
pub(super) struct RequestBody {
    /// The body when it came in one piece (no copy).
    whole: Bytes,
    /// The body gathered from its pieces (empty when `whole` is the body).
    gathered: Vec<u8>,
}

impl std::ops::Deref for RequestBody {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        if self.gathered.is_empty() {
            &self.whole
        } else {
            &self.gathered
        }
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        reply::recycle(std::mem::take(&mut self.gathered));
    }
}

/// Why a body could not be gathered.
#[derive(Debug)]
enum GatherError<E> {
    /// More than the limit arrived.
    TooLarge,
    /// The body's stream failed.
    Body(E),
}

/// Reads a body of at most `limit` bytes within [`BODY_READ_TIMEOUT`]; a declared length
/// over the limit is refused before reading anything. The rest of a refused body is read and
/// dropped in the background ([`discard_rest`]).
pub(super) async fn read_body(
    mut body: Incoming,
    headers: &HeaderMap,
    limit: usize,
) -> Result<RequestBody> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        // A client waiting for `100 Continue` has sent no body: the 413 alone answers it.
        let waits_for_continue = headers
            .get(EXPECT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
        if !waits_for_continue {
            discard_rest(body, declared);
        }
        return Err(ServerError::RequestBodyTooLarge { limit });
    }
    let declared = declared.and_then(|len| usize::try_from(len).ok());
    let gathered = {
        let gather = std::pin::pin!(gather(&mut body, declared, limit));
        let first = BODY_READ_TIMEOUT.min(HEADER_READ_TIMEOUT);
        deadline(gather, first, BODY_READ_TIMEOUT).await
    };
    match gathered {
        Err(_) => Err(ServerError::BodyReadFailed {
            reason: "the body did not arrive in time".to_owned(),
        }),
        Ok(Err(GatherError::TooLarge)) => {
            discard_rest(body, None);
            Err(ServerError::RequestBodyTooLarge { limit })
        }
        Ok(Err(GatherError::Body(error))) => Err(ServerError::BodyReadFailed {
            reason: error.to_string(),
        }),
        Ok(Ok(body)) => Ok(body),
    }
}

/// Reads and drops what is left of a refused body while its 413 is sent. Clients (Node's
/// http among them) write the whole body before they read the answer: a server that closes
/// with the body unread resets the connection, and the client reports EPIPE or ECONNRESET
/// instead of the service's 413 `RequestBodyTooLarge`. A body declared or found longer than
/// [`REFUSED_BODY_DISCARD_MAX_BYTES`], one that stalls for [`REFUSED_BODY_IDLE_TIMEOUT`], or
/// one still arriving after [`REFUSED_BODY_DRAIN_MAX`] is given up on and the connection
/// closed, as before.
fn discard_rest(mut body: Incoming, declared: Option<u64>) {
    if declared.is_some_and(|len| len > REFUSED_BODY_DISCARD_MAX_BYTES as u64) {
        return;
    }
    let drain = async move {
        let mut left = REFUSED_BODY_DISCARD_MAX_BYTES;
        while let Ok(Some(Ok(frame))) =
            tokio::time::timeout(REFUSED_BODY_IDLE_TIMEOUT, body.frame()).await
        {
            let size = frame.data_ref().map_or(0, Bytes::len);
            let Some(rest) = left.checked_sub(size) else {
                break;
            };
            left = rest;
        }
    };
    tokio::spawn(async move {
        // Dropping the body when the time is up closes the connection.
        let _ = tokio::time::timeout(REFUSED_BODY_DRAIN_MAX, drain).await;
    });
}

/// Gathers the data frames of `body` (at most `limit` bytes; `declared` sizes the buffer).
/// A body that arrives in one frame is kept as it is; one in several (a batch's 30 KB come
/// in two or three reads) is copied once into a pooled buffer, instead of into a fresh one
/// whose pages the next batch faulted in again.
async fn gather<B>(
    body: &mut B,
    declared: Option<usize>,
    limit: usize,
) -> std::result::Result<RequestBody, GatherError<B::Error>>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    let mut out = RequestBody::default();
    let mut total = 0_usize;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(GatherError::Body)?.into_data() else {
            // Trailers carry no body bytes.
            continue;
        };
        total = total.saturating_add(data.len());
        if total > limit {
            return Err(GatherError::TooLarge);
        }
        if data.is_empty() {
            continue;
        }
        if out.whole.is_empty() && out.gathered.is_empty() {
            out.whole = data;
            continue;
        }
        if out.gathered.is_empty() {
            let whole = std::mem::take(&mut out.whole);
            let room = declared.unwrap_or(0).max(total).min(limit);
            out.gathered = reply::take_buffer(room);
            out.gathered.extend_from_slice(&whole);
        }
        out.gathered.extend_from_slice(&data);
    }
    Ok(out)
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
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use hyper::body::Frame;

    use super::*;
    use crate::server::block_on_with_timers;

    /// A body arriving in the given pieces, failing at a `None` one.
    struct Pieces(VecDeque<Option<&'static [u8]>>);

    impl hyper::body::Body for Pieces {
        type Data = Bytes;
        type Error = &'static str;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<std::result::Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.pop_front().map(|piece| {
                piece
                    .map(|bytes| Frame::data(Bytes::from_static(bytes)))
                    .ok_or("reset")
            }))
        }
    }

    fn gathered(
        pieces: &[Option<&'static [u8]>],
        declared: Option<usize>,
        limit: usize,
    ) -> std::result::Result<Vec<u8>, String> {
        let mut body = Pieces(pieces.iter().copied().collect());
        block_on_with_timers(gather(&mut body, declared, limit))
            .map(|body| body.to_vec())
            .map_err(|error| match error {
                GatherError::TooLarge => "too large".to_owned(),
                GatherError::Body(error) => error.to_owned(),
            })
    }

    #[test]
    fn a_body_gathered_from_pieces_is_their_concatenation() {
        let long: &'static [u8] = &[7; 70_000];
        let cases: [&[Option<&'static [u8]>]; 6] = [
            &[],
            &[Some(b"")],
            &[Some(b"one piece")],
            &[Some(b"two "), Some(b"pieces")],
            &[Some(b""), Some(b"a"), Some(b""), Some(b"bc"), Some(b"d")],
            &[Some(long), Some(b"tail"), Some(long)],
        ];
        for pieces in cases {
            let expected: Vec<u8> = pieces
                .iter()
                .flatten()
                .flat_map(|p| p.iter())
                .copied()
                .collect();
            for declared in [
                None,
                Some(0),
                Some(expected.len()),
                Some(expected.len() * 2),
            ] {
                assert_eq!(
                    gathered(pieces, declared, 1 << 20).unwrap(),
                    expected,
                    "{declared:?}"
                );
            }
        }
    }

    #[test]
    fn a_body_over_its_limit_or_failing_is_refused_as_before() {
        let pieces = [Some(&b"12345"[..]), Some(b"678")];
        assert_eq!(gathered(&pieces, None, 8).unwrap(), b"12345678");
        assert_eq!(gathered(&pieces, None, 7).unwrap_err(), "too large");
        assert_eq!(gathered(&pieces, Some(8), 4).unwrap_err(), "too large");
        assert_eq!(
            gathered(&[Some(b"ab"), None], None, 8).unwrap_err(),
            "reset"
        );
    }

    #[test]
    fn a_body_deadline_spans_both_stages_not_only_the_first() {
        let (first, total) = (Duration::from_millis(20), Duration::from_millis(200));
        let slow = async {
            let late = Box::pin(tokio::time::sleep(Duration::from_millis(60)));
            deadline(late, first, total).await
        };
        assert!(block_on_with_timers(slow).is_ok());
        let started = std::time::Instant::now();
        let never = Box::pin(std::future::pending::<()>());
        assert!(block_on_with_timers(deadline(never, first, total)).is_err());
        assert!(started.elapsed() >= total, "{:?}", started.elapsed());
    }
}
