//! Space: overwrites and range deletes are reclaimed by `compact()`, and the file shrinks.
//!
//! The full-size run (1M overwrites of 100k keys) is ignored in the normal suite:
//! `cargo test --release --test engine_space -- --ignored`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::engine::{Durability, Engine, Options, WriteBatch};

/// Live data = key bytes + value bytes of every live key.
fn overwrite_then_compact(keys: u64, writes: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let engine = Engine::open(&path, Options::default()).unwrap();
    let value_len = 100;
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut batch = WriteBatch::new();
    for i in 0..writes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = format!("key{:08}", if i < keys { i } else { x % keys });
        let value: Vec<u8> = (0..value_len).map(|j| (x >> (j % 56)) as u8).collect();
        batch.put(key.as_bytes(), &value);
        if batch.len() == 100 {
            engine.write(&batch, Durability::Buffered).unwrap();
            batch.clear();
        }
    }
    engine.write(&batch, Durability::Sync).unwrap();
    engine.compact().unwrap();
    let live = keys * (11 + value_len);
    let file = std::fs::metadata(&path).unwrap().len();
    let stats = engine.stats().unwrap();
    eprintln!(
        "overwrites: live {live} B, file {file} B, ratio {:.3}, {stats:?}",
        file as f64 / live as f64
    );
    assert!(
        file as f64 <= 1.3 * live as f64,
        "file {file} B > 1.3 x live {live} B"
    );

    let mut batch = WriteBatch::new();
    batch.delete_range(b"", b"\xff");
    engine.write(&batch, Durability::Sync).unwrap();
    engine.compact().unwrap();
    let file = std::fs::metadata(&path).unwrap().len();
    eprintln!("after range delete of everything: file {file} B");
    assert!(
        file <= 1 << 20,
        "file {file} B > 1 MiB after deleting everything"
    );
    assert_eq!(
        engine
            .range(b"".as_slice()..b"\xff".as_slice())
            .unwrap()
            .count(),
        0
    );
    engine.close().unwrap();
    Engine::check(&path).unwrap();
}

#[test]
fn engine_space_overwrites_and_range_delete_are_reclaimed_by_compact() {
    overwrite_then_compact(10_000, 100_000);
}

#[test]
#[ignore = "full size: run with --release --ignored"]
fn engine_space_million_overwrites_of_100k_keys_fit_in_1_3x_live_data() {
    overwrite_then_compact(100_000, 1_000_000);
}

/// A database several SSTs deep whose file is fragmented by overwrites must end smaller after
/// `compact()`, not larger: compaction output written past the old tail is moved down into
/// the holes the old version leaves, and the tail is truncated in the same call.
#[test]
fn engine_space_compact_never_grows_a_fragmented_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let scale: u64 = std::env::var("STRATA_SPACE_SCALE").map_or(1, |s| s.parse().unwrap());
    let options = if scale == 1 {
        Options {
            memtable_bytes: 256 << 10,
            sst_target_bytes: 1 << 20,
            l1_target_bytes: 1 << 20,
            ..Options::default()
        }
    } else {
        Options::default()
    };
    let engine = Engine::open(&path, options).unwrap();
    let keys = 20_000u64 * scale;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut batch = WriteBatch::new();
    for round in 0..3u64 {
        for i in 0..keys {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = if round == 0 { i } else { x % keys };
            let value: Vec<u8> = (0..100).map(|j| (x >> (j % 56)) as u8 | 0x20).collect();
            batch.put(format!("key{key:08}").as_bytes(), &value);
            if batch.len() == 100 {
                engine.write(&batch, Durability::Buffered).unwrap();
                batch.clear();
            }
        }
    }
    engine.write(&batch, Durability::Sync).unwrap();
    engine.flush().unwrap();
    let before = std::fs::metadata(&path).unwrap().len();
    engine.compact().unwrap();
    let after = std::fs::metadata(&path).unwrap().len();
    let live = keys * (11 + 100);
    let stats = engine.stats().unwrap();
    eprintln!("before compact {before} B, after {after} B, live {live} B, {stats:?}");
    assert!(
        after < before,
        "compact grew the file: {before} B -> {after} B"
    );
    assert!(
        after as f64 <= 1.3 * live as f64,
        "file {after} B > 1.3 x live {live} B after compact"
    );
    engine.close().unwrap();
    Engine::check(&path).unwrap();
}
