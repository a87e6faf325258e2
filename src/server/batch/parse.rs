//! The `$batch` request body: `multipart/mixed` holding one changeset (itself
//! `multipart/mixed`) of `application/http` parts, each an embedded HTTP request:
//!
//! ```text
//! --batch_B
//! Content-Type: multipart/mixed; boundary=changeset_C
//!
//! --changeset_C
//! Content-Type: application/http
//! Content-Transfer-Encoding: binary
//!
//! POST http://host/acct/t HTTP/1.1
//! Content-Type: application/json
//!
//! {"PartitionKey":"p","RowKey":"r"}
//! --changeset_C--
//! --batch_B--
//! ```
//!
//! A lone GET may stand directly in the batch instead of a changeset. Parsing is total:
//! every input yields operations or a [`ServerError::InvalidInput`] naming what is wrong.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem;

use crate::server::error::{Result, ServerError};
use crate::server::limits::BATCH_MAX_PARTS;
use crate::table::TableError;

mod head;
mod skip;

use head::read_head;
use skip::{parse_direct, read_changeset, search_changeset};

/// One embedded request of a batch, borrowed from the request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchOperation<'b> {
    /// The HTTP verb, upper-case.
    pub method: Cow<'b, str>,
    /// The request path (percent-encoded), without scheme and host.
    pub path: &'b str,
    /// The query string, if any.
    pub query: Option<&'b str>,
    /// The embedded request's headers, in order.
    pub headers: Headers<'b>,
    /// The `Content-ID` of the enclosing part, echoed in the response.
    pub content_id: Option<&'b str>,
    /// The embedded request's body.
    pub body: &'b [u8],
}

impl BatchOperation<'_> {
    /// The value of header `name` (any case).
    #[must_use]
    #[inline]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// The `Content-ID` the response part echoes: the enclosing part's, or else the embedded
    /// request's, where the legacy SDKs write it (`POST /t HTTP/1.1`, `Content-ID: 1`); the
    /// service echoes either (recorded traffic of `azure-cosmosdb-table`). One holding a
    /// control character (a bare CR would start a header line of the client's choosing in
    /// the response part) is not echoed.
    #[must_use]
    #[inline]
    pub fn echoed_content_id(&self) -> Option<&str> {
        self.content_id
            .or_else(|| self.headers.known(CONTENT_ID_SLOT))
            .filter(|id| !id.bytes().any(|byte| byte.is_ascii_control()))
    }

    /// The value of the `If-Match` header, as [`Self::header`] finds it (noted as the part
    /// was read; no name to compare).
    #[must_use]
    #[inline]
    pub fn if_match(&self) -> Option<&str> {
        self.headers.known(IF_MATCH_SLOT)
    }

    /// The value of the `Prefer` header, as [`Self::header`] finds it.
    #[must_use]
    #[inline]
    pub fn prefer(&self) -> Option<&str> {
        self.headers.known(PREFER_SLOT)
    }
}

/// A part's header lines, borrowed from the body. Every line was checked when the part was
/// read (`name: value`, at most [`crate::server::limits::PART_MAX_HEADERS`]), and the values of the few headers a
/// batch reads ([`KNOWN_HEADERS`]) were noted then; any other is found by reading the lines
/// again. Cheaper than collecting every line of every part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Headers<'b> {
    block: &'b str,
    known: [Option<&'b str>; KNOWN_HEADERS.len()],
}

/// The headers whose values a part notes as it is read (lower case).
const KNOWN_HEADERS: [&str; 5] = [
    "content-id",
    "content-type",
    "if-match",
    "prefer",
    "content-length",
];

/// The slot of `Content-ID` in [`KNOWN_HEADERS`].
const CONTENT_ID_SLOT: usize = 0;
/// The slot of `Content-Length` in [`KNOWN_HEADERS`].
const CONTENT_LENGTH_SLOT: usize = 4;
/// The slot of `If-Match` in [`KNOWN_HEADERS`].
const IF_MATCH_SLOT: usize = 2;
/// The slot of `Prefer` in [`KNOWN_HEADERS`].
const PREFER_SLOT: usize = 3;

