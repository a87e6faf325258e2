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

/// The name part of a row's ETag member.
const ETAG_NAME: &str = "\"odata.etag\":";
/// What separates the ETag member from the PartitionKey's value.
pub(super) const PARTITION_KEY_NAME: &str = ",\"PartitionKey\":";

/// The texts of the last Timestamp written.
#[derive(Debug)]
pub(super) struct StampText {
    /// The ticks the texts are of (`None` before the first).
    ticks: Option<i64>,
    /// The day (ticks / day) whose date `iso` holds.
    day: Option<i64>,
    iso: [u8; ISO8601_LEN],
    /// `iso` as text.
    text: String,
    /// The weak ETag as a JSON string literal: `"W/\"datetime'<text, ':' as %3A>'\""`.
    etag_json: String,
    /// What a row at minimal metadata writes between its object's opening and its
    /// PartitionKey's value: `"odata.etag":<etag_json>,"PartitionKey":`, one copy per row.
    etag_member: String,
    /// The row's last member: `,"Timestamp":"<text>"`.
    timestamp_member: String,
}

impl StampText {
    /// No Timestamp yet.
    pub(super) fn new() -> Self {
        Self {
            ticks: None,
            day: None,
            iso: [0; ISO8601_LEN],
            text: String::with_capacity(ISO8601_LEN),
            etag_json: String::with_capacity(ISO8601_LEN + 24),
            etag_member: String::with_capacity(ISO8601_LEN + 56),
            timestamp_member: String::with_capacity(ISO8601_LEN + 16),
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
        self.text.clear();
        // ASCII by construction.
        self.text
            .push_str(std::str::from_utf8(&self.iso).unwrap_or_default());
        self.etag_json.clear();
        write_etag(&mut self.etag_json, &self.text);
        self.etag_member.clear();
        self.etag_member.push_str(ETAG_NAME);
        self.etag_member.push_str(&self.etag_json);
        self.etag_member.push_str(PARTITION_KEY_NAME);
        self.timestamp_member.clear();
        self.timestamp_member.push_str(",\"Timestamp\":\"");
        self.timestamp_member.push_str(&self.text);
        self.timestamp_member.push('"');
    }

    /// The ISO 8601 text, as `DateTime`'s `Display` writes it.
    #[cfg(test)]
    pub(super) fn text(&self) -> &str {
        &self.text
    }

    /// `,"Timestamp":"<the ISO 8601 text>"`.
    #[inline]
    pub(super) fn timestamp_member(&self) -> &str {
        &self.timestamp_member
    }

    /// `"odata.etag":<the ETag's JSON string>,"PartitionKey":`, as a row at minimal
    /// metadata writes them.
    #[inline]
    pub(super) fn etag_member(&self) -> &str {
        &self.etag_member
    }

    /// The ETag's JSON string literal, quotes included.
    #[inline]
    pub(super) fn etag_json(&self) -> &str {
        &self.etag_json
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

/// Appends the JSON string of the weak ETag of an entity written at `timestamp` (its ISO 8601
/// form): `W/"datetime'<timestamp, ':' as %3A>'"`, as [`crate::table::ETag`] displays it,
/// without formatting the timestamp a second time.
pub(super) fn write_etag(out: &mut String, timestamp: &str) {
    out.push_str("\"W/\\\"datetime'");
    push_colons_escaped(out, timestamp);
    out.push_str("'\\\"\"");
}

/// Appends `timestamp` with each `:` percent-encoded (`%3A`), as an ETag carries it. The
/// ISO 8601 text of a Timestamp has its two colons at fixed places (`hh:mm:ss`), so they are
/// not searched for (a `char` search per piece cost a point read ~900 instructions over its
/// two ETag texts); any other text is split at every colon.
pub(super) fn push_colons_escaped(out: &mut String, timestamp: &str) {
    /// Places of the colons of `YYYY-MM-DDThh:mm:ss.fffffffZ`.
    const COLONS: (usize, usize) = (13, 16);
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
            assert_eq!(
                stamp.etag_json(),
                serde_json::to_string(&etag).unwrap_or_default()
            );
        }
    }
}
