//! Entity group transactions over REST: `POST /{account}/$batch`.
//!
//! The body is parsed by [`parse`], every operation is turned into a table-layer batch
//! operation, and the batch is submitted atomically. The response is `202 Accepted` with a
//! `multipart/mixed` body: one part per operation on success, or a single part carrying the
//! failing operation's status and error, whose message starts with `"<index>:"`.

pub mod parse;
mod response;

use compact_str::CompactString;

use self::response::{Part, SuccessParts, close_response, error_part, open_response, respond};
use super::auth::Access;
use super::error::{Result, ServerError};
use super::handlers::{Context, parse_if_match};
use super::json::{Links, Members, encode_entity_reusing, parse_entity_reusing, write_entity};
use super::reply::Reply;
use super::route::{self, Resource};
use crate::model::{PartitionKey, RowKey, TableName};
use crate::table::{IfMatch, OpKind, TableError};

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

impl Op {
    /// The table layer's name for this operation.
    const fn op_kind(&self) -> OpKind {
        match *self {
            Self::Insert => OpKind::Insert,
            Self::Replace(c) => OpKind::Replace(c),
            Self::Merge(c) => OpKind::Merge(c),
            Self::InsertOrReplace => OpKind::InsertOrReplace,
            Self::InsertOrMerge => OpKind::InsertOrMerge,
            Self::Delete(c) => OpKind::Delete(c),
        }
    }
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
            return Ok(respond(ctx, true, &[error_part(ctx, &error, None)]));
        }
        Err(error) => return Err(error),
    };
    let changeset =
        !(operations.len() == 1 && operations.first().is_some_and(|op| op.method == "GET"));
    let outcome = if changeset {
        run_changeset(ctx, &operations)
    } else {
        run_get(ctx, &operations).map(|part| respond(ctx, changeset, &[part]))
    };
    match outcome {
        Ok(reply) => Ok(reply),
        Err(
            error @ (ServerError::AuthorizationPermissionMismatch { .. }
            | ServerError::AuthorizationResourceTypeMismatch { .. }
            | ServerError::AuthenticationFailed { .. }),
        ) => Err(error),
        Err(error) => {
            let content_id = error
                .batch_index()
                .and_then(|index| operations.get(index))
                .and_then(BatchOperation::echoed_content_id);
            Ok(respond(
                ctx,
                changeset,
                &[error_part(ctx, &error, content_id)],
            ))
        }
    }
}

/// The table an operation names and the keys its URL names, if any.
type OperationTarget = (CompactString, Option<(CompactString, CompactString)>);

/// The table and keys an operation names.
fn target_of(op: &BatchOperation<'_>, account: &str) -> Result<OperationTarget> {
    match route::parse_batch_operation(op.path, op.query, account)? {
        Resource::Entities(table) => Ok((table, None)),
        Resource::Entity {
            table,
            partition_key,
            row_key,
        } => Ok((table, Some((partition_key, row_key)))),
        // A bad name is reported as the name rule (`.../a//(...)`), as outside a batch.
        Resource::BelowTable { table, .. } => {
            TableName::new(&table)?;
            Err(ServerError::invalid(format!(
                "{} {} is not an entity operation",
                op.method, op.path
            )))
        }
        _ => Err(ServerError::invalid(format!(
            "{} {} is not an entity operation",
            op.method, op.path
        ))),
    }
}