/// The slot of header `name` (any case) in [`KNOWN_HEADERS`].
#[inline]
fn known_slot(name: &[u8]) -> Option<usize> {
    // The length tells the candidates apart before any text is compared.
    let slot = match name.len() {
        10 => 0,
        12 => 1,
        8 => 2,
        6 => 3,
        14 => 4,
        _ => return None,
    };
    KNOWN_HEADERS
        .get(slot)
        .is_some_and(|known| eq_lower(name, known.as_bytes()))
        .then_some(slot)
}

/// Whether `name` is `lower` (lower-case letters and `-`, at least 4 bytes, as long as
/// `name`) in any case, compared as two overlapping words: the byte-wise ASCII case
/// comparison cost ~50 instructions a header, this ~10.
#[inline]
fn eq_lower(name: &[u8], lower: &[u8]) -> bool {
    // A letter's 0x40 bit shifted to 0x20 is its case bit; `-` has no 0x40 bit, so it must
    // match exactly (0x0D | 0x20 would pass for it otherwise).
    const LETTERS: u64 = 0x4040_4040_4040_4040;
    let len = lower.len();
    if name.len() != len {
        return false;
    }
    // Loads of a fixed width: a copy of a variable width was a `memcpy` call.
    let word = |bytes: &[u8], at: usize, width: usize| -> u64 {
        if width == 8 {
            bytes
                .get(at..at + 8)
                .and_then(|src| <[u8; 8]>::try_from(src).ok())
                .map_or(0, u64::from_le_bytes)
        } else {
            bytes
                .get(at..at + 4)
                .and_then(|src| <[u8; 4]>::try_from(src).ok())
                .map_or(0, |word| u64::from(u32::from_le_bytes(word)))
        }
    };
    let width = if len >= 8 { 8 } else { 4 };
    if len < width {
        return name.eq_ignore_ascii_case(lower);
    }
    [0, len - width].into_iter().all(|at| {
        let expected = word(lower, at, width);
        word(name, at, width) | ((expected & LETTERS) >> 1) == expected
    })
}

/// A header line split into its trimmed name and value; `None` without a colon.
#[inline]
fn split_line(line: &str) -> Option<(&str, &str)> {
    // Names are short: a byte loop finds the colon sooner than a vector search is set up.
    let colon = line.bytes().position(|byte| byte == b':')?;
    let name = line.get(..colon).unwrap_or_default();
    let value = line.get(colon + 1..).unwrap_or_default();
    Some((name.trim_ascii(), value.trim_ascii()))
}

impl<'b> Headers<'b> {
    /// The value of the known header in `slot` of [`KNOWN_HEADERS`].
    #[inline]
    pub(super) fn known(&self, slot: usize) -> Option<&'b str> {
        self.known.get(slot).copied().flatten()
    }

    /// The value of header `name` (any case; the first such line), trimmed.
    #[must_use]
    #[inline]
    pub fn get(&self, name: &str) -> Option<&'b str> {
        if let Some(slot) = known_slot(name.as_bytes()) {
            return self.known(slot);
        }
        self.iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    }

    /// The header lines as (name, value), both trimmed, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'b str, &'b str)> + use<'b> {
        let mut rest = self.block;
        std::iter::from_fn(move || {
            loop {
                if rest.is_empty() {
                    return None;
                }
                let end = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
                let line = rest.get(..end).unwrap_or_default();
                rest = rest.get(end + 1..).unwrap_or_default();
                if let Some(pair) = split_line(line) {
                    return Some(pair);
                }
            }
        })
    }
}

/// The `://` of an absolute URL, its searcher built once (building one per URL cost as
/// much as the search).
static SCHEME_END: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"://"));

fn invalid(reason: impl Into<String>) -> ServerError {
    ServerError::invalid(reason)
}

/// The `boundary` parameter of a `multipart/mixed` content type.
///
/// # Errors
/// [`ServerError::InvalidInput`] if the type is not multipart/mixed or has no boundary.
pub fn boundary(content_type: &str) -> Result<&str> {
    let mut params = content_type.split(';');
    let media = params.next().unwrap_or("").trim();
    if !media.eq_ignore_ascii_case("multipart/mixed") {
        return Err(invalid(format!(
            "the content type {media:?} is not multipart/mixed"
        )));
    }
    params
        .filter_map(|param| param.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("boundary"))
        .map(|(_, value)| value.trim().trim_matches('"'))
        .filter(|value| !value.is_empty())
        .ok_or_else(|| invalid("the multipart content type has no boundary"))
}

