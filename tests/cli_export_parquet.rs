//! Parquet export read back by an independent reader (pyarrow, pinned in
//! tests/sdk/requirements.txt and installed into `<target>/sdk-venv`, the venv the SDK
//! conformance suite uses), every value of every EDM type compared.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod cli_support;
mod sdk_support;

use std::path::PathBuf;
use std::process::Command;

use cli_support::Scratch;
use sdk_support::venv::{ensure_venv, target_dir};

/// `<target>/sdk-venv` with pyarrow: the SDK conformance suite's venv, made or refreshed from
/// the same pinned requirements by the same code.
fn python_with_pyarrow() -> PathBuf {
    ensure_venv(
        &target_dir().join("sdk-venv"),
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/requirements.txt"),
    )
}

/// Reads the Parquet file and prints, per row, every column as a comparable text.
const READER: &str = r#"
import sys, json, math, base64, pyarrow as pa, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(json.dumps({f.name: str(f.type) for f in t.schema}))
# Python datetimes stop at microseconds: compare timestamps as their raw integer counts.
for i, f in enumerate(t.schema):
    if pa.types.is_timestamp(f.type):
        t = t.set_column(i, f.name, t.column(i).cast(pa.int64()))
for row in t.to_pylist():
    out = {}
    for k, v in row.items():
        if v is None: continue
        if isinstance(v, bytes): v = "b64:" + base64.b64encode(v).decode()
        elif isinstance(v, float) and (math.isnan(v) or math.isinf(v)): v = "float:" + repr(v)
        elif hasattr(v, "isoformat"): v = "ts:" + v.isoformat()
        out[k] = v
    print(json.dumps(out, sort_keys=True))
"#;

#[test]
fn parquet_export_is_read_back_by_pyarrow_with_every_edm_value() {
    let s = Scratch::new();
    let rows = [
        r#"{"PartitionKey":"p","RowKey":"1","S":"héllo","B":"AAEC/w==","B@odata.type":"Edm.Binary","T":true,"I":-2147483648,"L":"9223372036854775807","L@odata.type":"Edm.Int64","D":1.5,"W":"2024-05-01T12:00:00.1234567Z","W@odata.type":"Edm.DateTime","G":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","G@odata.type":"Edm.Guid","M":1}"#,
        r#"{"PartitionKey":"p","RowKey":"2","D":"NaN","D@odata.type":"Edm.Double","M":"one","E":"-Infinity","E@odata.type":"Edm.Double"}"#,
        r#"{"PartitionKey":"q","RowKey":"3","Old":"1601-01-01T00:00:00Z","Old@odata.type":"Edm.DateTime","T":false}"#,
    ];
    let input = s.file("in.jsonl", &rows.join("\n"));
    s.run(&["import", "Tab1", input.to_str().unwrap(), "--strict"])
        .ok();
    let out = s.path("out.parquet");
    s.run(&[
        "export",
        "Tab1",
        out.to_str().unwrap(),
        "--row-group-rows",
        "2",
    ])
    .ok();
    let python = python_with_pyarrow();
    let read = Command::new(python)
        .args(["-c", READER])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let text = String::from_utf8(read.stdout).unwrap();
    let mut lines = text.lines();
    let schema: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(schema["PartitionKey"], "string");
    assert_eq!(schema["S"], "string");
    assert_eq!(schema["B"], "binary");
    assert_eq!(schema["T"], "bool");
    assert_eq!(schema["I"], "int32");
    assert_eq!(schema["L"], "int64");
    assert_eq!(schema["D"], "double");
    assert_eq!(schema["W"], "timestamp[ns, tz=UTC]");
    assert_eq!(schema["Old"], "timestamp[us, tz=UTC]");
    assert_eq!(schema["G"], "string");
    assert_eq!(schema["M#Int32"], "int32");
    assert_eq!(schema["M#String"], "string");
    let rows: Vec<serde_json::Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 3);
    let r = &rows[0];
    assert_eq!(r["PartitionKey"], "p");
    assert_eq!(r["RowKey"], "1");
    assert_eq!(r["S"], "héllo");
    assert_eq!(r["B"], "b64:AAEC/w==");
    assert_eq!(r["T"], true);
    assert_eq!(r["I"], -2_147_483_648_i64);
    assert_eq!(r["L"], i64::MAX);
    assert_eq!(r["D"], 1.5);
    // 2024-05-01T12:00:00.1234567Z in ns since the Unix epoch, exact to the 100 ns tick.
    assert_eq!(r["W"], 1_714_564_800_123_456_700_i64);
    assert_eq!(r["G"], "6f9619ff-8b86-d011-b42d-00cf4fc964ff");
    assert_eq!(r["M#Int32"], 1);
    assert!(r.get("M#String").is_none());
    assert!(r["Timestamp"].as_i64().unwrap() > 1_700_000_000_000_000_000);
    assert_eq!(rows[1]["D"], "float:nan");
    assert_eq!(rows[1]["E"], "float:-inf");
    assert_eq!(rows[1]["M#String"], "one");
    assert!(rows[1].get("S").is_none());
    // 1601-01-01T00:00:00Z in µs since the Unix epoch.
    assert_eq!(rows[2]["Old"], -11_644_473_600_000_000_i64);
    assert_eq!(rows[2]["T"], false);
}