fn run_changeset(ctx: &Context<'_>, operations: &[BatchOperation<'_>]) -> Result<Reply> {
    let mut table_name: Option<CompactString> = None;
    let mut batch = None;
    let mut prepared = Vec::with_capacity(operations.len());
    // The URL of the previous operation and its target: the inserts of a batch all post to
    // one URL, which is then routed once.
    let mut last_target: Option<(&str, Option<&str>, OperationTarget)> = None;
    // One member buffer and one property buffer for every body of the batch.
    let mut members = Members::default();
    let mut row = Vec::new();
    for (index, op) in operations.iter().enumerate() {
        let mut step = || -> Result<()> {
            if !last_target
                .as_ref()
                .is_some_and(|(path, query, _)| *path == op.path && *query == op.query)
            {
                last_target = Some((op.path, op.query, target_of(op, &ctx.target.account)?));
            }
            let Some((_, _, (table, url_keys))) = &last_target else {
                return Err(ServerError::invalid("the batch operation names no table"));
            };
            match &table_name {
                Some(first) if !first.eq_ignore_ascii_case(table) => {
                    return Err(ServerError::invalid(format!(
                        "all operations of a batch must target one table; {table:?} is not {first:?}"
                    )));
                }
                Some(_) => {}
                None => table_name = Some(table.clone()),
            }
            let keys = url_keys.as_ref().map(|(pk, rk)| (pk.as_str(), rk.as_str()));
            let if_match = parse_if_match(op.if_match())?;
            let (kind, access) = match (op.method.as_ref(), if_match) {
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
            // Bodies that are not merged into a stored entity are encoded straight into
            // their stored form; merges need the entity.
            let (entity, size) = match (&kind, keys) {
                (Op::Delete(_), Some((pk, rk))) => (
                    crate::model::Entity::new(PartitionKey::new(pk)?, RowKey::new(rk)?),
                    None,
                ),
                (Op::Merge(_) | Op::InsertOrMerge, _) => {
                    (parse_entity_reusing(op.body, keys, &mut members)?, None)
                }
                _ => {
                    row.clear();
                    let encoded = encode_entity_reusing(op.body, keys, &mut members, &mut row)?;
                    (encoded.keys, Some(encoded.size))
                }
            };
            let (pk, rk) = (entity.partition_key().as_str(), entity.row_key().as_str());
            ctx.principal
                .authorize(access, Some(table), Some((pk, rk)))?;
            let batch = match &mut batch {
                Some(batch) => batch,
                None => batch.insert(ctx.state.account.table(table)?.batch(pk)?),
            };
            if entity.partition_key() != batch.partition_key() {
                return Err(TableError::CommandsInBatchActOnDifferentPartitions {
                    index,
                    expected: batch.partition_key().as_str().to_owned(),
                    found: pk.to_owned(),
                }
                .into());
            }
            prepared.push((op, matches!(kind, Op::Insert)));
            if let Some(size) = size {
                batch.push_encoded(kind.op_kind(), entity, &row, size);
                return Ok(());
            }
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
    // The batch hands its entities back: an insert answers with its entity.
    let written = batch.submit_returning()?;
    let mut out = open_response(ctx, true, prepared.len());
    let links = Links {
        base: ctx.base,
        account: &ctx.target.account,
        table: &table,
    };
    let mut parts = SuccessParts::new(ctx, &links);
    for ((op, insert), written) in prepared.into_iter().zip(written.iter()) {
        parts
            .write(&mut out, written, op, insert)
            .map_err(|source| ServerError::CorruptRow {
                table: table.to_string(),
                partition_key: written.entity.partition_key().as_str().to_owned(),
                row_key: written.entity.row_key().as_str().to_owned(),
                source: Box::new(source),
            })?;
    }
    Ok(close_response(ctx, true, out))
}

/// A batch holding a single GET: a point read, answered as one part.
fn run_get(ctx: &Context<'_>, operations: &[BatchOperation<'_>]) -> Result<Part> {
    let Some(op) = operations.first() else {
        return Err(ServerError::invalid("the batch holds no operation"));
    };
    let (table, keys) = target_of(op, &ctx.target.account).map_err(|error| at_index(0, error))?;
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
    Ok(Part {
        status: 200,
        headers: vec![
            ("Content-Type", ctx.metadata.content_type().to_owned()),
            ("ETag", stored.etag.to_string()),
        ],
        content_id: op.echoed_content_id().map(str::to_owned),
        body,
    })
}
