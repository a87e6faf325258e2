//! ETags: the service's weak tag derived from an entity's Timestamp.

use std::fmt;
use std::str::FromStr;

use super::error::TableError;
use crate::model::DateTime;

/// What the wire form of an ETag starts and ends with around the percent-encoded instant.
const ETAG_PREFIX: &str = "W/\"datetime'";
const ETAG_SUFFIX: &str = "'\"";

/// An entity's ETag: its Timestamp, written as the service writes it,
/// `W/"datetime'2024-05-01T12%3A00%3A00.1234567Z'"` (colons percent-encoded).
///
/// ```
/// use strata::ETag;
/// use strata::model::DateTime;
/// let tag: ETag = "W/\"datetime'2024-05-01T12%3A00%3A00.1234567Z'\"".parse()?;
/// assert_eq!(tag.timestamp(), DateTime::parse("2024-05-01T12:00:00.1234567Z")?);
/// assert_eq!(tag.to_string(), "W/\"datetime'2024-05-01T12%3A00%3A00.1234567Z'\"");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ETag(DateTime);

impl ETag {
    /// The ETag of an entity last written at `timestamp`.
    #[must_use]
    pub const fn from_timestamp(timestamp: DateTime) -> Self {
        Self(timestamp)
    }

    /// The Timestamp this ETag stands for.
    #[must_use]
    pub const fn timestamp(self) -> DateTime {
        self.0
    }

    /// Parses the wire form; the colons may be percent-encoded (`%3A`, any case) or plain.
    ///
    /// # Errors
    /// [`TableError::InvalidInput`] for a strong tag or anything else not of that form.
    pub fn parse(text: &str) -> Result<Self, TableError> {
        let invalid = |reason: &str| TableError::InvalidInput {
            reason: format!("ETag {text:?} is malformed: {reason}"),
        };
        let inner = text
            .strip_prefix(ETAG_PREFIX)
            .and_then(|rest| rest.strip_suffix(ETAG_SUFFIX))
            .ok_or_else(|| invalid("expected W/\"datetime'...'\""))?;
        let decoded = inner.replace("%3A", ":").replace("%3a", ":");
        DateTime::parse(&decoded)
            .map(Self)
            .map_err(|error| invalid(&error.to_string()))
    }
}

impl fmt::Display for ETag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let instant = self.0.to_string();
        f.write_str(ETAG_PREFIX)?;
        for part in instant.split_inclusive(':') {
            match part.strip_suffix(':') {
                Some(head) => {
                    f.write_str(head)?;
                    f.write_str("%3A")?;
                }
                None => f.write_str(part)?,
            }
        }
        f.write_str(ETAG_SUFFIX)
    }
}

impl FromStr for ETag {
    type Err = TableError;

    fn from_str(text: &str) -> Result<Self, TableError> {
        Self::parse(text)
    }
}

/// The `If-Match` condition of an update, merge or delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfMatch {
    /// `*`: applies to whatever version is stored (the entity must still exist).
    Any,
    /// Applies only if the stored entity still has this ETag.
    Etag(ETag),
}

impl From<ETag> for IfMatch {
    fn from(tag: ETag) -> Self {
        Self::Etag(tag)
    }
}
