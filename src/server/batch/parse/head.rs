//! A part's header block, read line by line. The parts of a batch repeat the same header
//! lines (an SDK part differs from the one before in its `Content-ID` and perhaps its
//! `Content-Length`), so a [`HeadMemo`] keeps what the last block's lines were read to, and
//! a line equal to the one at the same place in the last block is taken as it was read
//! there: one comparison instead of the line search, the colon search, the trims and the
//! name comparison (~350 instructions a line).

use super::{Headers, KNOWN_HEADERS, excerpt, invalid, known_slot, utf8};
use crate::server::error::Result;
use crate::server::limits::PART_MAX_HEADERS;

/// Lines of a header block a [`HeadMemo`] remembers (an SDK block has at most 8).
const MEMO_LINES: usize = 12;

/// The last header block read: the whole block, and its lines by their place in it, each
/// with what it was read to. What a line is read to depends on its bytes alone, so any
/// remembered line may stand for an equal one.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::server::batch) struct HeadMemo<'b> {
    block: Option<SeenBlock<'b>>,
    lines: [SeenLine<'b>; MEMO_LINES],
}

/// A block read whole and closed by a blank line with its line feed: an equal block is
/// read to the same headers (borrowed from the block read first: the same text).
#[derive(Debug, Clone, Copy)]
struct SeenBlock<'b> {
    /// The block through its blank line.
    bytes: &'b [u8],
    headers: Headers<'b>,
    dash: bool,
    /// The one line whose value differed from the block read before this one, if one did.
    varying: Option<VaryingLine>,
}

/// The one line of a remembered block whose value changed from the block before it (an SDK
/// part's `Content-ID`): a block equal to the remembered one but for that line's value is
/// read to the same headers but for that value.
#[derive(Debug, Clone, Copy)]
struct VaryingLine {
    /// Where its value starts in the block: just after its name's colon.
    value_start: usize,
    /// Where the next line starts in the block.
    end: usize,
    /// Its slot in [`KNOWN_HEADERS`], when its value is the one noted there.
    slot: Option<usize>,
}

/// One remembered line.
#[derive(Debug, Clone, Copy, Default)]
struct SeenLine<'b> {
    /// The line with its line feed; empty when nothing is remembered.
    line: &'b [u8],
    /// `None` for a line of whitespace (skipped); else the header it is.
    header: Option<SeenHeader>,
}

/// A remembered header line.
#[derive(Debug, Clone, Copy, Default)]
struct SeenHeader {
    /// Where its name ends: just after its (first) colon. A line with the same bytes up to
    /// there is the same header, whatever its value.
    name_end: usize,
    /// Its slot in [`KNOWN_HEADERS`] and where its trimmed value lies in the line, when
    /// its name is a known one.
    known: Option<(usize, usize, usize)>,
}

/// A part's header block as [`read_head`] reads it.
pub(super) struct Head<'b> {
    pub(super) headers: Headers<'b>,
    /// What follows the blank line (empty without one).
    pub(super) content: &'b [u8],
    /// Whether a blank line ended the headers (else they ran to the end of the part).
    pub(super) closed: bool,
    /// Whether a line before the blank line starts with `-`, as a delimiter line does.
    pub(super) dash: bool,
}

/// Splits a part into its header lines and content at the first blank line (empty, or a
/// lone carriage return), reading each line once: the lines are checked and the known
/// headers noted here ([`Headers`]). Lines of whitespace before the blank line are skipped;
/// a part without a blank line is all headers. Also tells whether a blank line closed the
/// block and whether any line of it starts with `-` (what the length skip needs to prove
/// no delimiter was passed).
pub(super) fn read_head(part: &[u8]) -> Result<Head<'_>> {
    read_head_memo(part, &mut HeadMemo::default())
}

