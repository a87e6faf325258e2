//! Turning a reply into a hyper response with the headers every response carries.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Buf;
use http_body_util::Full;
use hyper::header::{
    CACHE_CONTROL, CONTENT_TYPE, ETAG, HeaderName, HeaderValue, LOCATION, SERVER,
    X_CONTENT_TYPE_OPTIONS,
};
use hyper::{HeaderMap, Response, StatusCode};

use super::super::idle::Activity;
use super::super::json::Metadata;
use super::super::limits::SERVICE_VERSION;
use super::super::reply::{self, Reply};
use super::state::RequestId;

/// Headers [`into_response`] adds to every response (with `x-ms-client-request-id`).
const FIXED_HEADERS: usize = 7;

/// Room of a response's header map. hyper keeps the map of the response it sent and parses
/// the connection's next request into it, so the map is sized for a request too: the SDKs send
/// 12–15 headers, and a map sized for the response alone was regrown (two allocations and a
/// rehash) by every request's parse.
const RESPONSE_HEADER_ROOM: usize = 24;

/// The names and values every response carries, built at compile time: `from_static` outside
/// a constant validates (and, for a name, looks up the standard names) on every call.
const X_MS_REQUEST_ID: HeaderName = HeaderName::from_static("x-ms-request-id");
const X_MS_CLIENT_REQUEST_ID: HeaderName = HeaderName::from_static("x-ms-client-request-id");
const X_MS_VERSION: HeaderName = HeaderName::from_static("x-ms-version");
const DATASERVICEVERSION: HeaderName = HeaderName::from_static("dataserviceversion");
const VERSION_VALUE: HeaderValue = HeaderValue::from_static(SERVICE_VERSION);
const DATASERVICEVERSION_VALUE: HeaderValue = HeaderValue::from_static("3.0;");
const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");
/// The service's `Server` value, sent as it is: the Rust SDK (`azure_storage` 0.21) fails
/// every call whose response lacks a `Server` header, and recorded service traffic carries
/// this value on every response.
const SERVER_VALUE: HeaderValue =
    HeaderValue::from_static("Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0");

/// The header `name` (lower-case), without parsing the names handlers set: a name parsed at
/// run time that is not a standard one is also copied into an allocation.
fn header_name(name: &'static str) -> Option<HeaderName> {
    const PREFERENCE_APPLIED: HeaderName = HeaderName::from_static("preference-applied");
    const DATASERVICEID: HeaderName = HeaderName::from_static("dataserviceid");
    const X_MS_ERROR_CODE: HeaderName = HeaderName::from_static("x-ms-error-code");
    Some(match name {
        "content-type" => CONTENT_TYPE,
        "etag" => ETAG,
        "location" => LOCATION,
        "preference-applied" => PREFERENCE_APPLIED,
        "dataserviceid" => DATASERVICEID,
        "x-ms-error-code" => X_MS_ERROR_CODE,
        _ => return HeaderName::from_bytes(name.as_bytes()).ok(),
    })
}

/// The value of a handler's static header text, prebuilt for the content types of entity
/// responses: `from_static` outside a constant checks every byte (~250 instructions for these
/// 60-odd characters) on every response.
fn static_value(text: &'static str) -> HeaderValue {
    const MINIMAL: &str = Metadata::Minimal.content_type();
    const NONE: &str = Metadata::None.content_type();
    const FULL: &str = Metadata::Full.content_type();
    const MINIMAL_VALUE: HeaderValue = HeaderValue::from_static(MINIMAL);
    const NONE_VALUE: HeaderValue = HeaderValue::from_static(NONE);
    const FULL_VALUE: HeaderValue = HeaderValue::from_static(FULL);
    match text {
        MINIMAL => MINIMAL_VALUE,
        NONE => NONE_VALUE,
        FULL => FULL_VALUE,
        _ => HeaderValue::from_static(text),
    }
}

/// A response body: the reply's bytes as they are. `Bytes::from(Vec)` allocated a shared
/// header for every vector whose capacity exceeds its length (almost every body).
#[derive(Debug)]
pub struct ReplyBody {
    bytes: Vec<u8>,
    /// Bytes already written.
    at: usize,
    /// The connection's requests, told when hyper drops the body (the response handed over
    /// whole, or the connection gone), so that its idle watchdog does not close it while a
    /// response is still being sent.
    activity: Option<Arc<Activity>>,
}

