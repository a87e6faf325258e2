//! `strata import` and `strata export` (JSON Lines and CSV), `snapshot`, and the inspection
//! commands.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod cli_support;

use cli_support::Scratch;

const DATA: i32 = 3;
const IO: i32 = 4;
const CORRUPT: i32 = 5;

#[test]
fn import_jsonl_reports_bad_rows_by_line_and_keeps_the_rest() {
    let s = Scratch::new();
    let input = s.file(
        "in.jsonl",
        "{\"PartitionKey\":\"a\",\"RowKey\":\"1\",\"V\":1}\n\
         {\"PartitionKey\":\"a\",\"RowKey\":\"2\",\"V\":\n\
         \n\
         {\"PartitionKey\":\"a/b\",\"RowKey\":\"3\"}\n\
         {\"PartitionKey\":\"b\",\"RowKey\":\"4\",\"V\":4}\n",
    );
    let run = s.run(&["import", "Tab1", input.to_str().unwrap()]);
    run.ok();
    let err = run.stderr();
    assert!(err.contains("imported 2 rows"), "{err}");
    assert!(err.contains("rejected 2"), "{err}");
    assert!(err.contains("line 2"), "{err}");
    assert!(err.contains("line 4"), "{err}");
    let all = s.run(&["query", "Tab1", "--all", "--format", "jsonl"]).ok();
    assert_eq!(all.lines().count(), 2);
}

#[test]
fn import_strict_stops_at_the_first_bad_row() {
    let s = Scratch::new();
    let input = s.file(
        "in.jsonl",
        "{\"PartitionKey\":\"a\",\"RowKey\":\"1\"}\n[1,2]\n",
    );
    s.run(&["import", "Tab1", input.to_str().unwrap(), "--strict"])
        .fails(DATA, "line 2");
}

#[test]
fn import_csv_infers_and_takes_given_types_and_key_columns() {
    let s = Scratch::new();
    let input = s.file(
        "in.csv",
        "device,ts,Temp,Count,On,Note,When\n\
         d1,001,21.5,7,true,hello,2024-01-01T00:00:00Z\n\
         d1,002,x,8,false,,2024-01-02T00:00:00Z\n\
         d1,003,22.5,9\n",
    );
    let run = s.run(&[
        "import",
        "Tab1",
        input.to_str().unwrap(),
        "--partition-key-column",
        "device",
        "--row-key-column",
        "ts",
        "--type",
        "Temp=Edm.Double",
        "--type",
        "When=Edm.DateTime",
    ]);
    run.ok();
    let err = run.stderr();
    assert!(err.contains("imported 1 rows"), "{err}");
    assert!(err.contains("line 3") && err.contains("Temp"), "{err}");
    assert!(err.contains("line 4"), "{err}");
    let got = s.run(&["get", "Tab1", "d1", "001"]).json();
    assert_eq!(got["Temp"], 21.5);
    assert_eq!(got["Count"], 7);
    assert_eq!(got["On"], true);
    assert_eq!(got["When@odata.type"], "Edm.DateTime");
}

#[test]
fn import_csv_without_key_column_is_usage_error() {
    let s = Scratch::new();
    let input = s.file("in.csv", "a,b\n1,2\n");
    s.run(&["import", "Tab1", input.to_str().unwrap()])
        .fails(2, "PartitionKey");
}

#[test]
fn export_jsonl_and_csv_round_trip_through_import() {
    let s = Scratch::new();
    let input = s.file(
        "in.jsonl",
        "{\"PartitionKey\":\"a\",\"RowKey\":\"1\",\"V\":1,\"Big\":\"5\",\"Big@odata.type\":\"Edm.Int64\"}\n\
         {\"PartitionKey\":\"a\",\"RowKey\":\"2\",\"V\":\"text\"}\n",
    );
    s.run(&["import", "Tab1", input.to_str().unwrap()]).ok();
    let out = s.path("out.jsonl");
    s.run(&["export", "Tab1", out.to_str().unwrap()]).ok();
    s.run(&["import", "Tab2", out.to_str().unwrap()]).ok();
    let a = s.run(&["get", "Tab2", "a", "1"]).json();
    assert_eq!(a["Big@odata.type"], "Edm.Int64");
    let csv_out = s.path("out.csv");
    s.run(&[
        "export",
        "Tab1",
        csv_out.to_str().unwrap(),
        "--filter",
        "RowKey ge '1'",
    ])
    .ok();
    let text = std::fs::read_to_string(&csv_out).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "PartitionKey,RowKey,Timestamp,Big,V#Int32,V#String"
    );
    assert!(lines.next().unwrap().ends_with(",5,1,"));
    assert!(lines.next().unwrap().ends_with(",,,text"));
}

