//! The `$batch` response: a `multipart/mixed` body holding one part per operation of a
//! successful changeset (written straight into the response, with what the parts share
//! prepared once), or the single part of a failed batch or a lone GET.

use std::fmt::Write as _;

use super::parse::BatchOperation;
use crate::codec::CodecError;
use crate::codec::property::PropertyReader;
use crate::model::DateTime;
use crate::server::error::ServerError;
use crate::server::handlers::{Context, prefer_content};
use crate::server::json::{EntityWriter, Links, write_etag_text, write_key_predicate};
use crate::server::reply::{self, Reply, batch_error_body};
use crate::table::{RowRef, StoredEntity, Written};

/// The single response part of a failed batch, with the `Content-ID` of the failing
/// operation when it had one, as the service echoes it there too (recorded traffic of the
/// legacy JS SDK: `HTTP/1.1 409 Conflict`, `Content-ID: 1`).
pub(super) fn error_part(ctx: &Context<'_>, error: &ServerError, content_id: Option<&str>) -> Part {
    Part {
        status: error.status(),
        headers: vec![(
            "Content-Type",
            crate::server::json::Metadata::Minimal
                .content_type()
                .to_owned(),
        )],
        content_id: content_id.map(str::to_owned),
        body: batch_error_body(error, ctx.request_id),
    }
}

/// One response part of an error or a lone GET (the parts of a successful changeset are
/// written straight into the response).
#[derive(Debug)]
pub(super) struct Part {
    pub(super) status: u16,
    pub(super) headers: Vec<(&'static str, String)>,
    pub(super) content_id: Option<String>,
    pub(super) body: String,
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
pub(super) struct SuccessParts<'a> {
    ctx: &'a Context<'a>,
    /// `--changesetresponse_<id>` and the MIME headers: how every part starts.
    delimiter: String,
    /// The delimiter and a `201 Created` status line: how a created part starts, its
    /// `Content-ID` (if any) next, as the service writes it.
    delimiter_and_created: String,
    /// `<base>/<table>(`: how every address starts.
    address: String,
    writer: EntityWriter<'a>,
    etag_texts: EtagTexts,
    /// The heads of parts answering an insert with its entity, without and with
    /// `Preference-Applied`.
    created_heads: [CreatedHead; 2],
}

/// The text of a part answering an insert with its entity, from after its `Content-ID` line
/// to its address's key predicate: the same for every such part of a changeset (one
/// Timestamp, one table), so formatted once and copied; only the Content-ID and the keys
/// differ between the heads of an SDK batch's parts.
#[derive(Debug, Default)]
struct CreatedHead {
    /// The Timestamp of the ETag the text holds, and the text.
    last: Option<(DateTime, String)>,
}

/// Room for a created part's head after its Content-ID.
const CREATED_HEAD_GUESS_BYTES: usize = 384;

impl<'a> SuccessParts<'a> {
    /// The writer of the parts of a changeset on `table` (named in `links`), all written at
    /// one Timestamp.
    pub(super) fn new(ctx: &'a Context<'a>, links: &'a Links<'a>) -> Self {
        let delimiter = format!("--changesetresponse_{}{PART_MIME_HEADERS}", ctx.request_id);
        Self {
            ctx,
            delimiter_and_created: format!("{delimiter}{STATUS_LINE_201}"),
            delimiter,
            address: format!("{}/{}(", ctx.base, links.table),
            // Every operation of a batch is written at one Timestamp: one writer formats its
            // texts (the entities' Timestamp and `odata.etag`, the ETag header) once.
            writer: EntityWriter::new(ctx.metadata, links, false, None),
            etag_texts: EtagTexts::default(),
            created_heads: [CreatedHead::default(), CreatedHead::default()],
        }
    }
}

impl SuccessParts<'_> {
    /// Writes the response part of operation `op` (an insert when `insert`), whose entity and
    /// new ETag (`None` for a delete) the batch handed back.
    ///
    /// # Errors
    /// A [`CodecError`] if the properties the batch encoded do not read back (never: they
    /// were just written by the encoder).
    pub(super) fn write(
        &mut self,
        out: &mut String,
        written: Written<'_>,
        op: &BatchOperation<'_>,
        insert: bool,
    ) -> Result<(), CodecError> {
        let entity = written.entity;
        let Some(etag) = written.etag else {
            out.push_str(&self.delimiter);
            write_part_status(out, op.echoed_content_id(), 204);
            out.push_str("\r\n\r\n");
            return Ok(());
        };
        let (pk, rk) = (entity.partition_key().as_str(), entity.row_key().as_str());
        let prefer = prefer_content(op.prefer());
        if insert && prefer != Some(false) {
            self.write_created_head(
                out,
                op.echoed_content_id(),
                etag.timestamp(),
                prefer == Some(true),
            );
            write_address_keys(out, pk, rk);
            out.push_str(")\r\n\r\n");
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
            return Ok(());
        }
        out.push_str(&self.delimiter);
        let address_start = self.address.as_str();
        let address = |out: &mut String| {
            out.push_str(address_start);
            write_address_keys(out, pk, rk);
            out.push_str(")\r\n");
        };
        write_part_status(out, op.echoed_content_id(), 204);
        out.push_str("ETag: ");
        out.push_str(self.etag_texts.text(etag.timestamp()));
        out.push_str("\r\n");
        if insert {
            out.push_str("Preference-Applied: return-no-content\r\nDataServiceId: ");
            address(out);
            out.push_str("Location: ");
        } else {
            out.push_str("DataServiceId: ");
        }
        address(out);
        out.push_str("\r\n\r\n");
        Ok(())
    }

