//! The HTTP service: one request in, one response out. Parses and authenticates on the
//! async side, reads the body under its cap and deadline, then runs the operation on a
//! blocking worker (the table layer does synchronous, possibly syncing, I/O) — or, for a
//! point read or a single-entity request that no other request is waiting on, where it was
//! parsed. Update and Merge Entity requests are committed in groups by the write combiner
//! (`combine`).

use std::borrow::Cow;
use std::convert::Infallible;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{
    ACCEPT, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, ETAG, HOST, HeaderName, HeaderValue,
    LOCATION, X_CONTENT_TYPE_OPTIONS,
};
use hyper::{HeaderMap, Request, Response, StatusCode};

use super::acl;
use super::auth::{self, Credentials};
use super::combine::Combiner;
use super::error::{Result, ServerError};
use super::handlers::{self, Context};
use super::json::Metadata;
use super::limits::{
    ACL_BODY_MAX_BYTES, BATCH_BODY_MAX_BYTES, BODY_READ_TIMEOUT, ENTITY_BODY_MAX_BYTES,
    HEADER_READ_TIMEOUT, SERVICE_VERSION, URL_MAX_BYTES,
};
use super::reply::Reply;
use super::route::{self, Resource};
use crate::table::Account;

/// Length of a request id (`8-4-4-4-12` hex digits).
const REQUEST_ID_LEN: usize = 36;

/// Headers [`into_response`] adds to every response.
const FIXED_HEADERS: usize = 5;

/// Room of a response's header map. hyper keeps the map of the response it sent and parses
/// the connection's next request into it, so the map is sized for a request too: the SDKs send
/// 12–15 headers, and a map sized for the response alone was regrown (two allocations and a
/// rehash) by every request's parse.
const RESPONSE_HEADER_ROOM: usize = 24;

/// Requests in a row from one connection after which the other open connections count as
/// idle: a write then skips the yield that looks for requests on them (see
/// [`State::surely_alone`]).
const SAME_CONNECTION_RUN: u64 = 64;

/// Host used in OData links when a request has no `Host` header.
const DEFAULT_HOST: &str = "127.0.0.1";

/// What every request handler shares.
#[derive(Debug)]
pub struct State {
    /// The account being served.
    pub account: Account,
    /// Its name in URLs and signatures.
    pub name: String,
    /// Its key (decoded), for SharedKey and SAS.
    pub key: Vec<u8>,
    /// Random per process, so request ids differ across restarts.
    seed: u64,
    /// Requests seen so far.
    requests: AtomicU64,
    /// Requests whose headers are parsed and whose response is not yet built.
    in_flight: AtomicUsize,
    /// Open client connections.
    connections: AtomicUsize,
    /// Connections opened so far: the next connection's number.
    connection_ids: AtomicU64,
    /// The connection of the request started last.
    last_connection: AtomicU64,
    /// The number of the last request that came from another connection than the request
    /// before it.
    switched_at: AtomicU64,
    /// Concurrent single-entity writes, committed in groups.
    pub(crate) combiner: Combiner,
}

/// One request counted in [`State::in_flight`] until dropped.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One connection counted as open until dropped.
pub(crate) struct OpenConnection(Arc<State>, u64);

