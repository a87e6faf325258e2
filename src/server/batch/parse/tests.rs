//! Tests of the batch body parser.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]
use super::head::{HeadMemo, read_head_memo};
use super::skip::{PartMemo, parse_direct, skip_by_length};
use super::*;
use crate::server::limits::PART_MAX_HEADERS;

const BODY: &str = "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_2\r\n\r\n\
--changeset_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: 7\r\n\r\n\
POST http://127.0.0.1:10002/devstoreaccount1/t HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n\
{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\r\n\
--changeset_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
DELETE http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='b') HTTP/1.1\r\nIf-Match: *\r\n\r\n\
\r\n--changeset_2--\r\n--batch_1--\r\n";

#[test]
fn batch_parse_changeset_yields_each_operation() {
    let ops = parse("multipart/mixed; boundary=batch_1", BODY.as_bytes()).unwrap();
    assert_eq!(ops.len(), 2);
    assert_eq!(ops[0].method, "POST");
    assert_eq!(ops[0].path, "/devstoreaccount1/t");
    assert_eq!(ops[0].content_id, Some("7"));
    assert_eq!(ops[0].header("prefer"), Some("return-no-content"));
    assert_eq!(ops[0].body, b"{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}");
    assert_eq!(ops[1].method, "DELETE");
    assert_eq!(ops[1].header("if-match"), Some("*"));
    assert!(ops[1].body.is_empty());
}

#[test]
fn batch_content_id_with_a_control_character_is_not_echoed() {
    let with_id = |id: &str| {
        BODY.replace("Content-ID: 7\r\n", &format!("Content-ID: {id}\r\n"))
            .into_bytes()
    };
    for (id, echoed) in [
        ("7", Some("7")),
        ("a b", Some("a b")),
        ("9\rX-Injected: y", None),
    ] {
        let body = with_id(id);
        let ops = parse("multipart/mixed; boundary=batch_1", &body).unwrap();
        assert_eq!(ops[0].echoed_content_id(), echoed, "{id:?}");
    }
}

#[test]
fn batch_parse_truncated_body_is_invalid_input() {
    for cut in 0..BODY.len() - 20 {
        let result = parse("multipart/mixed; boundary=batch_1", &BODY.as_bytes()[..cut]);
        assert!(result.is_err(), "cut at {cut}");
    }
}

#[test]
fn batch_parse_non_multipart_content_type_is_invalid_input() {
    assert!(parse("application/json", BODY.as_bytes()).is_err());
    assert!(parse("multipart/mixed", BODY.as_bytes()).is_err());
}

#[test]
fn batch_parse_over_100_operations_fails_operation_99_as_the_service() {
    let op = "--changeset_2\r\nContent-Type: application/http\r\n\r\n\
DELETE http://h/a/t(PartitionKey='p',RowKey='b') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n";
    let body = |n: usize| {
        format!(
            "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_2\r\n\r\n{}--changeset_2--\r\n--batch_1--\r\n",
            op.repeat(n)
        )
    };
    let content_type = "multipart/mixed; boundary=batch_1";
    assert_eq!(
        parse(content_type, body(100).as_bytes()).unwrap().len(),
        100
    );
    let error = parse(content_type, body(101).as_bytes()).unwrap_err();
    assert_eq!(error.batch_index(), Some(99));
    assert_eq!((error.status(), error.code()), (400, "InvalidInput"));
}

