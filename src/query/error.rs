//! Errors of the query layer: a `$filter` that does not parse.

use super::limits::{ERROR_EXCERPT_CHARS, MAX_FILTER_BYTES, MAX_NESTING};

/// A `$filter` text that is not a valid filter, with the byte offset where it goes wrong.
///
/// `position` is always `<=` the length of the text: it points at the first byte of the
/// offending token, or at the end of the text when something is missing there.
///
/// ```
/// use strata::query::{Filter, SyntaxError};
/// let error = Filter::parse("Age eq 'unterminated").unwrap_err();
/// assert_eq!(error.position, 7);
/// assert!(matches!(error.kind, SyntaxError::UnterminatedString));
/// assert_eq!(error.azure_code(), "InvalidInput");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid $filter at byte {position}: {kind}")]
pub struct QueryError {
    /// Byte offset into the filter text of the offending token (or of its end).
    pub position: usize,
    /// What is wrong there.
    pub kind: SyntaxError,
}

impl QueryError {
    pub(crate) const fn new(position: usize, kind: SyntaxError) -> Self {
        Self { position, kind }
    }

    /// The Azure error code the service answers a bad filter with.
    #[must_use]
    pub const fn azure_code(&self) -> &'static str {
        "InvalidInput"
    }

    /// The message without the position.
    #[must_use]
    pub fn message(&self) -> String {
        self.kind.to_string()
    }
}

/// The ways a `$filter` text can be wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SyntaxError {
    /// The text holds no expression at all.
    #[error("the filter is empty")]
    Empty,
    /// The text is longer than [`MAX_FILTER_BYTES`].
    #[error("the filter is {len} bytes long; at most {MAX_FILTER_BYTES} are accepted")]
    TooLong {
        /// Length of the text in bytes.
        len: usize,
    },
    /// Parentheses and `not` nest deeper than [`MAX_NESTING`].
    #[error("parentheses and 'not' nest deeper than {MAX_NESTING} levels")]
    TooDeep,
    /// A character that starts no token.
    #[error("unexpected character {found:?}")]
    UnexpectedChar {
        /// The character found.
        found: char,
    },
    /// A token where another was required.
    #[error("expected {expected}, found {found}")]
    Unexpected {
        /// What the grammar allows here.
        expected: &'static str,
        /// The token found (quoted, cut), or "the end of the filter".
        found: String,
    },
    /// A word where a comparison operator belongs; operators are lowercase.
    #[error(
        "unknown comparison operator {found:?} (expected eq, ne, gt, ge, lt or le, in lowercase)"
    )]
    UnknownOperator {
        /// The word found.
        found: String,
    },
    /// A comparison of two literals or of two properties: one side must be a property and
    /// the other a literal.
    #[error("a comparison needs a property on one side and a literal on the other")]
    NeedsPropertyAndLiteral,
    /// A `'` with no closing quote.
    #[error("unterminated string literal")]
    UnterminatedString,
    /// A word followed by a quote that is not `datetime`, `guid`, `X` or `binary`.
    #[error("unknown literal prefix {prefix:?} (expected datetime, guid, X or binary)")]
    UnknownLiteralPrefix {
        /// The word found.
        prefix: String,
    },
    /// A malformed number, or one out of the range of its type.
    #[error("invalid {what} literal {text:?}: {reason}")]
    BadNumber {
        /// The type the literal denotes (`Edm.Int32`, `Edm.Int64`, `Edm.Double`).
        what: &'static str,
        /// The literal's text (cut).
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A `datetime'...'`, `guid'...'` or binary literal whose content does not parse.
    #[error("invalid {what} literal {text:?}: {reason}")]
    BadTypedLiteral {
        /// The type the literal denotes.
        what: &'static str,
        /// The quoted content (cut).
        text: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// `text` cut to [`ERROR_EXCERPT_CHARS`] characters for an error message.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(ERROR_EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", text.get(..end).unwrap_or_default()),
        None => text.to_owned(),
    }
}

/// Result alias of the query layer.
pub type Result<T, E = QueryError> = std::result::Result<T, E>;
