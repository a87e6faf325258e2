//! The official Python SDK (`azure-data-tables`, pinned) drives `strata serve` end to end.
//!
//! Each test makes sure the venv under `<target>/sdk-venv` holds exactly
//! `tests/sdk/requirements.txt` (installing it once, under a file lock, when the recorded
//! requirements differ), starts `strata serve` on a free loopback port with a fresh database
//! file, and runs a Python program against it, failing with the program's full output.
//!
//! Run by hand against any server: `STRATA_TABLE_ENDPOINT=http://127.0.0.1:10002/devstoreaccount1
//! target/sdk-venv/bin/python -m pytest tests/sdk`.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod sdk_support;

use std::path::PathBuf;
use std::process::Command;

use sdk_support::venv::{ensure_venv as ensure_venv_at, target_dir};
use sdk_support::{Server, output_text};

/// Seconds of load in the CI variant of the load test (the full run is 30 s; see load_test.py).
const CI_LOAD_SECONDS: &str = "5";

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sdk_dir() -> PathBuf {
    manifest_dir().join("tests").join("sdk")
}

/// `<target>/sdk-venv`, holding tests/sdk/requirements.txt.
fn ensure_venv() -> PathBuf {
    ensure_venv_at(
        &target_dir().join("sdk-venv"),
        &sdk_dir().join("requirements.txt"),
    )
}

#[test]
fn sdk_conformance_suite_passes_against_strata_serve() {
    let python = ensure_venv();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("sdk.db"), &dir.path().join("server.log"));
    let endpoint = server.endpoint();
    server.expect_passes(
        "the SDK conformance suite",
        Command::new(&python)
            .args(["-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider"])
            .current_dir(sdk_dir())
            .env("STRATA_TABLE_ENDPOINT", endpoint)
            .env("STRATA_SDK_TARGET", "strata")
            .env("PYTHONDONTWRITEBYTECODE", "1"),
    );
}

#[test]
fn sdk_load_has_no_errors_and_loses_no_acknowledged_write() {
    let python = ensure_venv();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(&python)
        .arg(sdk_dir().join("load_test.py"))
        .arg("--strata")
        .arg(env!("CARGO_BIN_EXE_strata"))
        .arg("--db")
        .arg(dir.path().join("load.db"))
        .args(["--clients", "64", "--duration", CI_LOAD_SECONDS])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let report = output_text(&out);
    assert!(out.status.success(), "the SDK load test failed:\n{report}");
    println!("{report}");
}
