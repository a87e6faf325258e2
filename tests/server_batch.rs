//! Entity group transactions over HTTP: the changeset response of a success, the one indexed
//! part of a failure, and the 100-operation limit, driven by a plain signed HTTP client.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod server_support;

use server_support::signed::{Answer, Fixture};

fn batch_body(ops: &[String]) -> String {
    let mut body =
        String::from("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n");
    for op in ops {
        body.push_str("--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n");
        body.push_str(op);
        body.push_str("\r\n");
    }
    body.push_str("--changeset_c--\r\n--batch_b--\r\n");
    body
}

/// Sends the changeset of `ops` as one signed `$batch`.
fn send_batch(f: &Fixture, ops: &[String]) -> Answer {
    f.send(
        "POST",
        "/$batch",
        &[("Content-Type", "multipart/mixed; boundary=batch_b")],
        Some(batch_body(ops).as_bytes()),
        true,
    )
}

fn batch_insert(f: &Fixture, pk: &str, rk: &str) -> String {
    format!(
        "POST {} HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n{{\"PartitionKey\":\"{pk}\",\"RowKey\":\"{rk}\"}}",
        f.url("/Batched")
    )
}

#[test]
fn server_batch_success_answers_each_operation_in_a_changeset_response() {
    let f = Fixture::new();
    f.create_table("Batched");
    let ops: Vec<String> = (0..3)
        .map(|i| batch_insert(&f, "p", &i.to_string()))
        .collect();
    let answer = send_batch(&f, &ops);
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert!(
        answer
            .header("Content-Type")
            .unwrap()
            .starts_with("multipart/mixed; boundary=batchresponse_")
    );
    assert_eq!(answer.body.matches("HTTP/1.1 204 No Content").count(), 3);
    assert_eq!(answer.body.matches("ETag: W/").count(), 3);
    assert!(answer.body.contains("changesetresponse_"));
}