#[test]
fn batch_parse_two_top_level_parts_is_invalid_input() {
    let body = format!(
        "{}{}",
        &BODY[..BODY.len() - "--batch_1--\r\n".len()],
        "--batch_1\r\n\r\nGET http://h/a/t HTTP/1.1\r\n\r\n--batch_1--\r\n"
    );
    let error = parse("multipart/mixed; boundary=batch_1", body.as_bytes()).unwrap_err();
    assert_eq!((error.batch_index(), error.code()), (None, "InvalidInput"));
}
#[test]
fn batch_parse_last_outer_delimiter_without_closing_dashes_ends_the_batch() {
    // The shape Microsoft's Rust SDK (`azure_data_tables` 0.21) sends: line feeds only, no
    // Content-Length in the parts, and `--batch_<id>` without `--` as the last line.
    let body = "--batch_1\nContent-Type: multipart/mixed; boundary=changeset_2\n\n\
--changeset_2\nContent-Type: application/http\nContent-Transfer-Encoding: binary\n\n\
POST http://127.0.0.1:10002/devstoreaccount1/t HTTP/1.1\naccept: application/json;odata=fullmetadata\ncontent-type: application/json\n\n\
{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}\n\
--changeset_2\nContent-Type: application/http\nContent-Transfer-Encoding: binary\n\n\
DELETE http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='b') HTTP/1.1\nIf-Match: *\n\n\
--changeset_2--\n--batch_1\n";
    let content_type = "multipart/mixed; boundary=batch_1";
    for body in [body, body.trim_end(), &format!("{body}\r\n  \n")] {
        let ops = parse(content_type, body.as_bytes()).unwrap();
        assert_eq!(ops.len(), 2, "{body:?}");
        assert_eq!(ops[0].body, b"{\"PartitionKey\":\"p\",\"RowKey\":\"a\"}");
        assert_eq!(ops[1].method, "DELETE");
        assert_eq!(
            parse_by_search(content_type, body.as_bytes())
                .unwrap()
                .len(),
            2
        );
    }
    // Anything after that delimiter is a second part, still refused.
    let error = parse(content_type, format!("{body}x\n").as_bytes()).unwrap_err();
    assert_eq!(error.code(), "InvalidInput");
}

#[test]
fn batch_parse_header_lookup_is_case_blind_and_the_first_line_wins() {
    let part = b"IF-MATCH: *\r\nX-Other :  v \r\n  \r\nprefer: a\r\nPrefer: b\r\n\r\nbody";
    let (headers, content) = split_headers(part).unwrap();
    assert_eq!(content, b"body");
    for name in [
        "if-match",
        "If-Match",
        "x-other",
        "PREFER",
        "content-id",
        "missing",
    ] {
        let scanned = headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value);
        assert_eq!(headers.get(name), scanned, "{name}");
    }
    assert_eq!(headers.get("prefer"), Some("a"));
    assert_eq!(headers.get("x-other"), Some("v"));
    assert_eq!(headers.iter().count(), 4);
}

#[test]
fn batch_parse_header_block_errors_name_the_line_or_the_limit() {
    let error = split_headers(b"Good: 1\r\nno colon here\r\n\r\n").unwrap_err();
    assert!(error.to_string().contains("no colon here"), "{error}");
    let many = "H: v\r\n".repeat(PART_MAX_HEADERS + 1) + "\r\n";
    let error = split_headers(many.as_bytes()).unwrap_err();
    assert!(error.to_string().contains("more than"), "{error}");
    assert!(split_headers(b"H: \xff\r\n\r\n").is_err());
    let (headers, content) = split_headers(b"A: 1\nB: 2").unwrap();
    assert_eq!((headers.get("b"), content), (Some("2"), &b""[..]));
}

/// A changeset of SDK-shaped parts (`Content-Length` stated), each with `body`.
fn sdk_batch(bodies: &[&str], length: impl Fn(&str) -> usize) -> String {
    let mut out =
        String::from("--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_2\r\n\r\n");
    for (index, body) in bodies.iter().enumerate() {
        out.push_str(&format!(
            "--changeset_2\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: {index}\r\n\r\n\
POST http://127.0.0.1:10002/devstoreaccount1/t HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nx-ms-version: 2019-02-02\r\n\r\n{body}\r\n",
            length(body)
        ));
    }
    out.push_str("--changeset_2--\r\n--batch_1--\r\n");
    out
}

/// Whether the length skip and the delimiter search read `body` alike.
fn reads_alike(body: &[u8]) -> bool {
    let content_type = "multipart/mixed; boundary=batch_1";
    match (
        parse(content_type, body),
        parse_by_search(content_type, body),
    ) {
        (Ok(ops), Ok(reference)) => ops == reference,
        (Err(error), Err(reference)) => {
            (error.to_string(), error.batch_index())
                == (reference.to_string(), reference.batch_index())
        }
        _ => false,
    }
}

