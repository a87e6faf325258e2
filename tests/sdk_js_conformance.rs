//! The official JavaScript SDK (`@azure/data-tables`, pinned in `tests/sdk_js/package.json`
//! and its lock file) drives `strata serve` end to end: a second official client whose
//! request encoding and response parsing differ from the Python SDK's (a SAS request's
//! `$filter` arrives form-encoded, `+` for a space; DateTime and Double values are read by
//! JavaScript's rules).
//!
//! The test installs the locked packages into `<target>/sdk-js` with `npm ci` (once, under a
//! file lock, when the lock file changed), starts `strata serve` on a free loopback port with
//! a fresh database and runs `tests/sdk_js/conformance.mjs` against it. Needs Node.js 18 or
//! later and npm on the PATH.
//!
//! Run by hand against any server: `node <target>/sdk-js/conformance.mjs
//! http://127.0.0.1:10002/devstoreaccount1` (after one run of this test).

#![allow(clippy::unwrap_used)]

mod sdk_support;

use std::fs::{self, File};
use std::path::PathBuf;
use std::process::Command;

use sdk_support::{Server, run_checked};

fn sdk_js_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("sdk_js")
}

/// `<target>/sdk-js`, found from the integration-test temp dir so CARGO_TARGET_DIR is honoured.
fn install_dir() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(&tmp).join("sdk-js")
}

/// Installs the locked SDK (a marker holding the installed lock file makes reruns instant)
/// and copies the conformance program beside it, where its imports resolve.
fn ensure_sdk() -> PathBuf {
    let dir = install_dir();
    fs::create_dir_all(&dir).unwrap();
    let lock = File::create(dir.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    let wanted = fs::read_to_string(sdk_js_dir().join("package-lock.json")).unwrap();
    let marker = dir.join("strata-installed-lock.json");
    if fs::read_to_string(&marker).unwrap_or_default() != wanted
        || !dir.join("node_modules").exists()
    {
        let _ = fs::remove_file(&marker);
        for file in ["package.json", "package-lock.json"] {
            fs::copy(sdk_js_dir().join(file), dir.join(file)).unwrap();
        }
        run_checked(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(&dir),
            "npm ci of tests/sdk_js (needs Node.js 18+ and npm on the PATH)",
        );
        fs::write(&marker, &wanted).unwrap();
    }
    let program = dir.join("conformance.mjs");
    fs::copy(sdk_js_dir().join("conformance.mjs"), &program).unwrap();
    lock.unlock().unwrap();
    program
}

#[test]
fn sdk_js_conformance_checks_pass_against_strata_serve() {
    let program = ensure_sdk();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("sdk-js.db"),
        &dir.path().join("server.log"),
    );
    let endpoint = server.endpoint();
    server.expect_passes(
        "the JavaScript SDK checks (node, Node.js 18+ on the PATH)",
        Command::new("node").arg(&program).arg(endpoint),
    );
}
