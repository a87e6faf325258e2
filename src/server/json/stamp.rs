//! The JSON texts of an entity's Timestamp (`Timestamp` and `odata.etag`), kept while the rows
//! being written share it: a batch stamps all its rows with one Timestamp, so a page of a query
//! formats each distinct instant once, and an instant of the day already formatted only has
//! its time of day redone.

use crate::model::limits::{TICKS_PER_DAY, TICKS_PER_SECOND};
use crate::model::{DateTime, ISO8601_LEN};

/// Where the time of day starts in `YYYY-MM-DDThh:mm:ss.fffffffZ`.
const TIME_AT: usize = 11;
/// Where each field of the time of day sits in the text, and its width.
const HOURS: (usize, usize) = (TIME_AT, 2);
const MINUTES: (usize, usize) = (TIME_AT + 3, 2);
const SECONDS: (usize, usize) = (TIME_AT + 6, 2);
const FRACTION: (usize, usize) = (TIME_AT + 9, 7);

/// Places of the colons of `YYYY-MM-DDThh:mm:ss.fffffffZ`.
const COLONS: (usize, usize) = (13, 16);

/// An ISO 8601 Timestamp with its two colons as `%3A`, as an ETag carries it.
const ESCAPED_LEN: usize = ISO8601_LEN + 4;

/// Before and after the escaped Timestamp in an ETag header value: `W/"datetime'…'"`.
const ETAG_OPEN: &str = "W/\"datetime'";
const ETAG_CLOSE: &str = "'\"";

/// Before and after the escaped Timestamp in the ETag's JSON string literal.
const ETAG_JSON_OPEN: &str = "\"W/\\\"datetime'";
const ETAG_JSON_CLOSE: &str = "'\\\"\"";

/// Length of an ETag header value: every Timestamp text has the same length.
pub(crate) const ETAG_TEXT_LEN: usize = ETAG_OPEN.len() + ESCAPED_LEN + ETAG_CLOSE.len();

/// Length of the ETag's JSON string literal.
const ETAG_JSON_LEN: usize = ETAG_JSON_OPEN.len() + ESCAPED_LEN + ETAG_JSON_CLOSE.len();

/// The name part of a row's ETag member.
const ETAG_NAME: &str = "\"odata.etag\":";
/// What separates the ETag member from the PartitionKey's value.
pub(super) const PARTITION_KEY_NAME: &str = ",\"PartitionKey\":";
/// What opens a row's last member, the Timestamp's value.
const TIMESTAMP_NAME: &str = ",\"Timestamp\":\"";

/// Length of a row's ETag member at minimal metadata ([`StampText::etag_member`]).
pub(super) const ETAG_MEMBER_LEN: usize =
    ETAG_NAME.len() + ETAG_JSON_LEN + PARTITION_KEY_NAME.len();
/// Length of a row's Timestamp member ([`StampText::timestamp_member`]).
pub(super) const TIMESTAMP_MEMBER_LEN: usize = TIMESTAMP_NAME.len() + ISO8601_LEN + 1;

/// The texts of the last Timestamp written.
#[derive(Debug)]
pub(super) struct StampText {
    /// The ticks the texts are of (`None` before the first).
    ticks: Option<i64>,
    /// The day (ticks / day) whose date `iso` holds.
    day: Option<i64>,
    iso: [u8; ISO8601_LEN],
    /// The weak ETag as a JSON string literal: `"W/\"datetime'<iso, ':' as %3A>'\""`;
    /// allocated by the first `set` (a writer made for one row and never used costs nothing).
    etag_json: String,
    /// What a row at minimal metadata writes between its object's opening and its
    /// PartitionKey's value: `"odata.etag":<etag_json>,"PartitionKey":`, one copy per row.
    etag_member: String,
    /// The row's last member: `,"Timestamp":"<text>"`.
    timestamp_member: String,
}

impl StampText {
    /// No Timestamp yet.
    pub(super) const fn new() -> Self {
        Self {
            ticks: None,
            day: None,
            iso: [0; ISO8601_LEN],
            etag_json: String::new(),
            etag_member: String::new(),
            timestamp_member: String::new(),
        }
    }

    /// Makes the texts those of `instant`.
    #[inline]
    pub(super) fn set(&mut self, instant: DateTime) {
        let ticks = instant.ticks();
        if self.ticks == Some(ticks) {
            return;
        }
        let day = ticks.div_euclid(TICKS_PER_DAY);
        if self.day == Some(day) {
            write_time_of_day(&mut self.iso, ticks.rem_euclid(TICKS_PER_DAY));
        } else {
            self.iso = instant.iso8601_bytes();
            self.day = Some(day);
        }
        self.ticks = Some(ticks);
        self.etag_json.clear();
        self.etag_json.reserve_exact(ETAG_JSON_LEN);
        self.etag_json.push_str(ETAG_JSON_OPEN);
        // ASCII by construction.
        push_colons_escaped(
            &mut self.etag_json,
            std::str::from_utf8(&self.iso).unwrap_or_default(),
        );
        self.etag_json.push_str(ETAG_JSON_CLOSE);
        // ASCII by construction.
        let text = std::str::from_utf8(&self.iso).unwrap_or_default();
        // Both have one length for every Timestamp: reserved exactly, they are allocated once
        // (a pushed-to empty `String` grew by three reallocations per point read).
        self.etag_member.clear();
        self.etag_member.reserve_exact(ETAG_MEMBER_LEN);
        self.etag_member.push_str(ETAG_NAME);
        self.etag_member.push_str(&self.etag_json);
        self.etag_member.push_str(PARTITION_KEY_NAME);
        self.timestamp_member.clear();
        self.timestamp_member.reserve_exact(TIMESTAMP_MEMBER_LEN);
        self.timestamp_member.push_str(TIMESTAMP_NAME);
        self.timestamp_member.push_str(text);
        self.timestamp_member.push('"');
    }

