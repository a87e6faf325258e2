//! SharedKey and SharedKeyLite: the `Authorization` header signed with the account key.
//!
//! String-to-sign of the table service (Shared Key):
//! `VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource`, where Date is `x-ms-date`
//! if present, else `Date`; SharedKeyLite signs `Date\nCanonicalizedResource`.
//! CanonicalizedResource is `/{account}` + the (still encoded) request path, plus
//! `?comp={value}` when the query has a `comp` parameter.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use hyper::HeaderMap;
use sha2::Sha256;

use crate::server::error::{Result, ServerError};

/// HMAC-SHA256, the signature of every Azure storage scheme.
type HmacSha256 = Hmac<Sha256>;

/// Which of the two header schemes signed a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `SharedKey`: verb, Content-MD5, Content-Type, date and resource.
    SharedKey,
    /// `SharedKeyLite`: date and resource.
    SharedKeyLite,
}

/// What a request is signed over, besides its headers.
#[derive(Debug, Clone, Copy)]
pub struct Signed<'a> {
    /// The HTTP verb.
    pub method: &'a str,
    /// The request path, as sent (percent-encoded).
    pub path: &'a str,
    /// The decoded value of the `comp` query parameter, if any.
    pub comp: Option<&'a str>,
}

/// The base64 HMAC-SHA256 of `message` under `key`.
#[must_use]
pub fn sign(key: &[u8], message: &str) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let Ok(mut mac) = HmacSha256::new_from_slice(key) else {
        return String::new();
    };
    mac.update(message.as_bytes());
    STANDARD.encode(mac.finalize().into_bytes())
}

/// Whether `signature` (base64) is the HMAC of `message`, compared in constant time.
#[must_use]
pub fn verify(key: &[u8], message: &str, signature: &str) -> bool {
    let Ok(expected) = STANDARD.decode(signature) else {
        return false;
    };
    let Ok(mut mac) = HmacSha256::new_from_slice(key) else {
        return false;
    };
    mac.update(message.as_bytes());
    mac.verify_slice(&expected).is_ok()
}

/// The string-to-sign of `scheme` for a request.
#[must_use]
pub fn string_to_sign(
    scheme: Scheme,
    account: &str,
    request: Signed<'_>,
    headers: &HeaderMap,
) -> String {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
    };
    let date = match header("x-ms-date") {
        "" => header("date"),
        date => date,
    };
    let mut resource = format!("/{account}{}", request.path);
    if let Some(comp) = request.comp {
        resource.push_str("?comp=");
        resource.push_str(comp);
    }
    match scheme {
        Scheme::SharedKey => format!(
            "{}\n{}\n{}\n{date}\n{resource}",
            request.method,
            header("content-md5"),
            header("content-type"),
        ),
        Scheme::SharedKeyLite => format!("{date}\n{resource}"),
    }
}

/// Checks an `Authorization: SharedKey{,Lite} account:signature` header.
///
/// # Errors
/// [`ServerError::AuthenticationFailed`] naming what did not match.
pub fn check(
    authorization: &str,
    account: &str,
    key: &[u8],
    request: Signed<'_>,
    headers: &HeaderMap,
) -> Result<()> {
    let fail = |reason: &str| ServerError::AuthenticationFailed {
        reason: reason.to_owned(),
    };
    let (scheme, credential) = authorization
        .split_once(' ')
        .ok_or_else(|| fail("the Authorization header has no scheme"))?;
    let scheme = match scheme {
        "SharedKey" => Scheme::SharedKey,
        "SharedKeyLite" => Scheme::SharedKeyLite,
        _ => {
            return Err(fail(
                "the Authorization scheme is not SharedKey or SharedKeyLite",
            ));
        }
    };
    let (claimed, signature) = credential
        .trim()
        .split_once(':')
        .ok_or_else(|| fail("the Authorization header is not account:signature"))?;
    if claimed != account {
        return Err(fail("the Authorization header names another account"));
    }
    let message = string_to_sign(scheme, account, request, headers);
    if verify(key, &message, signature) {
        return Ok(());
    }
    // Clients that address the account by host name sign the path without the account
    // segment; accept that form too, since the account is already known to match.
    if let Some(stripped) = request.path.strip_prefix(&format!("/{account}")) {
        let path = if stripped.is_empty() { "/" } else { stripped };
        let message = string_to_sign(scheme, account, Signed { path, ..request }, headers);
        if verify(key, &message, signature) {
            return Ok(());
        }
    }
    Err(fail("the signature does not match the string-to-sign"))
}
