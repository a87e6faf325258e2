//! Responses before they become HTTP: status, headers, body; and the service's error body.

use std::borrow::Cow;

use parking_lot::Mutex;

use super::error::ServerError;
use super::json::write_str;
use crate::model::DateTime;

/// `Content-Type` of JSON error bodies.
const ERROR_CONTENT_TYPE: &str =
    "application/json;odata=minimalmetadata;streaming=true;charset=utf-8";

/// Smallest body buffer kept for reuse: a batch response (~100 KB for 100 inserts). Smaller
/// bodies come from the allocator's free lists as cheaply as from the pool.
pub const POOLED_MIN_BYTES: usize = 64 << 10;

/// Largest body buffer kept for reuse, so that the pool holds at most
/// [`POOLED_BUFFERS`] x this.
const POOLED_MAX_BYTES: usize = 512 << 10;

/// Buffers kept for reuse: one per batch request or response body in flight at once, up to
/// this (8 clients).
const POOLED_BUFFERS: usize = 8;

/// Large body buffers, written and freed by every batch. Freed to glibc, a 100 KB buffer at the
/// top of the heap was returned to the kernel (the heap is trimmed above 128 KiB free) and its
/// pages faulted in and zeroed again by the next batch: ~20 page faults per batch.
static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// An empty buffer of at least `capacity` bytes, reused if one is pooled.
#[must_use]
pub fn take_buffer(capacity: usize) -> Vec<u8> {
    let pooled = if capacity >= POOLED_MIN_BYTES {
        POOL.lock().pop()
    } else {
        None
    };
    let mut buffer = pooled.unwrap_or_default();
    buffer.reserve(capacity);
    buffer
}

/// Keeps `buffer` for [`take_buffer`] if it is in the pooled size range and the pool has room.
pub fn recycle(mut buffer: Vec<u8>) {
    if (POOLED_MIN_BYTES..=POOLED_MAX_BYTES).contains(&buffer.capacity()) {
        buffer.clear();
        let mut pool = POOL.lock();
        if pool.len() < POOLED_BUFFERS {
            pool.push(buffer);
        }
    }
}

/// A response being built by a handler. The service adds the headers every response
/// carries (`x-ms-request-id`, `x-ms-version`, `Date`).
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// Extra headers, in order (static values are sent without a copy).
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    /// An empty response with `status`.
    #[must_use]
    pub const fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &'static str, value: impl Into<Cow<'static, str>>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// Sets the body and its content type.
    #[must_use]
    pub fn body(
        mut self,
        content_type: impl Into<Cow<'static, str>>,
        body: impl Into<Vec<u8>>,
    ) -> Self {
        self.headers.push(("content-type", content_type.into()));
        self.body = body.into();
        self
    }

    /// The service's response to `error` for request `request_id`.
    #[must_use]
    pub fn error(error: &ServerError, request_id: &str) -> Self {
        Self::status(error.status())
            .header("x-ms-error-code", error.code())
            .body(ERROR_CONTENT_TYPE, error_body(error, request_id))
    }
}

/// The message of `error` as the service words it: its sentence for the error's code, then
/// what strata knows in parentheses. A failing batch operation's message starts with its
/// 0-based index and a colon, which the SDKs parse.
#[must_use]
pub fn error_message(error: &ServerError) -> String {
    message_with_index(error, error.batch_index())
}

fn message_with_index(error: &ServerError, index: Option<usize>) -> String {
    let prefix = index.map(|index| format!("{index}:")).unwrap_or_default();
    let detail = error.detail();
    // A detail that already starts with the index (a batch operation's own error) keeps one.
    let detail = detail.strip_prefix(prefix.as_str()).unwrap_or(&detail);
    format!("{prefix}{} ({detail})", error.service_sentence())
}

/// The error body of a failed batch: as [`error_body`], the message always indexed (an error
/// of no one operation, such as a missing table, is the first operation's, as the service
/// answers `0:The table specified does not exist.`).
#[must_use]
pub fn batch_error_body(error: &ServerError, request_id: &str) -> String {
    body_with_message(
        error,
        &message_with_index(error, Some(error.batch_index().unwrap_or(0))),
        request_id,
    )
}

/// `{"odata.error":{"code":..,"message":{"lang":"en-US","value":"..\nRequestId:..\nTime:.."}}}`.
#[must_use]
pub fn error_body(error: &ServerError, request_id: &str) -> String {
    body_with_message(error, &error_message(error), request_id)
}

fn body_with_message(error: &ServerError, message: &str, request_id: &str) -> String {
    let value = format!(
        "{message}\nRequestId:{request_id}\nTime:{}",
        DateTime::now().to_iso8601()
    );
    let mut out = String::from("{\"odata.error\":{\"code\":");
    write_str(&mut out, error.code());
    out.push_str(",\"message\":{\"lang\":\"en-US\",\"value\":");
    write_str(&mut out, &value);
    out.push_str("}}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_buffer_is_empty_and_holds_the_capacity_asked_even_when_recycled_full() {
        let mut used = Vec::with_capacity(POOLED_MIN_BYTES);
        used.extend_from_slice(b"left over from the last batch");
        recycle(used);
        for capacity in [0, 10, POOLED_MIN_BYTES, POOLED_MIN_BYTES * 3] {
            let buffer = take_buffer(capacity);
            assert!(buffer.is_empty(), "{capacity}");
            assert!(buffer.capacity() >= capacity, "{capacity}");
            recycle(buffer);
        }
    }

    #[test]
    fn the_pool_keeps_a_bounded_number_of_bounded_buffers() {
        for _ in 0..POOLED_BUFFERS * 4 {
            recycle(Vec::with_capacity(POOLED_MIN_BYTES));
            recycle(Vec::with_capacity(POOLED_MAX_BYTES + 1));
            recycle(Vec::with_capacity(POOLED_MIN_BYTES - 1));
        }
        let pool = POOL.lock();
        assert!(pool.len() <= POOLED_BUFFERS);
        assert!(
            pool.iter()
                .all(|buffer| (POOLED_MIN_BYTES..=POOLED_MAX_BYTES).contains(&buffer.capacity()))
        );
    }
}