    /// The ISO 8601 text, as `DateTime`'s `Display` writes it.
    #[cfg(test)]
    pub(super) fn text(&self) -> &str {
        std::str::from_utf8(&self.iso).unwrap_or_default()
    }

    /// `,"Timestamp":"<the ISO 8601 text>"`, as an array of its fixed length: copied with a
    /// few moves where a `&str` took a `memcpy` call.
    #[inline]
    pub(super) fn timestamp_member(&self) -> &[u8; TIMESTAMP_MEMBER_LEN] {
        self.timestamp_member
            .as_bytes()
            .first_chunk()
            .unwrap_or(&[b' '; TIMESTAMP_MEMBER_LEN])
    }

    /// `"odata.etag":<the ETag's JSON string>,"PartitionKey":`, as a row at minimal
    /// metadata writes them, as an array of its fixed length (see `timestamp_member`).
    #[inline]
    pub(super) fn etag_member(&self) -> &[u8; ETAG_MEMBER_LEN] {
        self.etag_member
            .as_bytes()
            .first_chunk()
            .unwrap_or(&[b' '; ETAG_MEMBER_LEN])
    }

    /// The ETag's JSON string literal, quotes included.
    #[inline]
    pub(super) fn etag_json(&self) -> &str {
        &self.etag_json
    }

    /// The ETag header value of the Timestamp (`W/"datetime'…'"`), cut from its JSON literal,
    /// in a `String` of exactly its length: a header value takes such a buffer as it is,
    /// while one with spare capacity costs it a second allocation.
    pub(super) fn etag_text(&self) -> String {
        let escaped = self
            .etag_json
            .get(ETAG_JSON_OPEN.len()..self.etag_json.len().saturating_sub(ETAG_JSON_CLOSE.len()))
            .unwrap_or_default();
        let mut text = String::with_capacity(ETAG_OPEN.len() + escaped.len() + ETAG_CLOSE.len());
        text.push_str(ETAG_OPEN);
        text.push_str(escaped);
        text.push_str(ETAG_CLOSE);
        text
    }
}

/// Rewrites the `hh:mm:ss.fffffff` of `iso` for `in_day` ticks since midnight.
fn write_time_of_day(iso: &mut [u8; ISO8601_LEN], in_day: i64) {
    let seconds = in_day / TICKS_PER_SECOND;
    let fields = [
        (HOURS, seconds / 3600),
        (MINUTES, seconds / 60 % 60),
        (SECONDS, seconds % 60),
        (FRACTION, in_day % TICKS_PER_SECOND),
    ];
    for ((at, width), value) in fields {
        let mut rest = value;
        for slot in iso.iter_mut().skip(at).take(width).rev() {
            *slot = b'0' + u8::try_from(rest % 10).unwrap_or(0);
            rest /= 10;
        }
    }
}

/// Appends `timestamp` with each `:` percent-encoded (`%3A`), as an ETag carries it. The
/// ISO 8601 text of a Timestamp has its two colons at fixed places (`hh:mm:ss`), so they are
/// not searched for (a `char` search per piece cost a point read ~900 instructions over its
/// two ETag texts); any other text is split at every colon.
pub(super) fn push_colons_escaped(out: &mut String, timestamp: &str) {
    let bytes = timestamp.as_bytes();
    let fixed = bytes.len() == ISO8601_LEN
        && bytes.get(COLONS.0) == Some(&b':')
        && bytes.get(COLONS.1) == Some(&b':')
        && bytes.iter().filter(|&&b| b == b':').count() == 2;
    if fixed
        && let (Some(hours), Some(minutes), Some(seconds)) = (
            timestamp.get(..COLONS.0),
            timestamp.get(COLONS.0 + 1..COLONS.1),
            timestamp.get(COLONS.1 + 1..),
        )
    {
        out.push_str(hours);
        out.push_str("%3A");
        out.push_str(minutes);
        out.push_str("%3A");
        out.push_str(seconds);
        return;
    }
    for (index, part) in timestamp.split(':').enumerate() {
        if index > 0 {
            out.push_str("%3A");
        }
        out.push_str(part);
    }
}

#[cfg(test)]
mod tests {
    use super::StampText;
    use crate::model::DateTime;
    use crate::table::ETag;

    #[test]
    fn stamp_texts_match_the_model_for_every_order_of_instants() {
        let mut stamp = StampText::new();
        // Steps within a day, across days, backwards and repeated: every path of `set`.
        let ticks = [
            638_000_000_000_000_123_i64,
            638_000_000_000_000_123,
            638_000_000_000_000_124,
            638_000_000_123_456_789,
            637_999_999_999_999_999,
            0,
            1,
            863_999_999_999,
            864_000_000_000,
            3_155_378_975_999_999_999,
            3_155_378_975_000_000_000,
        ];
        let stepped = (0..3000_i64).map(|i| 630_000_000_000_000_000 + i * 7_777_777_777);
        for ticks in ticks.into_iter().chain(stepped) {
            let Ok(instant) = DateTime::from_ticks(ticks) else {
                continue;
            };
            stamp.set(instant);
            assert_eq!(stamp.text(), instant.to_string());
            let etag = ETag::from_timestamp(instant).to_string();
            assert_eq!(stamp.etag_text(), etag);
            assert_eq!(stamp.etag_text().capacity(), super::ETAG_TEXT_LEN);
            assert_eq!(
                stamp.etag_json(),
                serde_json::to_string(&etag).unwrap_or_default()
            );
        }
    }
}