/// Parses a `$batch` body sent with `content_type`.
///
/// # Errors
/// [`ServerError::InvalidInput`] for any malformed structure, or anything but one changeset
/// or one lone request. A changeset of more than 100 operations is a failure of operation
/// 99, the last one allowed ([`TableError::BatchOperationFailed`]): the service answers it
/// inside a 202 response as `99:The batch request operation exceeds...`, not as a malformed
/// request (recorded in the Python SDK's `test_batch_too_many_ops`); the parts after the
/// 100th are not read.
pub fn parse<'b>(content_type: &str, body: &'b [u8]) -> Result<Vec<BatchOperation<'b>>> {
    parse_with(content_type, body, true)
}

/// [`parse`], skipping parts by their `Content-Length` when `by_length`.
fn parse_with<'b>(
    content_type: &str,
    body: &'b [u8],
    by_length: bool,
) -> Result<Vec<BatchOperation<'b>>> {
    let outer = boundary(content_type)?;
    if by_length && let Some(operations) = parse_direct(body, outer) {
        return Ok(operations);
    }
    // A last outer delimiter with nothing after it closes the batch: Microsoft's Rust SDK
    // (`azure_data_tables` 0.21) ends every batch with `--batch_<id>` and a line feed, without
    // the closing `--`. A part that is not there carries nothing to misread.
    let (parts, more) = split_parts(body, outer, 1, true)?;
    if more {
        return Err(invalid(
            "a batch holds one changeset or one lone request, not several parts",
        ));
    }
    let Some(part) = parts.first() else {
        return Err(invalid("the batch holds no operation"));
    };
    let (headers, content) = split_headers(part)?;
    let part_type = headers.get("content-type").unwrap_or("");
    if !part_type
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("multipart/mixed")
    {
        let operation = parse_operation(part)?;
        if operation.method != "GET" {
            return Err(invalid(
                "only a single GET may stand outside a changeset, alone",
            ));
        }
        return Ok(vec![operation]);
    }
    let boundary = boundary(part_type)?;
    let changeset = if by_length {
        read_changeset(content, boundary, BATCH_MAX_PARTS)?
    } else {
        search_changeset(content, boundary, BATCH_MAX_PARTS)?
    };
    if changeset.more {
        return Err(TableError::BatchOperationFailed {
            index: BATCH_MAX_PARTS - 1,
            source: Box::new(TableError::InvalidInput {
                reason: format!(
                    "The batch request operation exceeds the maximum {BATCH_MAX_PARTS} changes per change set."
                ),
            }),
        }
        .into());
    }
    if changeset.parts == 0 {
        return Err(invalid("the batch holds no operation"));
    }
    match changeset.failed {
        Some(error) => Err(error),
        None => Ok(changeset.operations),
    }
}

/// [`parse`] finding every part's end by searching for the next delimiter, as a part
/// without a usable `Content-Length` is read: the reference the length skip is checked
/// against (fuzz target `batch_parse`).
///
/// # Errors
/// As [`parse`].
#[doc(hidden)]
pub fn parse_by_search<'b>(content_type: &str, body: &'b [u8]) -> Result<Vec<BatchOperation<'b>>> {
    parse_with(content_type, body, false)
}

/// A part's content without the line break before the delimiter that ends it.
fn strip_line_break(content: &[u8]) -> &[u8] {
    content
        .strip_suffix(b"\r\n")
        .or_else(|| content.strip_suffix(b"\n"))
        .unwrap_or(content)
}

/// The contents of the first `max` parts of a multipart body, delimited by `--boundary`
/// lines and closed by `--boundary--`, and whether a further part follows (it is not
/// read: the caller refuses the body). Text before the first delimiter (the preamble) is
/// ignored. With `open_end_closes`, a delimiter followed by nothing but white space closes
/// the body as `--boundary--` does.
fn split_parts<'b>(
    body: &'b [u8],
    boundary: &str,
    max: usize,
    open_end_closes: bool,
) -> Result<(Vec<&'b [u8]>, bool)> {
    let delimiter = format!("--{boundary}");
    let finder = memmem::Finder::new(delimiter.as_bytes());
    let mut parts = Vec::new();
    let mut at = finder
        .find(body)
        .ok_or_else(|| invalid(format!("the body has no delimiter {delimiter:?}")))?;
    loop {
        let after = body.get(at + delimiter.len()..).unwrap_or_default();
        if after.starts_with(b"--")
            || (open_end_closes && after.iter().all(u8::is_ascii_whitespace))
        {
            return Ok((parts, false));
        }
        if parts.len() == max {
            return Ok((parts, true));
        }
        let line_end = memchr::memchr(b'\n', after)
            .ok_or_else(|| invalid("a multipart delimiter line is not terminated"))?;
        let start = after.get(line_end + 1..).unwrap_or_default();
        let next = find_delimiter(&finder, start)
            .ok_or_else(|| invalid(format!("the part after {delimiter:?} is not closed")))?;
        // The line break before a delimiter belongs to the delimiter.
        parts.push(strip_line_break(start.get(..next).unwrap_or_default()));
        at = body.len() - start.len() + next;
    }
}

