//! The REST server over HTTP: routing, JSON forms, queries, authentication and error bodies,
//! driven by a plain HTTP client that signs requests itself (batches: `server_batch.rs`; SAS
//! and ACLs: `server_sas.rs`).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod server_support;

use serde_json::Value as Json;
use server_support::ACCOUNT;
use server_support::signed::Fixture;

#[test]
fn server_entity_round_trips_every_edm_type_with_annotations() {
    let f = Fixture::new();
    assert_eq!(f.create_table("People").status, 201);
    let entity = r#"{"PartitionKey":"p","RowKey":"r","Name":"x","Age":42,
        "Big":"1099511627776","Big@odata.type":"Edm.Int64",
        "Bin":"AQI=","Bin@odata.type":"Edm.Binary",
        "When":"2024-01-02T03:04:05Z","When@odata.type":"Edm.DateTime",
        "G":"00000000-0000-0000-0000-000000000005","G@odata.type":"Edm.Guid",
        "F":1.5,"Nan":"NaN","Nan@odata.type":"Edm.Double","Whole":2.0,"B":true}"#;
    let inserted = f.insert("People", entity);
    assert_eq!(inserted.status, 201, "{}", inserted.body);
    let etag = inserted.header("ETag").unwrap().to_owned();
    assert!(etag.starts_with("W/\"datetime'"), "{etag}");
    for name in ["x-ms-request-id", "x-ms-version", "Date"] {
        assert!(inserted.header(name).is_some(), "{name}");
    }
    let got = f.send(
        "GET",
        "/People(PartitionKey='p',RowKey='r')",
        &[("Accept", "application/json;odata=minimalmetadata")],
        None,
        true,
    );
    assert_eq!(got.status, 200, "{}", got.body);
    let json = got.json();
    assert_eq!(json["odata.etag"], etag.as_str());
    assert_eq!(json["Big"], "1099511627776");
    assert_eq!(json["Big@odata.type"], "Edm.Int64");
    assert_eq!(json["Bin"], "AQI=");
    assert_eq!(json["Bin@odata.type"], "Edm.Binary");
    assert_eq!(json["When"], "2024-01-02T03:04:05Z");
    assert_eq!(json["G@odata.type"], "Edm.Guid");
    assert_eq!(json["Nan"], "NaN");
    assert_eq!(json["Nan@odata.type"], "Edm.Double");
    assert_eq!(json["Age"], 42);
    assert!(json.get("Age@odata.type").is_none());
    assert!(got.body.contains("\"Whole\":2.0"), "{}", got.body);
    let none = f.send(
        "GET",
        "/People(PartitionKey='p',RowKey='r')",
        &[("Accept", "application/json;odata=nometadata")],
        None,
        true,
    );
    assert!(none.json().get("odata.etag").is_none());
    assert!(none.json().get("Big@odata.type").is_none());
    let full = f.send(
        "GET",
        "/People(PartitionKey='p',RowKey='r')?$format=application/json;odata=fullmetadata",
        &[],
        None,
        true,
    );
    let full = full.json();
    assert_eq!(full["odata.type"], "devstoreaccount1.People");
    assert_eq!(full["Timestamp@odata.type"], "Edm.DateTime");
    assert_eq!(full["F@odata.type"], "Edm.Double");
}

#[test]
fn server_unsigned_request_is_403_authentication_failed_with_error_body() {
    let f = Fixture::new();
    let answer = f.send("GET", "/Tables", &[], None, false);
    assert_eq!(answer.status, 403);
    assert_eq!(answer.error_code(), "AuthenticationFailed");
    assert_eq!(
        answer.header("x-ms-error-code"),
        Some("AuthenticationFailed")
    );
    let message = answer.json()["odata.error"]["message"]["value"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("\nRequestId:"), "{message}");
    assert_eq!(answer.json()["odata.error"]["message"]["lang"], "en-US");
}

