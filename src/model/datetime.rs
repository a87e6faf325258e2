//! `Edm.DateTime`: UTC instants at 100 ns resolution, and their ISO 8601 wire form.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use super::limits::{
    DATETIME_FRACTION_DIGITS, DATETIME_MAX_TICKS, DATETIME_MIN_TICKS, DAYS_TO_UNIX_EPOCH,
    NANOS_PER_TICK, TICKS_PER_DAY, TICKS_PER_SECOND, UNIX_EPOCH_TICKS,
};
use super::{EdmType, ModelError, Result};

/// A UTC instant counted in 100 ns ticks since 0001-01-01T00:00:00Z (the .NET epoch), limited to
/// the service's range 1601-01-01T00:00:00Z ..= 9999-12-31T23:59:59.9999999Z.
///
/// Its wire form is ISO 8601 in UTC: [`DateTime::parse`] reads `YYYY-MM-DDThh:mm:ss` with an
/// optional fraction of 1 to 7 digits and `Z` or `+00:00`; `Display` writes exactly 7
/// fractional digits and `Z`, so formatting then parsing gives back the same ticks.
///
/// ```
/// use strata::model::DateTime;
/// let t = DateTime::parse("2024-02-29T12:34:56.5Z")?;
/// assert_eq!(t.to_string(), "2024-02-29T12:34:56.5000000Z");
/// assert!(DateTime::parse("1600-12-31T23:59:59Z").is_err());
/// # Ok::<(), strata::model::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    ticks: i64,
}

impl DateTime {
    /// The earliest instant, 1601-01-01T00:00:00Z.
    pub const MIN: Self = Self {
        ticks: DATETIME_MIN_TICKS,
    };
    /// The latest instant, 9999-12-31T23:59:59.9999999Z.
    pub const MAX: Self = Self {
        ticks: DATETIME_MAX_TICKS,
    };

    /// The instant `ticks` 100 ns units after 0001-01-01T00:00:00Z, without a range check.
    /// Only for values already validated (e.g. the codec after its own check).
    pub(crate) const fn from_ticks_unchecked(ticks: i64) -> Self {
        Self { ticks }
    }

    /// The instant `ticks` 100 ns units after 0001-01-01T00:00:00Z.
    ///
    /// # Errors
    /// [`ModelError::DateTimeOutOfRange`] outside [`DateTime::MIN`]..=[`DateTime::MAX`].
    pub const fn from_ticks(ticks: i64) -> Result<Self> {
        if ticks < DATETIME_MIN_TICKS || ticks > DATETIME_MAX_TICKS {
            return Err(ModelError::DateTimeOutOfRange { ticks });
        }
        Ok(Self { ticks })
    }

    /// 100 ns ticks since 0001-01-01T00:00:00Z.
    #[must_use]
    pub const fn ticks(self) -> i64 {
        self.ticks
    }

    /// The instant `nanos` nanoseconds after 1970-01-01T00:00:00Z, rounded down to a tick.
    ///
    /// # Errors
    /// [`ModelError::DateTimeOutOfRange`] outside the service's range.
    pub fn from_unix_nanos(nanos: i128) -> Result<Self> {
        let ticks = nanos
            .div_euclid(i128::from(NANOS_PER_TICK))
            .saturating_add(i128::from(UNIX_EPOCH_TICKS));
        let ticks = i64::try_from(ticks).unwrap_or(if ticks < 0 { i64::MIN } else { i64::MAX });
        Self::from_ticks(ticks)
    }

    /// Nanoseconds since 1970-01-01T00:00:00Z.
    #[must_use]
    pub fn to_unix_nanos(self) -> i128 {
        (i128::from(self.ticks) - i128::from(UNIX_EPOCH_TICKS)) * i128::from(NANOS_PER_TICK)
    }

