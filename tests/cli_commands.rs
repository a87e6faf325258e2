//! The everyday commands of the `strata` binary, their messages and exit statuses.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod cli_support;

use cli_support::Scratch;

const USAGE: i32 = 2;
const DATA: i32 = 3;
const IO: i32 = 4;

fn with_table() -> Scratch {
    let s = Scratch::new();
    s.run(&["tables", "create", "Readings"]).ok();
    s
}

#[test]
fn tables_create_list_delete_round_trip() {
    let s = with_table();
    s.run(&["tables", "create", "Other"]).ok();
    let list = s.run(&["tables", "list"]).json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["TableName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Other", "Readings"]);
    s.run(&["tables", "delete", "Other"]).ok();
    let list = s.run(&["tables", "list", "--format", "jsonl"]).ok();
    assert_eq!(list.trim(), r#"{"TableName":"Readings"}"#);
}

#[test]
fn tables_create_existing_is_data_error() {
    let s = with_table();
    s.run(&["tables", "create", "readings"])
        .fails(DATA, "already exists");
}

#[test]
fn tables_create_invalid_name_is_data_error() {
    let s = Scratch::new();
    s.run(&["tables", "create", "1bad"]).fails(DATA, "1bad");
}

#[test]
fn put_then_get_keeps_every_edm_type() {
    let s = with_table();
    let entity = r#"{"PartitionKey":"dev1","RowKey":"0001","Temp":21.5,"Count":7,
        "Big":"9007199254740993","Big@odata.type":"Edm.Int64","On":true,"Name":"north",
        "When":"2024-05-01T12:00:00.1234567Z","When@odata.type":"Edm.DateTime",
        "Id":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","Id@odata.type":"Edm.Guid",
        "Raw":"AQID","Raw@odata.type":"Edm.Binary","Nothing":null}"#;
    s.run(&["put", "Readings", entity]).ok();
    let got = s.run(&["get", "Readings", "dev1", "0001"]).json();
    assert_eq!(got["Temp"], 21.5);
    assert_eq!(got["Count"], 7);
    assert_eq!(got["Big"], "9007199254740993");
    assert_eq!(got["Big@odata.type"], "Edm.Int64");
    assert_eq!(got["On"], true);
    assert_eq!(got["Name"], "north");
    assert_eq!(got["When"], "2024-05-01T12:00:00.1234567Z");
    assert_eq!(got["Id@odata.type"], "Edm.Guid");
    assert_eq!(got["Raw"], "AQID");
    assert!(got.get("Nothing").is_none());
    assert!(got["odata.etag"].as_str().unwrap().starts_with("W/"));
}

#[test]
fn put_type_option_overrides_inference() {
    let s = with_table();
    s.run(&[
        "put",
        "Readings",
        r#"{"PartitionKey":"a","RowKey":"b","N":"5"}"#,
        "--type",
        "N=Edm.Int64",
    ])
    .ok();
    let got = s.run(&["get", "Readings", "a", "b"]).json();
    assert_eq!(got["N@odata.type"], "Edm.Int64");
}

#[test]
fn put_malformed_json_is_data_error() {
    let s = with_table();
    s.run(&["put", "Readings", "{not json"])
        .fails(DATA, "not valid JSON");
}

#[test]
fn put_unknown_type_is_usage_error() {
    let s = with_table();
    s.run(&[
        "put",
        "Readings",
        r#"{"PartitionKey":"a","RowKey":"b"}"#,
        "--type",
        "N=Edm.Int16",
    ])
    .fails(USAGE, "unknown type");
}

#[test]
fn put_insert_of_existing_entity_is_data_error() {
    let s = with_table();
    let e = r#"{"PartitionKey":"a","RowKey":"b"}"#;
    s.run(&["put", "Readings", e, "--mode", "insert"]).ok();
    s.run(&["put", "Readings", e, "--mode", "insert"])
        .fails(DATA, "EntityAlreadyExists");
}

#[test]
fn unknown_table_is_data_error_with_hint() {
    let s = with_table();
    s.run(&["query", "Nope"]).fails(DATA, "tables list");
    s.run(&["get", "Nope", "a", "b"])
        .fails(DATA, "does not exist");
}

#[test]
fn get_missing_entity_is_data_error() {
    let s = with_table();
    s.run(&["get", "Readings", "a", "b"])
        .fails(DATA, "ResourceNotFound");
}