#[test]
fn export_csv_header_has_types_first_seen_after_the_sampled_rows() {
    let s = Scratch::new();
    let input = s.file(
        "in.jsonl",
        "{\"PartitionKey\":\"a\",\"RowKey\":\"1\",\"V\":1}\n\
         {\"PartitionKey\":\"a\",\"RowKey\":\"2\",\"V\":2}\n\
         {\"PartitionKey\":\"a\",\"RowKey\":\"3\",\"V\":\"three\",\"Late\":true}\n",
    );
    s.run(&["import", "Tab1", input.to_str().unwrap()]).ok();
    let out = s.path("out.csv");
    // A sample of one row sees only V as Int32; the export must still hold every column.
    s.run(&[
        "export",
        "Tab1",
        out.to_str().unwrap(),
        "--row-group-rows",
        "1",
    ])
    .ok();
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "PartitionKey,RowKey,Timestamp,Late,V#Int32,V#String"
    );
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[1].ends_with(",,1,"), "{text}");
    assert!(lines[3].ends_with(",true,,three"), "{text}");
}

#[test]
fn export_all_tables_writes_one_file_per_table() {
    let s = Scratch::new();
    s.run(&["tables", "create", "Alpha"]).ok();
    s.run(&["tables", "create", "Beta"]).ok();
    s.run(&["put", "Alpha", r#"{"PartitionKey":"a","RowKey":"1"}"#])
        .ok();
    let dir = s.path("out");
    s.run(&[
        "export",
        "--all-tables",
        dir.to_str().unwrap(),
        "--to",
        "csv",
    ])
    .ok();
    assert!(dir.join("Alpha.csv").exists() && dir.join("Beta.csv").exists());
}

#[test]
fn export_of_unknown_table_or_bad_filter_fails_before_writing() {
    let s = Scratch::new();
    s.run(&["tables", "create", "Alpha"]).ok();
    let out = s.path("x.jsonl");
    s.run(&["export", "Nope", out.to_str().unwrap()])
        .fails(DATA, "does not exist");
    s.run(&["export", "Alpha", out.to_str().unwrap(), "--filter", "(("])
        .fails(DATA, "invalid --filter");
    assert!(!out.exists());
}

#[test]
fn snapshot_opens_read_only_and_refuses_to_overwrite() {
    let s = Scratch::new();
    s.run(&["put", "Alpha", r#"{"PartitionKey":"a","RowKey":"1"}"#])
        .fails(DATA, "does not exist");
    s.run(&["tables", "create", "Alpha"]).ok();
    s.run(&["put", "Alpha", r#"{"PartitionKey":"a","RowKey":"1","V":3}"#])
        .ok();
    let snap = s.path("snap.strata");
    s.run(&["snapshot", snap.to_str().unwrap()]).ok();
    s.run(&["snapshot", snap.to_str().unwrap()])
        .fails(IO, "already exists");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "--read-only",
            "--db",
            snap.to_str().unwrap(),
            "get",
            "Alpha",
            "a",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"V\": 3"));
}

#[test]
fn stats_lists_tables_with_entity_counts() {
    let s = Scratch::new();
    s.run(&["tables", "create", "Alpha"]).ok();
    s.run(&["put", "Alpha", r#"{"PartitionKey":"a","RowKey":"1"}"#])
        .ok();
    let out = s.run(&["stats", "--format", "table"]).ok();
    assert!(out.contains("file_bytes"), "{out}");
    assert!(
        out.contains("table Alpha") && out.contains("1 entities"),
        "{out}"
    );
}

#[test]
fn check_is_clean_then_reports_corruption_with_offset() {
    let s = Scratch::new();
    s.run(&["tables", "create", "Alpha"]).ok();
    for i in 0..50 {
        s.run(&[
            "put",
            "Alpha",
            &format!(
                r#"{{"PartitionKey":"a","RowKey":"{i}","V":"{}"}}"#,
                "x".repeat(100)
            ),
        ])
        .ok();
    }
    s.run(&["compact"]).ok();
    let clean = s.run(&["check"]).json();
    assert_eq!(clean[0]["value"], "clean");
    // Flip every byte of the file past the superblocks, one page at a time, until check
    // notices; a file whose data pages are all garbage must not be reported clean.
    let mut bytes = std::fs::read(&s.db).unwrap();
    for b in bytes.iter_mut().skip(8192) {
        *b ^= 0xA5;
    }
    std::fs::write(&s.db, &bytes).unwrap();
    let run = s.run(&["check"]);
    assert_ne!(run.code(), 0);
    assert!(
        run.code() == CORRUPT || run.code() == IO,
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr().contains("offset") || run.stderr().contains("not a strata"),
        "{}",
        run.stderr()
    );
}

#[test]
fn dump_shows_keys_and_decoded_values() {
    let s = Scratch::new();
    s.run(&["tables", "create", "Alpha"]).ok();
    s.run(&["put", "Alpha", r#"{"PartitionKey":"a","RowKey":"1","V":3}"#])
        .ok();
    let rows = s.run(&["dump"]).json();
    let rows = rows.as_array().unwrap();
    let entity = rows.iter().find(|r| r["value"]["V"] == 3).unwrap();
    assert!(entity["key"].as_str().unwrap().ends_with("610031"));
    let id = entity["table_id"].as_u64().unwrap().to_string();
    let only = s
        .run(&["dump", "--table-id", &id, "--from", "a", "--limit", "1"])
        .json();
    assert_eq!(only.as_array().unwrap().len(), 1);
}