impl Buf for ReplyBody {
    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }

    fn chunk(&self) -> &[u8] {
        self.bytes.get(self.at..).unwrap_or_default()
    }

    fn advance(&mut self, count: usize) {
        self.at = self.at.saturating_add(count).min(self.bytes.len());
    }
}

impl Drop for ReplyBody {
    fn drop(&mut self) {
        reply::recycle(std::mem::take(&mut self.bytes));
        if let Some(activity) = self.activity.take() {
            activity.end();
        }
    }
}

/// Turns a reply into a hyper response with the headers every response carries (and
/// `client_request_id` echoed), in `map` (the request's, emptied) when there is one.
pub(super) fn into_response(
    reply: Reply,
    request_id: RequestId,
    client_request_id: Option<HeaderValue>,
    map: Option<HeaderMap>,
    activity: Arc<Activity>,
) -> Response<Full<ReplyBody>> {
    let mut response = Response::new(Full::new(ReplyBody {
        bytes: reply.body,
        at: 0,
        activity: Some(activity),
    }));
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let room = FIXED_HEADERS + reply.headers.len();
    *response.headers_mut() = match map {
        Some(mut map) => {
            map.clear();
            map.reserve(room);
            map
        }
        // Sized once for the fixed headers and the reply's, and for the next request parsed
        // into it (see [`RESPONSE_HEADER_ROOM`]).
        None => HeaderMap::with_capacity(RESPONSE_HEADER_ROOM.max(room)),
    };
    let headers = response.headers_mut();
    // The fixed headers are built without parsing or copying: they are sent on every response.
    if let Ok(value) = HeaderValue::from_bytes(request_id.as_bytes()) {
        headers.append(X_MS_REQUEST_ID, value);
    }
    if let Some(value) = client_request_id {
        headers.append(X_MS_CLIENT_REQUEST_ID, value);
    }
    headers.append(X_MS_VERSION, VERSION_VALUE);
    // `Date` is added by hyper from its once-a-second cache.
    headers.append(DATASERVICEVERSION, DATASERVICEVERSION_VALUE);
    headers.append(X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    headers.append(CACHE_CONTROL, NO_CACHE);
    headers.append(SERVER, SERVER_VALUE);
    for (name, value) in reply.headers {
        // Every value written is ASCII by construction; one that is not is dropped rather
        // than failing the response.
        let value = match value {
            // Borrowed values are the handlers' string literals (content types, preference
            // names), all visible ASCII, which `from_static` takes without a copy.
            Cow::Borrowed(text) => Ok(static_value(text)),
            Cow::Owned(text) => HeaderValue::try_from(text),
        };
        if let (Some(name), Ok(value)) = (header_name(name), value) {
            headers.append(name, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prebuilt_header_names_equal_the_parsed_names() {
        for name in [
            "content-type",
            "etag",
            "location",
            "preference-applied",
            "dataserviceid",
            "x-ms-error-code",
            "x-ms-continuation-NextRowKey",
        ] {
            assert_eq!(
                header_name(name),
                HeaderName::from_bytes(name.as_bytes()).ok(),
                "{name}"
            );
        }
    }
}

#[cfg(test)]
mod value_tests {
    use super::*;

    #[test]
    fn prebuilt_header_values_equal_the_values_built_from_their_text() {
        for metadata in [Metadata::None, Metadata::Minimal, Metadata::Full] {
            let text = metadata.content_type();
            assert_eq!(static_value(text), HeaderValue::from_static(text), "{text}");
        }
        assert_eq!(
            static_value("return-no-content"),
            HeaderValue::from_static("return-no-content")
        );
    }
}

#[cfg(test)]
mod body_tests {
    use super::*;

    #[test]
    fn a_reply_body_yields_its_bytes_once_in_order_across_partial_advances() {
        let activity = Arc::new(Activity::default());
        activity.begin();
        let mut body = ReplyBody {
            bytes: b"0123456789".to_vec(),
            at: 0,
            activity: Some(Arc::clone(&activity)),
        };
        assert_eq!(body.remaining(), 10);
        body.advance(3);
        assert_eq!(body.chunk(), b"3456789");
        assert_eq!(body.remaining(), 7);
        body.advance(100);
        assert_eq!(body.remaining(), 0);
        assert_eq!(body.chunk(), b"");
        assert_eq!(activity.counts(), (1, 0));
        drop(body);
        assert_eq!(activity.counts(), (1, 1), "a dropped body ends its request");
    }
}