    /// The current wall-clock time, clamped into the service's range (a clock set before 1601
    /// or after 9999 reads as the nearest end).
    #[must_use]
    pub fn now() -> Self {
        let nanos = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(after) => i128::try_from(after.as_nanos()).unwrap_or(i128::MAX),
            Err(before) => i128::try_from(before.duration().as_nanos()).map_or(i128::MIN, |n| -n),
        };
        let ticks = nanos
            .div_euclid(i128::from(NANOS_PER_TICK))
            .saturating_add(i128::from(UNIX_EPOCH_TICKS))
            .clamp(
                i128::from(DATETIME_MIN_TICKS),
                i128::from(DATETIME_MAX_TICKS),
            );
        Self::from_ticks_unchecked(i64::try_from(ticks).unwrap_or(DATETIME_MAX_TICKS))
    }

    /// This instant plus `ticks` (which may be negative), if the result is in range.
    #[must_use]
    pub fn checked_add_ticks(self, ticks: i64) -> Option<Self> {
        self.ticks
            .checked_add(ticks)
            .and_then(|t| Self::from_ticks(t).ok())
    }

    /// [`DateTime::parse`], except that text without a UTC designator is read as UTC: the
    /// service stores an `Edm.DateTime` property written as `2008-07-10T00:00:00` as that
    /// instant in UTC (the official SDK's tests write one so).
    ///
    /// ```
    /// use strata::model::DateTime;
    /// assert_eq!(
    ///     DateTime::parse_unzoned_as_utc("2008-07-10T00:00:00")?,
    ///     DateTime::parse("2008-07-10T00:00:00Z")?
    /// );
    /// # Ok::<(), strata::model::ModelError>(())
    /// ```
    ///
    /// # Errors
    /// As [`DateTime::parse`], naming `input` as given.
    pub fn parse_unzoned_as_utc(input: &str) -> Result<Self> {
        Self::parse_with(input, true)
    }

    /// Parses the ISO 8601 UTC form `YYYY-MM-DDThh:mm:ss[.f{1,7}](Z|+00:00)`.
    ///
    /// # Errors
    /// [`ModelError::Parse`] for text not of that form or naming a day that does not exist;
    /// [`ModelError::DateTimeOutOfRange`] for a valid date outside the service's range.
    pub fn parse(input: &str) -> Result<Self> {
        Self::parse_with(input, false)
    }

    /// [`DateTime::parse`], reading text that ends after the time as UTC when `unzoned_is_utc`.
    fn parse_with(input: &str, unzoned_is_utc: bool) -> Result<Self> {
        let fail = |reason| ModelError::parse(EdmType::DateTime, input, reason);
        let mut cur = Cursor {
            rest: input.as_bytes(),
        };
        let year = cur
            .number(4)
            .ok_or_else(|| fail("expected a 4-digit year"))?;
        cur.expect(b'-')
            .ok_or_else(|| fail("expected '-' after the year"))?;
        let month = cur
            .number(2)
            .ok_or_else(|| fail("expected a 2-digit month"))?;
        cur.expect(b'-')
            .ok_or_else(|| fail("expected '-' after the month"))?;
        let day = cur
            .number(2)
            .ok_or_else(|| fail("expected a 2-digit day"))?;
        cur.expect(b'T')
            .ok_or_else(|| fail("expected 'T' after the date"))?;
        let hour = cur
            .number(2)
            .ok_or_else(|| fail("expected a 2-digit hour"))?;
        cur.expect(b':')
            .ok_or_else(|| fail("expected ':' after the hour"))?;
        let minute = cur
            .number(2)
            .ok_or_else(|| fail("expected 2-digit minutes"))?;
        cur.expect(b':')
            .ok_or_else(|| fail("expected ':' after the minutes"))?;
        let second = cur
            .number(2)
            .ok_or_else(|| fail("expected 2-digit seconds"))?;
        let mut fraction = 0;
        if cur.expect(b'.').is_some() {
            let digits = cur.digit_run();
            if digits.is_empty() {
                return Err(fail("expected digits after '.'"));
            }
            if digits.len() > DATETIME_FRACTION_DIGITS {
                return Err(fail("more than 7 fractional digits"));
            }
            for position in 0..DATETIME_FRACTION_DIGITS {
                let digit = digits.get(position).map_or(0, |d| i64::from(d - b'0'));
                fraction = fraction * 10 + digit;
            }
        }
        match cur.rest {
            b"Z" | b"+00:00" => {}
            [] if unzoned_is_utc => {}
            [] => return Err(fail("missing the UTC designator 'Z' or '+00:00'")),
            _ => return Err(fail("expected 'Z' or '+00:00' at the end")),
        }
        if !(1..=12).contains(&month) {
            return Err(fail("month is not 01..=12"));
        }
        if year == 0 || day == 0 || day > days_in_month(year, month) {
            return Err(fail("no such day"));
        }
        if hour > 23 || minute > 59 || second > 59 {
            return Err(fail("time of day is out of range"));
        }
        let days = days_from_civil(year, month, day) + DAYS_TO_UNIX_EPOCH;
        let seconds = (hour * 60 + minute) * 60 + second;
        Self::from_ticks(days * TICKS_PER_DAY + seconds * TICKS_PER_SECOND + fraction)
    }

    /// The ISO 8601 form with 7 fractional digits and `Z`, as `Display` writes it.
    #[must_use]
    pub fn to_iso8601(self) -> String {
        self.to_string()
    }
}

