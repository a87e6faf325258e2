//! Insert, update, merge, delete, get and query entities.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::{Context, preference_applied};
use crate::codec::CodecError;
use crate::model::DateTime;
use crate::server::auth::Access;
use crate::server::error::{Result, ServerError};
use crate::server::json::{
    self, EntityWriter, Links, key_predicate, parse_entity, write_entity, write_etag_text,
    write_row, write_str_parts,
};
use crate::server::reply::Reply;
use crate::table::{ContinuationToken, ETag, GroupWrite, OpKind, Query, RowRef, StoredEntity};

/// Prefix of the continuation key form this server writes: version 1, then base64url of
/// the key, so any key survives a header and a query string.
const CONTINUATION_PREFIX: &str = "1!";

/// Initial room for one entity's JSON: most fit, so bodies are not regrown as they are written.
const ENTITY_JSON_GUESS_BYTES: usize = 512;

/// Length of an ETag header value (`W/"datetime'` + timestamp with `%3A` + `'"`).
const ETAG_TEXT_LEN: usize = 48;

/// Initial room per entity a query page may return: a full page of typical entities
/// (~230 bytes each in the SDK workload) fits without regrowing, where 64 KiB regrew a
/// 1,000-entity page twice, copying ~190 KB.
const QUERY_JSON_GUESS_BYTES_PER_ENTITY: usize = 256;

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

fn links<'a>(ctx: &Context<'a>, table: &'a str) -> Links<'a> {
    Links {
        base: ctx.base,
        account: &ctx.target.account,
        table,
    }
}

/// The reply to a write that produced `stored`: for an insert (`created`) 201 with the
/// entity unless the client prefers no content, else 204.
fn write_reply(ctx: &Context<'_>, table: &str, stored: &StoredEntity, created: bool) -> Reply {
    let prefer = ctx.prefer_content();
    let address = format!(
        "{}/{table}({})",
        ctx.base,
        key_predicate(
            stored.entity.partition_key().as_str(),
            stored.entity.row_key().as_str()
        )
    );
    let reply = if created && prefer != Some(false) {
        let mut out = String::with_capacity(ENTITY_JSON_GUESS_BYTES);
        write_entity(&mut out, stored, ctx.metadata, &links(ctx, table), false);
        Reply::status(201).body(ctx.metadata.content_type(), out)
    } else {
        Reply::status(204).header("dataserviceid", address.clone())
    };
    let reply = reply.header("etag", etag_text(stored.timestamp()));
    let reply = if created {
        reply.header("location", address)
    } else {
        reply
    };
    if created {
        preference_applied(reply, prefer)
    } else {
        reply
    }
}

/// Insert Entity: `POST /{account}/{table}`.
pub fn insert(ctx: &Context<'_>, table: &str, body: &[u8]) -> Result<Reply> {
    let mut entity = parse_entity(body, None)?;
    ctx.principal.authorize(
        Access::Add,
        Some(table),
        Some((entity.partition_key().as_str(), entity.row_key().as_str())),
    )?;
    let etag = ctx.state.account.table(table)?.insert(&entity)?;
    entity.set_timestamp(etag.timestamp());
    Ok(write_reply(
        ctx,
        table,
        &StoredEntity { entity, etag },
        true,
    ))
}

/// Update (PUT) or Merge (MERGE/PATCH) Entity; without `If-Match` an upsert.
pub fn update(
    ctx: &Context<'_>,
    table: &str,
    key: (&str, &str),
    body: &[u8],
    merge: bool,
) -> Result<Reply> {
    let write = prepare_update(ctx, table, key, body, merge)?;
    let etag = write.table.write_one(write.kind, &write.entity)?;
    Ok(updated(etag))
}

/// Update or Merge Entity up to its commit: the condition, the authorisation and the parsed
/// entity, ready to be committed alone or in a group.
pub fn prepare_update(
    ctx: &Context<'_>,
    table: &str,
    key: (&str, &str),
    body: &[u8],
    merge: bool,
) -> Result<GroupWrite> {
    let if_match = ctx.if_match()?;
    let access = if if_match.is_some() {
        Access::Update
    } else {
        Access::Upsert
    };
    ctx.principal.authorize(access, Some(table), Some(key))?;
    let entity = parse_entity(body, Some(key))?;
    let kind = match (merge, if_match) {
        (false, Some(condition)) => OpKind::Replace(condition),
        (false, None) => OpKind::InsertOrReplace,
        (true, Some(condition)) => OpKind::Merge(condition),
        (true, None) => OpKind::InsertOrMerge,
    };
    Ok(GroupWrite {
        table: ctx.state.account.table(table)?,
        kind,
        entity,
    })
}

/// The reply to a committed Update or Merge Entity.
pub fn updated(etag: ETag) -> Reply {
    Reply::status(204).header("etag", etag_text(etag.timestamp()))
}

