//! Authentication (SharedKey, SharedKeyLite, SAS) and authorization of each operation.

pub mod sas;
pub mod shared_key;

use std::cell::RefCell;
use std::time::SystemTime;

pub use sas::{Access, KeyRange, Sas};

use super::acl::AccessPolicy;
use super::error::{Result, ServerError};
use super::limits::CLOCK_SKEW;
use super::request_headers::RequestHeaders;
use crate::model::DateTime;

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// Signed with the account key: may do anything.
    Key,
    /// Carries a SAS: may do what it grants.
    Sas(Sas),
}

impl Principal {
    /// Checks that this principal may perform `access` on `table` / entity `key`.
    ///
    /// # Errors
    /// [`ServerError::AuthorizationPermissionMismatch`].
    pub fn authorize(
        &self,
        access: Access,
        table: Option<&str>,
        key: Option<(&str, &str)>,
    ) -> Result<()> {
        match self {
            Self::Key => Ok(()),
            Self::Sas(sas) => sas.authorize(access, table, key),
        }
    }

    /// The key range results must be limited to (queries under a ranged SAS).
    #[must_use]
    pub fn range(&self) -> Option<&KeyRange> {
        match self {
            Self::Sas(sas) if !sas.range.is_unbounded() => Some(&sas.range),
            _ => None,
        }
    }
}

/// A request as authentication sees it.
#[derive(Debug, Clone, Copy)]
pub struct Credentials<'a> {
    /// The HTTP verb.
    pub method: &'a str,
    /// The request path as sent.
    pub path: &'a str,
    /// The request headers authentication reads.
    pub headers: &'a RequestHeaders<'a>,
}

/// Authenticates a request against account `account` with key `key`.
///
/// # Errors
/// [`ServerError::AuthenticationFailed`] for no credentials, a bad signature, a date outside
/// the clock-skew window, or an invalid SAS.
pub fn authenticate<'q>(
    request: Credentials<'_>,
    param: impl Fn(&str) -> Option<&'q str>,
    account: &str,
    key: &[u8],
    policy: impl Fn(&str, &str) -> Result<Option<AccessPolicy>>,
) -> Result<Principal> {
    if let Some(authorization) = request.headers.authorization {
        let authorization =
            authorization
                .to_str()
                .map_err(|_| ServerError::AuthenticationFailed {
                    reason: "the Authorization header is not ASCII".to_owned(),
                })?;
        let signed = shared_key::Signed {
            method: request.method,
            path: request.path,
            comp: param("comp"),
            date: check_date(request.headers)?,
        };
        shared_key::check(authorization, account, key, signed, request.headers)?;
        return Ok(Principal::Key);
    }
    if param("sig").is_some() {
        return sas::verify_sas(param, account, key, DateTime::now(), policy).map(Principal::Sas);
    }
    Err(ServerError::AuthenticationFailed {
        reason: "the request carries neither an Authorization header nor a SAS".to_owned(),
    })
}

thread_local! {
    /// The last request date parsed on this thread: clients sign with a date of one-second
    /// resolution, so consecutive requests almost always carry the same text.
    static LAST_DATE: RefCell<Option<(String, SystemTime)>> = const { RefCell::new(None) };
}

/// `text` parsed as an HTTP date, from the per-thread cache when it is the last one seen.
fn parse_date_cached(text: &str) -> Option<SystemTime> {
    LAST_DATE.with(|cell| {
        let Ok(mut last) = cell.try_borrow_mut() else {
            return httpdate::parse_http_date(text).ok();
        };
        if let Some((cached, time)) = last.as_ref()
            && cached == text
        {
            return Some(*time);
        }
        let time = httpdate::parse_http_date(text).ok()?;
        match last.as_mut() {
            Some((cached, cached_time)) => {
                cached.clear();
                cached.push_str(text);
                *cached_time = time;
            }
            None => *last = Some((text.to_owned(), time)),
        }
        Some(time)
    })
}

/// Checks that the signed date (`x-ms-date`, else `Date`) is within the clock-skew window;
/// returns its text, which the string-to-sign carries.
fn check_date<'h>(headers: &RequestHeaders<'h>) -> Result<&'h str> {
    let fail = |reason: &str| ServerError::AuthenticationFailed {
        reason: reason.to_owned(),
    };
    let date = headers
        .x_ms_date
        .or(headers.date)
        .ok_or_else(|| fail("the request has no x-ms-date or Date header"))?
        .to_str()
        .map_err(|_| fail("the request date is not ASCII"))?;
    let text = date;
    let date =
        parse_date_cached(date).ok_or_else(|| fail("the request date is not an RFC 1123 date"))?;
    let now = SystemTime::now();
    let skew = now
        .duration_since(date)
        .or_else(|_| date.duration_since(now))
        .unwrap_or_default();
    if skew > CLOCK_SKEW {
        return Err(fail("the request date is outside the allowed clock skew"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cached_date_parse_matches_a_fresh_parse_for_repeated_and_new_dates() {
        for text in [
            "Mon, 01 Jan 2024 00:00:00 GMT",
            "Mon, 01 Jan 2024 00:00:00 GMT",
            "Mon, 01 Jan 2024 00:00:01 GMT",
            "not a date",
            "Mon, 01 Jan 2024 00:00:01 GMT",
        ] {
            assert_eq!(
                parse_date_cached(text),
                httpdate::parse_http_date(text).ok(),
                "{text}"
            );
        }
    }
}
