//! The HTTP service: one request in, one response out. Parses and authenticates on the
//! async side, reads the body under its cap and deadline, then runs the operation on a
//! blocking worker (the table layer does synchronous, possibly syncing, I/O) — or, for a
//! point read or a single-entity request that no other request is waiting on, where it was
//! parsed. Update and Merge Entity requests are committed in groups by the write combiner
//! (`combine`).

mod body;
mod response;
mod state;
mod version;

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::header::HeaderValue;
use hyper::http::request::Parts;
use hyper::{Method, Request, Response};

use super::acl;
use super::auth::{self, Credentials};
use super::combine::Combiner;
use super::error::{Result, ServerError};
use super::handlers::{self, Context, PausedQuery, QueryStep};
use super::idle::Activity;
use super::json::Metadata;
use super::limits::{
    ACL_BODY_MAX_BYTES, BATCH_BODY_MAX_BYTES, CLIENT_REQUEST_ID_MAX_BYTES, ENTITY_BODY_MAX_BYTES,
    URL_MAX_BYTES,
};
use super::reply::Reply;
use super::request_headers::RequestHeaders;
use super::route::{self, Resource};
use body::{RequestBody, read_body};
use response::{ReplyBody, into_response};
use state::RequestId;
pub use state::State;

/// Host used in OData links when a request has no `Host` header.
const DEFAULT_HOST: &str = "127.0.0.1";
/// What the SDKs append to the account name for its secondary location.
const SECONDARY_SUFFIX: &str = "-secondary";

/// Serves one request; never fails (errors become the service's error responses).
pub async fn handle(
    state: Arc<State>,
    connection: u64,
    activity: Arc<Activity>,
    request: Request<Incoming>,
) -> std::result::Result<Response<Full<ReplyBody>>, Infallible> {
    let (request_id, n) = state.next_request_id();
    state.note_connection(connection, n);
    let in_flight = state.enter();
    let (parts, body) = request.into_parts();
    let headers = RequestHeaders::find(&parts.headers);
    let client_request_id = client_request_id(headers.client_request_id);
    let (result, parts) = match prepare(&state, &parts, &headers, body, request_id).await {
        Ok(Step::Done(reply)) => (Ok(reply), Some(parts)),
        Ok(Step::Worker(job)) => {
            let state = Arc::clone(&state);
            let worker = tokio::task::spawn_blocking(move || {
                let reply = job.run(&state, &parts, request_id);
                (reply, parts)
            });
            match worker.await {
                Ok((reply, parts)) => (reply, Some(parts)),
                Err(error) => (
                    Err(ServerError::Internal {
                        reason: format!("the worker failed: {error}"),
                    }),
                    None,
                ),
            }
        }
        Err(error) => (Err(error), Some(parts)),
    };
    let reply = result.unwrap_or_else(|error| Reply::error(&error, request_id.as_str()));
    drop(in_flight);
    // The request's header map becomes the response's: hyper parses the connection's next
    // request into the map of the response it sent, so one map serves the connection.
    Ok(into_response(
        reply,
        request_id,
        client_request_id,
        parts.map(|parts| parts.headers),
        activity,
    ))
}

/// The `x-ms-client-request-id` to echo, as the service does, so that a client can match its
/// logs with the response (the SDKs send one on every request): the value sent, unless it is
/// longer than the service records. It shares the request buffer, no copy.
fn client_request_id(value: Option<&HeaderValue>) -> Option<HeaderValue> {
    value
        .filter(|value| value.len() <= CLIENT_REQUEST_ID_MAX_BYTES)
        .cloned()
}

/// What is left of a request once it is parsed and authenticated.
// Moved once, on the stack; boxing the job would cost every worker request an allocation.
#[allow(clippy::large_enum_variant)]
enum Step {
    /// Answered where it was parsed.
    Done(Reply),
    /// To run on a blocking worker.
    Worker(Job),
}

