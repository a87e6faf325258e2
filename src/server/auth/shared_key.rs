//! SharedKey and SharedKeyLite: the `Authorization` header signed with the account key.
//!
//! String-to-sign of the table service (Shared Key):
//! `VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource`, where Date is `x-ms-date`
//! if present, else `Date`; SharedKeyLite signs `Date\nCanonicalizedResource`.
//! CanonicalizedResource is `/{account}` + the (still encoded) request path, plus
//! `?comp={value}` when the query has a `comp` parameter.

use std::cell::RefCell;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hyper::header::HeaderValue;
use ring::hmac;

use crate::server::error::{Result, ServerError};
use crate::server::request_headers::RequestHeaders;
use crate::server::route::split_at_byte;

/// Room for a string-to-sign besides the path (verb, content type, date, account).
const STRING_TO_SIGN_GUESS_BYTES: usize = 160;

/// Length of an HMAC-SHA256.
const HMAC_SHA256_BYTES: usize = 32;

/// Length of an HMAC-SHA256 in (padded) base64: the only length of a signature that matches.
const SIGNATURE_TEXT_BYTES: usize = HMAC_SHA256_BYTES.div_ceil(3) * 4;

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
    /// The signed date: `x-ms-date` if present, else `Date`.
    pub date: &'a str,
}

thread_local! {
    /// The HMAC-SHA256 key last used on this thread, with its inner and outer states already
    /// absorbed: a server signs every request with its one key, and absorbing it costs two of
    /// the ~five SHA-256 blocks of a request's HMAC. ring's SHA-256 uses SHA-NI where the CPU
    /// has it (0.23 µs per point read's signature on such a host) and SSSE3/AVX2 assembly
    /// where not, ~35 % fewer instructions per block than the `sha2` crate's portable code.
    static KEYED: RefCell<Option<(Vec<u8>, hmac::Key)>> = const { RefCell::new(None) };
}

/// Runs `f` with the HMAC-SHA256 key for `key` (HMAC, the signature of every Azure storage
/// scheme, takes keys of any length).
fn with_key<T>(key: &[u8], f: impl FnOnce(&hmac::Key) -> T) -> T {
    KEYED.with(|cell| {
        let Ok(mut cached) = cell.try_borrow_mut() else {
            return f(&hmac::Key::new(hmac::HMAC_SHA256, key));
        };
        match cached.as_ref() {
            Some((cached_key, keyed)) if cached_key.as_slice() == key => f(keyed),
            _ => {
                let keyed = hmac::Key::new(hmac::HMAC_SHA256, key);
                let out = f(&keyed);
                *cached = Some((key.to_vec(), keyed));
                out
            }
        }
    })
}

/// The base64 HMAC-SHA256 of `message` under `key`.
#[must_use]
pub fn sign(key: &[u8], message: &str) -> String {
    with_key(key, |keyed| {
        STANDARD.encode(hmac::sign(keyed, message.as_bytes()))
    })
}

/// Whether `signature` (base64) is the HMAC of `message`, compared in constant time.
#[must_use]
pub fn verify(key: &[u8], message: &str, signature: &str) -> bool {
    // The HMAC is encoded and compared with the signature as sent, rather than the signature
    // decoded (~500 instructions of the base64 decoder per request) and compared with the
    // HMAC: the standard engine decodes only the one canonical text of each byte string
    // (padding required, no trailing bits), so the two tests accept the same signatures.
    let tag = with_key(key, |keyed| hmac::sign(keyed, message.as_bytes()));
    let mut encoded = [0_u8; SIGNATURE_TEXT_BYTES];
    let Ok(len) = STANDARD.encode_slice(tag.as_ref(), &mut encoded) else {
        return false;
    };
    encoded
        .get(..len)
        .is_some_and(|encoded| same_in_constant_time(encoded, signature.as_bytes()))
}

/// Whether `a` and `b` are equal, every byte compared whatever the first difference: the time
/// taken must not tell a forger how much of a signature was right.
fn same_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let difference = a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

