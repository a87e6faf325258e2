//! Entity group transactions over REST: `POST /{account}/$batch`.
//!
//! The body is parsed by [`parse`], every operation is turned into a table-layer batch
//! operation, and the batch is submitted atomically. The response is `202 Accepted` with a
//! `multipart/mixed` body: one part per operation on success, or a single part carrying the
//! failing operation's status and error, whose message starts with `"<index>:"`.

pub mod parse;

use std::fmt::Write as _;

use super::auth::Access;
use super::error::{Result, ServerError};
use super::handlers::{Context, parse_if_match, prefer_content};
use super::json::{Links, key_predicate, parse_entity, write_entity};
use super::reply::{Reply, error_body};
use super::route::{self, Resource};
use crate::model::{PartitionKey, RowKey};
use crate::table::{ETag, IfMatch, StoredEntity, TableError};

pub use parse::BatchOperation;

/// What one operation of a batch does, with its entity already parsed.
#[derive(Debug)]
enum Op {
    Insert,
    Replace(IfMatch),
    Merge(IfMatch),
    InsertOrReplace,
    InsertOrMerge,
    Delete(IfMatch),
}

/// An error about operation `index`: table errors carry the index so the message starts with it.
fn at_index(index: usize, error: ServerError) -> ServerError {
    match error {
        ServerError::Table(table) if table.batch_index().is_some() => ServerError::Table(table),
        ServerError::Table(table) => ServerError::Table(TableError::BatchOperationFailed {
            index,
            source: Box::new(table),
        }),
        ServerError::InvalidInput { reason } => {
            ServerError::Table(TableError::BatchOperationFailed {
                index,
                source: Box::new(TableError::InvalidInput { reason }),
            })
        }
        other => other,
    }
}

/// Runs a `$batch` request.
///
/// # Errors
/// Errors of the request as a whole (malformed multipart, authorization); errors of an
/// operation are answered inside the 202 response, as the service does.
pub fn execute(ctx: &Context<'_>, body: &[u8]) -> Result<Reply> {
    let content_type = ctx.header("content-type").unwrap_or("");
    let operations = match parse::parse(content_type, body) {
        Ok(operations) => operations,
        // An operation past the limit fails the changeset, answered like any failing operation.
        Err(error) if error.batch_index().is_some() => {
            return Ok(respond(ctx, true, &[error_part(ctx, &error)]));
        }
        Err(error) => return Err(error),
    };
    let changeset =
        !(operations.len() == 1 && operations.first().is_some_and(|op| op.method == "GET"));
    let outcome = if changeset {
        run_changeset(ctx, &operations)
    } else {
        run_get(ctx, &operations)
    };
    match outcome {
        Ok(parts) => Ok(respond(ctx, changeset, &parts)),
        Err(
            error @ (ServerError::AuthorizationPermissionMismatch { .. }
            | ServerError::AuthenticationFailed { .. }),
        ) => Err(error),
        Err(error) => Ok(respond(ctx, changeset, &[error_part(ctx, &error)])),
    }
}

/// The single response part of a failed batch.
fn error_part(ctx: &Context<'_>, error: &ServerError) -> Part {
    Part {
        status: error.status(),
        headers: vec![(
            "Content-Type",
            super::json::Metadata::Minimal.content_type().to_owned(),
        )],
        content_id: None,
        body: error_body(error, ctx.request_id),
    }
}