/// Delete Entity: `DELETE /{account}/{table}(PartitionKey='..',RowKey='..')`; `If-Match` is
/// required (`*` allowed).
pub fn delete(ctx: &Context<'_>, table: &str, key: (&str, &str)) -> Result<Reply> {
    let if_match = ctx
        .if_match()?
        .ok_or(ServerError::MissingRequiredHeader { header: "If-Match" })?;
    ctx.principal
        .authorize(Access::Delete, Some(table), Some(key))?;
    ctx.state
        .account
        .table(table)?
        .delete(key.0, key.1, if_match)?;
    Ok(Reply::status(204))
}

/// The custom property names of a `$select` (system properties always come back).
fn select_list(select: Option<&str>) -> Option<Vec<String>> {
    select.map(|text| {
        text.split(',')
            .map(str::trim)
            .filter(|name| {
                !name.is_empty() && !matches!(*name, "PartitionKey" | "RowKey" | "Timestamp")
            })
            .map(str::to_owned)
            .collect()
    })
}

/// Point query: `GET /{account}/{table}(PartitionKey='..',RowKey='..')`, written straight
/// from the stored row.
pub fn get(ctx: &Context<'_>, table: &str, key: (&str, &str)) -> Result<Reply> {
    ctx.principal
        .authorize(Access::Read, Some(table), Some(key))?;
    let select = select_list(ctx.target.param("$select"));
    let names: Option<Vec<&str>> = select
        .as_ref()
        .map(|names| names.iter().map(String::as_str).collect());
    let links = links(ctx, table);
    let mut out = String::with_capacity(ENTITY_JSON_GUESS_BYTES);
    let timestamp = ctx
        .state
        .account
        .table(table)?
        .get_row(key.0, key.1, |row| {
            write_row(&mut out, row, ctx.metadata, &links, false, names.as_deref())
                .map(|()| row.timestamp)
                .map_err(|source| corrupt(table, row, source))
        })??;
    Ok(Reply::status(200)
        .header("etag", etag_text(timestamp))
        .body(ctx.metadata.content_type(), out))
}

/// The `ETag` header value of an entity written at `timestamp`.
fn etag_text(timestamp: DateTime) -> String {
    let mut text = String::with_capacity(ETAG_TEXT_LEN);
    write_etag_text(&mut text, timestamp);
    text
}

/// The error of a stored row whose bytes cannot be written out.
fn corrupt(table: &str, row: &RowRef<'_>, source: CodecError) -> ServerError {
    ServerError::CorruptRow {
        table: table.to_owned(),
        partition_key: row.partition_key.to_owned(),
        row_key: row.row_key.to_owned(),
        source: Box::new(source),
    }
}

/// Query Entities: `GET /{account}/{table}()` with `$filter`, `$select`, `$top` and the
/// continuation parameters. Under a SAS with a key range only entities inside it are returned.
pub fn query(ctx: &Context<'_>, table: &str) -> Result<Reply> {
    ctx.principal.authorize(Access::Read, Some(table), None)?;
    let top = ctx
        .target
        .param("$top")
        .map(|text| {
            text.parse::<u32>().map_err(|_| {
                ServerError::invalid(format!("$top {text:?} is not a non-negative integer"))
            })
        })
        .transpose()?;
    let query = Query {
        filter: ctx.target.param("$filter").map(str::to_owned),
        select: select_list(ctx.target.param("$select")),
        top,
        continuation: continuation_from_query(
            ctx.target.param("NextPartitionKey"),
            ctx.target.param("NextRowKey"),
        )?,
    };
    let names: Option<Vec<&str>> = query
        .select
        .as_ref()
        .map(|names| names.iter().map(String::as_str).collect());
    let range = ctx.principal.range();
    let links = links(ctx, table);
    // One buffer for the whole page, each entity written from its stored bytes as the scan
    // passes it.
    let page = top.map_or(QUERY_PAGE_MAX_ENTITIES, |top| {
        usize::try_from(top).map_or(QUERY_PAGE_MAX_ENTITIES, |top| {
            top.min(QUERY_PAGE_MAX_ENTITIES)
        })
    });
    let mut out = String::with_capacity(page * QUERY_JSON_GUESS_BYTES_PER_ENTITY);
    out.push('{');
    if ctx.metadata != json::Metadata::None {
        out.push_str("\"odata.metadata\":");
        write_str_parts(&mut out, &[ctx.base, "/$metadata#", table]);
        out.push(',');
    }
    out.push_str("\"value\":[");
    let mut first = true;
    let mut writer = EntityWriter::new(ctx.metadata, &links, true, names.as_deref());
    let continuation = ctx.state.account.table(table)?.query_rows(&query, |row| {
        if range.is_some_and(|range| !range.contains(row.partition_key, row.row_key)) {
            return Ok(());
        }
        if !first {
            out.push(',');
        }
        first = false;
        writer
            .write_row(&mut out, row)
            .map_err(|source| corrupt(table, row, source))
    })?;
    out.push_str("]}");
    let mut reply = Reply::status(200);
    if let Some(token) = &continuation {
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
    Ok(reply.body(ctx.metadata.content_type(), out))
}
