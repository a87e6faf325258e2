//! Responses before they become HTTP: status, headers, body; and the service's error body.

use std::borrow::Cow;

use super::error::ServerError;
use super::json::write_str;
use crate::model::DateTime;

/// `Content-Type` of JSON error bodies.
const ERROR_CONTENT_TYPE: &str =
    "application/json;odata=minimalmetadata;streaming=true;charset=utf-8";

/// A response being built by a handler. The service adds the headers every response
/// carries (`x-ms-request-id`, `x-ms-version`, `Date`).
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// Extra headers, in order (static values are sent without a copy).
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    /// An empty response with `status`.
    #[must_use]
    pub const fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &'static str, value: impl Into<Cow<'static, str>>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// Sets the body and its content type.
    #[must_use]
    pub fn body(
        mut self,
        content_type: impl Into<Cow<'static, str>>,
        body: impl Into<Vec<u8>>,
    ) -> Self {
        self.headers.push(("content-type", content_type.into()));
        self.body = body.into();
        self
    }

    /// The service's response to `error` for request `request_id`.
    #[must_use]
    pub fn error(error: &ServerError, request_id: &str) -> Self {
        Self::status(error.status())
            .header("x-ms-error-code", error.code())
            .body(ERROR_CONTENT_TYPE, error_body(error, request_id))
    }
}

/// The message of `error` as the service words it: a failing batch operation's message
/// starts with its 0-based index and a colon, which the SDKs parse.
#[must_use]
pub fn error_message(error: &ServerError) -> String {
    let text = error.to_string();
    match error.batch_index() {
        Some(index) if !text.starts_with(&format!("{index}:")) => format!("{index}:{text}"),
        _ => text,
    }
}

/// `{"odata.error":{"code":..,"message":{"lang":"en-US","value":"..\nRequestId:..\nTime:.."}}}`.
#[must_use]
pub fn error_body(error: &ServerError, request_id: &str) -> String {
    let value = format!(
        "{}\nRequestId:{request_id}\nTime:{}",
        error_message(error),
        DateTime::now().to_iso8601()
    );
    let mut out = String::from("{\"odata.error\":{\"code\":");
    write_str(&mut out, error.code());
    out.push_str(",\"message\":{\"lang\":\"en-US\",\"value\":");
    write_str(&mut out, &value);
    out.push_str("}}}");
    out
}
