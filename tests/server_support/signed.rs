//! A signed plain-HTTP client of a test server: the fixture of the REST tests that check the
//! wire exactly (status, headers, error bodies) rather than through an SDK.

use std::time::SystemTime;

use serde_json::Value as Json;
use strata::Options;

use super::{ACCOUNT, TestServer};

/// A fresh server and the signing client of its account.
pub struct Fixture {
    pub served: TestServer,
}

/// Status, headers and body of one response.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The value of header `name`, any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (panics with the body when it is not).
    pub fn json(&self) -> Json {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// The `odata.error` code of an error body.
    pub fn error_code(&self) -> String {
        self.json()["odata.error"]["code"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

impl Fixture {
    /// Serves a fresh account with default options.
    pub fn new() -> Self {
        Self {
            served: TestServer::start(Options::default(), |_| {}),
        }
    }

    /// The URL of `path_and_query` below the account.
    pub fn url(&self, path_and_query: &str) -> String {
        self.served.url(path_and_query)
    }

    /// Sends a request signed with SharedKey (`signed`) or as given.
    pub fn send(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        signed: bool,
    ) -> Answer {
        let url = self.url(path_and_query);
        let mut request = ureq::request(method, &url);
        let date = httpdate::fmt_http_date(SystemTime::now());
        let content_type = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map_or("", |(_, v)| *v);
        if signed {
            let path = path_and_query.split('?').next().unwrap();
            let comp = path_and_query
                .split_once("comp=")
                .map(|(_, c)| format!("?comp={}", c.split('&').next().unwrap()))
                .unwrap_or_default();
            let message =
                format!("{method}\n\n{content_type}\n{date}\n/{ACCOUNT}/{ACCOUNT}{path}{comp}");
            request = request
                .set("x-ms-date", &date)
                .set("Authorization", &self.served.authorization(&message));
        }
        for (name, value) in headers {
            request = request.set(name, value);
        }
        let result = match body {
            Some(body) => request.send_bytes(body),
            None => request.call(),
        };
        let response = match result {
            Ok(response) => response,
            Err(ureq::Error::Status(_, response)) => response,
            Err(error) => panic!("{method} {url}: {error}"),
        };
        let status = response.status();
        let headers = response
            .headers_names()
            .into_iter()
            .map(|name| {
                let value = response.header(&name).unwrap_or("").to_owned();
                (name, value)
            })
            .collect();
        Answer {
            status,
            headers,
            body: response.into_string().unwrap(),
        }
    }

    /// Creates table `name`.
    pub fn create_table(&self, name: &str) -> Answer {
        let body = format!("{{\"TableName\":\"{name}\"}}");
        self.send(
            "POST",
            "/Tables",
            &[("Content-Type", "application/json")],
            Some(body.as_bytes()),
            true,
        )
    }

    /// Inserts the JSON `entity` into `table`.
    pub fn insert(&self, table: &str, entity: &str) -> Answer {
        self.send(
            "POST",
            &format!("/{table}"),
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json;odata=minimalmetadata"),
            ],
            Some(entity.as_bytes()),
            true,
        )
    }
}