impl OpenConnection {
    /// The connection's number, distinct among the server's connections.
    pub(crate) const fn id(&self) -> u64 {
        self.1
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

impl State {
    /// Shared state serving `account` as `name` with `key`.
    #[must_use]
    pub fn new(account: Account, name: String, key: Vec<u8>) -> Self {
        Self {
            account,
            name,
            key,
            seed: RandomState::new().hash_one(std::process::id()),
            requests: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            connection_ids: AtomicU64::new(0),
            last_connection: AtomicU64::new(u64::MAX),
            switched_at: AtomicU64::new(0),
            combiner: Combiner::default(),
        }
    }

    /// Counts a request in flight until the guard is dropped.
    fn enter(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.in_flight)
    }

    /// Counts a connection as open until the guard is dropped.
    pub(crate) fn open_connection(self: &Arc<Self>) -> OpenConnection {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let id = self.connection_ids.fetch_add(1, Ordering::Relaxed);
        OpenConnection(Arc::clone(self), id)
    }

    /// Whether the calling request is the only one in flight.
    pub(crate) fn alone(&self) -> bool {
        self.in_flight() == 1
    }

    /// Whether the calling request is the only one in flight and no other is expected before
    /// it is answered, so that it needs no yield to find out: its connection is the only one
    /// open (HTTP/1 reads a connection's next request only after the response), or the last
    /// [`SAME_CONNECTION_RUN`] requests all came from it (the others are idle keep-alive
    /// connections). A request that does arrive on an idle connection meanwhile waits for
    /// this one write, as one arriving during any sync does, and its arrival ends the run.
    pub(crate) fn surely_alone(&self) -> bool {
        if !self.alone() {
            return false;
        }
        let run = self
            .requests
            .load(Ordering::Relaxed)
            .saturating_sub(self.switched_at.load(Ordering::Relaxed));
        self.connections.load(Ordering::Relaxed) <= 1 || run > SAME_CONNECTION_RUN
    }

    /// Notes that request number `n` came from `connection`.
    fn note_connection(&self, connection: u64, n: u64) {
        if self.last_connection.swap(connection, Ordering::Relaxed) != connection {
            self.switched_at.store(n, Ordering::Relaxed);
        }
    }

    /// Requests whose headers are parsed and whose response is not yet built.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// A fresh request id in GUID form: the seed's 64 bits, then the counter's mixed with it,
    /// as `8-4-4-4-12` lower-case hex digits.
    fn next_request_id(&self) -> (RequestId, u64) {
        let n = self.requests.fetch_add(1, Ordering::Relaxed);
        (RequestId::new(self.seed, n ^ self.seed.rotate_left(17)), n)
    }
}

/// A request id (`8-4-4-4-12` lower-case hex digits), kept on the stack: it is made for every
/// request, and a `String` of it cost an allocation and a copy into the header value.
#[derive(Clone, Copy)]
struct RequestId([u8; REQUEST_ID_LEN]);

impl RequestId {
    /// The id of the 128 bits `high`, `low`.
    fn new(high: u64, low: u64) -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut id = [b'-'; REQUEST_ID_LEN];
        // Digit positions of `8-4-4-4-12`: the dashes sit at 8, 13, 18 and 23.
        let mut at = 0;
        for word in [high, low] {
            for shift in (0..16).rev() {
                if matches!(at, 8 | 13 | 18 | 23) {
                    at += 1;
                }
                let nibble = ((word >> (shift * 4)) & 0xf) as usize;
                if let (Some(slot), Some(digit)) = (id.get_mut(at), HEX.get(nibble)) {
                    *slot = *digit;
                }
                at += 1;
            }
        }
        Self(id)
    }

