//! Single-entity writes over HTTP when they run where they were parsed (one request in flight)
//! and when they run on the worker pool (several in flight): the same answers either way.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::SystemTime;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value as Json;
use strata::Account;
use strata::model::Value;
use strata::server::auth::shared_key::sign;
use strata::server::limits::DEFAULT_KEY;
use strata::server::{Auth, Server};

const ACCOUNT: &str = "devstoreaccount1";
const TABLE: &str = "upserts";
const THREADS: usize = 8;
const WRITES_PER_THREAD: usize = 24;
/// Few entities for many writers, so writes to one partition and one row collide.
const KEYS: [(&str, &str); 4] = [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")];

/// Status, `ETag` header and body of one answer.
type Answer = (u16, Option<String>, String);

fn start(path: &Path) -> Server {
    let account = Account::open(path).unwrap();
    Server::start(account, Auth::emulator(), "127.0.0.1:0".parse().unwrap()).unwrap()
}

/// Sends one request signed with SharedKey.
fn send(server: &Server, method: &str, path: &str, body: Option<&str>) -> Answer {
    let key = STANDARD.decode(DEFAULT_KEY).unwrap();
    let date = httpdate::fmt_http_date(SystemTime::now());
    let content_type = if body.is_some() {
        "application/json"
    } else {
        ""
    };
    let message = format!("{method}\n\n{content_type}\n{date}\n/{ACCOUNT}/{ACCOUNT}{path}");
    let url = format!("http://{}/{ACCOUNT}{path}", server.addr());
    let request = ureq::request(method, &url)
        .set("x-ms-date", &date)
        .set(
            "Authorization",
            &format!("SharedKey {ACCOUNT}:{}", sign(&key, &message)),
        )
        .set("Accept", "application/json;odata=nometadata");
    let result = match body {
        Some(body) => request.set("Content-Type", content_type).send_string(body),
        None => request.call(),
    };
    let response = match result {
        Ok(response) | Err(ureq::Error::Status(_, response)) => response,
        Err(error) => panic!("{method} {url}: {error}"),
    };
    let status = response.status();
    let etag = response.header("etag").map(str::to_owned);
    (status, etag, response.into_string().unwrap())
}

fn entity_path((pk, rk): (&str, &str)) -> String {
    format!("/{TABLE}(PartitionKey='{pk}',RowKey='{rk}')")
}

fn create_table(server: &Server) {
    let (status, _, body) = send(
        server,
        "POST",
        "/Tables",
        Some(&format!("{{\"TableName\":\"{TABLE}\"}}")),
    );
    assert_eq!(status, 201, "{body}");
}

#[test]
fn server_concurrent_merge_upserts_keep_every_writers_last_property_and_distinct_etags() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir.path().join("db.strata"));
    create_table(&server);
    // Each writer merges its own property into shared entities: a merge that lost another
    // writer's property, or two writes answered with one ETag, would show below.
    let answers: Vec<Vec<((usize, usize), Answer)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|writer| {
                let server = &server;
                scope.spawn(move || {
                    (0..WRITES_PER_THREAD)
                        .map(|i| {
                            let key = (writer + i) % KEYS.len();
                            let body = format!("{{\"W{writer}\":{i}}}");
                            let answer =
                                send(server, "MERGE", &entity_path(KEYS[key]), Some(&body));
                            ((key, i), answer)
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut etags = HashSet::new();
    let mut last: HashMap<(usize, usize), usize> = HashMap::new();
    for (writer, writes) in answers.iter().enumerate() {
        for ((key, i), (status, etag, body)) in writes {
            assert_eq!(*status, 204, "{body}");
            assert!(
                etags.insert(etag.clone().unwrap()),
                "ETag {etag:?} repeated"
            );
            last.insert((writer, *key), *i);
        }
    }
    for (key, path) in KEYS.iter().map(|&k| entity_path(k)).enumerate() {
        let (status, etag, body) = send(&server, "GET", &path, None);
        assert_eq!(status, 200, "{body}");
        assert!(
            etags.contains(&etag.unwrap()),
            "read an ETag no write returned"
        );
        let json: Json = serde_json::from_str(&body).unwrap();
        for writer in 0..THREADS {
            let expected = last.get(&(writer, key)).copied();
            let stored = json[format!("W{writer}")].as_u64();
            assert_eq!(
                stored,
                expected.map(|i| i as u64),
                "writer {writer} entity {key}: {body}"
            );
        }
    }
}

#[test]
fn server_upsert_answered_alone_is_in_the_file_after_the_server_stops() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.strata");
    let server = start(&path);
    create_table(&server);
    let (status, _, body) = send(
        &server,
        "MERGE",
        &entity_path(KEYS[0]),
        Some("{\"Name\":\"first\",\"N\":1}"),
    );
    assert_eq!(status, 204, "{body}");
    let (status, _, body) = send(&server, "MERGE", &entity_path(KEYS[0]), Some("{\"N\":2}"));
    assert_eq!(status, 204, "{body}");
    let (status, _, body) = send(&server, "MERGE", &entity_path(KEYS[1]), Some("{\"N\":3}"));
    assert_eq!(status, 204, "{body}");
    server.stop();
    let account = Account::open(&path).unwrap();
    let table = account.table(TABLE).unwrap();
    let stored = table.get(KEYS[0].0, KEYS[0].1, None).unwrap();
    assert_eq!(
        stored.entity.get("Name"),
        Some(&Value::String("first".to_owned()))
    );
    assert_eq!(stored.entity.get("N"), Some(&Value::Int32(2)));
    let other = table.get(KEYS[1].0, KEYS[1].1, None).unwrap();
    assert_eq!(other.entity.get("N"), Some(&Value::Int32(3)));
}
