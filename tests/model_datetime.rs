//! SPEC §2 rules for `Edm.DateTime`: range, resolution, ISO 8601 wire form.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use proptest::prelude::*;
use strata::model::{DateTime, EdmType, ModelError};

const MIN_TICKS: i64 = 504_911_232_000_000_000;
const MAX_TICKS: i64 = 3_155_378_975_999_999_999;

#[test]
fn datetime_range_ends_are_accepted() {
    assert_eq!(DateTime::from_ticks(MIN_TICKS).unwrap(), DateTime::MIN);
    assert_eq!(DateTime::from_ticks(MAX_TICKS).unwrap(), DateTime::MAX);
    assert_eq!(DateTime::MIN.to_string(), "1601-01-01T00:00:00.0000000Z");
    assert_eq!(DateTime::MAX.to_string(), "9999-12-31T23:59:59.9999999Z");
    assert_eq!(
        DateTime::parse("1601-01-01T00:00:00Z").unwrap(),
        DateTime::MIN
    );
    assert_eq!(
        DateTime::parse("9999-12-31T23:59:59.9999999Z").unwrap(),
        DateTime::MAX
    );
}

#[test]
fn datetime_one_tick_outside_the_range_is_rejected() {
    let err = DateTime::from_ticks(MIN_TICKS - 1).unwrap_err();
    assert_eq!(
        err,
        ModelError::DateTimeOutOfRange {
            ticks: MIN_TICKS - 1
        }
    );
    assert_eq!(err.azure_code(), "OutOfRangeInput");
    assert_eq!(
        DateTime::from_ticks(MAX_TICKS + 1).unwrap_err(),
        ModelError::DateTimeOutOfRange {
            ticks: MAX_TICKS + 1
        }
    );
    assert!(DateTime::from_ticks(i64::MIN).is_err());
    assert!(DateTime::from_ticks(i64::MAX).is_err());
    assert_eq!(
        DateTime::parse("1600-12-31T23:59:59.9999999Z").unwrap_err(),
        ModelError::DateTimeOutOfRange {
            ticks: MIN_TICKS - 1
        }
    );
}

#[test]
fn datetime_ticks_count_100ns_from_year_1() {
    let epoch = DateTime::parse("1970-01-01T00:00:00Z").unwrap();
    assert_eq!(epoch.ticks(), 621_355_968_000_000_000);
    assert_eq!(epoch.to_unix_nanos(), 0);
    let t = DateTime::parse("1970-01-01T00:00:00.0000001Z").unwrap();
    assert_eq!(t.ticks(), epoch.ticks() + 1);
    assert_eq!(
        DateTime::from_unix_nanos(199).unwrap().ticks(),
        epoch.ticks() + 1
    );
    assert_eq!(
        DateTime::from_unix_nanos(-1).unwrap().ticks(),
        epoch.ticks() - 1
    );
    assert!(DateTime::from_unix_nanos(i128::MAX).is_err());
    assert!(DateTime::from_unix_nanos(i128::MIN).is_err());
}

#[test]
fn datetime_parse_accepts_fraction_of_1_to_7_digits_and_utc_offset() {
    let base = DateTime::parse("2024-02-29T12:34:56Z").unwrap();
    assert_eq!(
        DateTime::parse("2024-02-29T12:34:56.5Z").unwrap().ticks(),
        base.ticks() + 5_000_000
    );
    assert_eq!(
        DateTime::parse("2024-02-29T12:34:56.1234567+00:00")
            .unwrap()
            .ticks(),
        base.ticks() + 1_234_567
    );
    assert_eq!(base.to_iso8601(), "2024-02-29T12:34:56.0000000Z");
}

#[test]
fn datetime_property_wire_text_is_the_services() {
    for (stored, written) in [
        ("2020-09-17T00:00:00.000Z", "2020-09-17T00:00:00Z"),
        ("2020-09-17T00:00:00.99999Z", "2020-09-17T00:00:00.99999Z"),
        ("2020-09-17T00:00:00.111Z", "2020-09-17T00:00:00.111Z"),
        (
            "2020-09-17T00:00:00.1234567Z",
            "2020-09-17T00:00:00.1234567Z",
        ),
        ("1601-01-01T00:00:00Z", "1601-01-01T00:00:00Z"),
    ] {
        assert_eq!(
            DateTime::parse(stored).unwrap().to_wire_text(),
            written,
            "{stored}"
        );
    }
}