    /// The id as text.
    fn as_str(&self) -> &str {
        // Only ASCII digits and dashes are ever written.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Serves one request; never fails (errors become the service's error responses).
pub async fn handle(
    state: Arc<State>,
    connection: u64,
    request: Request<Incoming>,
) -> std::result::Result<Response<Full<Bytes>>, Infallible> {
    let (request_id, n) = state.next_request_id();
    state.note_connection(connection, n);
    let in_flight = state.enter();
    let reply = match process(&state, request, request_id).await {
        Ok(reply) => reply,
        Err(error) => Reply::error(&error, request_id.as_str()),
    };
    drop(in_flight);
    Ok(into_response(reply, request_id))
}

async fn process(
    state: &Arc<State>,
    request: Request<Incoming>,
    request_id: RequestId,
) -> Result<Reply> {
    let (parts, body) = request.into_parts();
    let target_len = parts.uri.path_and_query().map_or(0, |pq| pq.as_str().len());
    if target_len > URL_MAX_BYTES {
        return Err(ServerError::UrlTooLong {
            len: target_len,
            limit: URL_MAX_BYTES,
        });
    }
    // Borrowed from the request's parts, which the blocking worker takes whole if it runs
    // the operation: copies of them were two allocations per request.
    let path = parts.uri.path();
    let target = route::parse(path, parts.uri.query())?;
    let method = parts.method.as_str();
    if target.account != state.name {
        return Err(ServerError::AuthenticationFailed {
            reason: format!("the request names account {:?}", target.account),
        });
    }
    let principal = auth::authenticate(
        Credentials {
            method,
            path,
            headers: &parts.headers,
        },
        |name| target.param(name),
        &state.name,
        &state.key,
        |table, id| {
            Ok(acl::load(&state.account, table)?
                .into_iter()
                .find(|policy| policy.id == id))
        },
    )?;
    let limit = match target.resource {
        Resource::Batch => BATCH_BODY_MAX_BYTES,
        _ if target.param("comp") == Some("acl") => ACL_BODY_MAX_BYTES,
        _ => ENTITY_BODY_MAX_BYTES,
    };
    let body = read_body(body, &parts.headers, limit).await?;
    let accept = target
        .param("$format")
        .or_else(|| parts.headers.get(ACCEPT).and_then(|v| v.to_str().ok()));
    let metadata = Metadata::from_accept(accept);
    let host = parts
        .headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or(DEFAULT_HOST);
    let mut base = String::with_capacity(host.len() + state.name.len() + "http:///".len());
    base.push_str("http://");
    base.push_str(host);
    base.push('/');
    base.push_str(&state.name);
    let ctx = Context {
        state,
        method,
        target: &target,
        headers: &parts.headers,
        principal: &principal,
        base: &base,
        metadata,
        request_id: request_id.as_str(),
    };
    if let Some(write) = handlers::prepare_write(&ctx, &body) {
        // Parsed and authorised here; committed with the writes in flight alongside it.
        let etag = Combiner::commit(state, write?).await?;
        return Ok(handlers::written(etag));
    }
    if is_point_read(method, &target) || (is_single_entity(method, &target) && alone(state).await) {
        // A point read is served where it was parsed: one engine get of a row that is
        // almost always in the block or page cache costs less than handing the request to
        // a worker and back (two thread wake-ups). So is a single-entity write that no other
        // request is waiting on: its sync blocks this thread, but nothing else was queued for
        // it, and the hand-off cost two wake-ups per write. Requests that arrive meanwhile
        // wait at most that one write; writes that find each other go to the pool, where
        // concurrent writers share one group commit.
        return handlers::dispatch(&ctx, &body);
    }
    let state = Arc::clone(state);
    tokio::task::spawn_blocking(move || {
        let ctx = Context {
            state: &state,
            method: parts.method.as_str(),
            target: &target,
            headers: &parts.headers,
            principal: &principal,
            base: &base,
            metadata,
            request_id: request_id.as_str(),
        };
        handlers::dispatch(&ctx, &body)
    })
    .await
    .map_err(|error| ServerError::Internal {
        reason: format!("the worker failed: {error}"),
    })?
}

/// Whether a request is a plain point read (`GET` of one entity), served without a worker.
fn is_point_read(method: &str, target: &route::Target) -> bool {
    method == "GET" && matches!(target.resource, Resource::Entity { .. })
}

/// Whether the calling request is still the only one in flight once every connection with
/// bytes already waiting has been read: yielding lets the runtime poll its sockets, so
/// requests that arrived while this one was parsed (or while the previous one synced) are
/// counted before it decides to block the thread. A write the engine is holding back (flushes
/// and compactions behind) is never run here: it could block this thread for the whole stall.
async fn alone(state: &State) -> bool {
    if !state.alone() || state.account.engine().writes_held_back() {
        return false;
    }
    if state.surely_alone() {
        // The yield would cost a `recvfrom` (EAGAIN) and a zero-timeout `epoll_wait`, and
        // could find nothing.
        return true;
    }
    tokio::task::yield_now().await;
    state.alone()
}

/// Whether a request names one entity (read, insert, update, merge, delete): bounded work,
/// at most one engine write.
fn is_single_entity(method: &str, target: &route::Target) -> bool {
    match target.resource {
        Resource::Entity { .. } => true,
        Resource::Entities(_) => method == "POST" && target.param("comp").is_none(),
        _ => false,
    }
}

/// Reads a body of at most `limit` bytes within [`BODY_READ_TIMEOUT`]; a declared length
/// over the limit is refused before reading anything.
async fn read_body(body: Incoming, headers: &HeaderMap, limit: usize) -> Result<Bytes> {
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

/// The names and values every response carries, built at compile time: `from_static` outside
/// a constant validates (and, for a name, looks up the standard names) on every call.
const X_MS_REQUEST_ID: HeaderName = HeaderName::from_static("x-ms-request-id");
const X_MS_VERSION: HeaderName = HeaderName::from_static("x-ms-version");
const DATASERVICEVERSION: HeaderName = HeaderName::from_static("dataserviceversion");
const VERSION_VALUE: HeaderValue = HeaderValue::from_static(SERVICE_VERSION);
const DATASERVICEVERSION_VALUE: HeaderValue = HeaderValue::from_static("3.0;");
const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");

/// The header `name` (lower-case), without parsing the names handlers set: a name parsed at
/// run time that is not a standard one is also copied into an allocation.
fn header_name(name: &'static str) -> Option<HeaderName> {
    const PREFERENCE_APPLIED: HeaderName = HeaderName::from_static("preference-applied");
    const DATASERVICEID: HeaderName = HeaderName::from_static("dataserviceid");
    const X_MS_ERROR_CODE: HeaderName = HeaderName::from_static("x-ms-error-code");
    Some(match name {
        "content-type" => CONTENT_TYPE,
        "etag" => ETAG,
        "location" => LOCATION,
        "preference-applied" => PREFERENCE_APPLIED,
        "dataserviceid" => DATASERVICEID,
        "x-ms-error-code" => X_MS_ERROR_CODE,
        _ => return HeaderName::from_bytes(name.as_bytes()).ok(),
    })
}

/// Turns a reply into a hyper response with the headers every response carries.
fn into_response(reply: Reply, request_id: RequestId) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(reply.body)));
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    // Sized once for the fixed headers and the reply's, and for the next request parsed into
    // it (see [`RESPONSE_HEADER_ROOM`]).
    *response.headers_mut() =
        HeaderMap::with_capacity(RESPONSE_HEADER_ROOM.max(FIXED_HEADERS + reply.headers.len()));
    let headers = response.headers_mut();
    // The fixed headers are built without parsing or copying: they are sent on every response.
    if let Ok(value) = HeaderValue::from_bytes(&request_id.0) {
        headers.append(X_MS_REQUEST_ID, value);
    }
    headers.append(X_MS_VERSION, VERSION_VALUE);
    // `Date` is added by hyper from its once-a-second cache.
    headers.append(DATASERVICEVERSION, DATASERVICEVERSION_VALUE);
    headers.append(X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    headers.append(CACHE_CONTROL, NO_CACHE);
    for (name, value) in reply.headers {
        // Every value written is ASCII by construction; one that is not is dropped rather
        // than failing the response.
        let value = match value {
            // Borrowed values are the handlers' string literals (content types, preference
            // names), all visible ASCII, which `from_static` takes without a copy.
            Cow::Borrowed(text) => Ok(HeaderValue::from_static(text)),
            Cow::Owned(text) => HeaderValue::try_from(text),
        };
        if let (Some(name), Ok(value)) = (header_name(name), value) {
            headers.append(name, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn state() -> State {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open(dir.path().join("db.strata")).unwrap();
        State::new(account, "acct".to_owned(), vec![1; 32])
    }

    #[test]
    fn request_ids_are_distinct_lower_case_guids() {
        let state = state();
        let first = state.next_request_id().0.as_str().to_owned();
        let second = state.next_request_id().0.as_str().to_owned();
        assert_ne!(first, second);
        for id in [first, second] {
            assert_eq!(id.len(), REQUEST_ID_LEN);
            for (at, c) in id.chars().enumerate() {
                if matches!(at, 8 | 13 | 18 | 23) {
                    assert_eq!(c, '-', "{id}");
                } else {
                    assert!(c.is_ascii_hexdigit() && !c.is_ascii_uppercase(), "{id}");
                }
            }
        }
    }

    #[test]
    fn a_request_id_spells_its_128_bits_in_order_as_8_4_4_4_12_hex() {
        let id = RequestId::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
        assert_eq!(id.as_str(), "01234567-89ab-cdef-fedc-ba9876543210");
        assert_eq!(
            RequestId::new(u64::MAX, 0).as_str(),
            "ffffffff-ffff-ffff-0000-000000000000"
        );
    }

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

    #[test]
    fn a_request_is_alone_only_while_no_other_is_in_flight() {
        let state = state();
        let first = state.enter();
        assert!(state.alone());
        let second = state.enter();
        assert!(!state.alone());
        drop(first);
        assert!(state.alone());
        drop(second);
        assert_eq!(state.in_flight.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn prebuilt_header_names_equal_the_parsed_names() {
        for name in [
            "content-type",
            "etag",
            "location",
            "preference-applied",
            "dataserviceid",
            "x-ms-error-code",
            "x-ms-continuation-NextRowKey",
        ] {
            assert_eq!(
                header_name(name),
                HeaderName::from_bytes(name.as_bytes()).ok(),
                "{name}"
            );
        }
    }

    #[test]
    fn a_request_is_surely_alone_only_on_the_sole_open_connection() {
        let state = Arc::new(state());
        let request = state.enter();
        assert!(state.surely_alone(), "no connection counted (direct calls)");
        let first = state.open_connection();
        assert!(state.surely_alone());
        let second = state.open_connection();
        assert!(state.alone());
        assert!(!state.surely_alone());
        drop(first);
        assert!(state.surely_alone());
        let other = state.enter();
        assert!(!state.surely_alone());
        drop((other, request, second));
        assert_eq!(state.connections.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_request_is_surely_alone_after_a_run_of_requests_from_its_connection_only() {
        let state = Arc::new(state());
        let (active, idle) = (state.open_connection(), state.open_connection());
        let request = |connection: &OpenConnection| {
            let (_, n) = state.next_request_id();
            state.note_connection(connection.id(), n);
        };
        request(&idle);
        let _in_flight = state.enter();
        for _ in 0..SAME_CONNECTION_RUN {
            request(&active);
            assert!(!state.surely_alone());
        }
        request(&active);
        assert!(state.surely_alone());
        // One request from the other connection ends the run.
        request(&idle);
        request(&active);
        assert!(!state.surely_alone());
    }
}
