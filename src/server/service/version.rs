//! The `x-ms-version` request header.

use hyper::header::HeaderValue;

use crate::server::error::{Result, ServerError};

/// Length of a version date, `YYYY-MM-DD`.
const VERSION_DATE_LEN: usize = 10;

/// Refuses an `x-ms-version` (`value`, if the request has one) that is not a version date
/// (`YYYY-MM-DD`).
///
/// The service answers such a request 400 `InvalidHeaderValue` before running it (Azurite's
/// "createTable with invalid version" test); a well-formed date is served with this
/// server's one version, and a request without the header is served too (SAS clients and
/// browsers may omit it).
///
/// # Errors
/// [`ServerError::InvalidHeaderValue`] naming the header and the value sent.
pub fn check(value: Option<&HeaderValue>) -> Result<()> {
    let Some(value) = value else {
        return Ok(());
    };
    if is_version_date(value.as_bytes()) {
        Ok(())
    } else {
        Err(ServerError::InvalidHeaderValue {
            header: "x-ms-version",
            reason: format!("{value:?} is not a version date"),
        })
    }
}

/// Whether `text` is `YYYY-MM-DD` with a month and day in range. Read at fixed offsets: every
/// request carries one, and splitting it on `-` and parsing the parts cost ~500 instructions.
fn is_version_date(text: &[u8]) -> bool {
    let digit = |at: usize| {
        text.get(at)
            .filter(|byte| byte.is_ascii_digit())
            .map(|byte| u32::from(byte - b'0'))
    };
    let two_digits = |at: usize| Some(digit(at)? * 10 + digit(at + 1)?);
    let year_digits = (0..4).all(|at| digit(at).is_some());
    text.len() == VERSION_DATE_LEN
        && year_digits
        && text.get(4) == Some(&b'-')
        && text.get(7) == Some(&b'-')
        && matches!((two_digits(5), two_digits(8)), (Some(1..=12), Some(1..=31)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_version(value: &'static str) -> Option<HeaderValue> {
        Some(HeaderValue::from_static(value))
    }

    #[test]
    fn version_a_date_or_no_header_is_served_anything_else_is_invalid_header_value() {
        assert!(check(None).is_ok());
        for good in ["2019-02-02", "2021-12-02", "2025-11-05"] {
            assert!(check(with_version(good).as_ref()).is_ok(), "{good}");
        }
        for bad in [
            "invalid",
            "",
            "2019-2-02",
            "2019-13-01",
            "2019-02-00",
            "2019-02-02x",
        ] {
            let error = check(with_version(bad).as_ref()).err();
            assert!(
                matches!(error, Some(ServerError::InvalidHeaderValue { .. })),
                "{bad}: {error:?}"
            );
        }
    }

    /// The check as it was written first: split on `-`, each part parsed.
    fn is_version_date_by_splitting(text: &str) -> bool {
        let number = |part: &str, len: usize| {
            (part.len() == len && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse::<u32>().ok())
                .flatten()
        };
        let mut parts = text.split('-');
        let (Some(year), Some(month), Some(day), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        matches!(
            (number(year, 4), number(month, 2), number(day, 2)),
            (Some(_), Some(1..=12), Some(1..=31))
        )
    }

    #[test]
    fn version_date_read_at_fixed_offsets_agrees_with_splitting_it_on_dashes() {
        let mut texts = vec![
            String::new(),
            "-".to_owned(),
            "--".to_owned(),
            "2019-02-02-".to_owned(),
            "-2019-02-02".to_owned(),
            "201a-02-02".to_owned(),
            "2019-0a-02".to_owned(),
            "2019+02-02".to_owned(),
            "2019-02+02".to_owned(),
            "20190-2-02".to_owned(),
            "2019-020-2".to_owned(),
            "+019-02-02".to_owned(),
            "2019-02-2é".to_owned(),
            "٢٠١٩-02-02".to_owned(),
        ];
        for month in 0..=13 {
            for day in [0, 1, 9, 10, 29, 31, 32, 99] {
                texts.push(format!("2019-{month:02}-{day:02}"));
                texts.push(format!("0000-{month:02}-{day:02}"));
            }
        }
        for text in texts {
            assert_eq!(
                is_version_date(text.as_bytes()),
                is_version_date_by_splitting(&text),
                "{text:?}"
            );
        }
    }
}