    /// Writes a created part from its delimiter to its `Location`'s key predicate, as
    /// [`write_part_status`] and the headers after it write it (with `Preference-Applied:
    /// return-content` when `applied`).
    fn write_created_head(
        &mut self,
        out: &mut String,
        content_id: Option<&str>,
        timestamp: DateTime,
        applied: bool,
    ) {
        let [without, with] = &mut self.created_heads;
        let head = if applied { with } else { without };
        if head
            .last
            .as_ref()
            .is_none_or(|(last, _)| *last != timestamp)
        {
            let mut text = String::with_capacity(CREATED_HEAD_GUESS_BYTES);
            text.push_str(PART_FIXED_HEADERS);
            text.push_str("ETag: ");
            text.push_str(self.etag_texts.text(timestamp));
            text.push_str("\r\n");
            if applied {
                text.push_str("Preference-Applied: return-content\r\n");
            }
            text.push_str("Content-Type: ");
            text.push_str(self.ctx.metadata.content_type());
            text.push_str("\r\nLocation: ");
            text.push_str(&self.address);
            head.last = Some((timestamp, text));
        }
        let text = head.last.as_ref().map_or("", |(_, text)| text);
        out.push_str(&self.delimiter_and_created);
        if let Some(id) = content_id {
            write_content_id(out, id);
        }
        out.push_str(text);
    }
}

/// Appends the key predicate of an entity's address ([`write_key_predicate`]); keys of
/// letters, digits and `-_.~` (the usual ones) need neither quote doubling nor
/// percent-encoding and are copied as they are.
fn write_address_keys(out: &mut String, pk: &str, rk: &str) {
    // A table lookup per byte: the test of letters, digits and four marks took ~6
    // instructions a byte.
    let verbatim = |key: &str| {
        key.bytes()
            .all(|byte| VERBATIM_KEY_BYTES.get(usize::from(byte)) == Some(&true))
    };
    if verbatim(pk) && verbatim(rk) {
        out.reserve(ADDRESS_KEYS_FIXED_BYTES + pk.len() + rk.len());
        out.push_str("PartitionKey='");
        out.push_str(pk);
        out.push_str("',RowKey='");
        out.push_str(rk);
        out.push('\'');
    } else {
        write_key_predicate(out, pk, rk);
    }
}

/// The bytes of `PartitionKey='',RowKey=''` around the keys.
const ADDRESS_KEYS_FIXED_BYTES: usize = "PartitionKey='',RowKey=''".len();

/// Which bytes an address's key carries as they are: ASCII letters, digits and `-_.~`.
static VERBATIM_KEY_BYTES: [bool; 256] = verbatim_key_bytes();

/// Builds [`VERBATIM_KEY_BYTES`].
#[expect(
    clippy::indexing_slicing,
    reason = "const context, where `get_mut` is unavailable; a u8 index is below 256"
)]
const fn verbatim_key_bytes() -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte: u8 = 0;
    loop {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            table[byte as usize] = true;
        }
        if byte == u8::MAX {
            break table;
        }
        byte += 1;
    }
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
pub(super) fn respond(ctx: &Context<'_>, changeset: bool, parts: &[Part]) -> Reply {
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
pub(super) fn open_response(ctx: &Context<'_>, changeset: bool, parts: usize) -> String {
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

/// What opens a part's `Content-ID` line.
const CONTENT_ID_NAME: &str = "Content-ID: ";

/// The blank line and status line of a `201 Created` part.
const STATUS_LINE_201: &str = "\r\nHTTP/1.1 201 Created\r\n";

/// The blank line and status line of a `204 No Content` part.
const STATUS_LINE_204: &str = "\r\nHTTP/1.1 204 No Content\r\n";

/// The headers every part's embedded response carries after its status line and Content-ID.
const PART_FIXED_HEADERS: &str =
    "X-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n";

/// A part's head after its MIME headers: the blank line, the status line, the `Content-ID`
/// (first of the embedded response's headers, where the service writes it: recorded traffic
/// `HTTP/1.1 204 No Content\r\nContent-ID: 0\r\nX-Content-Type-Options: nosniff`) and the
/// fixed headers.
fn write_part_status(out: &mut String, content_id: Option<&str>, status: u16) {
    // The two statuses of a successful changeset are pushed whole; the others in pieces
    // rather than through `write!`, whose formatter cost more than the rest of the head.
    match status {
        201 => out.push_str(STATUS_LINE_201),
        204 => out.push_str(STATUS_LINE_204),
        _ => {
            out.push_str("\r\nHTTP/1.1 ");
            let mut digits = [0_u8; 3];
            for (slot, divisor) in digits.iter_mut().zip([100, 10, 1]) {
                *slot = b'0' + u8::try_from(status / divisor % 10).unwrap_or(0);
            }
            out.push_str(std::str::from_utf8(&digits).unwrap_or("500"));
            out.push(' ');
            out.push_str(reason(status));
            out.push_str("\r\n");
        }
    }
    if let Some(id) = content_id {
        write_content_id(out, id);
    }
    out.push_str(PART_FIXED_HEADERS);
}

/// Appends the `Content-ID` header line of `id`.
fn write_content_id(out: &mut String, id: &str) {
    out.push_str(CONTENT_ID_NAME);
    out.push_str(id);
    out.push_str("\r\n");
}

/// Closes the response body and makes it the 202 reply.
pub(super) fn close_response(ctx: &Context<'_>, changeset: bool, mut out: String) -> Reply {
    let id = ctx.request_id;
    if changeset {
        let _ = write!(out, "--changesetresponse_{id}--\r\n");
    }
    let _ = write!(out, "--batchresponse_{id}--\r\n");
    Reply::status(202).body(format!("multipart/mixed; boundary=batchresponse_{id}"), out)
}

#[cfg(test)]
mod tests;
