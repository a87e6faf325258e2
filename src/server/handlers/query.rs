//! Query Entities: one page of a `$filter` query, written as JSON while the table layer scans.
//!
//! A page is scanned where its request was parsed while no other request is in flight, for at
//! most [`INLINE_QUERY_BUDGET`]: handing it to a blocking worker and back costs two thread
//! wake-ups (a `futex` and an `eventfd` write, ~4 context switches), ~10 % of the server's CPU
//! for a 1,000-entity page, and the page's body is then copied into the socket by the thread
//! whose cache holds it. A page not done by then is finished on a worker from where it
//! stopped ([`PausedQuery`]), so the I/O thread is never held for longer than that.
//! Its two parts then read two snapshots, exactly as two consecutive pages would: the service
//! promises no consistency across a query's pages, and a client cannot tell the two apart.

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::Context;
use super::entities::{corrupt, links, select_list};
use crate::server::auth::Access;
use crate::server::error::{Result, ServerError};
use crate::server::json::{self, EntityWriter, write_str_parts};
use crate::server::limits::INLINE_QUERY_BUDGET;
use crate::server::reply::{self, Reply};
use crate::table::{ContinuationToken, Query};

/// Prefix of the continuation key form this server writes: version 1, then base64url of
/// the key, so any key survives a header and a query string.
const CONTINUATION_PREFIX: &str = "1!";

/// Initial room per entity a query page may return: a full page of typical entities
/// (~290 bytes each in the SDK workload at minimal metadata) fits without regrowing, where
/// 64 KiB regrew a 1,000-entity page twice, copying ~190 KB.
const QUERY_JSON_GUESS_BYTES_PER_ENTITY: usize = 320;

/// Most entities one query page holds (the service's page size).
const QUERY_PAGE_MAX_ENTITIES: usize = 1000;

/// The header form of one continuation key.
#[must_use]
pub fn encode_continuation_key(key: &str) -> String {
    format!("{CONTINUATION_PREFIX}{}", URL_SAFE_NO_PAD.encode(key))
}

/// Reads one continuation key back; text without this server's prefix is taken literally
/// (clients may build tokens by hand).
fn decode_continuation_key(text: &str) -> Result<String> {
    match text.strip_prefix(CONTINUATION_PREFIX) {
        None => Ok(text.to_owned()),
        Some(encoded) => URL_SAFE_NO_PAD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| ServerError::invalid(format!("continuation key {text:?} is malformed"))),
    }
}

/// The continuation of a query from its `NextPartitionKey` / `NextRowKey` parameters.
///
/// # Errors
/// `InvalidInput` for a malformed key.
pub fn continuation_from_query(
    next_pk: Option<&str>,
    next_rk: Option<&str>,
) -> Result<Option<ContinuationToken>> {
    match next_pk {
        None => Ok(None),
        Some(pk) => Ok(Some(ContinuationToken {
            next_partition_key: decode_continuation_key(pk)?,
            next_row_key: next_rk
                .map(decode_continuation_key)
                .transpose()?
                .unwrap_or_default(),
        })),
    }
}

/// A page whose scan stopped at the inline budget, short of its row limit: the body so far
/// and the row to resume from, to be finished by [`resume`] on a worker.
#[derive(Debug)]
pub struct PausedQuery {
    /// The page's JSON so far: the feed's head and the rows written.
    out: String,
    /// Rows the table layer handed over so far (written, or left out by a SAS key range),
    /// which count against the page's limit.
    visits: usize,
    /// The next row to examine: the client's continuation at first.
    resume_from: Option<ContinuationToken>,
    /// When the page started, for the rest of its time budget.
    started: Instant,
}

/// How a query page's scan ended.
#[derive(Debug)]
pub enum QueryStep {
    /// The page is complete.
    Done(Reply),
    /// The scan ran out of its inline budget; the page is finished by [`resume`].
    Paused(PausedQuery),
}

/// Query Entities: `GET /{account}/{table}()` with `$filter`, `$select`, `$top` and the
/// continuation parameters, run for the page's whole time budget. Under a SAS with a key
/// range only entities inside it are returned.
pub fn query(ctx: &Context<'_>, table: &str) -> Result<Reply> {
    let page = start(ctx, table)?;
    scan(ctx, table, page, None).map(|step| finish_short(ctx, step))
}

/// Query Entities for at most [`INLINE_QUERY_BUDGET`] (or the page's own time budget, if
/// shorter).
///
/// # Errors
/// As [`query`].
pub fn query_inline(ctx: &Context<'_>, table: &str) -> Result<QueryStep> {
    let page = start(ctx, table)?;
    scan(ctx, table, page, Some(INLINE_QUERY_BUDGET))
}

/// Finishes a page [`query_inline`] paused, with the rest of the page's time budget.
///
/// # Errors
/// As [`query`].
pub fn resume(ctx: &Context<'_>, table: &str, paused: PausedQuery) -> Result<Reply> {
    scan(ctx, table, paused, None).map(|step| finish_short(ctx, step))
}

/// The reply of a page whose scan has had its whole time budget: a page the budget cut
/// short ends there, with its token.
fn finish_short(ctx: &Context<'_>, step: QueryStep) -> Reply {
    match step {
        QueryStep::Done(reply) => reply,
        QueryStep::Paused(paused) => finish(ctx, paused.out, paused.resume_from.as_ref()),
    }
}

