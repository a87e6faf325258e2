//! Authentication (SharedKey, SharedKeyLite, SAS) and authorization of each operation.

pub mod sas;
pub mod shared_key;

use std::time::SystemTime;

use hyper::HeaderMap;

pub use sas::{Access, KeyRange, Sas};

use super::acl::AccessPolicy;
use super::error::{Result, ServerError};
use super::limits::CLOCK_SKEW;
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
    /// Request headers.
    pub headers: &'a HeaderMap,
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
    if let Some(authorization) = request.headers.get("authorization") {
        let authorization =
            authorization
                .to_str()
                .map_err(|_| ServerError::AuthenticationFailed {
                    reason: "the Authorization header is not ASCII".to_owned(),
                })?;
        check_date(request.headers)?;
        let signed = shared_key::Signed {
            method: request.method,
            path: request.path,
            comp: param("comp"),
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

/// Checks that the signed date (`x-ms-date`, else `Date`) is within the clock-skew window.
fn check_date(headers: &HeaderMap) -> Result<()> {
    let fail = |reason: &str| ServerError::AuthenticationFailed {
        reason: reason.to_owned(),
    };
    let date = headers
        .get("x-ms-date")
        .or_else(|| headers.get("date"))
        .ok_or_else(|| fail("the request has no x-ms-date or Date header"))?
        .to_str()
        .map_err(|_| fail("the request date is not ASCII"))?;
    let date = httpdate::parse_http_date(date)
        .map_err(|_| fail("the request date is not an RFC 1123 date"))?;
    let now = SystemTime::now();
    let skew = now
        .duration_since(date)
        .or_else(|_| date.duration_since(now))
        .unwrap_or_default();
    if skew > CLOCK_SKEW {
        return Err(fail("the request date is outside the allowed clock skew"));
    }
    Ok(())
}