/// A parsed, authenticated request whose operation runs on a blocking worker.
struct Job {
    target: route::Target,
    principal: auth::Principal,
    base: Arc<str>,
    metadata: Metadata,
    body: RequestBody,
    /// A query page begun on the I/O thread, to be finished.
    paused: Option<PausedQuery>,
}

impl Job {
    /// Runs the operation with the request's `parts`.
    fn run(self, state: &State, parts: &Parts, request_id: RequestId) -> Result<Reply> {
        let ctx = Context {
            state,
            method: parts.method.as_str(),
            target: &self.target,
            headers: &parts.headers,
            principal: &self.principal,
            base: &self.base,
            metadata: self.metadata,
            request_id: request_id.as_str(),
        };
        match self.paused {
            Some(paused) => handlers::resume_query(&ctx, paused),
            None => handlers::dispatch(&ctx, &self.body),
        }
    }
}

/// The primary path inside `/{account}-secondary/{account}/...` (the Python SDK's host swap
/// for a path-style endpoint), if `path` has that form.
fn secondary_swapped_path<'p>(path: &'p str, account: &str) -> Option<&'p str> {
    let rest = path
        .strip_prefix('/')?
        .strip_prefix(account)?
        .strip_prefix(SECONDARY_SUFFIX)?;
    rest.strip_prefix('/')?
        .strip_prefix(account)?
        .starts_with('/')
        .then_some(rest)
}