/// One response part.
#[derive(Debug)]
struct Part {
    status: u16,
    headers: Vec<(&'static str, String)>,
    content_id: Option<String>,
    body: String,
}

/// The table, keys and entity an operation names.
fn target_of(op: &BatchOperation) -> Result<(String, Option<(String, String)>)> {
    let target = route::parse(&op.path, op.query.as_deref())?;
    match target.resource {
        Resource::Entities(table) => Ok((table, None)),
        Resource::Entity {
            table,
            partition_key,
            row_key,
        } => Ok((table, Some((partition_key, row_key)))),
        _ => Err(ServerError::invalid(format!(
            "{} {} is not an entity operation",
            op.method, op.path
        ))),
    }
}

fn run_changeset(ctx: &Context<'_>, operations: &[BatchOperation]) -> Result<Vec<Part>> {
    let mut table_name: Option<String> = None;
    let mut batch = None;
    let mut prepared = Vec::with_capacity(operations.len());
    for (index, op) in operations.iter().enumerate() {
        let mut step = || -> Result<()> {
            let (table, url_keys) = target_of(op)?;
            match &table_name {
                Some(first) if !first.eq_ignore_ascii_case(&table) => {
                    return Err(ServerError::invalid(format!(
                        "all operations of a batch must target one table; {table:?} is not {first:?}"
                    )));
                }
                Some(_) => {}
                None => table_name = Some(table.clone()),
            }
            let keys = url_keys.as_ref().map(|(pk, rk)| (pk.as_str(), rk.as_str()));
            let if_match = parse_if_match(op.header("if-match"))?;
            let (kind, access) = match (op.method.as_str(), if_match) {
                ("POST", _) if keys.is_none() => (Op::Insert, Access::Add),
                ("PUT", Some(c)) => (Op::Replace(c), Access::Update),
                ("PUT", None) => (Op::InsertOrReplace, Access::Upsert),
                ("MERGE" | "PATCH", Some(c)) => (Op::Merge(c), Access::Update),
                ("MERGE" | "PATCH", None) => (Op::InsertOrMerge, Access::Upsert),
                ("DELETE", Some(c)) => (Op::Delete(c), Access::Delete),
                ("DELETE", None) => {
                    return Err(ServerError::MissingRequiredHeader { header: "If-Match" });
                }
                (method, _) => {
                    return Err(ServerError::invalid(format!(
                        "{method} is not allowed in a changeset"
                    )));
                }
            };
            let entity = match (&kind, keys) {
                (Op::Delete(_), Some((pk, rk))) => {
                    crate::model::Entity::new(PartitionKey::new(pk)?, RowKey::new(rk)?)
                }
                _ => parse_entity(&op.body, keys)?,
            };
            let (pk, rk) = (entity.partition_key().as_str(), entity.row_key().as_str());
            ctx.principal
                .authorize(access, Some(&table), Some((pk, rk)))?;
            let batch = match &mut batch {
                Some(batch) => batch,
                None => batch.insert(ctx.state.account.table(&table)?.batch(pk)?),
            };
            if entity.partition_key() != batch.partition_key() {
                return Err(TableError::CommandsInBatchActOnDifferentPartitions {
                    index,
                    expected: batch.partition_key().as_str().to_owned(),
                    found: pk.to_owned(),
                }
                .into());
            }
            prepared.push((entity.clone(), op, matches!(kind, Op::Insert)));
            match kind {
                Op::Insert => batch.insert(entity),
                Op::Replace(c) => batch.replace(entity, c),
                Op::Merge(c) => batch.merge(entity, c),
                Op::InsertOrReplace => batch.insert_or_replace(entity),
                Op::InsertOrMerge => batch.insert_or_merge(entity),
                Op::Delete(c) => batch.delete(entity.row_key().clone(), c),
            };
            Ok(())
        };
        step().map_err(|error| at_index(index, error))?;
    }
    let Some(batch) = batch else {
        return Err(ServerError::invalid("the batch holds no operation"));
    };
    let table = table_name.unwrap_or_default();
    let etags = batch.submit()?;
    Ok(prepared
        .into_iter()
        .zip(etags)
        .map(|((entity, op, insert), etag)| success_part(ctx, &table, entity, op, insert, etag))
        .collect())
}

/// The response part of a successful operation.
fn success_part(
    ctx: &Context<'_>,
    table: &str,
    mut entity: crate::model::Entity,
    op: &BatchOperation,
    insert: bool,
    etag: Option<ETag>,
) -> Part {
    let mut headers = Vec::new();
    let mut status = 204;
    let mut body = String::new();
    if let Some(etag) = etag {
        headers.push(("ETag", etag.to_string()));
        let address = format!(
            "{}/{table}({})",
            ctx.base,
            key_predicate(entity.partition_key().as_str(), entity.row_key().as_str())
        );
        let prefer = prefer_content(op.header("prefer"));
        if insert {
            if prefer == Some(false) {
                headers.push(("Preference-Applied", "return-no-content".to_owned()));
                headers.push(("DataServiceId", address.clone()));
            } else {
                if prefer == Some(true) {
                    headers.push(("Preference-Applied", "return-content".to_owned()));
                }
                status = 201;
                entity.set_timestamp(etag.timestamp());
                let links = Links {
                    base: ctx.base,
                    account: &ctx.target.account,
                    table,
                };
                write_entity(
                    &mut body,
                    &StoredEntity { entity, etag },
                    ctx.metadata,
                    &links,
                    false,
                );
                headers.push(("Content-Type", ctx.metadata.content_type().to_owned()));
            }
            headers.push(("Location", address));
        } else {
            headers.push(("DataServiceId", address));
        }
    }
    Part {
        status,
        headers,
        content_id: op.content_id.clone(),
        body,
    }
}

/// A batch holding a single GET: a point read, answered as one part.
fn run_get(ctx: &Context<'_>, operations: &[BatchOperation]) -> Result<Vec<Part>> {
    let Some(op) = operations.first() else {
        return Err(ServerError::invalid("the batch holds no operation"));
    };
    let (table, keys) = target_of(op).map_err(|error| at_index(0, error))?;
    let (pk, rk) = keys.ok_or_else(|| {
        at_index(
            0,
            ServerError::invalid("a GET in a batch must name one entity"),
        )
    })?;
    ctx.principal
        .authorize(Access::Read, Some(&table), Some((&pk, &rk)))?;
    let stored = ctx
        .state
        .account
        .table(&table)?
        .get(&pk, &rk, None)
        .map_err(|error| at_index(0, error.into()))?;
    let mut body = String::new();
    let links = Links {
        base: ctx.base,
        account: &ctx.target.account,
        table: &table,
    };
    write_entity(&mut body, &stored, ctx.metadata, &links, false);
    Ok(vec![Part {
        status: 200,
        headers: vec![
            ("Content-Type", ctx.metadata.content_type().to_owned()),
            ("ETag", stored.etag.to_string()),
        ],
        content_id: op.content_id.clone(),
        body,
    }])
}

/// Reason phrases of the statuses a part can carry.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        412 => "Precondition Failed",
        413 => "Request Entity Too Large",
        _ => "Error",
    }
}

