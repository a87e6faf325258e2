//! Engine scenarios: write/get/range, snapshots, flush, compaction, reopen, checkpoint, locks.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::engine::{Durability, Engine, Error, Options, WriteBatch};

fn small_options() -> Options {
    Options {
        memtable_bytes: 16 << 10,
        sst_target_bytes: 8 << 10,
        l1_target_bytes: 64 << 10,
        ..Options::default()
    }
}

fn put(engine: &Engine, key: &[u8], value: &[u8]) {
    let mut batch = WriteBatch::new();
    batch.put(key, value);
    engine.write(&batch, Durability::Buffered).unwrap();
}

fn keys(engine: &Engine, start: &[u8], end: &[u8]) -> Vec<Vec<u8>> {
    engine
        .range(start..end)
        .unwrap()
        .map(|kv| kv.unwrap().0)
        .collect()
}

#[test]
fn engine_write_then_get_and_range_see_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("db"), small_options()).unwrap();
    let mut batch = WriteBatch::new();
    batch
        .put(b"a", b"1")
        .put(b"b", b"2")
        .put(b"c", b"3")
        .delete(b"b");
    let seq = engine.write(&batch, Durability::Sync).unwrap();
    assert_eq!(seq, 4);
    assert_eq!(engine.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(engine.get(b"b").unwrap(), None);
    assert_eq!(
        keys(&engine, b"a", b"z"),
        vec![b"a".to_vec(), b"c".to_vec()]
    );
}

#[test]
fn engine_range_delete_hides_keys_across_flushes_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("db"), small_options()).unwrap();
    for i in 0..500u32 {
        put(&engine, format!("k{i:05}").as_bytes(), &[7; 40]);
    }
    engine.flush().unwrap();
    let mut batch = WriteBatch::new();
    batch.delete_range(b"k00100", b"k00400");
    engine.write(&batch, Durability::Sync).unwrap();
    assert_eq!(engine.get(b"k00200").unwrap(), None);
    assert_eq!(keys(&engine, b"k", b"l").len(), 200);
    engine.flush().unwrap();
    assert_eq!(keys(&engine, b"k", b"l").len(), 200);
    put(&engine, b"k00150", b"back");
    engine.compact().unwrap();
    assert_eq!(engine.get(b"k00150").unwrap(), Some(b"back".to_vec()));
    assert_eq!(keys(&engine, b"k", b"l").len(), 201);
}

#[test]
fn engine_snapshot_is_unchanged_by_later_writes_flushes_and_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("db"), small_options()).unwrap();
    for i in 0..300u32 {
        put(&engine, format!("k{i:05}").as_bytes(), b"old");
    }
    let snapshot = engine.snapshot();
    for i in 0..300u32 {
        put(&engine, format!("k{i:05}").as_bytes(), b"new");
    }
    let mut batch = WriteBatch::new();
    batch.delete_range(b"k", b"l");
    engine.write(&batch, Durability::Sync).unwrap();
    engine.flush().unwrap();
    engine.compact().unwrap();
    assert_eq!(snapshot.get(b"k00042").unwrap(), Some(b"old".to_vec()));
    assert_eq!(
        snapshot.range(b"k".as_slice()..b"l".as_slice()).count(),
        300
    );
    assert_eq!(engine.get(b"k00042").unwrap(), None);
}

#[test]
fn engine_reopen_recovers_flushed_and_logged_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let engine = Engine::open(&path, small_options()).unwrap();
        for i in 0..1000u32 {
            put(
                &engine,
                format!("k{i:05}").as_bytes(),
                format!("v{i}").as_bytes(),
            );
        }
        let mut batch = WriteBatch::new();
        batch.delete(b"k00007");
        engine.write(&batch, Durability::Sync).unwrap();
    }
    let engine = Engine::open(&path, small_options()).unwrap();
    assert_eq!(engine.get(b"k00999").unwrap(), Some(b"v999".to_vec()));
    assert_eq!(engine.get(b"k00007").unwrap(), None);
    assert_eq!(keys(&engine, b"k", b"l").len(), 999);
    engine.close().unwrap();
    let report = Engine::check(&path).unwrap();
    assert!(report.ssts > 0);
}

#[test]
fn engine_checkpoint_opens_read_only_with_the_same_data() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("db"), small_options()).unwrap();
    for i in 0..400u32 {
        put(&engine, format!("k{i:05}").as_bytes(), b"v");
    }
    let copy = dir.path().join("copy");
    engine.checkpoint(&copy).unwrap();
    put(&engine, b"later", b"x");
    let read_only = Engine::open_read_only(&copy).unwrap();
    assert_eq!(keys(&read_only, b"", b"\xff").len(), 400);
    assert_eq!(read_only.get(b"later").unwrap(), None);
    assert!(matches!(
        read_only.write(&WriteBatch::new(), Durability::Sync),
        Err(Error::ReadOnly)
    ));
    Engine::check(&copy).unwrap();
}

#[test]
fn engine_second_writer_is_refused_with_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let _engine = Engine::open(&path, Options::default()).unwrap();
    assert!(matches!(
        Engine::open(&path, Options::default()),
        Err(Error::Locked { .. })
    ));
}

#[test]
fn engine_is_send_and_sync_and_concurrent_writers_all_commit() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Engine>();
    let dir = tempfile::tempdir().unwrap();
    let engine = std::sync::Arc::new(Engine::open(dir.path().join("db"), small_options()).unwrap());
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let engine = std::sync::Arc::clone(&engine);
            std::thread::spawn(move || {
                for i in 0..200u32 {
                    let mut batch = WriteBatch::new();
                    batch.put(format!("t{t}-{i:04}").as_bytes(), b"v");
                    engine.write(&batch, Durability::Sync).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(keys(&engine, b"t", b"u").len(), 800);
    assert_eq!(engine.stats().unwrap().last_seq, 800);
}