/// [`read_head`], taking each line equal to the one at its place in `memo` as that one was
/// read, and remembering this block's lines in `memo`.
pub(super) fn read_head_memo<'b>(part: &'b [u8], memo: &mut HeadMemo<'b>) -> Result<Head<'b>> {
    if let Some(seen) = memo.block
        && part.starts_with(seen.bytes)
    {
        return Ok(Head {
            headers: seen.headers,
            content: part.get(seen.bytes.len()..).unwrap_or_default(),
            closed: true,
            dash: seen.dash,
        });
    }
    if let Some(seen) = memo.block
        && let Some(head) = read_varied(part, &seen)
    {
        return Ok(head);
    }
    let mut dash = false;
    // The lines read as remembered ones with another value, and the last of them.
    let mut varied_lines = 0_usize;
    let mut varying = None;
    let mut known: [Option<&[u8]>; KNOWN_HEADERS.len()] = [None; KNOWN_HEADERS.len()];
    let mut count = 0_usize;
    let mut at = 0;
    let mut seen = memo.lines.iter_mut();
    let (head_end, content_start, closed) = loop {
        let rest = part.get(at..).unwrap_or_default();
        if rest.is_empty() {
            break (part.len(), part.len(), false);
        }
        let slot = seen.next();
        let remembered = slot.as_deref().copied().unwrap_or_default();
        let (line, header, varied) =
            if !remembered.line.is_empty() && rest.starts_with(remembered.line) {
                // A remembered line ends with its line feed and is not blank: an equal line is
                // the whole line here, read to the same.
                (remembered.line, remembered.header, false)
            } else if let Some(header) = remembered.header
                && let Some(name) = remembered.line.get(..header.name_end)
                && rest.starts_with(name)
            {
                // The same name up to the colon: the same header, with another value.
                let line = line_of(rest);
                let text = line.strip_suffix(b"\n").unwrap_or(line);
                let header = SeenHeader {
                    known: header
                        .known
                        .map(|(index, _, _)| value_place(index, text, header.name_end)),
                    ..header
                };
                if let Some(slot) = slot
                    && line.ends_with(b"\n")
                {
                    *slot = SeenLine {
                        line,
                        header: Some(header),
                    };
                }
                (line, Some(header), true)
            } else {
                let line = line_of(rest);
                let text = line.strip_suffix(b"\n").unwrap_or(line);
                if text.is_empty() || text == b"\r" {
                    break (at, at + line.len(), true);
                }
                let header = read_line(text)?;
                if let Some(slot) = slot
                    && line.ends_with(b"\n")
                {
                    *slot = SeenLine { line, header };
                }
                (line, header, false)
            };
        let line_start = at;
        at += line.len();
        dash |= line.first() == Some(&b'-');
        let Some(header) = header else {
            continue;
        };
        if count == PART_MAX_HEADERS {
            return Err(invalid(format!(
                "a part has more than {PART_MAX_HEADERS} headers"
            )));
        }
        count += 1;
        let mut noted = None;
        if let Some((index, start, end)) = header.known
            && let Some(value) = known.get_mut(index)
            && value.is_none()
        {
            *value = line.get(start..end);
            noted = Some(index);
        }
        if varied {
            varied_lines += 1;
            varying = line.ends_with(b"\n").then_some(VaryingLine {
                value_start: line_start + header.name_end,
                end: at,
                slot: noted,
            });
        }
    };
    let block = utf8(part.get(..head_end).unwrap_or_default())
        .map_err(|_| invalid("a part's headers are not UTF-8"))?;
    // Each noted value lies within the block, whose text was just checked; its ends are at
    // ASCII bytes (the colon, whitespace or a line end), so on character boundaries.
    let known = known.map(|value| value.map(|value| utf8(value).unwrap_or_default()));
    let headers = Headers { block, known };
    let bytes = part.get(..content_start).unwrap_or_default();
    if closed && bytes.ends_with(b"\n") {
        memo.block = Some(SeenBlock {
            bytes,
            headers,
            dash,
            varying: varying.filter(|_| varied_lines == 1),
        });
    }
    Ok(Head {
        headers,
        content: part.get(content_start..).unwrap_or_default(),
        closed,
        dash,
    })
}

/// What [`read_head_memo`] reads `part` to, if it starts with the block `seen` but for the
/// value of its varying line: the same lines, so the same checks passed and the same
/// headers but for that value (which the lines after it do not override: `slot` is set
/// only when the varying line's value was the one noted).
fn read_varied<'b>(part: &'b [u8], seen: &SeenBlock<'b>) -> Option<Head<'b>> {
    let varying = seen.varying?;
    let prefix = seen.bytes.get(..varying.value_start)?;
    let suffix = seen.bytes.get(varying.end..)?;
    if !part.starts_with(prefix) {
        return None;
    }
    let line_end =
        varying.value_start + memchr::memchr(b'\n', part.get(varying.value_start..)?)? + 1;
    if !part.get(line_end..)?.starts_with(suffix) {
        return None;
    }
    let content_start = line_end + suffix.len();
    // The blank line that closes the block ends the suffix.
    let head_end = content_start.checked_sub(seen.bytes.len() - seen.headers.block.len())?;
    let value = utf8(part.get(varying.value_start..line_end)?).ok()?;
    let block = part.get(..head_end)?;
    // SAFETY: the block is the remembered block's text (checked UTF-8 when it was read) up
    // to the varying line's colon, then `value` (just checked), then the remembered text
    // from the start of the next line: pieces of UTF-8 cut at ASCII bytes, so UTF-8.
    let block = unsafe { std::str::from_utf8_unchecked(block) };
    let mut known = seen.headers.known;
    if let Some(slot) = varying.slot {
        *known.get_mut(slot)? = Some(value.trim_ascii());
    }
    Some(Head {
        headers: Headers { block, known },
        content: part.get(content_start..)?,
        closed: true,
        dash: seen.dash,
    })
}

/// The line starting `rest`, with its line feed if it has one.
fn line_of(rest: &[u8]) -> &[u8] {
    match memchr::memchr(b'\n', rest) {
        Some(end) => rest.get(..=end).unwrap_or_default(),
        None => rest,
    }
}

/// The slot `index` and the place of the trimmed value of header line `line` (without its
/// line feed) whose name ends at `name_end`.
fn value_place(index: usize, line: &[u8], name_end: usize) -> (usize, usize, usize) {
    let value = line.get(name_end..).unwrap_or_default();
    let start = name_end + (value.len() - value.trim_ascii_start().len());
    let end = name_end + value.trim_ascii_end().len();
    (index, start, end.max(start))
}

/// What the header line `line` (without its line feed, not blank) is: `None` for
/// whitespace, else the header, its value's place noted when its name is known.
fn read_line(line: &[u8]) -> Result<Option<SeenHeader>> {
    // Names are short: a byte loop finds the colon sooner than a vector search is set up.
    let Some(colon) = line.iter().position(|&byte| byte == b':') else {
        // Header whitespace is ASCII (RFC 9110 OWS); the ASCII trims skip Unicode tables.
        let line = line.trim_ascii();
        if line.is_empty() {
            return Ok(None);
        }
        return Err(invalid(format!(
            "malformed part header line {:?}",
            excerpt(&String::from_utf8_lossy(line))
        )));
    };
    let name = line.get(..colon).unwrap_or_default().trim_ascii();
    let known = known_slot(name).map(|index| value_place(index, line, colon + 1));
    Ok(Some(SeenHeader {
        name_end: colon + 1,
        known,
    }))
}
