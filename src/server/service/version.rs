//! The `x-ms-version` request header.

use hyper::HeaderMap;
use hyper::header::HeaderName;

use crate::server::error::{Result, ServerError};

/// The request header naming the REST API version the client speaks (a parsed name: a lookup by
/// text would parse it again on every request).
const X_MS_VERSION: HeaderName = HeaderName::from_static("x-ms-version");

/// Refuses an `x-ms-version` that is not a version date (`YYYY-MM-DD`).
///
/// The service answers such a request 400 `InvalidHeaderValue` before running it (Azurite's
/// "createTable with invalid version" test); a well-formed date is served with this
/// server's one version, and a request without the header is served too (SAS clients and
/// browsers may omit it).
///
/// # Errors
/// [`ServerError::InvalidHeaderValue`] naming the header and the value sent.
pub fn check(headers: &HeaderMap) -> Result<()> {
    let Some(value) = headers.get(&X_MS_VERSION) else {
        return Ok(());
    };
    let text = value.to_str().unwrap_or_default();
    if is_version_date(text) {
        Ok(())
    } else {
        Err(ServerError::InvalidHeaderValue {
            header: "x-ms-version",
            reason: format!("{value:?} is not a version date"),
        })
    }
}

/// Whether `text` is `YYYY-MM-DD` with a month and day in range.
fn is_version_date(text: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

    use super::*;

    fn with_version(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(X_MS_VERSION, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn version_a_date_or_no_header_is_served_anything_else_is_invalid_header_value() {
        assert!(check(&HeaderMap::new()).is_ok());
        for good in ["2019-02-02", "2021-12-02", "2025-11-05"] {
            assert!(check(&with_version(good)).is_ok(), "{good}");
        }
        for bad in [
            "invalid",
            "",
            "2019-2-02",
            "2019-13-01",
            "2019-02-00",
            "2019-02-02x",
        ] {
            let error = check(&with_version(bad)).err();
            assert!(
                matches!(error, Some(ServerError::InvalidHeaderValue { .. })),
                "{bad}: {error:?}"
            );
        }
    }
}