/// The string-to-sign of `scheme` for a request.
#[must_use]
pub fn string_to_sign(
    scheme: Scheme,
    account: &str,
    request: Signed<'_>,
    headers: &RequestHeaders<'_>,
) -> String {
    let mut out = String::new();
    write_string_to_sign(&mut out, scheme, account, request, headers);
    out
}

/// Writes the string-to-sign of `scheme` for a request over the contents of `out`.
fn write_string_to_sign(
    out: &mut String,
    scheme: Scheme,
    account: &str,
    request: Signed<'_>,
    headers: &RequestHeaders<'_>,
) {
    fn text(value: Option<&HeaderValue>) -> &str {
        value.and_then(|value| value.to_str().ok()).unwrap_or("")
    }
    out.clear();
    out.reserve(STRING_TO_SIGN_GUESS_BYTES + request.path.len());
    if scheme == Scheme::SharedKey {
        for part in [
            request.method,
            text(headers.content_md5),
            text(headers.content_type),
        ] {
            out.push_str(part);
            out.push('\n');
        }
    }
    out.push_str(request.date);
    out.push_str("\n/");
    out.push_str(account);
    out.push_str(request.path);
    if let Some(comp) = request.comp {
        out.push_str("?comp=");
        out.push_str(comp);
    }
}

