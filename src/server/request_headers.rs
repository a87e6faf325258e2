//! The request headers every request is read by, found in one pass over the request's map.

use hyper::HeaderMap;
use hyper::header::HeaderValue;

/// The headers the service reads from every request (version check, authentication, response
/// format, the echoed client request id), each the first value of its name, as
/// [`HeaderMap::get`] gives it.
///
/// Found in one pass over the ~12 headers an SDK sends: a `get` per name hashed the name and
/// probed the map (~220 instructions each, for eight names, absent ones included).
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestHeaders<'a> {
    /// `Authorization`.
    pub authorization: Option<&'a HeaderValue>,
    /// `x-ms-date`, the date the storage clients sign.
    pub x_ms_date: Option<&'a HeaderValue>,
    /// `Date`, signed when there is no `x-ms-date`.
    pub date: Option<&'a HeaderValue>,
    /// `Content-MD5`, part of the SharedKey string-to-sign.
    pub content_md5: Option<&'a HeaderValue>,
    /// `Content-Type`, part of the SharedKey string-to-sign.
    pub content_type: Option<&'a HeaderValue>,
    /// `x-ms-version`.
    pub x_ms_version: Option<&'a HeaderValue>,
    /// `Accept`, which chooses the JSON metadata level.
    pub accept: Option<&'a HeaderValue>,
    /// `Host`, the authority of OData links.
    pub host: Option<&'a HeaderValue>,
    /// `x-ms-client-request-id`, echoed in the response.
    pub client_request_id: Option<&'a HeaderValue>,
}

impl<'a> RequestHeaders<'a> {
    /// The headers of `map` the service reads.
    #[must_use]
    pub fn find(map: &'a HeaderMap) -> Self {
        let mut found = Self::default();
        // Iteration yields each name's values in order, so keeping the first value seen of a
        // name keeps what `get` would return.
        for (name, value) in map {
            // Names in a `HeaderMap` are lower-case.
            let slot = match name.as_str() {
                "authorization" => &mut found.authorization,
                "x-ms-date" => &mut found.x_ms_date,
                "date" => &mut found.date,
                "content-md5" => &mut found.content_md5,
                "content-type" => &mut found.content_type,
                "x-ms-version" => &mut found.x_ms_version,
                "accept" => &mut found.accept,
                "host" => &mut found.host,
                "x-ms-client-request-id" => &mut found.client_request_id,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use hyper::header::HeaderName;

    use super::*;

    #[test]
    fn each_header_found_is_the_value_header_map_get_gives() {
        let names = [
            "authorization",
            "x-ms-date",
            "date",
            "content-md5",
            "content-type",
            "x-ms-version",
            "accept",
            "host",
            "x-ms-client-request-id",
        ];
        let mut map = HeaderMap::new();
        map.append("user-agent", HeaderValue::from_static("sdk"));
        // Every name but `accept` present, `date` and `authorization` twice (the first value
        // counts), in an order unlike the struct's.
        for name in names.iter().rev().filter(|name| **name != "accept") {
            let name = HeaderName::from_static(name);
            map.append(
                name.clone(),
                HeaderValue::from_str(&format!("{name} 1")).unwrap(),
            );
        }
        map.append("date", HeaderValue::from_static("date 2"));
        map.append("authorization", HeaderValue::from_static("authorization 2"));
        map.append("x-ms-other", HeaderValue::from_static("other"));
        let found = RequestHeaders::find(&map);
        let fields = [
            found.authorization,
            found.x_ms_date,
            found.date,
            found.content_md5,
            found.content_type,
            found.x_ms_version,
            found.accept,
            found.host,
            found.client_request_id,
        ];
        for (name, field) in names.iter().zip(fields) {
            assert_eq!(field, map.get(*name), "{name}");
        }
        assert_eq!(found.accept, None);
        assert_eq!(found.date.unwrap(), "date 1");
        let empty = HeaderMap::new();
        assert!(RequestHeaders::find(&empty).authorization.is_none());
    }
}
