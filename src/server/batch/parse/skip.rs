//! The reading of SDK-shaped batch bodies without searching them for delimiters: parts
//! skipped by their `Content-Length`, the outer part read from the body's start. Every
//! shortcut is taken only when the bytes prove the delimiter search would read the same;
//! otherwise the search of [`super`] decides.

use std::borrow::Cow;

use memchr::memmem;

use super::head::{HeadMemo, read_head_memo};
use super::{
    BatchOperation, CONTENT_ID_SLOT, CONTENT_LENGTH_SLOT, boundary, find_delimiter, invalid,
    parse_operation, read_head, request_line, split_parts, split_url, strip_line_break,
    upper_method,
};
use crate::server::error::{Result, ServerError};
use crate::server::limits::BATCH_MAX_PARTS;

/// The operations of a changeset as they were read, and what the caller decides on.
pub(super) struct Changeset<'b> {
    /// The operations parsed before the first failing one.
    pub(super) operations: Vec<BatchOperation<'b>>,
    /// The first operation that failed to parse; the parts after it were only delimited.
    pub(super) failed: Option<ServerError>,
    /// How many parts were delimited (at most `max`).
    pub(super) parts: usize,
    /// Whether a part follows the `max`th.
    pub(super) more: bool,
}

/// The changeset of `body` delimited whole by [`split_parts`], then each part parsed: the
/// reference reading of [`read_changeset`].
pub(super) fn search_changeset<'b>(
    body: &'b [u8],
    boundary: &str,
    max: usize,
) -> Result<Changeset<'b>> {
    let (parts, more) = split_parts(body, boundary, max, false)?;
    let mut changeset = Changeset {
        operations: Vec::with_capacity(parts.len()),
        failed: None,
        parts: parts.len(),
        more,
    };
    for part in parts {
        match parse_operation(part) {
            Ok(operation) => changeset.operations.push(operation),
            Err(error) => {
                changeset.failed = Some(error);
                break;
            }
        }
    }
    Ok(changeset)
}

/// Reads the parts of a changeset body as [`split_parts`] delimits them, parsing each into
/// an operation as it goes. A part whose embedded request states its `Content-Length` is
/// skipped by that length when the bytes prove it ends there ([`skip_by_length`]), instead
/// of searching its body for the next delimiter (~1.1k instructions per SDK part).
/// Delimiting errors take precedence over a failed operation, as when every part was
/// delimited first.
pub(super) fn read_changeset<'b>(
    body: &'b [u8],
    boundary: &str,
    max: usize,
) -> Result<Changeset<'b>> {
    read_parts(body, boundary, max, None).map(|(changeset, _)| {
        changeset.unwrap_or_else(|| Changeset {
            operations: Vec::new(),
            failed: None,
            parts: 0,
            more: false,
        })
    })
}

/// [`read_changeset`] of `body`, and the offset in `body` of the last delimiter read (the
/// closing one, or the one after the `max`th part). With `outer` (the enclosing body's
/// delimiter) `body` runs on past the changeset: no delimiter line read may start with
/// `outer`, the first must start `body`, and every part must be skipped by its length (the
/// search could run past the changeset); `Ok((None, _))` when that does not hold.
fn read_parts<'b>(
    body: &'b [u8],
    boundary: &str,
    max: usize,
    outer: Option<&[u8]>,
) -> Result<(Option<Changeset<'b>>, usize)> {
    let delimiter = format!("--{boundary}");
    let finder = memmem::Finder::new(delimiter.as_bytes());
    let mut changeset = Changeset {
        operations: Vec::with_capacity(max.min(BATCH_MAX_PARTS)),
        failed: None,
        parts: 0,
        more: false,
    };
    let mut memo = PartMemo::default();
    let mut at = if outer.is_some() {
        if !body.starts_with(delimiter.as_bytes()) {
            return Ok((None, 0));
        }
        0
    } else {
        finder
            .find(body)
            .ok_or_else(|| invalid(format!("the body has no delimiter {delimiter:?}")))?
    };
    loop {
        let line = body.get(at..).unwrap_or_default();
        if outer.is_some_and(|outer| line.starts_with(outer)) {
            return Ok((None, at));
        }
        let after = line.get(delimiter.len()..).unwrap_or_default();
        if after.starts_with(b"--") {
            return Ok((Some(changeset), at));
        }
        if changeset.parts == max {
            changeset.more = true;
            return Ok((Some(changeset), at));
        }
        let line_end = memchr::memchr(b'\n', after)
            .ok_or_else(|| invalid("a multipart delimiter line is not terminated"))?;
        let start = after.get(line_end + 1..).unwrap_or_default();
        changeset.parts += 1;
        if changeset.failed.is_none()
            && let Some((operation, next)) = skip_by_length(start, delimiter.as_bytes(), &mut memo)
        {
            changeset.operations.push(operation);
            at = body.len() - start.len() + next;
            continue;
        }
        if outer.is_some() {
            return Ok((None, at));
        }
        let next = find_delimiter(&finder, start)
            .ok_or_else(|| invalid(format!("the part after {delimiter:?} is not closed")))?;
        if changeset.failed.is_none() {
            match parse_operation(strip_line_break(start.get(..next).unwrap_or_default())) {
                Ok(operation) => changeset.operations.push(operation),
                Err(error) => changeset.failed = Some(error),
            }
        }
        at = body.len() - start.len() + next;
    }
}