impl DateTime {
    /// The ISO 8601 text (`YYYY-MM-DDThh:mm:ss.fffffffZ`, ASCII) in a stack buffer, as
    /// `Display` writes it; for the writers that format an instant per entity.
    #[must_use]
    pub fn iso8601_bytes(self) -> [u8; ISO8601_LEN] {
        let days = self.ticks.div_euclid(TICKS_PER_DAY);
        let in_day = self.ticks.rem_euclid(TICKS_PER_DAY);
        let (year, month, day) = civil_from_days(days - DAYS_TO_UNIX_EPOCH);
        let seconds = in_day / TICKS_PER_SECOND;
        // Formatted by hand into a stack buffer at fixed offsets: this runs for every
        // Timestamp and ETag the layers above write, and `write!` with seven padded fields (or
        // a chain of iterators over them) is several times slower.
        let mut text = *b"0000-00-00T00:00:00.0000000Z";
        put_digits(&mut text, 0, 4, year);
        put_digits(&mut text, 5, 2, month);
        put_digits(&mut text, 8, 2, day);
        put_digits(&mut text, 11, 2, seconds / 3600);
        put_digits(&mut text, 14, 2, seconds / 60 % 60);
        put_digits(&mut text, 17, 2, seconds % 60);
        put_digits(
            &mut text,
            FRACTION_AT,
            DATETIME_FRACTION_DIGITS,
            in_day % TICKS_PER_SECOND,
        );
        text
    }
}

impl DateTime {
    /// The text the service writes for a DateTime property value: the ISO 8601 form with the
    /// fraction's trailing zeros cut, and no fraction at all on a whole second (the service
    /// returns a stored `.000Z` as `2020-09-17T00:00:00Z` and `.1110000` as `.111Z`; only the
    /// Timestamp and the ETag always carry seven digits).
    #[must_use]
    pub fn to_wire_text(self) -> String {
        let text = self.iso8601_bytes();
        let (head, rest) = text.split_at(FRACTION_AT - 1);
        let fraction = rest.get(1..=DATETIME_FRACTION_DIGITS).unwrap_or_default();
        let kept = fraction
            .iter()
            .rposition(|digit| *digit != b'0')
            .map_or(0, |last| last + 1);
        let mut out = String::with_capacity(ISO8601_LEN);
        out.push_str(std::str::from_utf8(head).unwrap_or_default());
        if kept > 0 {
            out.push('.');
            out.push_str(
                std::str::from_utf8(fraction.get(..kept).unwrap_or_default()).unwrap_or_default(),
            );
        }
        out.push('Z');
        out
    }
}