#[test]
fn parquet_schema_covers_types_first_seen_after_the_sampled_rows() {
    let s = Scratch::new();
    // The schema is sampled from the first row group (2 rows here); row 3 brings a new
    // property and a DateTime before 1677, which must turn `W` into microseconds.
    let rows = [
        r#"{"PartitionKey":"p","RowKey":"1","W":"2024-05-01T12:00:00.1234567Z","W@odata.type":"Edm.DateTime"}"#,
        r#"{"PartitionKey":"p","RowKey":"2","V":1}"#,
        r#"{"PartitionKey":"p","RowKey":"3","W":"1601-01-01T00:00:00Z","W@odata.type":"Edm.DateTime","Late":"x"}"#,
    ];
    let input = s.file("in.jsonl", &rows.join("\n"));
    s.run(&["import", "Tab1", input.to_str().unwrap(), "--strict"])
        .ok();
    let out = s.path("out.parquet");
    s.run(&[
        "export",
        "Tab1",
        out.to_str().unwrap(),
        "--row-group-rows",
        "2",
    ])
    .ok();
    let read = Command::new(python_with_pyarrow())
        .args(["-c", READER])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let text = String::from_utf8(read.stdout).unwrap();
    let mut lines = text.lines();
    let schema: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(schema["W"], "timestamp[us, tz=UTC]");
    assert_eq!(schema["Late"], "string");
    assert_eq!(schema["V"], "int32");
    let rows: Vec<serde_json::Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["W"], 1_714_564_800_123_456_i64);
    assert_eq!(rows[1]["V"], 1);
    assert_eq!(rows[2]["W"], -11_644_473_600_000_000_i64);
    assert_eq!(rows[2]["Late"], "x");
}

/// Prints the row count of every row group, then every `N` of the file in order.
const GROUPS_READER: &str = r#"
import sys, json, pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
print(json.dumps([f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)]))
print(json.dumps(f.read().column("N").to_pylist()))
"#;

#[test]
fn parquet_row_groups_encoded_in_parallel_keep_scan_order_and_size() {
    let s = Scratch::new();
    // 9,000 rows in groups of 4,100: the scan's 4,096-row chunks straddle group boundaries,
    // and the groups alternate between encoder threads.
    let rows: Vec<String> = (0..9_000)
        .map(|n| format!(r#"{{"PartitionKey":"p","RowKey":"{n:05}","N":{n}}}"#))
        .collect();
    let input = s.file("in.jsonl", &rows.join("\n"));
    s.run(&["import", "Tab1", input.to_str().unwrap(), "--strict"])
        .ok();
    let out = s.path("out.parquet");
    s.run(&[
        "export",
        "Tab1",
        out.to_str().unwrap(),
        "--row-group-rows",
        "4100",
    ])
    .ok();
    let read = Command::new(python_with_pyarrow())
        .args(["-c", GROUPS_READER])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let text = String::from_utf8(read.stdout).unwrap();
    let mut lines = text.lines();
    let groups: Vec<u64> = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(groups, [4_100, 4_100, 800]);
    let values: Vec<i64> = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(values, (0..9_000).collect::<Vec<i64>>());
}
