//! The JSON texts of an entity's Timestamp (`Timestamp` and `odata.etag`), kept while the rows
//! being written share it: a batch stamps all its rows with one Timestamp, so a page of a query
//! formats each distinct instant once, and an instant of the day already formatted only has
//! its time of day redone.

use super::write::push_ascii_array;
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

/// Length of a row's ETag member at minimal metadata.
const ETAG_MEMBER_LEN: usize = ETAG_NAME.len() + ETAG_JSON_LEN + PARTITION_KEY_NAME.len();
/// Length of a row's Timestamp member.
const TIMESTAMP_MEMBER_LEN: usize = TIMESTAMP_NAME.len() + ISO8601_LEN + 1;

/// The texts of the last Timestamp written.
#[derive(Debug)]
pub(super) struct StampText {
    /// The ticks the texts are of (`None` before the first).
    ticks: Option<i64>,
    /// The day (ticks / day) whose date `iso` holds.
    day: Option<i64>,
    iso: [u8; ISO8601_LEN],
    /// `iso` with its colons as `%3A`, as both ETag texts carry it.
    escaped: [u8; ESCAPED_LEN],
    /// Whether the three texts below are those of `ticks`.
    built: bool,
    /// The weak ETag as a JSON string literal: `"W/\"datetime'<iso, ':' as %3A>'\""`.
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
            escaped: [0; ESCAPED_LEN],
            built: false,
            etag_json: String::new(),
            etag_member: String::new(),
            timestamp_member: String::new(),
        }
    }

    /// Makes the texts those of `instant`. The JSON texts rows copy are built only if `kept`
    /// (more rows are expected); otherwise they are written straight from the ISO text, so
    /// that a one-row response (a point read) builds no text that no other row copies.
    #[inline]
    pub(super) fn set(&mut self, instant: DateTime, kept: bool) {
        let ticks = instant.ticks();
        if self.ticks != Some(ticks) {
            let day = ticks.div_euclid(TICKS_PER_DAY);
            if self.day == Some(day) {
                write_time_of_day(&mut self.iso, ticks.rem_euclid(TICKS_PER_DAY));
            } else {
                self.iso = instant.iso8601_bytes();
                self.day = Some(day);
            }
            self.escaped = colons_escaped(&self.iso);
            self.ticks = Some(ticks);
            self.built = false;
        }
        if kept && !self.built {
            self.build();
        }
    }

    /// Builds the JSON texts of `iso`, which rows then copy.
    fn build(&mut self) {
        self.etag_json.clear();
        self.etag_json.reserve_exact(ETAG_JSON_LEN);
        push_etag_json(&mut self.etag_json, &self.escaped);
        // Both have one length for every Timestamp: reserved exactly, they are allocated once
        // (a pushed-to empty `String` grew by three reallocations per point read).
        self.etag_member.clear();
        self.etag_member.reserve_exact(ETAG_MEMBER_LEN);
        self.etag_member.push_str(ETAG_NAME);
        self.etag_member.push_str(&self.etag_json);
        self.etag_member.push_str(PARTITION_KEY_NAME);
        self.timestamp_member.clear();
        self.timestamp_member.reserve_exact(TIMESTAMP_MEMBER_LEN);
        push_timestamp_member(&mut self.timestamp_member, &self.iso);
        self.built = true;
    }

    /// The ISO 8601 text, as `DateTime`'s `Display` writes it.
    #[cfg(test)]
    pub(super) fn text(&self) -> &str {
        std::str::from_utf8(&self.iso).unwrap_or_default()
    }

    /// Appends `,"Timestamp":"<the ISO 8601 text>"`: once built, copied as an array of its
    /// fixed length (a few moves where a `&str` took a `memcpy` call per row).
    #[inline]
    pub(super) fn push_timestamp_member(&self, out: &mut String) {
        match self
            .timestamp_member
            .as_bytes()
            .first_chunk::<TIMESTAMP_MEMBER_LEN>()
        {
            // SAFETY: the member is built from ASCII texts (its name and the Timestamp's).
            Some(member) if self.built => unsafe { push_ascii_array(out, member) },
            _ => push_timestamp_member(out, &self.iso),
        }
    }

    /// Appends `"odata.etag":<the ETag's JSON string>,"PartitionKey":`, as a row at minimal
    /// metadata writes them (once built, as an array of its fixed length).
    #[inline]
    pub(super) fn push_etag_member(&self, out: &mut String) {
        if let Some(member) = self.etag_member.as_bytes().first_chunk::<ETAG_MEMBER_LEN>()
            && self.built
        {
            // SAFETY: the member is built from ASCII texts (its name and the escaped ETag).
            unsafe { push_ascii_array(out, member) };
        } else {
            out.push_str(ETAG_NAME);
            push_etag_json(out, &self.escaped);
            out.push_str(PARTITION_KEY_NAME);
        }
    }

    /// Appends the ETag's JSON string literal, quotes included.
    #[inline]
    pub(super) fn push_etag_json(&self, out: &mut String) {
        if self.built {
            out.push_str(&self.etag_json);
        } else {
            push_etag_json(out, &self.escaped);
        }
    }

    /// The ETag's JSON string literal, quotes included.
    #[cfg(test)]
    pub(super) fn etag_json(&self) -> String {
        let mut out = String::new();
        self.push_etag_json(&mut out);
        out
    }

    /// The ETag header value of the Timestamp (`W/"datetime'…'"`), in a `String` of exactly
    /// its length: a header value takes such a buffer as it is, while one with spare capacity
    /// costs it a second allocation.
    pub(super) fn etag_text(&self) -> String {
        let mut text = String::with_capacity(ETAG_TEXT_LEN);
        text.push_str(ETAG_OPEN);
        // SAFETY: a Timestamp's text with `%3A` for its colons is ASCII.
        unsafe { push_ascii_array(&mut text, &self.escaped) };
        text.push_str(ETAG_CLOSE);
        text
    }
}