/// Offset of the first fraction digit in the ISO 8601 text (after `YYYY-MM-DDThh:mm:ss.`).
const FRACTION_AT: usize = 20;

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(std::str::from_utf8(&self.iso8601_bytes()).map_err(|_| fmt::Error)?)
    }
}

impl std::str::FromStr for DateTime {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

/// Writes the last `width` decimal digits of `value` into `text` at `at..at + width`.
/// Only years outside 1..=9999, from unchecked ticks, have more digits (or a sign); their
/// digits are then cut, never a panic.
fn put_digits(text: &mut [u8; ISO8601_LEN], at: usize, width: usize, value: i64) {
    let mut rest = value;
    for index in (at..at + width).rev() {
        if let Some(slot) = text.get_mut(index) {
            *slot = b'0' + u8::try_from(rest.rem_euclid(10)).unwrap_or(0);
        }
        rest /= 10;
    }
}

/// Length of the ISO 8601 form `YYYY-MM-DDThh:mm:ss.fffffffZ`.
pub const ISO8601_LEN: usize = 28;

/// A forward-only reader over ASCII bytes of a DateTime.
struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// Consumes exactly `width` ASCII digits as a number.
    fn number(&mut self, width: usize) -> Option<i64> {
        let (digits, rest) = self.rest.split_at_checked(width)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.rest = rest;
        Some(digits.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    }

    /// Consumes `byte` if it comes next.
    fn expect(&mut self, byte: u8) -> Option<()> {
        let (&first, rest) = self.rest.split_first()?;
        if first != byte {
            return None;
        }
        self.rest = rest;
        Some(())
    }

    /// Consumes and returns the run of ASCII digits that comes next.
    fn digit_run(&mut self) -> &'a [u8] {
        let len = self.rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (digits, rest) = self.rest.split_at(len.min(self.rest.len()));
        self.rest = rest;
        digits
    }
}

/// Whether `year` is a Gregorian leap year.
const fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days in `month` (1..=12) of `year`.
const fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's algorithm).
const fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date `days` after 1970-01-01 (inverse of [`days_from_civil`]).
const fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::DateTime;

    #[test]
    fn display_of_unchecked_out_of_range_ticks_does_not_panic() {
        for ticks in [i64::MIN, -1, 0, i64::MAX] {
            let text = DateTime::from_ticks_unchecked(ticks).to_string();
            assert_eq!(text.len(), super::ISO8601_LEN, "{ticks}: {text}");
        }
        assert_eq!(
            DateTime::from_ticks_unchecked(0).to_string(),
            "0001-01-01T00:00:00.0000000Z"
        );
    }

    #[test]
    fn display_puts_every_field_at_its_offset_and_parses_back() {
        assert_eq!(
            DateTime::from_ticks_unchecked(super::DATETIME_MAX_TICKS).to_string(),
            "9999-12-31T23:59:59.9999999Z"
        );
        let mid = DateTime::parse("2026-11-22T20:05:09.0123456Z").unwrap();
        assert_eq!(mid.to_string(), "2026-11-22T20:05:09.0123456Z");
        // A sweep over the range, with a step that lands on every field's digits.
        let step = (super::DATETIME_MAX_TICKS - super::DATETIME_MIN_TICKS) / 9_973;
        let range = super::DATETIME_MIN_TICKS..super::DATETIME_MAX_TICKS - 7_654_321;
        for ticks in range.step_by(usize::try_from(step).unwrap()) {
            let at = DateTime::from_ticks_unchecked(ticks + 7_654_321);
            assert_eq!(DateTime::parse(&at.to_string()).unwrap(), at, "{ticks}");
        }
    }
}
