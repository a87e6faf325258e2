//! Insert, update, merge, delete and get entities (queries are in `query`).

use super::{Context, preference_applied};
use crate::codec::CodecError;
use crate::model::DateTime;
use crate::server::auth::Access;
use crate::server::error::{Result, ServerError};
use crate::server::json::{
    ETAG_TEXT_LEN, EntityWriter, Links, key_predicate, parse_entity, write_entity, write_etag_text,
};
use crate::server::limits::SELECT_MAX_NAMES;
use crate::server::reply::Reply;
use crate::table::{ETag, GroupWrite, OpKind, RowRef, StoredEntity};

/// Initial room for one entity's JSON: most fit, so bodies are not regrown as they are written.
const ENTITY_JSON_GUESS_BYTES: usize = 512;

/// The names OData links of `table` are built from.
pub(super) fn links<'a>(ctx: &Context<'a>, table: &'a str) -> Links<'a> {
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
    let etag = ctx.state.table(table)?.insert(&entity)?;
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
        table: ctx.state.table(table)?,
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
    ctx.state.table(table)?.delete(key.0, key.1, if_match)?;
    Ok(Reply::status(204))
}

/// The distinct property names of a `$select`, system ones included, in the order first
/// named: the service returns only what it names (and the ETag). `None` (every property)
/// without one, or for `*` or no name at all.
///
/// # Errors
/// [`ServerError::InvalidInput`] for more than [`SELECT_MAX_NAMES`] distinct names.
pub(super) fn select_list(select: Option<&str>) -> Result<Option<Vec<String>>> {
    let Some(select) = select else {
        return Ok(None);
    };
    let mut names: Vec<String> = Vec::new();
    for name in select.split(',').map(str::trim) {
        if name == "*" {
            return Ok(None);
        }
        if name.is_empty() || names.iter().any(|seen| seen == name) {
            continue;
        }
        if names.len() == SELECT_MAX_NAMES {
            return Err(ServerError::invalid(format!(
                "$select names more than {SELECT_MAX_NAMES} properties"
            )));
        }
        names.push(name.to_owned());
    }
    Ok((!names.is_empty()).then_some(names))
}

/// Point query: `GET /{account}/{table}(PartitionKey='..',RowKey='..')`, written straight
/// from the stored row.
pub fn get(ctx: &Context<'_>, table: &str, key: (&str, &str)) -> Result<Reply> {
    ctx.principal
        .authorize(Access::Read, Some(table), Some(key))?;
    let select = select_list(ctx.target.param("$select"))?;
    let names: Option<Vec<&str>> = select
        .as_ref()
        .map(|names| names.iter().map(String::as_str).collect());
    let links = links(ctx, table);
    let mut out = String::with_capacity(ENTITY_JSON_GUESS_BYTES);
    // The writer keeps the row's Timestamp text, which the ETag header reuses.
    let mut writer = EntityWriter::new(ctx.metadata, &links, false, names.as_deref());
    ctx.state.table(table)?.get_row(key.0, key.1, |row| {
        writer
            .write_row(&mut out, row)
            .map_err(|source| corrupt(table, row, source))
    })??;
    Ok(Reply::status(200)
        .header("etag", writer.etag_text())
        .body(ctx.metadata.content_type(), out))
}

/// The `ETag` header value of an entity written at `timestamp`, in a `String` of exactly its
/// length (see [`ETAG_TEXT_LEN`]).
fn etag_text(timestamp: DateTime) -> String {
    let mut text = String::with_capacity(ETAG_TEXT_LEN);
    write_etag_text(&mut text, timestamp);
    text
}

/// The error of a stored row whose bytes cannot be written out.
pub(super) fn corrupt(table: &str, row: &RowRef<'_>, source: CodecError) -> ServerError {
    ServerError::CorruptRow {
        table: table.to_owned(),
        partition_key: row.partition_key.to_owned(),
        row_key: row.row_key.to_owned(),
        source: Box::new(source),
    }
}
