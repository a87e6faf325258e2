//! Entity group transactions over REST: `POST /{account}/$batch`.
//!
//! The body is parsed by [`parse`], every operation is turned into a table-layer batch
//! operation, and the batch is submitted atomically. The response is `202 Accepted` with a
//! `multipart/mixed` body: one part per operation on success, or a single part carrying the
//! failing operation's status and error, whose message starts with `"<index>:"`.

pub mod parse;

use std::fmt::Write as _;

use compact_str::CompactString;

use super::auth::Access;
use super::error::{Result, ServerError};
use super::handlers::{Context, parse_if_match, prefer_content};
use super::json::{
    EntityWriter, Links, Members, encode_entity_reusing, parse_entity_reusing, write_entity,
    write_etag_text, write_key_predicate,
};
use super::reply::{self, Reply, error_body};
use super::route::{self, Resource};
use crate::codec::CodecError;
use crate::codec::property::PropertyReader;
use crate::model::{DateTime, PartitionKey, RowKey};
use crate::table::{IfMatch, OpKind, RowRef, StoredEntity, TableError, Written};

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
            return Ok(respond(ctx, true, &[error_part(ctx, &error)]));
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

/// One response part of an error or a lone GET (the parts of a successful changeset are
/// written straight into the response).
#[derive(Debug)]
struct Part {
    status: u16,
    headers: Vec<(&'static str, String)>,
    content_id: Option<String>,
    body: String,
}

/// The table an operation names and the keys its URL names, if any.
type OperationTarget = (CompactString, Option<(CompactString, CompactString)>);

/// The table and keys an operation names.
fn target_of(op: &BatchOperation<'_>) -> Result<OperationTarget> {
    let target = route::parse(op.path, op.query)?;
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
                last_target = Some((op.path, op.query, target_of(op)?));
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
            let if_match = parse_if_match(op.header("if-match"))?;
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
    let mut parts = SuccessParts {
        ctx,
        delimiter: format!("--changesetresponse_{}{PART_MIME_HEADERS}", ctx.request_id),
        address: format!("{}/{table}(", ctx.base),
        // Every operation of a batch is written at one Timestamp: one writer formats its
        // texts (the entities' Timestamp and `odata.etag`, the ETag header) once.
        writer: EntityWriter::new(ctx.metadata, &links, false, None),
        etag_texts: EtagTexts::default(),
    };
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

/// The header text of the last ETag written, reused while the Timestamp stays the same.
#[derive(Debug, Default)]
struct EtagTexts {
    last: Option<(DateTime, String)>,
}

impl EtagTexts {
    /// The header text of the ETag of `timestamp`.
    fn text(&mut self, timestamp: DateTime) -> &str {
        if self
            .last
            .as_ref()
            .is_none_or(|(last, _)| *last != timestamp)
        {
            let mut text = String::with_capacity(ETAG_TEXT_GUESS_BYTES);
            write_etag_text(&mut text, timestamp);
            self.last = Some((timestamp, text));
        }
        self.last.as_ref().map_or("", |(_, text)| text)
    }
}

/// Room for one ETag header value.
const ETAG_TEXT_GUESS_BYTES: usize = 48;

/// Writes the response parts of a successful changeset, with what they share prepared once.
struct SuccessParts<'a> {
    ctx: &'a Context<'a>,
    /// `--changesetresponse_<id>` and the MIME headers: how every part starts.
    delimiter: String,
    /// `<base>/<table>(`: how every address starts.
    address: String,
    writer: EntityWriter<'a>,
    etag_texts: EtagTexts,
}

impl SuccessParts<'_> {
    /// Writes the response part of operation `op` (an insert when `insert`), whose entity and
    /// new ETag (`None` for a delete) the batch handed back.
    ///
    /// # Errors
    /// A [`CodecError`] if the properties the batch encoded do not read back (never: they
    /// were just written by the encoder).
    fn write(
        &mut self,
        out: &mut String,
        written: Written<'_>,
        op: &BatchOperation<'_>,
        insert: bool,
    ) -> Result<(), CodecError> {
        let ctx = self.ctx;
        let entity = written.entity;
        out.push_str(&self.delimiter);
        let Some(etag) = written.etag else {
            write_part_status(out, op.content_id, 204);
            out.push_str("\r\n\r\n");
            return Ok(());
        };
        let (pk, rk) = (entity.partition_key().as_str(), entity.row_key().as_str());
        let address_start = self.address.as_str();
        let address = |out: &mut String| {
            out.push_str(address_start);
            write_address_keys(out, pk, rk);
            out.push_str(")\r\n");
        };
        let prefer = prefer_content(op.header("prefer"));
        let content = insert && prefer != Some(false);
        write_part_status(out, op.content_id, if content { 201 } else { 204 });
        out.push_str("ETag: ");
        out.push_str(self.etag_texts.text(etag.timestamp()));
        out.push_str("\r\n");
        if !insert {
            out.push_str("DataServiceId: ");
            address(out);
            out.push_str("\r\n\r\n");
            return Ok(());
        }
        if content {
            if prefer == Some(true) {
                out.push_str("Preference-Applied: return-content\r\n");
            }
            out.push_str("Content-Type: ");
            out.push_str(ctx.metadata.content_type());
            out.push_str("\r\nLocation: ");
            address(out);
            out.push_str("\r\n");
            match written.row {
                // The stored form the batch wrote, read where it lies.
                Some(row) => self.writer.write_row(
                    out,
                    &RowRef {
                        partition_key: pk,
                        row_key: rk,
                        timestamp: etag.timestamp(),
                        properties: PropertyReader::new(row)?,
                    },
                )?,
                None => {
                    let mut entity = entity.clone();
                    entity.set_timestamp(etag.timestamp());
                    self.writer
                        .write_entity(out, &StoredEntity { entity, etag });
                }
            }
            out.push_str("\r\n");
        } else {
            out.push_str("Preference-Applied: return-no-content\r\nDataServiceId: ");
            address(out);
            out.push_str("Location: ");
            address(out);
            out.push_str("\r\n\r\n");
        }
        Ok(())
    }
}