/// Parses, authenticates and reads the body of a request; runs its operation here when that
/// is cheaper than a worker (see below).
async fn prepare(
    state: &Arc<State>,
    parts: &Parts,
    headers: &RequestHeaders<'_>,
    body: Incoming,
    request_id: RequestId,
) -> Result<Step> {
    let target_len = parts.uri.path_and_query().map_or(0, |pq| pq.as_str().len());
    if target_len > URL_MAX_BYTES {
        return Err(ServerError::UrlTooLong {
            len: target_len,
            limit: URL_MAX_BYTES,
        });
    }
    version::check(headers.x_ms_version)?;
    // Borrowed from the request's parts, which the blocking worker takes whole if it runs
    // the operation: copies of them were two allocations per request.
    // `{account}-secondary` is the read-only secondary location the SDKs ask for service
    // stats (and any read, with `location_mode="secondary"`); here it is the same file. It
    // comes in two forms: an endpoint naming it (`/{account}-secondary/...`, signed as sent),
    // and the Python SDK's swap of the host of a path-style endpoint for the secondary one,
    // which puts it in front of the primary path (`/{account}-secondary/{account}/...`) and
    // signs the primary path: that form is read as the primary path it signed.
    let (path, swapped) = match secondary_swapped_path(parts.uri.path(), &state.name) {
        Some(primary) => (primary, true),
        None => (parts.uri.path(), false),
    };
    let target = route::parse(path, parts.uri.query())?;
    let method = parts.method.as_str();
    let secondary = swapped
        || target
            .account
            .strip_suffix(SECONDARY_SUFFIX)
            .is_some_and(|name| name == state.name);
    if target.account != state.name && !secondary {
        return Err(ServerError::AuthenticationFailed {
            reason: format!("the request names account {:?}", target.account),
        });
    }
    if secondary && !matches!(parts.method, Method::GET | Method::HEAD) {
        return Err(ServerError::SecondaryIsReadOnly {
            account: state.name.to_string(),
        });
    }
    let principal = auth::authenticate(
        Credentials {
            method,
            path,
            headers,
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
    let body = if body.is_end_stream() {
        // No body (a GET, a DELETE): nothing to wait for, so no deadline to arm.
        RequestBody::default()
    } else {
        let _reading = state.reading_body();
        read_body(body, &parts.headers, limit).await?
    };
    let accept = target
        .param("$format")
        .or_else(|| headers.accept.and_then(|v| v.to_str().ok()));
    let metadata = Metadata::from_accept(accept);
    let host = headers
        .host
        .and_then(|v| v.to_str().ok())
        .unwrap_or(DEFAULT_HOST);
    let base = state.base(host);
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
        return Ok(Step::Done(handlers::written(etag)));
    }
    if is_point_read(method, &target)
        || (is_bounded_write(method, &target)
            && !state.account.engine().writes_held_back()
            && alone(state).await)
    {
        // A point read is served where it was parsed: one engine get of a row that is
        // almost always in the block or page cache costs less than handing the request to
        // a worker and back (two thread wake-ups). So is a single-entity write or a batch that
        // no other request is waiting on: its sync blocks this thread, but nothing else was
        // queued for it, and the hand-off cost two wake-ups per write. Requests that arrive
        // meanwhile wait at most that one write; writes that find each other go to the pool,
        // where concurrent writers share one group commit. A write the engine is holding back
        // (flushes and compactions behind) is never run here: it could block this thread for
        // the whole stall.
        return handlers::dispatch(&ctx, &body).map(Step::Done);
    }
    // A query page alone in flight is scanned here too, for at most a short budget (see
    // `handlers::query`); one that needs longer is finished on a worker.
    let paused = if is_entity_query(method, &target) && alone(state).await {
        match handlers::query_inline(&ctx) {
            Some(Ok(QueryStep::Done(reply))) => return Ok(Step::Done(reply)),
            Some(Ok(QueryStep::Paused(paused))) => Some(paused),
            Some(Err(error)) => return Err(error),
            None => None,
        }
    } else {
        None
    };
    Ok(Step::Worker(Job {
        target,
        principal,
        base,
        metadata,
        body,
        paused,
    }))
}

/// Whether a request is a plain point read (`GET` of one entity), served without a worker.
fn is_point_read(method: &str, target: &route::Target) -> bool {
    method == "GET" && matches!(target.resource, Resource::Entity { .. })
}

/// Whether the calling request is still the only one in flight once every connection with
/// bytes already waiting has been read: yielding lets the runtime poll its sockets, so
/// requests that arrived while this one was parsed (or while the previous one synced) are
/// counted before it decides to block the thread.
async fn alone(state: &State) -> bool {
    if !state.alone() {
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

/// Whether a request is a Query Entities page (`GET` of a table's entities).
fn is_entity_query(method: &str, target: &route::Target) -> bool {
    method == "GET"
        && matches!(target.resource, Resource::Entities(_))
        && target.param("comp").is_none()
}

/// Whether a request names one entity (read, insert, update, merge, delete) or is a batch:
/// bounded work (at most 100 operations, 4 MiB), at most one engine write.
fn is_bounded_write(method: &str, target: &route::Target) -> bool {
    match target.resource {
        Resource::Entity { .. } => true,
        Resource::Entities(_) => method == "POST" && target.param("comp").is_none(),
        Resource::Batch => method == "POST",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::secondary_swapped_path;

    #[test]
    fn secondary_swapped_path_is_the_primary_path_behind_the_secondary_account() {
        let account = "devstoreaccount1";
        for (path, primary) in [
            (
                "/devstoreaccount1-secondary/devstoreaccount1/",
                Some("/devstoreaccount1/"),
            ),
            (
                "/devstoreaccount1-secondary/devstoreaccount1/people(PartitionKey='a',RowKey='b')",
                Some("/devstoreaccount1/people(PartitionKey='a',RowKey='b')"),
            ),
            // An endpoint naming the secondary (signed as sent) is not the swapped form, even
            // for a table named like the account.
            ("/devstoreaccount1-secondary/people", None),
            ("/devstoreaccount1-secondary/devstoreaccount1", None),
            ("/devstoreaccount1-secondary/devstoreaccount1()", None),
            ("/devstoreaccount1/devstoreaccount1/", None),
            ("/other-secondary/devstoreaccount1/", None),
            ("", None),
        ] {
            assert_eq!(secondary_swapped_path(path, account), primary, "{path}");
        }
    }
}