/// Position of the next delimiter in `text` that starts a line.
fn find_delimiter(finder: &memmem::Finder<'_>, text: &[u8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let found = from + finder.find(text.get(from..)?)?;
        if found == 0 || text.get(found - 1) == Some(&b'\n') {
            return Some(found);
        }
        from = found + 1;
    }
}

/// Splits a part into its header lines and content at the first blank line ([`read_head`]).
fn split_headers(part: &[u8]) -> Result<(Headers<'_>, &[u8])> {
    read_head(part).map(|head| (head.headers, head.content))
}

/// `bytes` as text, as [`std::str::from_utf8`] but cheaper on header blocks and request
/// lines, which are ASCII: the std validator's setup cost more than the check itself.
fn utf8(bytes: &[u8]) -> std::result::Result<&str, std::str::Utf8Error> {
    if bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes)
}

/// The first characters of a line, for an error message.
fn excerpt(line: &str) -> String {
    line.chars().take(80).collect()
}

/// Parses an `application/http` part: its MIME headers, then an embedded request.
fn parse_operation(part: &[u8]) -> Result<BatchOperation<'_>> {
    let (mime_headers, http) = split_headers(part)?;
    let content_id = mime_headers.get("content-id");
    let line_end = memchr::memchr(b'\n', http).unwrap_or(http.len());
    let (method, url) = request_line(http.get(..line_end).unwrap_or_default())?;
    let rest = http.get(line_end + 1..).unwrap_or_default();
    let (headers, body) = split_headers(rest)?;
    let (path, query) = split_url(url)?;
    Ok(BatchOperation {
        method: upper_method(method),
        path,
        query,
        headers,
        content_id,
        body,
    })
}

/// The method and URL of an embedded request line (`METHOD url HTTP/x`).
fn request_line(line: &[u8]) -> Result<(&str, &str)> {
    let request_line = utf8(line)
        .map_err(|_| invalid("a request line is not UTF-8"))?
        .trim();
    let mut words = request_line.split_ascii_whitespace();
    let (Some(method), Some(url), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(invalid(format!(
            "malformed request line {:?}",
            excerpt(request_line)
        )));
    };
    if !version.starts_with("HTTP/") {
        return Err(invalid(format!(
            "malformed request line {:?}",
            excerpt(request_line)
        )));
    }
    Ok((method, url))
}

/// The method in upper case, borrowed when it already is.
fn upper_method(method: &str) -> Cow<'_, str> {
    if method.bytes().any(|byte| byte.is_ascii_lowercase()) {
        Cow::Owned(method.to_ascii_uppercase())
    } else {
        Cow::Borrowed(method)
    }
}

/// The path and query of an absolute (`http://host/path?query`) or origin-form URL.
fn split_url(url: &str) -> Result<(&str, Option<&str>)> {
    // Searched with memchr: the `str` pattern searchers cost more than the rest of a URL.
    let origin = match SCHEME_END.find(url.as_bytes()) {
        Some(at) => {
            let after_scheme = url.get(at + 3..).unwrap_or_default();
            memchr::memchr(b'/', after_scheme.as_bytes())
                .and_then(|slash| after_scheme.get(slash..))
                .ok_or_else(|| invalid(format!("URL {:?} has no path", excerpt(url))))?
        }
        None if url.starts_with('/') => url,
        None => return Err(invalid(format!("URL {:?} is not absolute", excerpt(url)))),
    };
    Ok(match memchr::memchr(b'?', origin.as_bytes()) {
        Some(at) => (
            origin.get(..at).unwrap_or_default(),
            Some(origin.get(at + 1..).unwrap_or_default()),
        ),
        None => (origin, None),
    })
}

#[cfg(test)]
mod tests;