/// Appends the ETag's JSON string literal of `escaped`, a Timestamp's text with its colons
/// as `%3A`.
fn push_etag_json(out: &mut String, escaped: &[u8; ESCAPED_LEN]) {
    out.push_str(ETAG_JSON_OPEN);
    // SAFETY: a Timestamp's text with `%3A` for its colons is ASCII.
    unsafe { push_ascii_array(out, escaped) };
    out.push_str(ETAG_JSON_CLOSE);
}

/// Appends the ISO 8601 text of `timestamp` with its two colons percent-encoded (`%3A`), as
/// an ETag carries it.
pub(super) fn push_iso_colons_escaped(out: &mut String, timestamp: DateTime) {
    // SAFETY: `iso8601_bytes` writes ASCII (digits and `-:.TZ`), and escaping its colons
    // adds ASCII.
    unsafe { push_ascii_array(out, &colons_escaped(&timestamp.iso8601_bytes())) };
}

/// `iso` with its two colons percent-encoded (`%3A`). A text written by
/// `DateTime::iso8601_bytes` has its colons at fixed places (`hh:mm:ss`), so the pieces
/// between them are copied at fixed offsets (a `char` search per piece cost a point read ~900
/// instructions over its two ETag texts, pushing the five pieces ~200 per text).
fn colons_escaped(iso: &[u8; ISO8601_LEN]) -> [u8; ESCAPED_LEN] {
    let mut out = [0_u8; ESCAPED_LEN];
    let pieces = [
        (0..COLONS.0, 0),
        (COLONS.0 + 1..COLONS.1, COLONS.0 + 3),
        (COLONS.1 + 1..ISO8601_LEN, COLONS.1 + 5),
    ];
    for (from, to) in pieces {
        let len = from.len();
        if let (Some(slot), Some(piece)) = (out.get_mut(to..to + len), iso.get(from)) {
            slot.copy_from_slice(piece);
        }
    }
    for at in [COLONS.0, COLONS.1 + 2] {
        if let Some(slot) = out.get_mut(at..at + 3) {
            slot.copy_from_slice(b"%3A");
        }
    }
    out
}

/// Appends `,"Timestamp":"<iso>"`.
fn push_timestamp_member(out: &mut String, iso: &[u8; ISO8601_LEN]) {
    out.push_str(TIMESTAMP_NAME);
    // SAFETY: a Timestamp's ISO 8601 text is ASCII by construction (digits and `-:.TZ`).
    unsafe { push_ascii_array(out, iso) };
    out.push('"');
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
            stamp.set(instant, false);
            assert_eq!(stamp.text(), instant.to_string());
            let etag = ETag::from_timestamp(instant).to_string();
            assert_eq!(stamp.etag_text(), etag);
            assert_eq!(stamp.etag_text().capacity(), super::ETAG_TEXT_LEN);
            let etag_json = serde_json::to_string(&etag).unwrap_or_default();
            assert_eq!(stamp.etag_json(), etag_json);
            let members = |stamp: &StampText| {
                let mut out = String::new();
                stamp.push_etag_member(&mut out);
                stamp.push_timestamp_member(&mut out);
                out
            };
            let expected =
                format!("\"odata.etag\":{etag_json},\"PartitionKey\":,\"Timestamp\":\"{instant}\"");
            // Written straight for a lone row, copied from the texts built for rows to come.
            assert_eq!(members(&stamp), expected, "written straight");
            stamp.set(instant, true);
            assert_eq!(members(&stamp), expected, "copied");
            assert_eq!(stamp.etag_json(), etag_json);
            assert_eq!(stamp.etag_text(), etag);
        }
    }
}