#[test]
fn server_client_request_id_is_echoed_on_success_and_error() {
    let f = Fixture::new();
    let id = [("x-ms-client-request-id", "my-trace-42")];
    let listed = f.send("GET", "/Tables", &id, None, true);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.header("x-ms-client-request-id"), Some("my-trace-42"));
    let refused = f.send("GET", "/Tables", &id, None, false);
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.header("x-ms-client-request-id"),
        Some("my-trace-42")
    );
    let none = f.send("GET", "/Tables", &[], None, true);
    assert_eq!(none.header("x-ms-client-request-id"), None);
}

#[test]
fn server_table_errors_map_to_service_statuses_and_codes() {
    let f = Fixture::new();
    assert_eq!(f.create_table("Orders").status, 201);
    let again = f.create_table("orders");
    assert_eq!(
        (again.status, again.error_code().as_str()),
        (409, "TableAlreadyExists")
    );
    let missing = f.insert("Nothing", r#"{"PartitionKey":"p","RowKey":"r"}"#);
    assert_eq!(
        (missing.status, missing.error_code().as_str()),
        (404, "TableNotFound")
    );
    // Deleting a missing table is the service's ResourceNotFound, not TableNotFound.
    let gone = f.send("DELETE", "/Tables('Nothing')", &[], None, true);
    assert_eq!(
        (gone.status, gone.error_code().as_str()),
        (404, "ResourceNotFound")
    );
    assert_eq!(
        f.insert("Orders", r#"{"PartitionKey":"p","RowKey":"r"}"#)
            .status,
        201
    );
    let dup = f.insert("Orders", r#"{"PartitionKey":"p","RowKey":"r"}"#);
    assert_eq!(
        (dup.status, dup.error_code().as_str()),
        (409, "EntityAlreadyExists")
    );
    let bad_json = f.insert("Orders", "{not json");
    assert_eq!(
        (bad_json.status, bad_json.error_code().as_str()),
        (400, "InvalidInput")
    );
    let stale = f.send(
        "PUT",
        "/Orders(PartitionKey='p',RowKey='r')",
        &[
            ("Content-Type", "application/json"),
            (
                "If-Match",
                "W/\"datetime'2000-01-01T00%3A00%3A00.0000000Z'\"",
            ),
        ],
        Some(b"{}"),
        true,
    );
    assert_eq!(
        (stale.status, stale.error_code().as_str()),
        (412, "UpdateConditionNotSatisfied")
    );
    let no_if_match = f.send(
        "DELETE",
        "/Orders(PartitionKey='p',RowKey='r')",
        &[],
        None,
        true,
    );
    assert_eq!(no_if_match.status, 400);
    let deleted = f.send(
        "DELETE",
        "/Orders(PartitionKey='p',RowKey='r')",
        &[("If-Match", "*")],
        None,
        true,
    );
    assert_eq!(deleted.status, 204);
    let gone = f.send(
        "GET",
        "/Orders(PartitionKey='p',RowKey='r')",
        &[],
        None,
        true,
    );
    assert_eq!(
        (gone.status, gone.error_code().as_str()),
        (404, "ResourceNotFound")
    );
    let verb = f.send("PATCH", "/Tables", &[], Some(b""), true);
    assert_eq!(verb.status, 405);
}

#[test]
fn server_upsert_without_if_match_and_merge_keep_other_properties() {
    let f = Fixture::new();
    f.create_table("KvTable");
    let put = f.send(
        "PUT",
        "/KvTable(PartitionKey='a',RowKey='b')",
        &[("Content-Type", "application/json")],
        Some(br#"{"x":1,"y":2}"#),
        true,
    );
    assert_eq!(put.status, 204, "{}", put.body);
    let merge = f.send(
        "MERGE",
        "/KvTable(PartitionKey='a',RowKey='b')",
        &[("Content-Type", "application/json"), ("If-Match", "*")],
        Some(br#"{"y":3}"#),
        true,
    );
    assert_eq!(merge.status, 204, "{}", merge.body);
    let got = f
        .send(
            "GET",
            "/KvTable(PartitionKey='a',RowKey='b')",
            &[],
            None,
            true,
        )
        .json();
    assert_eq!(
        (got["x"].clone(), got["y"].clone()),
        (Json::from(1), Json::from(3))
    );
}

#[test]
fn server_query_pages_with_continuation_headers_and_select_top() {
    let f = Fixture::new();
    f.create_table("Items");
    for i in 0..25 {
        let entity = format!(r#"{{"PartitionKey":"p","RowKey":"{i:03}","n":{i},"s":"v"}}"#);
        assert_eq!(f.insert("Items", &entity).status, 201);
    }
    let mut seen = Vec::new();
    let mut next: Option<(String, String)> = None;
    let mut pages = 0;
    loop {
        let mut query = "/Items()?$top=10&$select=n&$filter=n%20ge%205".to_owned();
        if let Some((pk, rk)) = &next {
            query.push_str(&format!("&NextPartitionKey={pk}&NextRowKey={rk}"));
        }
        let page = f.send("GET", &query, &[], None, true);
        assert_eq!(page.status, 200, "{}", page.body);
        pages += 1;
        for entity in page.json()["value"].as_array().unwrap() {
            assert!(entity.get("s").is_none(), "$select must drop s");
            seen.push(entity["n"].as_i64().unwrap());
        }
        match (
            page.header("x-ms-continuation-NextPartitionKey"),
            page.header("x-ms-continuation-NextRowKey"),
        ) {
            (Some(pk), Some(rk)) => next = Some((pk.to_owned(), rk.to_owned())),
            _ => break,
        }
    }
    assert_eq!(seen, (5..25).collect::<Vec<_>>());
    assert!(pages >= 2);
}

#[test]
fn server_query_tables_pages_with_next_table_name() {
    let f = Fixture::new();
    for name in ["alpha", "Beta", "gamma"] {
        assert_eq!(f.create_table(name).status, 201);
    }
    let first = f.send("GET", "/Tables?$top=2", &[], None, true);
    let names: Vec<String> = first.json()["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["TableName"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["alpha", "Beta"]);
    let next = first
        .header("x-ms-continuation-NextTableName")
        .unwrap()
        .to_owned();
    let second = f.send(
        "GET",
        &format!("/Tables?NextTableName={next}"),
        &[],
        None,
        true,
    );
    assert_eq!(second.json()["value"][0]["TableName"], "gamma");
    assert!(second.header("x-ms-continuation-NextTableName").is_none());
    let filtered = f.send(
        "GET",
        "/Tables?$filter=TableName%20eq%20'gamma'",
        &[],
        None,
        true,
    );
    assert_eq!(filtered.json()["value"].as_array().unwrap().len(), 1);
}

#[test]
fn server_select_returns_only_named_properties_at_every_metadata_level() {
    let f = Fixture::new();
    f.create_table("Picked");
    let entity =
        r#"{"PartitionKey":"p","RowKey":"r","n":1,"s":"v","d@odata.type":"Edm.Int64","d":"5"}"#;
    assert_eq!(f.insert("Picked", entity).status, 201);
    let point = "/Picked(PartitionKey='p',RowKey='r')?$select=n,RowKey,d";
    for (level, expected) in [
        ("nometadata", vec!["RowKey", "d", "n"]),
        (
            "minimalmetadata",
            vec![
                "RowKey",
                "d",
                "d@odata.type",
                "n",
                "odata.etag",
                "odata.metadata",
            ],
        ),
        (
            "fullmetadata",
            vec![
                "RowKey",
                "d",
                "d@odata.type",
                "n",
                "odata.editLink",
                "odata.etag",
                "odata.id",
                "odata.metadata",
                "odata.type",
            ],
        ),
    ] {
        let accept = format!("application/json;odata={level}");
        let got = f.send("GET", point, &[("Accept", accept.as_str())], None, true);
        assert_eq!(got.status, 200, "{}", got.body);
        let json = got.json();
        let mut names: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        assert_eq!(names, expected, "{level}: {}", got.body);
        assert!(got.header("ETag").is_some());
    }
    // In a feed without metadata the first selected member opens the object; `*` is all.
    let accept = [("Accept", "application/json;odata=nometadata")];
    let feed = f.send("GET", "/Picked()?$select=s", &accept, None, true);
    assert_eq!(
        feed.json()["value"][0],
        serde_json::json!({"s": "v"}),
        "{}",
        feed.body
    );
    let all = f.send("GET", "/Picked()?$select=*", &accept, None, true);
    assert_eq!(all.json()["value"][0]["PartitionKey"], "p", "{}", all.body);
    assert_eq!(all.json()["value"][0]["s"], "v", "{}", all.body);
}

#[test]
fn server_head_over_the_read_buffer_is_431_and_the_server_serves_on() {
    use std::io::{Read, Write};
    let f = Fixture::new();
    // 200 KiB of headers: past READ_BUFFER_MAX_BYTES, so the head never fits in memory.
    let filler = "a".repeat(1000);
    let mut request = format!("GET /{ACCOUNT}/Tables HTTP/1.1\r\nHost: x\r\n");
    for i in 0..200 {
        request.push_str(&format!("x-filler-{i}: {filler}\r\n"));
    }
    request.push_str("\r\n");
    let mut stream = std::net::TcpStream::connect(f.served.server.addr()).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    // The server may close before reading it all; what it answered is what counts.
    let _ = stream.write_all(request.as_bytes());
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    // A head just under the read buffer (a 100 KiB header) is read and answered as usual.
    let long = "b".repeat(100 * 1024);
    let listed = f.send(
        "GET",
        "/Tables",
        &[("x-ms-meta-long", long.as_str())],
        None,
        true,
    );
    assert_eq!(listed.status, 200, "{}", listed.body);
}

#[test]
fn server_every_response_carries_the_service_server_header() {
    // Microsoft's Rust SDK (`azure_storage` 0.21) fails any call whose answer lacks `Server`.
    let f = Fixture::new();
    let answers = [
        f.create_table("Served"),
        f.send("GET", "/Tables", &[], None, true),
        f.send("GET", "/Tables", &[], None, false),
        f.send(
            "GET",
            "/Missing(PartitionKey='p',RowKey='r')",
            &[],
            None,
            true,
        ),
    ];
    for answer in answers {
        assert_eq!(
            answer.header("Server"),
            Some("Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0"),
            "{} {}",
            answer.status,
            answer.body
        );
    }
}

#[test]
fn server_select_is_named_in_the_odata_metadata_of_entity_and_feed() {
    // Recorded service traffic: `…/$metadata#t/@Element&$select=baz,PartitionKey,RowKey` for
    // a point read, and the feed's `…/$metadata#t&$select=…` likewise.
    let f = Fixture::new();
    f.create_table("Named");
    assert_eq!(
        f.insert("Named", r#"{"PartitionKey":"p","RowKey":"r","n":1}"#)
            .status,
        201
    );
    let accept = [("Accept", "application/json;odata=minimalmetadata")];
    let metadata = |target: &str| {
        let got = f.send("GET", target, &accept, None, true);
        assert_eq!(got.status, 200, "{}", got.body);
        got.json()["odata.metadata"].as_str().unwrap().to_owned()
    };
    let point = metadata("/Named(PartitionKey='p',RowKey='r')?$select=n,%20RowKey,n");
    assert!(
        point.ends_with("/$metadata#Named/@Element&$select=n,RowKey"),
        "{point}"
    );
    let plain = metadata("/Named(PartitionKey='p',RowKey='r')");
    assert!(plain.ends_with("/$metadata#Named/@Element"), "{plain}");
    let feed = metadata("/Named()?$select=n");
    assert!(feed.ends_with("/$metadata#Named&$select=n"), "{feed}");
    let all = metadata("/Named()?$select=*");
    assert!(all.ends_with("/$metadata#Named"), "{all}");
}

#[test]
fn server_select_of_a_property_the_entity_lacks_answers_it_as_null() {
    // Recorded service traffic (azure-cosmosdb-table): `$select=age,sex,xyz` on an entity
    // without `xyz` answers `"xyz":null`, untyped, in a point query and a feed alike.
    let f = Fixture::new();
    f.create_table("Picked");
    let entity = r#"{"PartitionKey":"p","RowKey":"r","n":1,"s":"v"}"#;
    assert_eq!(f.insert("Picked", entity).status, 201);
    for level in ["nometadata", "minimalmetadata", "fullmetadata"] {
        let accept = format!("application/json;odata={level}");
        let accept = [("Accept", accept.as_str())];
        let point = "/Picked(PartitionKey='p',RowKey='r')?$select=n,nope,RowKey,nope,Timestamp";
        let got = f.send("GET", point, &accept, None, true);
        let json = got.json();
        assert_eq!(json["n"], 1, "{level}: {}", got.body);
        assert!(
            json.get("nope").is_some_and(Json::is_null),
            "{level}: {}",
            got.body
        );
        assert!(
            json.get("nope@odata.type").is_none(),
            "{level}: {}",
            got.body
        );
        assert!(json.get("s").is_none(), "{level}: {}", got.body);
        assert_eq!(got.body.matches("\"nope\"").count(), 1, "{}", got.body);
        let feed = f.send("GET", "/Picked()?$select=zz", &accept, None, true);
        let row = &feed.json()["value"][0];
        assert!(
            row.get("zz").is_some_and(Json::is_null),
            "{level}: {}",
            feed.body
        );
        assert!(row.get("n").is_none(), "{level}: {}", feed.body);
    }
    let accept = [("Accept", "application/json;odata=nometadata")];
    let feed = f.send("GET", "/Picked()?$select=zz", &accept, None, true);
    assert_eq!(feed.json()["value"][0], serde_json::json!({"zz": null}));
    // Past the first 64 selected names, presence is looked up again.
    let many: Vec<String> = (0..70).map(|i| format!("m{i}")).collect();
    let select = format!("/Picked()?$select={},n,s", many.join(","));
    let row = f.send("GET", &select, &accept, None, true).json()["value"][0].clone();
    assert_eq!((row["n"].clone(), row["s"].clone()), (1.into(), "v".into()));
    assert_eq!(row.as_object().unwrap().len(), 72, "{row}");
    assert!(row["m69"].is_null());
    // A name no custom property can have (an annotation, an OData member) is not a missing
    // property: nothing is written for it.
    let odd = "/Picked()?$select=n,n@odata.type,odata.etag,first-name";
    let row = f.send("GET", odd, &accept, None, true).json()["value"][0].clone();
    assert_eq!(row, serde_json::json!({"n": 1}), "{row}");
}

#[test]
fn server_select_of_more_than_255_distinct_names_is_400_invalid_input() {
    // The service projects at most 255 properties; repeats of one name count once.
    let f = Fixture::new();
    f.create_table("Wide");
    assert_eq!(
        f.insert("Wide", r#"{"PartitionKey":"p","RowKey":"r","n":1}"#)
            .status,
        201
    );
    let accept = [("Accept", "application/json;odata=nometadata")];
    let names = |n: usize| {
        (0..n)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let at_limit = format!("/Wide()?$select={},c0,c1", names(255));
    let got = f.send("GET", &at_limit, &accept, None, true);
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.json()["value"][0].as_object().unwrap().len(), 255);
    for path in [
        format!("/Wide()?$select={}", names(256)),
        format!("/Wide(PartitionKey='p',RowKey='r')?$select={}", names(256)),
    ] {
        let got = f.send("GET", &path, &accept, None, true);
        assert_eq!(got.status, 400, "{}", got.body);
        assert_eq!(got.error_code(), "InvalidInput", "{}", got.body);
    }
}
