//! Splits `$filter` text into tokens, converting every literal to its EDM value on the way.

use std::borrow::Cow;

use super::ast::Literal;
use super::error::{QueryError, Result, SyntaxError, excerpt};
use crate::model::{DateTime, Guid};

/// One token and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token<'a> {
    pub(super) kind: TokenKind<'a>,
    pub(super) position: usize,
}

/// The kinds of token.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum TokenKind<'a> {
    /// `(`
    Open,
    /// `)`
    Close,
    /// An identifier: a property name, an operator, `and`/`or`/`not`, or one of the literal
    /// words `true`, `false`, `NaN`, `INF` (which of these it is depends on where it stands).
    Word(&'a str),
    /// A literal that cannot be anything else.
    Literal(Literal),
    /// The end of the text.
    End,
}

impl TokenKind<'_> {
    /// The token quoted for an error message.
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Open => "'('".to_owned(),
            Self::Close => "')'".to_owned(),
            Self::Word(word) => format!("{:?}", excerpt(word)),
            Self::Literal(literal) => format!("literal {}", excerpt(&literal.to_string())),
            Self::End => "the end of the filter".to_owned(),
        }
    }
}

/// A cursor over the text producing one token at a time.
pub(super) struct Lexer<'a> {
    text: &'a str,
    offset: usize,
}

impl<'a> Lexer<'a> {
    pub(super) const fn new(text: &'a str) -> Self {
        Self { text, offset: 0 }
    }

    /// The next token; [`TokenKind::End`] forever once the text is consumed.
    pub(super) fn next_token(&mut self) -> Result<Token<'a>> {
        let rest = self.rest();
        let trimmed = rest.trim_start();
        self.offset += rest.len() - trimmed.len();
        let position = self.offset;
        let Some(first) = trimmed.chars().next() else {
            return Ok(Token {
                kind: TokenKind::End,
                position,
            });
        };
        let kind = match first {
            '(' => {
                self.offset += 1;
                TokenKind::Open
            }
            ')' => {
                self.offset += 1;
                TokenKind::Close
            }
            '\'' => TokenKind::Literal(Literal::String(self.quoted(position)?.into())),
            '-' | '0'..='9' => TokenKind::Literal(self.number(position)?),
            c if c.is_alphabetic() || c == '_' => self.word(position)?,
            found => {
                return Err(QueryError::new(
                    position,
                    SyntaxError::UnexpectedChar { found },
                ));
            }
        };
        Ok(Token { kind, position })
    }

    fn rest(&self) -> &'a str {
        self.text.get(self.offset..).unwrap_or_default()
    }

    /// Consumes the identifier at the cursor and, if a quote follows it directly, the typed
    /// literal it prefixes.
    fn word(&mut self, position: usize) -> Result<TokenKind<'a>> {
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = rest.get(..len).unwrap_or_default();
        self.offset += len;
        if !self.rest().starts_with('\'') {
            return Ok(TokenKind::Word(word));
        }
        let quote = self.offset;
        let body = self.quoted(quote)?;
        let literal = typed_literal(word, &body).map_err(|kind| QueryError::new(position, kind))?;
        Ok(TokenKind::Literal(literal))
    }

    /// Consumes a quoted literal starting at the quote at `position`; `''` inside stands for
    /// one quote.
    fn quoted(&mut self, position: usize) -> Result<String> {
        let body = self.rest().get(1..).unwrap_or_default();
        let mut out = String::new();
        let mut start = 0;
        loop {
            let Some(found) = body.get(start..).and_then(|tail| tail.find('\'')) else {
                return Err(QueryError::new(position, SyntaxError::UnterminatedString));
            };
            let quote = start + found;
            out.push_str(body.get(start..quote).unwrap_or_default());
            if body
                .get(quote + 1..)
                .is_some_and(|tail| tail.starts_with('\''))
            {
                out.push('\'');
                start = quote + 2;
            } else {
                // Opening quote + body up to and including the closing quote.
                self.offset += 1 + quote + 1;
                return Ok(out);
            }
        }
    }

    /// Consumes a numeric literal: `-?digits` then an optional fraction, exponent and type
    /// suffix (`L`/`l` for Int64, `D`/`d` for Double), or `-INF`.
    fn number(&mut self, position: usize) -> Result<Literal> {
        let rest = self.rest();
        let bytes = rest.as_bytes();
        if rest.starts_with("-INF") && !continues_word(rest.get(4..).unwrap_or_default()) {
            self.offset += 4;
            return Ok(Literal::Double(f64::NEG_INFINITY));
        }
        let mut end = usize::from(bytes.first() == Some(&b'-'));
        let digits = |from: usize| {
            bytes.get(from..).map_or(0, |tail| {
                tail.iter().take_while(|b| b.is_ascii_digit()).count()
            })
        };
        let integer_digits = digits(end);
        end += integer_digits;
        let mut is_double = false;
        let mut valid = integer_digits > 0;
        if bytes.get(end) == Some(&b'.') {
            is_double = true;
            let fraction = digits(end + 1);
            valid &= fraction > 0;
            end += 1 + fraction;
        }
        if matches!(bytes.get(end), Some(b'e' | b'E')) {
            is_double = true;
            end += 1;
            if matches!(bytes.get(end), Some(b'+' | b'-')) {
                end += 1;
            }
            let exponent = digits(end);
            valid &= exponent > 0;
            end += exponent;
        }
        let number = rest.get(..end).unwrap_or_default();
        let suffix = bytes.get(end).copied();
        let kind = match suffix {
            Some(b'L' | b'l') if !is_double => {
                end += 1;
                NumberKind::Int64
            }
            Some(b'D' | b'd') => {
                end += 1;
                NumberKind::Double
            }
            _ if is_double => NumberKind::Double,
            _ => NumberKind::Int32,
        };
        let text = rest.get(..end).unwrap_or_default();
        // A number runs into a word ("12abc", "1.5Lx"): one malformed token, not two.
        let tail = rest.get(end..).unwrap_or_default();
        let fail = |reason| {
            QueryError::new(
                position,
                SyntaxError::BadNumber {
                    what: kind.name(),
                    text: excerpt(text),
                    reason,
                },
            )
        };
        if !valid {
            return Err(fail("expected digits"));
        }
        if continues_word(tail) {
            return Err(fail(
                "followed by letters (a type suffix is L for Int64 or D for Double)",
            ));
        }
        self.offset += end;
        match kind {
            NumberKind::Int32 => number
                .parse::<i32>()
                .map(Literal::Int32)
                .map_err(|_| fail("out of the Int32 range (use the L suffix for Int64)")),
            NumberKind::Int64 => number
                .parse::<i64>()
                .map(Literal::Int64)
                .map_err(|_| fail("out of the Int64 range")),
            NumberKind::Double => match number.parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(Literal::Double(value)),
                _ => Err(fail("out of the Double range")),
            },
        }
    }
}

