//! The HTTP service: one request in, one response out. Parses and authenticates on the
//! async side, reads the body under its cap and deadline, then runs the operation on a
//! blocking worker (the table layer does synchronous, possibly syncing, I/O) — or, for a
//! point read or a single-entity request that no other request is waiting on, where it was
//! parsed. Update and Merge Entity requests are committed in groups by the write combiner
//! (`combine`).

mod body;
mod response;
mod state;

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{ACCEPT, HOST};
use hyper::{Request, Response};

use super::acl;
use super::auth::{self, Credentials};
use super::combine::Combiner;
use super::error::{Result, ServerError};
use super::handlers::{self, Context};
use super::json::Metadata;
use super::limits::{
    ACL_BODY_MAX_BYTES, BATCH_BODY_MAX_BYTES, ENTITY_BODY_MAX_BYTES, URL_MAX_BYTES,
};
use super::reply::Reply;
use super::route::{self, Resource};
use body::read_body;
use response::into_response;
use state::RequestId;
pub use state::State;

/// Host used in OData links when a request has no `Host` header.
const DEFAULT_HOST: &str = "127.0.0.1";

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
