//! Crash test: a child process (this test binary re-run with `STRATA_CRASH_CHILD` set) writes
//! `Sync` batches and prints each acknowledged sequence number; the parent SIGKILLs it at
//! random moments, reopens, checks that every acknowledged batch is present and atomic, and
//! runs the full integrity check.
//!
//! Long run: `STRATA_CRASH_CYCLES=10000 cargo test --release --test engine_crash`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use strata::engine::{Durability, Engine, Options, WriteBatch};

const CHILD_ENV: &str = "STRATA_CRASH_CHILD";
/// Keys each batch writes: all carry the batch number, so a partial batch is visible.
const KEYS_PER_BATCH: u64 = 4;

fn options() -> Options {
    Options {
        memtable_bytes: 32 << 10,
        sst_target_bytes: 16 << 10,
        l1_target_bytes: 64 << 10,
        ..Options::default()
    }
}

fn batch_key(slot: u64) -> Vec<u8> {
    format!("slot{slot:04}").into_bytes()
}

/// Child mode: writes batches forever, numbering them after the last one found on disk.
fn child(path: &str) {
    let engine = Engine::open(path, options()).unwrap();
    let mut n = engine
        .get(b"last")
        .unwrap()
        .map_or(0, |v| String::from_utf8(v).unwrap().parse::<u64>().unwrap());
    let stdout = std::io::stdout();
    loop {
        n += 1;
        let mut batch = WriteBatch::new();
        for i in 0..KEYS_PER_BATCH {
            batch.put(
                &batch_key((n * KEYS_PER_BATCH + i) % 512),
                n.to_string().as_bytes(),
            );
        }
        batch.put(b"last", n.to_string().as_bytes());
        engine.write(&batch, Durability::Sync).unwrap();
        let mut out = stdout.lock();
        writeln!(out, "{n}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn engine_crash_every_acknowledged_batch_survives_sigkill() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child(&path);
        return;
    }
    let cycles: u64 = std::env::var("STRATA_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let exe = std::env::current_exe().unwrap();
    let mut acknowledged = 0u64;
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for cycle in 0..cycles {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "engine_crash_every_acknowledged_batch_survives_sigkill",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let wanted = 1 + rng % 40;
        let reader = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(n) = line.trim().parse::<u64>() {
                    seen.push(n);
                }
            }
            seen
        });
        let deadline = Instant::now()
            + Duration::from_micros(2000 + (rng >> 20) % 30_000)
                * u32::try_from(wanted.min(3)).unwrap();
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let seen = reader.join().unwrap();
        if let Some(&last) = seen.last() {
            acknowledged = acknowledged.max(last);
        }
        let engine = Engine::open(&path, options())
            .unwrap_or_else(|e| panic!("cycle {cycle}: reopen failed: {e}"));
        let last = engine
            .get(b"last")
            .unwrap()
            .map_or(0, |v| String::from_utf8(v).unwrap().parse::<u64>().unwrap());
        assert!(
            last >= acknowledged,
            "cycle {cycle}: batch {acknowledged} acknowledged, only {last} present"
        );
        // Atomicity: the keys of the newest batch all carry its number.
        if last > 0 {
            for i in 0..KEYS_PER_BATCH {
                let got = engine
                    .get(&batch_key((last * KEYS_PER_BATCH + i) % 512))
                    .unwrap();
                assert_eq!(
                    got,
                    Some(last.to_string().into_bytes()),
                    "cycle {cycle}: batch {last} is partial"
                );
            }
        }
        acknowledged = last;
        drop(engine);
        Engine::check(&path)
            .unwrap_or_else(|e| panic!("cycle {cycle}: integrity check failed: {e}"));
    }
    assert!(acknowledged > 0, "the child never acknowledged a batch");
    eprintln!("{cycles} kill cycles, {acknowledged} batches acknowledged");
}