/// The types a numeric literal can denote.
#[derive(Debug, Clone, Copy)]
enum NumberKind {
    Int32,
    Int64,
    Double,
}

impl NumberKind {
    const fn name(self) -> &'static str {
        match self {
            Self::Int32 => "Edm.Int32",
            Self::Int64 => "Edm.Int64",
            Self::Double => "Edm.Double",
        }
    }
}

/// Whether `tail` starts with a character that would continue an identifier or number.
fn continues_word(tail: &str) -> bool {
    tail.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

/// The literal `prefix'body'`. `X` is case-sensitive and `binary`, `datetime` and `guid` are
/// not, as in the OData grammar the service implements.
fn typed_literal(prefix: &str, body: &str) -> Result<Literal, SyntaxError> {
    let bad = |what: &'static str, reason: String| SyntaxError::BadTypedLiteral {
        what,
        text: excerpt(body),
        reason,
    };
    if prefix == "X" || prefix.eq_ignore_ascii_case("binary") {
        return hex_bytes(body)
            .map(|bytes| Literal::Binary(bytes.into()))
            .map_err(|reason| bad("Edm.Binary", reason.to_owned()));
    }
    if prefix.eq_ignore_ascii_case("datetime") {
        // OData's own literal has no zone (`datetime'2008-07-10T00:00:00'`); the service reads
        // it as UTC, as it reads such an entity value.
        return DateTime::parse_unzoned_as_utc(&with_seconds(body))
            .map(Literal::DateTime)
            .map_err(|error| bad("Edm.DateTime", error.to_string()));
    }
    if prefix.eq_ignore_ascii_case("guid") {
        return Guid::parse(body)
            .map(Literal::Guid)
            .map_err(|error| bad("Edm.Guid", error.to_string()));
    }
    Err(SyntaxError::UnknownLiteralPrefix {
        prefix: excerpt(prefix),
    })
}

/// `body` with `:00` seconds when its time names only hours and minutes
/// (`2008-07-10T12:30`, `2008-07-10T12:30Z`): OData's datetime literal makes the seconds
/// optional.
fn with_seconds(body: &str) -> Cow<'_, str> {
    const MINUTES_END: usize = "2008-07-10T12:30".len();
    let bytes = body.as_bytes();
    let time_at = bytes.get(10) == Some(&b'T') && bytes.get(13) == Some(&b':');
    match body.split_at_checked(MINUTES_END) {
        Some((head, tail)) if time_at && matches!(tail, "" | "Z") => {
            Cow::Owned(format!("{head}:00{tail}"))
        }
        _ => Cow::Borrowed(body),
    }
}

/// The bytes of an even-length run of hex digits (either case).
fn hex_bytes(hex: &str) -> Result<Vec<u8>, &'static str> {
    if !hex.len().is_multiple_of(2) {
        return Err("an odd number of hex digits");
    }
    hex.as_bytes()
        .chunks_exact(2)
        .map(|pair| match pair {
            [high, low] => Ok(hex_digit(*high)? << 4 | hex_digit(*low)?),
            _ => Err("an odd number of hex digits"),
        })
        .collect()
}

const fn hex_digit(c: u8) -> Result<u8, &'static str> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err("a character that is not a hex digit"),
    }
}