/// The operations of an SDK-shaped batch body (`--outer`, the changeset's MIME headers, a
/// changeset of parts each skipped by its length, `--outer--` after it), read without
/// searching the whole body for the outer delimiter; `None` unless every step proves the
/// delimiter search would read the same (see [`read_parts`]), when [`super::parse_with`]'s general
/// reading decides, errors included.
pub(super) fn parse_direct<'b>(body: &'b [u8], outer: &str) -> Option<Vec<BatchOperation<'b>>> {
    let outer = format!("--{outer}");
    let after = body.strip_prefix(outer.as_bytes())?;
    if after.starts_with(b"--") {
        return None;
    }
    let start = after.get(memchr::memchr(b'\n', after)? + 1..)?;
    let head = read_head(start).ok()?;
    if !head.closed || head.dash {
        return None;
    }
    let part_type = head.headers.get("content-type")?;
    if !part_type
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("multipart/mixed")
    {
        return None;
    }
    let content = head.content;
    let (changeset, end) = read_parts(
        content,
        boundary(part_type).ok()?,
        BATCH_MAX_PARTS,
        Some(outer.as_bytes()),
    )
    .ok()?;
    let changeset = changeset?;
    if changeset.more || changeset.parts == 0 || changeset.failed.is_some() {
        return None;
    }
    // The closing delimiter's line starts at `end` and is not the outer delimiter: the
    // outer one is searched for in what follows, from that line on.
    let tail = content.get(end..)?;
    let close = find_delimiter(&memmem::Finder::new(outer.as_bytes()), tail)?;
    tail.get(close + outer.len()..)?
        .starts_with(b"--")
        .then_some(changeset.operations)
}

/// The part starting at `text` read as [`parse_operation`] reads it, its end found from the
/// embedded request's `Content-Length`, and the offset in `text` of the delimiter after it;
/// `None` whenever that is not provably where the delimiter search would end the part: any
/// header or request line starting with `-` (a delimiter line starts a line with `--`), a
/// line feed in the body or the body starting with the delimiter, the body not followed by
/// CR LF and the delimiter, or anything the part parser would refuse.
pub(super) fn skip_by_length<'b>(
    text: &'b [u8],
    delimiter: &[u8],
    memo: &mut PartMemo<'b>,
) -> Option<(BatchOperation<'b>, usize)> {
    let mime = read_head_memo(text, &mut memo.mime).ok()?;
    if !mime.closed || mime.dash || mime.content.first() == Some(&b'-') {
        return None;
    }
    let (request, rest) = match memo.request {
        Some(last) if mime.content.starts_with(last.line) => {
            (last, mime.content.get(last.line.len()..)?)
        }
        _ => {
            let line_end = memchr::memchr(b'\n', mime.content)?;
            let (method, url) = request_line(mime.content.get(..line_end)?).ok()?;
            let (path, query) = split_url(url).ok()?;
            let request = RequestLine {
                line: mime.content.get(..=line_end)?,
                upper: !method.bytes().any(|byte| byte.is_ascii_lowercase()),
                method,
                path,
                query,
            };
            memo.request = Some(request);
            (request, mime.content.get(line_end + 1..)?)
        }
    };
    let head = read_head_memo(rest, &mut memo.http).ok()?;
    if !head.closed || head.dash {
        return None;
    }
    let length = content_length(head.headers.known(CONTENT_LENGTH_SLOT)?)?;
    let body = head.content.get(..length)?;
    let tail = head.content.get(length..)?;
    // A body starting with `-` could start an enclosing body's delimiter ([`parse_direct`]).
    if memchr::memchr(b'\n', body).is_some()
        || body.first() == Some(&b'-')
        || !tail.starts_with(b"\r\n")
        || !tail.get(2..)?.starts_with(delimiter)
    {
        return None;
    }
    let operation = BatchOperation {
        method: if request.upper {
            Cow::Borrowed(request.method)
        } else {
            upper_method(request.method)
        },
        path: request.path,
        query: request.query,
        headers: head.headers,
        content_id: mime.headers.known(CONTENT_ID_SLOT),
        body,
    };
    Some((operation, text.len() - tail.len() + 2))
}

/// What the parts of a changeset read so far repeat: the last MIME and request header
/// blocks ([`HeadMemo`]) and the last request line. SDK parts differ in little else than
/// their `Content-ID`, `Content-Length` and body.
#[derive(Debug, Default)]
pub(super) struct PartMemo<'b> {
    mime: HeadMemo<'b>,
    http: HeadMemo<'b>,
    request: Option<RequestLine<'b>>,
}

/// A request line as [`skip_by_length`] read it. An equal line is read to the same text,
/// which is then borrowed from the line read first.
#[derive(Debug, Clone, Copy)]
struct RequestLine<'b> {
    /// The line with its line feed.
    line: &'b [u8],
    /// Whether the method has no lower-case letter (an operation borrows it as it is).
    upper: bool,
    method: &'b str,
    path: &'b str,
    query: Option<&'b str>,
}

/// A `Content-Length` value: ASCII digits only, at most 10 of them. Summed as the digits
/// are checked (a check and then `str::parse` read them twice).
pub(super) fn content_length(value: &str) -> Option<usize> {
    if value.is_empty() || value.len() > 10 {
        return None;
    }
    value.bytes().try_fold(0_usize, |length, byte| {
        let digit = byte.checked_sub(b'0').filter(|digit| *digit <= 9)?;
        length.checked_mul(10)?.checked_add(usize::from(digit))
    })
}