#[test]
fn server_batch_failure_answers_one_part_whose_message_starts_with_the_index() {
    let f = Fixture::new();
    f.create_table("Batched");
    assert_eq!(
        f.insert("Batched", r#"{"PartitionKey":"p","RowKey":"1"}"#)
            .status,
        201
    );
    let ops = vec![batch_insert(&f, "p", "0"), batch_insert(&f, "p", "1")];
    let answer = send_batch(&f, &ops);
    assert_eq!(answer.status, 202);
    assert_eq!(
        answer.body.matches("HTTP/1.1").count(),
        1,
        "{}",
        answer.body
    );
    assert!(answer.body.contains("HTTP/1.1 409 Conflict"));
    assert!(answer.body.contains("\"code\":\"EntityAlreadyExists\""));
    assert!(answer.body.contains("\"value\":\"1:"), "{}", answer.body);
    let nothing = f.send(
        "GET",
        "/Batched(PartitionKey='p',RowKey='0')",
        &[],
        None,
        true,
    );
    assert_eq!(nothing.status, 404, "a failed batch writes nothing");

    let cross = vec![batch_insert(&f, "p", "5"), batch_insert(&f, "q", "6")];
    let answer = send_batch(&f, &cross);
    assert!(
        answer
            .body
            .contains("CommandsInBatchActOnDifferentPartitions")
    );
    assert!(answer.body.contains("\"value\":\"1:"), "{}", answer.body);

    let malformed = f.send(
        "POST",
        "/$batch",
        &[("Content-Type", "multipart/mixed; boundary=batch_b")],
        Some(b"--batch_b\r\ngarbage"),
        true,
    );
    assert_eq!(
        (malformed.status, malformed.error_code().as_str()),
        (400, "InvalidInput")
    );
}

#[test]
fn server_batch_over_100_operations_fails_operation_99_inside_a_202() {
    let f = Fixture::new();
    f.create_table("Batched");
    let ops: Vec<String> = (0..101)
        .map(|i| batch_insert(&f, "p", &format!("{i:03}")))
        .collect();
    let answer = send_batch(&f, &ops);
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert_eq!(
        answer.body.matches("HTTP/1.1").count(),
        1,
        "{}",
        answer.body
    );
    assert!(answer.body.contains("HTTP/1.1 400 Bad Request"));
    assert!(answer.body.contains("\"code\":\"InvalidInput\""));
    assert!(answer.body.contains("\"value\":\"99:"), "{}", answer.body);
    let nothing = f.send(
        "GET",
        "/Batched(PartitionKey='p',RowKey='000')",
        &[],
        None,
        true,
    );
    assert_eq!(nothing.status, 404, "a refused batch writes nothing");
}

#[test]
fn server_batch_request_lines_may_name_the_table_relative_to_the_account() {
    // The legacy SDKs (azure-cosmosdb-table) write host-style request lines, `/{table}...`
    // without the account, also in a batch sent path-style; the service takes them.
    let f = Fixture::new();
    f.create_table("Batched");
    f.insert("Batched", r#"{"PartitionKey":"p","RowKey":"old"}"#);
    let ops = [
        "POST /Batched HTTP/1.1\r\nContent-ID: 1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"new\"}".to_owned(),
        "MERGE /Batched(PartitionKey='p',RowKey='old') HTTP/1.1\r\nContent-ID: 2\r\nContent-Type: application/json\r\nIf-Match: *\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"old\",\"M\":1}".to_owned(),
    ];
    let answer = send_batch(&f, &ops);
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert!(
        answer.body.contains("HTTP/1.1 201 Created"),
        "{}",
        answer.body
    );
    assert!(
        answer.body.contains("HTTP/1.1 204 No Content"),
        "{}",
        answer.body
    );
    let merged = f.send(
        "GET",
        "/Batched(PartitionKey='p',RowKey='old')",
        &[("Accept", "application/json;odata=nometadata")],
        None,
        true,
    );
    assert_eq!(merged.json()["M"], 1, "{}", merged.body);
    // A lone segment that names no table is still refused, inside the 202 answer.
    let refused = send_batch(&f, &["DELETE / HTTP/1.1\r\nIf-Match: *\r\n\r\n".to_owned()]);
    assert!(refused.body.contains("0:"), "{}", refused.body);
    assert!(refused.body.contains("InvalidInput"), "{}", refused.body);
}

#[test]
fn server_batch_request_line_naming_another_account_is_refused_and_writes_nothing() {
    // A batch is one account's transaction: a path-style line naming another account is
    // refused at its index, and the operations before it are not written either.
    let f = Fixture::new();
    f.create_table("Batched");
    let ops = [
        batch_insert(&f, "p", "first"),
        "POST /otheraccount/Batched HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"second\"}".to_owned(),
    ];
    let refused = send_batch(&f, &ops);
    assert_eq!(refused.status, 202, "{}", refused.body);
    assert!(refused.body.contains("HTTP/1.1 400"), "{}", refused.body);
    assert!(refused.body.contains("InvalidInput"), "{}", refused.body);
    assert!(refused.body.contains("1:"), "{}", refused.body);
    assert!(refused.body.contains("otheraccount"), "{}", refused.body);
    let first = f.send(
        "GET",
        "/Batched(PartitionKey='p',RowKey='first')",
        &[],
        None,
        true,
    );
    assert_eq!(first.status, 404, "{}", first.body);
}

#[test]
fn server_batch_echoes_the_content_id_of_the_embedded_request_also_on_failure() {
    // The legacy SDKs write Content-ID among the embedded request's headers; the service
    // echoes it in the operation's response part, the failing one's included, as the first
    // header after the part's status line (recorded service traffic).
    let f = Fixture::new();
    f.create_table("Batched");
    let insert = |rk: &str, id: u8| {
        format!(
            "POST {} HTTP/1.1\r\nContent-ID: {id}\r\nContent-Type: application/json\r\n\r\n{{\"PartitionKey\":\"p\",\"RowKey\":\"{rk}\"}}",
            f.url("/Batched")
        )
    };
    let answer = send_batch(&f, &[insert("a", 1), insert("b", 2)]);
    assert_eq!(answer.status, 202, "{}", answer.body);
    for id in [1, 2] {
        let head = format!("HTTP/1.1 201 Created\r\nContent-ID: {id}\r\nX-Content-Type-Options");
        assert!(answer.body.contains(&head), "{}", answer.body);
    }
    let failed = send_batch(&f, &[insert("c", 5), insert("a", 6)]);
    assert!(
        failed
            .body
            .contains("HTTP/1.1 409 Conflict\r\nContent-ID: 6\r\n"),
        "{}",
        failed.body
    );
    assert!(!failed.body.contains("Content-ID: 5"), "{}", failed.body);
}