/// Authorizes the query, checks its parameters and opens its page's feed.
fn start(ctx: &Context<'_>, table: &str) -> Result<PausedQuery> {
    ctx.principal.authorize(Access::Read, Some(table), None)?;
    let limit = page_limit(top(ctx)?);
    let resume_from = continuation_from_query(
        ctx.target.param("NextPartitionKey"),
        ctx.target.param("NextRowKey"),
    )?;
    // From the body pool: a fresh page of ~300 KB came from the worker thread's malloc arena
    // and was freed by the I/O thread after the send, so the arena's top was trimmed and
    // faulted in again (10-35 page faults per page).
    let room = limit.saturating_mul(QUERY_JSON_GUESS_BYTES_PER_ENTITY);
    let mut out = String::from_utf8(reply::take_buffer(room)).unwrap_or_default();
    out.push('{');
    if ctx.metadata != json::Metadata::None {
        out.push_str("\"odata.metadata\":");
        // Under a `$select` the service names the projection (`#<table>&$select=a,b`).
        let names = select_list(ctx.target.param("$select"))?.map(|names| names.join(","));
        match &names {
            Some(names) => write_str_parts(
                &mut out,
                &[ctx.base, "/$metadata#", table, "&$select=", names],
            ),
            None => write_str_parts(&mut out, &[ctx.base, "/$metadata#", table]),
        }
        out.push(',');
    }
    out.push_str("\"value\":[");
    Ok(PausedQuery {
        out,
        visits: 0,
        resume_from,
        started: Instant::now(),
    })
}

/// The query's `$top`, if given.
fn top(ctx: &Context<'_>) -> Result<Option<u32>> {
    ctx.target
        .param("$top")
        .map(|text| {
            text.parse::<u32>().map_err(|_| {
                ServerError::invalid(format!("$top {text:?} is not a non-negative integer"))
            })
        })
        .transpose()
}

/// The most rows a page holds: `top`, at most [`QUERY_PAGE_MAX_ENTITIES`].
fn page_limit(top: Option<u32>) -> usize {
    top.map_or(QUERY_PAGE_MAX_ENTITIES, |top| {
        usize::try_from(top).map_or(QUERY_PAGE_MAX_ENTITIES, |top| {
            top.min(QUERY_PAGE_MAX_ENTITIES)
        })
    })
}

/// Scans on from `page`, writing each row handed over, for the rest of the page's time
/// budget or `cap`, whichever is shorter.
fn scan(
    ctx: &Context<'_>,
    table: &str,
    page: PausedQuery,
    cap: Option<Duration>,
) -> Result<QueryStep> {
    let PausedQuery {
        mut out,
        mut visits,
        resume_from,
        started,
    } = page;
    let top = top(ctx)?;
    let limit = page_limit(top);
    let query = Query {
        filter: ctx.target.filter().map(str::to_owned),
        select: select_list(ctx.target.param("$select"))?,
        // A resumed page asks for the rest of its rows; `$top` of 0 is the table layer's
        // error to report.
        top: if visits > 0 {
            u32::try_from(limit.saturating_sub(visits)).ok()
        } else {
            top
        },
        continuation: resume_from,
    };
    let names: Option<Vec<&str>> = query
        .select
        .as_ref()
        .map(|names| names.iter().map(String::as_str).collect());
    let range = ctx.principal.range();
    let links = links(ctx, table);
    let mut writer = EntityWriter::new(ctx.metadata, &links, true, names.as_deref());
    let table_handle = ctx.state.table(table)?;
    let left = table_handle
        .page_time_budget()
        .saturating_sub(started.elapsed());
    let budget = cap.map_or(left, |cap| left.min(cap));
    let continuation = table_handle.query_rows_within(&query, budget, |row| {
        visits += 1;
        if range.is_some_and(|range| !range.contains(row.partition_key, row.row_key)) {
            return Ok(());
        }
        // Rows end with `}`; the feed's head with `[`.
        if !out.ends_with('[') {
            out.push(',');
        }
        writer
            .write_row(&mut out, row)
            .map_err(|source| corrupt(table, row, source))
    })?;
    Ok(match continuation {
        // Short of the limit with a token: the scan ran out of `budget`.
        Some(token) if visits < limit => QueryStep::Paused(PausedQuery {
            out,
            visits,
            resume_from: Some(token),
            started,
        }),
        continuation => QueryStep::Done(finish(ctx, out, continuation.as_ref())),
    })
}

/// Closes the feed and answers with it and the continuation headers.
fn finish(ctx: &Context<'_>, mut out: String, continuation: Option<&ContinuationToken>) -> Reply {
    out.push_str("]}");
    let mut reply = Reply::status(200);
    if let Some(token) = continuation {
        reply = reply
            .header(
                "x-ms-continuation-NextPartitionKey",
                encode_continuation_key(&token.next_partition_key),
            )
            .header(
                "x-ms-continuation-NextRowKey",
                encode_continuation_key(&token.next_row_key),
            );
    }
    reply.body(ctx.metadata.content_type(), out)
}