#[test]
fn datetime_parse_rejects_malformed_text() {
    for (bad, reason) in [
        ("", "expected a 4-digit year"),
        ("2024-01-01", "expected 'T' after the date"),
        (
            "2024-01-01T00:00:00",
            "missing the UTC designator 'Z' or '+00:00'",
        ),
        (
            "2024-01-01T00:00:00+01:00",
            "expected 'Z' or '+00:00' at the end",
        ),
        ("2024-01-01T00:00:00.Z", "expected digits after '.'"),
        (
            "2024-01-01T00:00:00.12345678Z",
            "more than 7 fractional digits",
        ),
        ("2024-13-01T00:00:00Z", "month is not 01..=12"),
        ("2023-02-29T00:00:00Z", "no such day"),
        ("2024-04-31T00:00:00Z", "no such day"),
        ("2024-01-00T00:00:00Z", "no such day"),
        ("2024-01-01T24:00:00Z", "time of day is out of range"),
        ("2024-01-01T00:60:00Z", "time of day is out of range"),
        ("2024-01-01T00:00:60Z", "time of day is out of range"),
        ("2024-1-01T00:00:00Z", "expected a 2-digit month"),
        ("2024-01-01 00:00:00Z", "expected 'T' after the date"),
        ("+024-01-01T00:00:00Z", "expected a 4-digit year"),
        (
            "2024-01-01T00:00:00ZZ",
            "expected 'Z' or '+00:00' at the end",
        ),
        ("２０２４-01-01T00:00:00Z", "expected a 4-digit year"),
    ] {
        assert_eq!(
            DateTime::parse(bad).unwrap_err(),
            ModelError::Parse {
                what: EdmType::DateTime,
                input: bad.to_owned(),
                reason
            },
            "{bad:?}"
        );
    }
}

#[test]
fn datetime_leap_years_follow_the_gregorian_rule() {
    assert!(DateTime::parse("2000-02-29T00:00:00Z").is_ok());
    assert!(DateTime::parse("1900-02-29T00:00:00Z").is_err());
    assert!(DateTime::parse("1604-02-29T00:00:00Z").is_ok());
}

#[test]
fn datetime_now_is_in_range_and_checked_add_stops_at_the_ends() {
    let now = DateTime::now();
    assert!(now > DateTime::parse("2020-01-01T00:00:00Z").unwrap());
    assert_eq!(now.checked_add_ticks(1).unwrap().ticks(), now.ticks() + 1);
    assert_eq!(DateTime::MAX.checked_add_ticks(1), None);
    assert_eq!(DateTime::MIN.checked_add_ticks(-1), None);
    assert_eq!(DateTime::MAX.checked_add_ticks(i64::MAX), None);
}

proptest! {
    #[test]
    fn datetime_wire_form_round_trips(ticks in MIN_TICKS..=MAX_TICKS) {
        let t = DateTime::from_ticks(ticks).unwrap();
        let text = t.to_string();
        prop_assert_eq!(text.len(), 28);
        prop_assert_eq!(DateTime::parse(&text).unwrap(), t);
        let offset_form = text.replace('Z', "+00:00");
        prop_assert_eq!(DateTime::parse(&offset_form).unwrap(), t);
    }

    #[test]
    fn datetime_property_wire_text_cuts_trailing_zeros_and_round_trips(
        seconds in (MIN_TICKS / 10_000_000)..=(MAX_TICKS / 10_000_000),
        fraction in prop_oneof![Just(0_i64), Just(1_100_000), Just(1_230_000), 0_i64..10_000_000],
    ) {
        let t = DateTime::from_ticks(seconds * 10_000_000 + fraction).unwrap();
        let text = t.to_wire_text();
        prop_assert_eq!(DateTime::parse(&text).unwrap(), t);
        prop_assert!(text.ends_with('Z'));
        let full = t.to_string();
        prop_assert!(full.starts_with(text.trim_end_matches('Z')), "{} vs {}", text, full);
        match text.split_once('.') {
            None => prop_assert_eq!(fraction, 0),
            Some((_, digits)) => prop_assert!(!digits.trim_end_matches('Z').ends_with('0')),
        }
    }

    #[test]
    fn datetime_text_order_matches_tick_order(a in MIN_TICKS..=MAX_TICKS, b in MIN_TICKS..=MAX_TICKS) {
        let (ta, tb) = (DateTime::from_ticks(a).unwrap(), DateTime::from_ticks(b).unwrap());
        prop_assert_eq!(ta.to_string().cmp(&tb.to_string()), a.cmp(&b));
    }

    #[test]
    fn datetime_parse_never_panics(s in "\\PC{0,40}") {
        let _ = DateTime::parse(&s);
    }

    #[test]
    fn datetime_parse_of_near_iso_text_never_panics(s in "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{0,9})?(Z|\\+00:00)?") {
        if let Ok(t) = DateTime::parse(&s) {
            prop_assert!(t >= DateTime::MIN && t <= DateTime::MAX);
        }
    }
}