#[test]
fn batch_parse_sdk_parts_are_skipped_by_their_content_length() {
    let body = sdk_batch(&[r#"{"PartitionKey":"p","RowKey":"a"}"#; 3], str::len);
    let ops = parse("multipart/mixed; boundary=batch_1", body.as_bytes()).unwrap();
    assert_eq!(ops.len(), 3);
    assert_eq!(ops[2].body, br#"{"PartitionKey":"p","RowKey":"a"}"#);
    assert_eq!(ops[2].content_id, Some("2"));
    assert_eq!(ops[2].header("content-length"), Some("33"));
    let first = body.find("--changeset_2\r\n").unwrap() + "--changeset_2\r\n".len();
    let (op, next) = skip_by_length(
        &body.as_bytes()[first..],
        b"--changeset_2",
        &mut PartMemo::default(),
    )
    .unwrap();
    assert_eq!(op, ops[0]);
    assert!(body[first + next..].starts_with("--changeset_2\r\n"));
    assert_eq!(parse_direct(body.as_bytes(), "batch_1"), Some(ops));
    assert!(reads_alike(body.as_bytes()));
}

#[test]
fn batch_parse_length_skip_reads_as_the_delimiter_search() {
    let json = r#"{"PartitionKey":"p","RowKey":"a"}"#;
    let cases = [
        sdk_batch(&[json, json], |body| body.len() - 1),
        sdk_batch(&[json, json], |body| body.len() + 1),
        sdk_batch(&[json, json], |body| body.len() + 2),
        sdk_batch(&[json], |_| 100_000),
        sdk_batch(&["", json], str::len),
        sdk_batch(&["{\n}", json], str::len),
        sdk_batch(&["x\r\n--changeset_2\r\ny", json], str::len),
        sdk_batch(&["--changeset_2", json], str::len),
        sdk_batch(&["ends in CR\r", json], str::len),
        sdk_batch(&[json, json], |_| 0),
        sdk_batch(&[json; 101], str::len),
        sdk_batch(&[json; 100], str::len),
        sdk_batch(&[json, json], str::len).replace("POST", "post"),
        sdk_batch(&[json, json], str::len).replace("x-ms-version", "-x-ms-version"),
        sdk_batch(&[json, json], str::len).replace("x-ms-version:", "x-ms-version"),
        sdk_batch(&[json, json], str::len).replace("Content-Length: 33", "Content-Length: +33"),
        sdk_batch(&[json, json], str::len).replace("Content-Length: 33", "Content-Length:  33 "),
        sdk_batch(&[json, json], str::len).replace("http://127.0.0.1:10002", "nohost"),
        sdk_batch(&[json, json], str::len).replacen("HTTP/1.1", "XTTP/1.1", 1),
        sdk_batch(&[json, json], str::len).replace("\r\n", "\n"),
        sdk_batch(&[json, json], str::len).replace("--changeset_2--", "--changeset_2"),
        sdk_batch(&[json, json], str::len).replace("changeset_2", "batch_1x"),
        sdk_batch(&[json, json], str::len).replace("changeset_2", "batch_"),
        sdk_batch(&[json, json], str::len).replace("--batch_1--\r\n", ""),
        sdk_batch(&[json, json], str::len).replace("--batch_1--", "--batch_1"),
        sdk_batch(&[json, json], str::len).replace("--batch_1--", "epilogue\r\n--batch_1--"),
        sdk_batch(&[json, json], str::len)
            .replace("--changeset_2--", "--changeset_2--\r\n--batch_1--"),
        sdk_batch(&[json, json], str::len).replacen(
            "\r\n\r\n--changeset_2",
            "\r\n\r\npreamble\r\n--changeset_2",
            1,
        ),
        sdk_batch(&[json, json], str::len).replacen(
            "\r\n\r\n--changeset_2",
            "\r\n\r\n--batch_1\r\n--changeset_2",
            1,
        ),
        sdk_batch(&["--batch_1--", json], str::len),
        sdk_batch(&[json, json], str::len).replacen("--batch_1", "x--batch_1", 1),
        sdk_batch(&[json, json], str::len).replacen("--batch_1\r\n", "--batch_1--\r\n", 1),
        sdk_batch(&[json, json], str::len)
            .replace("multipart/mixed; boundary=changeset_2", "multipart/mixed"),
        sdk_batch(&[json, json], str::len)
            .replace("multipart/mixed; boundary=changeset_2", "application/http"),
        sdk_batch(&[json, json], str::len).replacen(
            "Content-Type: multipart",
            "-Content-Type: multipart",
            1,
        ),
        sdk_batch(&[], str::len),
    ];
    for (index, body) in cases.iter().enumerate() {
        assert!(reads_alike(body.as_bytes()), "case {index}");
    }
}

/// A header block read as (headers, content, closed, dash), or its error's text.
fn head_reading(head: Result<head::Head<'_>>) -> std::result::Result<String, String> {
    head.map(|head| {
        format!(
            "{:?} {:?} {:?} {} {}",
            head.headers,
            head.headers.iter().collect::<Vec<_>>(),
            head.content,
            head.closed,
            head.dash
        )
    })
    .map_err(|error| error.to_string())
}

/// Whether reading `blocks` one after another with one memo reads each as a fresh reading.
fn memo_reads_alike(blocks: &[&[u8]]) -> bool {
    let mut memo = HeadMemo::default();
    blocks.iter().all(|block| {
        head_reading(read_head_memo(block, &mut memo)) == head_reading(head::read_head(block))
    })
}

#[test]
fn batch_parse_remembered_header_lines_read_as_fresh_lines() {
    let sdk: &[u8] = b"Content-Type: application/json\r\nContent-Length: 331\r\nx-ms-version: 2019-02-02\r\n\r\n{}";
    let many = "H: v\r\n".repeat(PART_MAX_HEADERS + 1) + "\r\n";
    let limit = "H: v\r\n".repeat(PART_MAX_HEADERS) + "\r\n";
    let cases: &[&[&[u8]]] = &[
        &[sdk, sdk, sdk],
        &[sdk, b"Content-Type: application/json\r\nContent-Length: 1000\r\nx-ms-version: 2019-02-02\r\n\r\n{}"],
        // The same line at another place, a line cut short, a line without its line feed.
        &[sdk, b"Content-Length: 331\r\nContent-Type: application/json\r\n\r\n"],
        &[sdk, b"Content-Type: application/json\r\nContent-Length: 33"],
        &[sdk, b"Content-Type: application/json\r\nContent-Length: 331\r"],
        &[sdk, b"Content-Type: application/json\r\nContent-Length: 331"],
        &[b"A: 1", b"A: 1\r\n\r\n", b"A: 1"],
        // The same name with another value: blank, another colon, another line end.
        &[sdk, b"Content-Type: application/json\r\nContent-Length:   \r\n\r\n"],
        &[sdk, b"Content-Type: application/json\r\nContent-Length:: 5\n\n", sdk],
        &[sdk, b"Content-Type: x\r\n"],
        // Whitespace lines, dashes, a repeated known header (the first wins), bad lines.
        &[b"  \r\nA: 1\r\n-B: 2\r\n\r\n", b"  \r\nA: 1\r\n-B: 2\r\n\r\n", b"  \r\nA: 1\r\n\r\n"],
        &[b"Prefer: a\r\nPrefer: b\r\n\r\n", b"Prefer: b\r\nPrefer: a\r\n\r\n", b"Prefer: a\r\nPrefer: b\r\n\r\n"],
        &[b"Prefer:   \r\nIf-Match :  * \r\n\r\n", b"Prefer:   \r\nIf-Match :  * \r\n\r\n"],
        &[sdk, b"Content-Type: application/json\r\nno colon\r\n\r\n", sdk],
        &[sdk, b"Content-Type: application/json\r\nH: \xff\r\n\r\n", b"Content-Type: application/json\r\nH: \xff\r\n\r\n"],
        &[b"\r\n", b"\n", b"\r", b""],
        &[limit.as_bytes(), many.as_bytes(), limit.as_bytes(), many.as_bytes()],
    ];
    for (index, blocks) in cases.iter().enumerate() {
        assert!(memo_reads_alike(blocks), "case {index}");
    }
}

/// An SDK part's MIME block with Content-ID `id` (any bytes), then a body.
fn mime_block(id: &[u8]) -> Vec<u8> {
    [
        &b"Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: "[..],
        id,
        b"\r\n\r\nPOST http://h/a/t HTTP/1.1\r\n",
    ]
    .concat()
}

#[test]
fn batch_parse_blocks_differing_in_one_value_read_as_fresh_blocks() {
    let ids: [&[u8]; 12] = [
        b"0",
        b"1",
        b"22",
        b"",
        b"  7  ",
        b"\xff",
        b"\xc3\xa9",
        b"9\r",
        b"a: b",
        b"-",
        b"3\r\nX: y",
        b"4",
    ];
    let blocks: Vec<Vec<u8>> = ids.iter().map(|id| mime_block(id)).collect();
    let mut all: Vec<&[u8]> = blocks.iter().map(Vec::as_slice).collect();
    assert!(memo_reads_alike(&all));
    all.reverse();
    assert!(memo_reads_alike(&all));
    // The varying line repeated (the first value is noted), or followed by another of its
    // name; a block whose other lines change; a block cut in the varying line.
    let cases: &[&[&[u8]]] = &[
        &[
            b"Prefer: 1\r\nPrefer: x\r\n\r\n",
            b"Prefer: 2\r\nPrefer: x\r\n\r\n",
            b"Prefer: 3\r\nPrefer: x\r\n\r\n",
        ],
        &[
            b"Prefer: x\r\nPrefer: 1\r\n\r\n",
            b"Prefer: x\r\nPrefer: 2\r\n\r\n",
            b"Prefer: x\r\nPrefer: 3\r\n\r\n",
        ],
        &[
            b"A: 1\r\nB: x\r\n\r\n",
            b"A: 2\r\nB: x\r\n\r\n",
            b"A: 3\r\nB: x\r\n\r\n",
            b"A: 4\r\nB: y\r\n\r\n",
        ],
        &[
            b"A: 1\r\nB: x\r\n\r\n",
            b"A: 2\r\nB: x\r\n\r\n",
            b"A: 3\r\nB: x\r\n",
            b"A: 3",
            b"A: 4\r\nB: x\r\n\r\n",
        ],
        &[
            b"A: 1\r\nB: x\r\n\r\n",
            b"A: 2\r\nB: x\r\n\r\n",
            b"A: 3\nB: x\n\n",
            b"A: 5\r\nB: x\r\n\r\n",
        ],
    ];
    for (index, blocks) in cases.iter().enumerate() {
        assert!(memo_reads_alike(blocks), "case {index}");
    }
    let many = "H: v\r\n".repeat(PART_MAX_HEADERS - 1);
    let limit: Vec<Vec<u8>> = (0..3)
        .map(|id| format!("{many}Content-ID: {id}\r\n\r\n").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = limit.iter().map(Vec::as_slice).collect();
    assert!(memo_reads_alike(&refs));
}

proptest::proptest! {
    #[test]
    fn batch_parse_remembered_header_lines_read_as_fresh_lines_when_mutated(
        at in proptest::prelude::any::<proptest::sample::Index>(),
        byte in proptest::prelude::any::<u8>(),
        delete in proptest::prelude::any::<bool>(),
    ) {
        let block: &[u8] = b"Content-Type: application/http\r\nContent-ID: 1\r\nPrefer: x\r\n  \r\nIf-Match: *\r\n\r\nbody";
        let mut mutated = block.to_vec();
        let at = at.index(mutated.len());
        if delete {
            mutated.remove(at);
        } else {
            mutated[at] = byte;
        }
        proptest::prop_assert!(memo_reads_alike(&[block, &mutated, block, &mutated]));
    }

    #[test]
    fn batch_parse_blocks_differing_in_one_value_read_as_fresh_blocks_when_mutated(
        at in proptest::prelude::any::<proptest::sample::Index>(),
        byte in proptest::prelude::any::<u8>(),
        delete in proptest::prelude::any::<bool>(),
    ) {
        let (first, second, third) = (mime_block(b"1"), mime_block(b"2"), mime_block(b"10"));
        let mut mutated = mime_block(b"3");
        let at = at.index(mutated.len());
        if delete {
            mutated.remove(at);
        } else {
            mutated[at] = byte;
        }
        proptest::prop_assert!(memo_reads_alike(&[&first, &second, &mutated, &third, &mutated]));
    }

    #[test]
    fn batch_parse_mutated_bodies_read_as_the_delimiter_search(
        at in proptest::prelude::any::<proptest::sample::Index>(),
        byte in proptest::prelude::any::<u8>(),
        delete in proptest::prelude::any::<bool>(),
    ) {
        let json = r#"{"PartitionKey":"p","RowKey":"a"}"#;
        let mut bytes = sdk_batch(&[json, json], str::len).into_bytes();
        let at = at.index(bytes.len());
        if delete {
            bytes.remove(at);
        } else {
            bytes[at] = byte;
        }
        proptest::prop_assert!(reads_alike(&bytes));
    }
}

#[test]
fn batch_parse_known_header_names_compare_as_ascii_case_blind_equality() {
    let mut names: Vec<Vec<u8>> = KNOWN_HEADERS
        .iter()
        .flat_map(|known| {
            [
                known.as_bytes().to_vec(),
                known.to_ascii_uppercase().into_bytes(),
                known.replace('-', "\r").into_bytes(),
                known.replace('-', "\u{d}").into_bytes(),
                known.replace('-', "_").into_bytes(),
                known.replace('e', "E").into_bytes(),
                known.replace('e', "%").into_bytes(),
                known.replace('t', "\u{14}").into_bytes(),
            ]
        })
        .collect();
    names.extend([
        b"x-ms-version".to_vec(),
        b"accept".to_vec(),
        b"ifmatch".to_vec(),
    ]);
    for name in &names {
        for known in KNOWN_HEADERS {
            assert_eq!(
                eq_lower(name, known.as_bytes()),
                name.eq_ignore_ascii_case(known.as_bytes()),
                "{:?} vs {known}",
                String::from_utf8_lossy(name)
            );
        }
        for byte in 0..=255_u8 {
            for at in 0..name.len() {
                let mut changed = name.clone();
                changed[at] = byte;
                for known in KNOWN_HEADERS {
                    assert_eq!(
                        eq_lower(&changed, known.as_bytes()),
                        changed.eq_ignore_ascii_case(known.as_bytes()),
                    );
                }
            }
        }
    }
}

#[test]
fn batch_parse_urls_split_into_path_and_query() {
    assert_eq!(
        split_url("http://h:1/a/t()?$select=x").unwrap(),
        ("/a/t()", Some("$select=x"))
    );
    assert_eq!(split_url("/a/t").unwrap(), ("/a/t", None));
    assert!(split_url("http://host").is_err());
    assert!(split_url("a/t").is_err());
}

#[test]
fn batch_operation_known_header_accessors_read_as_header_lookups() {
    assert_eq!(KNOWN_HEADERS[IF_MATCH_SLOT], "if-match");
    assert_eq!(KNOWN_HEADERS[PREFER_SLOT], "prefer");
    assert_eq!(KNOWN_HEADERS[CONTENT_ID_SLOT], "content-id");
    assert_eq!(KNOWN_HEADERS[CONTENT_LENGTH_SLOT], "content-length");
    let ops = parse("multipart/mixed; boundary=batch_1", BODY.as_bytes()).unwrap();
    for op in &ops {
        assert_eq!(op.if_match(), op.header("If-Match"));
        assert_eq!(op.prefer(), op.header("PREFER"));
    }
    assert_eq!(ops[0].prefer(), Some("return-no-content"));
    assert_eq!(ops[1].if_match(), Some("*"));
    assert_eq!((ops[0].if_match(), ops[1].prefer()), (None, None));
}

#[test]
fn batch_content_lengths_are_at_most_ten_ascii_digits_read_as_a_number() {
    let reference = |value: &str| {
        if value.is_empty() || value.len() > 10 || !value.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        value.parse::<usize>().ok()
    };
    let values = [
        "",
        "0",
        "7",
        "00",
        "042",
        "123",
        "9999999999",
        "4294967295",
        "4294967296",
        "12345678901",
        "+1",
        "-1",
        "1 ",
        " 1",
        "1a",
        "a1",
        "/",
        ":",
        "1.0",
        "٣",
        "0x10",
    ];
    for value in values {
        assert_eq!(
            super::skip::content_length(value),
            reference(value),
            "{value:?}"
        );
    }
}