#[test]
fn query_filter_select_top_and_continuation() {
    let s = with_table();
    for i in 0..5 {
        s.run(&[
            "put",
            "Readings",
            &format!(r#"{{"PartitionKey":"p","RowKey":"{i}","V":{i},"W":"x"}}"#),
        ])
        .ok();
    }
    let page = s
        .run(&[
            "query", "Readings", "--filter", "V ge 1", "--top", "2", "--select", "V",
        ])
        .json();
    let rows = page["value"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["RowKey"], "1");
    assert!(rows[0].get("W").is_none());
    let token = page["continuation"].as_str().unwrap();
    let next = s
        .run(&[
            "query",
            "Readings",
            "--filter",
            "V ge 1",
            "--top",
            "2",
            "--continue",
            token,
        ])
        .json();
    assert_eq!(next["value"][0]["RowKey"], "3");
    let all = s
        .run(&[
            "query", "Readings", "--all", "--top", "2", "--format", "jsonl",
        ])
        .ok();
    assert_eq!(all.lines().count(), 5);
    let csv = s
        .run(&["query", "Readings", "--all", "--format", "csv"])
        .ok();
    assert!(csv.starts_with("PartitionKey,RowKey,Timestamp,V,W"));
    let table = s.run(&["query", "Readings", "--format", "table"]).ok();
    assert!(table.lines().next().unwrap().contains("PartitionKey"));
}

#[test]
fn query_invalid_filter_is_data_error_with_position() {
    let s = with_table();
    s.run(&["query", "Readings", "--filter", "V eq eq 1"])
        .fails(DATA, "invalid --filter");
}

#[test]
fn query_invalid_token_is_usage_error() {
    let s = with_table();
    s.run(&["query", "Readings", "--continue", "garbage!"])
        .fails(USAGE, "--continue");
}

#[test]
fn delete_removes_and_missing_is_data_error() {
    let s = with_table();
    s.run(&["put", "Readings", r#"{"PartitionKey":"a","RowKey":"b"}"#])
        .ok();
    s.run(&["delete", "Readings", "a", "b"]).ok();
    s.run(&["delete", "Readings", "a", "b"])
        .fails(DATA, "does not exist");
}

#[test]
fn batch_applies_all_or_nothing_and_names_the_line() {
    let s = with_table();
    let good = s.file("good.jsonl", "{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"2\",\"@op\":\"upsert\"}\n");
    s.run(&["batch", "Readings", good.to_str().unwrap()]).ok();
    let bad = s.file("bad.jsonl", "{\"PartitionKey\":\"p\",\"RowKey\":\"3\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"1\",\"@op\":\"insert\"}\n");
    s.run(&["batch", "Readings", bad.to_str().unwrap()])
        .fails(DATA, "line 2");
    s.run(&["get", "Readings", "p", "3"])
        .fails(DATA, "ResourceNotFound");
    let broken = s.file(
        "broken.jsonl",
        "{\"PartitionKey\":\"p\",\"RowKey\":\"9\"}\n{oops\n",
    );
    s.run(&["batch", "Readings", broken.to_str().unwrap()])
        .fails(DATA, "line 2");
}

#[test]
fn read_only_refuses_writes_with_io_status() {
    let s = with_table();
    s.run(&[
        "--read-only",
        "put",
        "Readings",
        r#"{"PartitionKey":"a","RowKey":"b"}"#,
    ])
    .fails(IO, "read-only");
}

#[test]
fn missing_database_file_is_io_error() {
    let s = Scratch::new();
    s.run(&["tables", "list"]).fails(IO, "no database file");
}

#[test]
fn second_writer_on_locked_file_is_io_error() {
    let s = with_table();
    // A writer that blocks on its standard input holds the lock until we close it; start
    // it again if it lost a race for the lock with nobody (it exits at once then).
    let mut holder = loop {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
            .arg("--db")
            .arg(&s.db)
            .args(["import", "Readings", "-"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        if child.try_wait().unwrap().is_none() {
            break child;
        }
    };
    let run = s.run(&["put", "Readings", r#"{"PartitionKey":"a","RowKey":"b"}"#]);
    drop(holder.stdin.take());
    holder.wait().unwrap();
    run.fails(IO, "locked");
}

#[test]
fn unknown_command_and_bad_option_are_usage_errors() {
    let s = Scratch::new();
    assert_eq!(s.run(&["frobnicate"]).code(), USAGE);
    assert_eq!(s.run(&["query"]).code(), USAGE);
}

#[test]
fn every_command_help_has_an_example() {
    let s = Scratch::new();
    for cmd in [
        "demo", "tables", "put", "get", "query", "delete", "batch", "import", "export", "snapshot",
        "stats", "check", "compact", "dump",
    ] {
        let out = s.run(&[cmd, "--help"]).ok();
        assert!(
            out.contains("Example"),
            "{cmd} --help has no example:\n{out}"
        );
    }
    let top = s.run(&["--help"]).ok();
    assert!(top.contains("Exit status"));
}

/// Flips one byte inside every occurrence of `marker` in `bytes`; returns how many it hit.
fn corrupt_every(bytes: &mut [u8], marker: &[u8]) -> usize {
    let mut hits = 0;
    let mut at = 0;
    while let Some(pos) = bytes[at..].windows(marker.len()).position(|w| w == marker) {
        let hit = at + pos;
        bytes[hit + marker.len() / 2] ^= 0x5A;
        hits += 1;
        at = hit + marker.len();
    }
    hits
}

#[test]
fn check_reports_every_corruption_with_its_offset() {
    use strata::engine::{Durability, Engine, Options, WriteBatch};
    const CORRUPT: i32 = 5;
    let s = Scratch::new();
    // Two uncompressed SSTs that stay apart (no compaction), each holding one marker value.
    let options = Options {
        background_compaction: false,
        l0_compaction_trigger: 100,
        ..Options::default()
    };
    let engine = Engine::open(&s.db, options).unwrap();
    for (key, marker) in [(&b"a"[..], &b"FIRSTMARKER"[..]), (b"b", b"SECONDMARKER")] {
        let mut batch = WriteBatch::new();
        batch.put(key, marker);
        engine.write(&batch, Durability::Sync).unwrap();
        engine.flush().unwrap();
    }
    engine.close().unwrap();
    assert_eq!(s.run(&["check"]).json()[0]["value"], "clean");
    let mut bytes = std::fs::read(&s.db).unwrap();
    assert!(corrupt_every(&mut bytes, b"FIRSTMARKER") > 0);
    assert!(corrupt_every(&mut bytes, b"SECONDMARKER") > 0);
    std::fs::write(&s.db, &bytes).unwrap();
    let run = s.run(&["check"]);
    let err = run.stderr();
    assert_eq!(run.code(), CORRUPT, "{err}");
    let offsets: std::collections::BTreeSet<&str> = err
        .lines()
        .filter_map(|line| line.strip_prefix("corruption at file offset "))
        .filter_map(|rest| rest.split(':').next())
        .collect();
    assert_eq!(offsets.len(), 2, "both places reported:\n{err}");
    assert!(err.contains("2 problem(s) found"), "{err}");
}
