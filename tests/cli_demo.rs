//! `strata demo` on a small load: every step of the tour runs and the file is left behind.

#![allow(clippy::unwrap_used)]

mod cli_support;

use cli_support::Scratch;

#[test]
fn demo_tours_every_step_and_leaves_an_explorable_file() {
    let s = Scratch::new();
    let db = s.path("demo.strata");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["demo", "--rows", "50000", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for step in [
        "load",
        "point query",
        "RowKey range",
        "partition scan",
        "table scan",
        "atomic batch",
        "log tail",
        "export",
        "drop ReadingsArchive",
    ] {
        assert!(text.contains(step), "no {step:?} step in:\n{text}");
    }
    assert!(text.contains("50 entities"), "{text}");
    assert!(db.with_extension("parquet").exists());
    let tables = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "--db",
            db.to_str().unwrap(),
            "tables",
            "list",
            "--format",
            "jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&tables.stdout).trim(),
        r#"{"TableName":"Readings"}"#
    );
}