thread_local! {
    /// The buffer each request's string-to-sign is written into on this thread: one
    /// allocation per request less.
    static MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Whether `signature` matches the string-to-sign of `scheme` for a request.
fn signed_by(
    key: &[u8],
    signature: &str,
    scheme: Scheme,
    account: &str,
    request: Signed<'_>,
    headers: &RequestHeaders<'_>,
) -> bool {
    MESSAGE.with(|cell| {
        let mut fresh = String::new();
        let mut cached = cell.try_borrow_mut();
        let message = cached.as_deref_mut().unwrap_or(&mut fresh);
        write_string_to_sign(message, scheme, account, request, headers);
        verify(key, message, signature)
    })
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
    headers: &RequestHeaders<'_>,
) -> Result<()> {
    let fail = |reason: &str| ServerError::AuthenticationFailed {
        reason: reason.to_owned(),
    };
    // Byte searches: `split_once(char)` set up a char searcher for each (~400 instructions
    // per request for the two).
    let (scheme, credential) = split_at_byte(authorization, b' ')
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
    let (claimed, signature) = split_at_byte(credential.trim(), b':')
        .ok_or_else(|| fail("the Authorization header is not account:signature"))?;
    if claimed != account {
        return Err(fail("the Authorization header names another account"));
    }
    if signed_by(key, signature, scheme, account, request, headers) {
        return Ok(());
    }
    // Clients that address the account by host name sign the path without the account
    // segment; accept that form too, since the account is already known to match.
    if let Some(stripped) = request.path.strip_prefix(&format!("/{account}")) {
        let path = if stripped.is_empty() { "/" } else { stripped };
        let request = Signed { path, ..request };
        if signed_by(key, signature, scheme, account, request, headers) {
            return Ok(());
        }
    }
    Err(fail("the signature does not match the string-to-sign"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use hyper::HeaderMap;

    use super::*;
    use crate::server::limits::DEFAULT_KEY;

    /// Computed independently with Python's `hmac` over the documented string-to-sign.
    const KNOWN_SIGNATURE: &str = "y4+YjpWa9p2hSLUPdRNaIBrE0mwOp91eMBmGLPtaGEM=";

    fn headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert(
            "x-ms-date",
            HeaderValue::from_static("Mon, 01 Jan 2024 00:00:00 GMT"),
        );
        headers
    }

    #[test]
    fn shared_key_signature_matches_known_vector() {
        let key = STANDARD.decode(DEFAULT_KEY).unwrap();
        let request = Signed {
            method: "POST",
            path: "/devstoreaccount1/Tables",
            comp: None,
            date: "Mon, 01 Jan 2024 00:00:00 GMT",
        };
        let message = string_to_sign(
            Scheme::SharedKey,
            "devstoreaccount1",
            request,
            &RequestHeaders::find(&headers()),
        );
        assert_eq!(
            message,
            "POST\n\napplication/json\nMon, 01 Jan 2024 00:00:00 GMT\n/devstoreaccount1/devstoreaccount1/Tables"
        );
        assert_eq!(sign(&key, &message), KNOWN_SIGNATURE);
        let authorization = format!("SharedKey devstoreaccount1:{KNOWN_SIGNATURE}");
        check(
            &authorization,
            "devstoreaccount1",
            &key,
            request,
            &RequestHeaders::find(&headers()),
        )
        .unwrap();
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231_for_short_and_longer_than_block_keys() {
        // RFC 4231 test cases 2 and 6, alternated so that the per-thread key cache is
        // replaced on every call.
        let short = (
            b"Jefe".as_slice(),
            "what do ya want for nothing?",
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        );
        let long_key = [0xaa_u8; 131];
        let long = (
            long_key.as_slice(),
            "Test Using Larger Than Block-Size Key - Hash Key First",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
        );
        for (key, message, hex) in [short, long, short, long] {
            let mac = STANDARD.decode(sign(key, message)).unwrap();
            let text: String = mac.iter().map(|byte| format!("{byte:02x}")).collect();
            assert_eq!(text, hex, "{message}");
            assert!(verify(key, message, &STANDARD.encode(&mac)));
            assert!(!verify(key, "another message", &STANDARD.encode(&mac)));
        }
    }

    #[test]
    fn shared_key_verify_accepts_only_the_exact_mac_whatever_the_signature_length() {
        let key = STANDARD.decode(DEFAULT_KEY).unwrap();
        let good = sign(&key, "message");
        assert!(verify(&key, "message", &good));
        let mac = STANDARD.decode(&good).unwrap();
        let mut longer = mac.clone();
        longer.extend_from_slice(&[0; 100]);
        for signature in [
            STANDARD.encode(mac.get(..31).unwrap()),
            STANDARD.encode(longer.get(..33).unwrap()),
            STANDARD.encode(&longer),
            String::new(),
            "not base64!".to_owned(),
        ] {
            assert!(!verify(&key, "message", &signature), "{signature}");
        }
    }

    #[test]
    fn shared_key_verify_accepts_exactly_the_signatures_that_decode_to_the_mac() {
        const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let key = STANDARD.decode(DEFAULT_KEY).unwrap();
        let good = sign(&key, "message");
        let mac = STANDARD.decode(&good).unwrap();
        let (body, padding) = good.split_at(good.len() - 2);
        let mut signatures = vec![
            good.clone(),
            format!("{body}{}", padding.trim_end_matches('=')),
            format!("{good}="),
            format!(" {good}"),
            format!("{good}\n"),
            good.to_lowercase(),
        ];
        // Every last digit: one is the MAC, a few differ only in the trailing bits (which
        // a decoder could ignore), the rest are other MACs.
        for digit in ALPHABET.chars() {
            signatures.push(format!("{body}{digit}="));
        }
        let mut accepted = 0;
        for signature in signatures {
            let decodes_to_mac = STANDARD.decode(&signature).ok().as_ref() == Some(&mac);
            assert_eq!(
                verify(&key, "message", &signature),
                decodes_to_mac,
                "{signature:?}"
            );
            accepted += usize::from(decodes_to_mac);
        }
        assert_eq!(
            accepted, 2,
            "the signature itself and its last digit spelt again"
        );
    }

    #[test]
    fn shared_key_wrong_signature_or_account_is_authentication_failed() {
        let key = STANDARD.decode(DEFAULT_KEY).unwrap();
        let request = Signed {
            method: "GET",
            path: "/devstoreaccount1/Tables",
            comp: None,
            date: "Mon, 01 Jan 2024 00:00:00 GMT",
        };
        for authorization in [
            format!("SharedKey devstoreaccount1:{KNOWN_SIGNATURE}"),
            format!("SharedKey other:{KNOWN_SIGNATURE}"),
            "Bearer token".to_owned(),
            "SharedKey nocolon".to_owned(),
        ] {
            assert!(matches!(
                check(
                    &authorization,
                    "devstoreaccount1",
                    &key,
                    request,
                    &RequestHeaders::find(&headers())
                ),
                Err(ServerError::AuthenticationFailed { .. })
            ));
        }
    }
}
