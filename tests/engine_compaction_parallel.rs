//! `compact()` merges key ranges on parallel threads, and a compaction whose single input
//! overlaps nothing below moves it down a level instead of rewriting it: neither may lose,
//! duplicate or resurrect a key, before or after a reopen.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use strata::engine::{Durability, Engine, Options, WriteBatch};

/// Small memtables and SSTs so a few MiB of data spread over several levels and the full
/// compaction has enough input to be cut into ranges.
fn small_options() -> Options {
    Options {
        memtable_bytes: 256 << 10,
        sst_target_bytes: 128 << 10,
        l1_target_bytes: 512 << 10,
        block_cache_bytes: 1 << 20,
        background_compaction: false,
        ..Options::default()
    }
}

fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn assert_matches(engine: &Engine, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let found: Vec<(Vec<u8>, Vec<u8>)> = engine
        .range(b"".as_slice()..b"\xff".as_slice())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(found.len(), model.len(), "key count");
    for ((key, value), (mkey, mvalue)) in found.iter().zip(model) {
        assert_eq!(key, mkey);
        assert_eq!(value, mvalue, "value of {key:?}");
    }
}

/// Writes `rounds` Buffered batches of 500 random puts and deletes over `key_space` keys
/// (seeded by `seed`), with one range delete `(round, start, end)`; returns the model.
fn load_random(
    engine: &Engine,
    seed: u64,
    rounds: u64,
    key_space: u64,
    range_delete: (u64, &[u8], &[u8]),
) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    let mut x = seed;
    for round in 0..rounds {
        let mut batch = WriteBatch::new();
        for _ in 0..500 {
            let key = format!("key{:06}", next(&mut x) % key_space).into_bytes();
            if next(&mut x).is_multiple_of(10) {
                batch.delete(&key);
                model.remove(&key);
            } else {
                let value = format!("{round}-{:0100}", next(&mut x)).into_bytes();
                batch.put(&key, &value);
                model.insert(key, value);
            }
        }
        let (at, start, end) = range_delete;
        if round == at {
            batch.delete_range(start, end);
            model.retain(|k: &Vec<u8>, _| !(start..end).contains(&k.as_slice()));
        }
        engine.write(&batch, Durability::Buffered).unwrap();
    }
    model
}

#[test]
fn compaction_parallel_full_compaction_keeps_the_newest_version_of_every_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let engine = Engine::open(&path, small_options()).unwrap();
    let model = load_random(
        &engine,
        0x2545_F491_4F6C_DD1D,
        60,
        20_000,
        (40, b"key005000", b"key006000"),
    );
    let before = engine.stats().unwrap();
    assert!(
        before.levels.iter().filter(|l| l.files > 0).count() >= 2,
        "the data spans several levels: {before:?}"
    );
    engine.compact().unwrap();
    let after = engine.stats().unwrap();
    let last = after.levels.last().unwrap();
    assert_eq!(
        after.levels.iter().map(|l| l.files).sum::<usize>(),
        last.files,
        "everything is in the last level: {after:?}"
    );
    assert!(last.files >= 4, "the output is cut into SSTs: {after:?}");
    assert_matches(&engine, &model);
    engine.close().unwrap();
    let report = Engine::check(&path).unwrap();
    eprintln!("{report:?}");
    let engine = Engine::open(&path, small_options()).unwrap();
    assert_matches(&engine, &model);
}

#[test]
fn compaction_trivial_move_keeps_a_sequential_load_from_being_rewritten_level_by_level() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let engine = Engine::open(&path, small_options()).unwrap();
    let mut model = BTreeMap::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for chunk in 0..80u64 {
        let mut batch = WriteBatch::new();
        for i in 0..500u64 {
            let key = format!("key{:08}", chunk * 500 + i).into_bytes();
            // Incompressible values, so the bytes written follow the bytes loaded.
            let value: Vec<u8> = (0..100).map(|_| next(&mut x) as u8).collect();
            batch.put(&key, &value);
            model.insert(key, value);
        }
        engine.write(&batch, Durability::Buffered).unwrap();
    }
    engine.flush().unwrap();
    let stats = engine.stats().unwrap();
    eprintln!("{stats:?}");
    assert!(
        stats.levels.iter().skip(2).any(|l| l.files > 0),
        "data reached level 2: {stats:?}"
    );
    // WAL + L0 + L1 = 3 writes of each byte; rewriting into L2 too would make it 4.
    assert!(
        stats.write_amplification < 3.5,
        "write amplification {} of a sequential load",
        stats.write_amplification
    );
    assert_matches(&engine, &model);
    engine.close().unwrap();
    let engine = Engine::open(&path, small_options()).unwrap();
    assert_matches(&engine, &model);
}

#[test]
fn compaction_level_jobs_merged_in_key_ranges_keep_levels_disjoint_and_every_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    // Slowdown at the compaction trigger: every L0 → L1 job counts as behind, so it is the
    // one merged in key ranges on parallel threads.
    let options = Options {
        l0_slowdown_trigger: 4,
        ..small_options()
    };
    let engine = Engine::open(&path, options.clone()).unwrap();
    let model = load_random(
        &engine,
        0x6A09_E667_F3BC_C908,
        80,
        30_000,
        (50, b"key010000", b"key012000"),
    );
    engine.flush().unwrap();
    let stats = engine.stats().unwrap();
    // L1 jobs merge several target-sized SSTs of L1/L2, enough to be cut into key ranges.
    assert!(
        stats.levels.iter().skip(1).map(|l| l.files).sum::<usize>() >= 8,
        "the data spans several SSTs below L0: {stats:?}"
    );
    assert_matches(&engine, &model);
    engine.close().unwrap();
    let report = Engine::check(&path).unwrap();
    assert!(report.problems.is_empty(), "{report:?}");
    let engine = Engine::open(&path, options).unwrap();
    assert_matches(&engine, &model);
}