/// The 202 multipart response holding `parts` (inside a changeset response unless the batch
/// was a lone GET).
fn respond(ctx: &Context<'_>, changeset: bool, parts: &[Part]) -> Reply {
    let batch_boundary = format!("batchresponse_{}", ctx.request_id);
    let changeset_boundary = format!("changesetresponse_{}", ctx.request_id);
    let inner = if changeset {
        &changeset_boundary
    } else {
        &batch_boundary
    };
    let mut out = String::new();
    if changeset {
        let _ = write!(
            out,
            "--{batch_boundary}\r\nContent-Type: multipart/mixed; boundary={changeset_boundary}\r\n\r\n"
        );
    }
    for part in parts {
        let _ = write!(
            out,
            "--{inner}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
        );
        if let Some(id) = &part.content_id {
            let _ = write!(out, "Content-ID: {id}\r\n");
        }
        let _ = write!(
            out,
            "\r\nHTTP/1.1 {} {}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n",
            part.status,
            reason(part.status)
        );
        for (name, value) in &part.headers {
            let _ = write!(out, "{name}: {value}\r\n");
        }
        let _ = write!(out, "\r\n{}\r\n", part.body);
    }
    if changeset {
        let _ = write!(out, "--{changeset_boundary}--\r\n");
    }
    let _ = write!(out, "--{batch_boundary}--\r\n");
    Reply::status(202).body(&format!("multipart/mixed; boundary={batch_boundary}"), out)
}