/// Appends the key predicate of an entity's address ([`write_key_predicate`]); keys of
/// letters, digits and `-_.~` (the usual ones) need neither quote doubling nor
/// percent-encoding and are copied as they are.
fn write_address_keys(out: &mut String, pk: &str, rk: &str) {
    let verbatim = |key: &str| {
        key.bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~'))
    };
    if verbatim(pk) && verbatim(rk) {
        out.push_str("PartitionKey='");
        out.push_str(pk);
        out.push_str("',RowKey='");
        out.push_str(rk);
        out.push('\'');
    } else {
        write_key_predicate(out, pk, rk);
    }
}

/// A batch holding a single GET: a point read, answered as one part.
fn run_get(ctx: &Context<'_>, operations: &[BatchOperation<'_>]) -> Result<Part> {
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
    Ok(Part {
        status: 200,
        headers: vec![
            ("Content-Type", ctx.metadata.content_type().to_owned()),
            ("ETag", stored.etag.to_string()),
        ],
        content_id: op.content_id.map(str::to_owned),
        body,
    })
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

/// Bytes reserved per part of a response (its headers and a typical entity).
const PART_GUESS_BYTES: usize = 1024;

/// The 202 multipart response holding `parts` (inside a changeset response unless the batch
/// was a lone GET).
fn respond(ctx: &Context<'_>, changeset: bool, parts: &[Part]) -> Reply {
    let mut out = open_response(ctx, changeset, parts.len());
    for part in parts {
        write_part_head(
            &mut out,
            ctx,
            changeset,
            part.content_id.as_deref(),
            part.status,
        );
        for (name, value) in &part.headers {
            let _ = write!(out, "{name}: {value}\r\n");
        }
        let _ = write!(out, "\r\n{}\r\n", part.body);
    }
    close_response(ctx, changeset, out)
}

/// A response body sized for `parts` parts, opened with the changeset header if any.
fn open_response(ctx: &Context<'_>, changeset: bool, parts: usize) -> String {
    let buffer = reply::take_buffer(parts.saturating_add(1) * PART_GUESS_BYTES);
    // Empty, so valid UTF-8.
    let mut out = String::from_utf8(buffer).unwrap_or_default();
    if changeset {
        let id = ctx.request_id;
        let _ = write!(
            out,
            "--batchresponse_{id}\r\nContent-Type: multipart/mixed; boundary=changesetresponse_{id}\r\n\r\n"
        );
    }
    out
}

/// The delimiter line, MIME headers, status line and fixed headers of one part.
fn write_part_head(
    out: &mut String,
    ctx: &Context<'_>,
    changeset: bool,
    content_id: Option<&str>,
    status: u16,
) {
    out.push_str(if changeset {
        "--changesetresponse_"
    } else {
        "--batchresponse_"
    });
    out.push_str(ctx.request_id);
    out.push_str(PART_MIME_HEADERS);
    write_part_status(out, content_id, status);
}

/// The MIME headers of every response part, after its delimiter.
const PART_MIME_HEADERS: &str =
    "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n";

/// A part's head after its MIME headers: `Content-ID`, the status line and fixed headers.
fn write_part_status(out: &mut String, content_id: Option<&str>, status: u16) {
    if let Some(id) = content_id {
        out.push_str("Content-ID: ");
        out.push_str(id);
        out.push_str("\r\n");
    }
    // The two statuses of a successful changeset are pushed whole; the others in pieces
    // rather than through `write!`, whose formatter cost more than the rest of the head.
    match status {
        201 => out.push_str(
            "\r\nHTTP/1.1 201 Created\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n",
        ),
        204 => out.push_str(
            "\r\nHTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n",
        ),
        _ => {
            out.push_str("\r\nHTTP/1.1 ");
            let mut digits = [0_u8; 3];
            for (slot, divisor) in digits.iter_mut().zip([100, 10, 1]) {
                *slot = b'0' + u8::try_from(status / divisor % 10).unwrap_or(0);
            }
            out.push_str(std::str::from_utf8(&digits).unwrap_or("500"));
            out.push(' ');
            out.push_str(reason(status));
            out.push_str(
                "\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n",
            );
        }
    }
}

/// Closes the response body and makes it the 202 reply.
fn close_response(ctx: &Context<'_>, changeset: bool, mut out: String) -> Reply {
    let id = ctx.request_id;
    if changeset {
        let _ = write!(out, "--changesetresponse_{id}--\r\n");
    }
    let _ = write!(out, "--batchresponse_{id}--\r\n");
    Reply::status(202).body(format!("multipart/mixed; boundary=batchresponse_{id}"), out)
}

#[cfg(test)]
mod tests {
    use super::{reason, write_address_keys, write_part_status};
    use crate::server::json::write_key_predicate;

    #[test]
    fn batch_part_status_lines_name_the_status_and_its_reason() {
        for status in [200, 201, 204, 404, 409] {
            let mut out = String::new();
            write_part_status(&mut out, Some("3"), status);
            assert_eq!(
                out,
                format!(
                    "Content-ID: 3\r\n\r\nHTTP/1.1 {status} {}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n",
                    reason(status)
                )
            );
        }
    }

    #[test]
    fn batch_address_keys_are_the_key_predicate() {
        let keys = [
            "",
            "p0000",
            "a-b_c.d~e",
            "it's",
            "a b",
            "x/y",
            "é",
            "100%",
            "a+b",
            "q?#&=",
        ];
        for pk in keys {
            for rk in keys {
                let (mut ours, mut general) = (String::new(), String::new());
                write_address_keys(&mut ours, pk, rk);
                write_key_predicate(&mut general, pk, rk);
                assert_eq!(ours, general, "{pk:?} {rk:?}");
            }
        }
    }
}
