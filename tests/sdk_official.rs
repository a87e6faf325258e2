//! The official azure-data-tables 12.7.0 test suite (the `tests/` of its source distribution)
//! runs live against `strata serve`, emulator-style, sync and async.
//!
//! The test makes sure `<target>/sdk-official-venv` holds `tests/sdk_official/requirements.txt`,
//! downloads the pinned sdist once into `<target>/sdk-official` (pip checks its sha256 from
//! `tests/sdk_official/sdist-requirements.txt`, and this test checks it again on every run),
//! unpacks it, starts `strata serve` on a free loopback port with a fresh database, and runs
//! pytest over the sdist's tests with our `devtools_testutils` shim and the
//! `strata_official_plugin` (endpoint, account, capped sleeps, and the one list of skips with
//! their reasons) from `tests/sdk_official/shim`. Any failure fails the test with the report.
//!
//! Run by hand against any server (after one run of this test), from
//! `<target>/sdk-official/azure_data_tables-12.7.0/tests`:
//! `STRATA_TABLE_ENDPOINT=http://127.0.0.1:10002/devstoreaccount1
//! PYTHONPATH=<repo>/tests/sdk_official/shim <target>/sdk-official-venv/bin/python -m pytest
//! -p strata_official_plugin`.

#![allow(clippy::unwrap_used)]

mod sdk_support;

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

use sdk_support::venv::{ensure_venv, target_dir};
use sdk_support::{Server, output_text, run_checked};

/// The pinned source distribution.
const SDIST_NAME: &str = "azure_data_tables-12.7.0";
/// Its sha256, as PyPI publishes it (also pinned in sdist-requirements.txt, which pip checks).
const SDIST_SHA256: &str = "b14fc94a3223a2835ff5688e17d8e107b27c7cd7c4114138f2ac81373723705d";

fn official_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("sdk_official")
}

/// The sha256 of `file` in hex, computed by the venv's Python (no hashing crate needed here).
fn sha256_hex(python: &Path, file: &Path) -> String {
    let out = Command::new(python)
        .args([
            "-c",
            "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())",
        ])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hashing {}:\n{}",
        file.display(),
        output_text(&out)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Downloads (once) and unpacks (once) the pinned sdist; returns its `tests` directory.
fn ensure_sdist(python: &Path) -> PathBuf {
    let dir = target_dir().join("sdk-official");
    fs::create_dir_all(&dir).unwrap();
    let lock = File::create(dir.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    let archive = dir.join(format!("{SDIST_NAME}.tar.gz"));
    if !archive.exists() {
        run_checked(
            Command::new(python)
                .args([
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--no-binary",
                    ":all:",
                    "--require-hashes",
                    "-d",
                ])
                .arg(&dir)
                .arg("-r")
                .arg(official_dir().join("sdist-requirements.txt")),
            "pip download of the azure-data-tables sdist (needs PyPI)",
        );
    }
    let digest = sha256_hex(python, &archive);
    assert_eq!(
        digest,
        SDIST_SHA256,
        "{} is not the pinned sdist; delete it to download it again",
        archive.display()
    );
    let unpacked = dir.join(SDIST_NAME);
    if !unpacked.join("tests").join("conftest.py").exists() {
        // Unpacked beside, then renamed: an interrupted run never leaves a half tree in place.
        let partial = dir.join(format!("{SDIST_NAME}.partial"));
        let _ = fs::remove_dir_all(&partial);
        let _ = fs::remove_dir_all(&unpacked);
        run_checked(
            Command::new(python)
                .args(["-m", "tarfile", "-e"])
                .arg(&archive)
                .arg(&partial),
            "unpacking the azure-data-tables sdist",
        );
        fs::rename(partial.join(SDIST_NAME), &unpacked).unwrap();
        let _ = fs::remove_dir_all(&partial);
    }
    lock.unlock().unwrap();
    unpacked.join("tests")
}

#[test]
fn official_sdk_test_suite_passes_against_strata_serve() {
    let python = ensure_venv(
        &target_dir().join("sdk-official-venv"),
        &official_dir().join("requirements.txt"),
    );
    let tests = ensure_sdist(&python);
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("official.db"),
        &dir.path().join("server.log"),
    );
    let endpoint = server.endpoint();
    server.expect_passes(
        "the official azure-data-tables suite",
        Command::new(&python)
            .args([
                "-m",
                "pytest",
                "-q",
                "-rfEs",
                "-p",
                "no:cacheprovider",
                "-p",
                "strata_official_plugin",
                "-o",
                "asyncio_default_fixture_loop_scope=function",
            ])
            .current_dir(&tests)
            .env("PYTHONPATH", official_dir().join("shim"))
            .env("STRATA_TABLE_ENDPOINT", endpoint)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("TABLES_STORAGE_ACCOUNT_NAME")
            .env_remove("TABLES_PRIMARY_STORAGE_ACCOUNT_KEY"),
    );
}
