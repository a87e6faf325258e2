//! Model-based test: random batches (puts, deletes, range deletes), gets, range scans on live
//! snapshots, flushes, compactions, close/reopen and checkpoints opened read-only, every read
//! compared with a `BTreeMap` model.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use proptest::prelude::*;
use strata::engine::{Durability, Engine, Options, RangeIter, Snapshot, WriteBatch};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Debug, Clone)]
enum Op {
    Put(u8, u8),
    Delete(u8),
    DeleteRange(u8, u8),
}

#[derive(Debug, Clone)]
enum Step {
    Batch(Vec<Op>),
    Get(u8),
    Scan(u8, u8),
    TakeSnapshot,
    ScanSnapshot(u8, u8),
    Flush,
    Compact,
    Reopen,
    Checkpoint,
}

fn key(k: u8) -> Vec<u8> {
    format!("key{:03}", k % 64).into_bytes()
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<u8>(), any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => any::<u8>().prop_map(Op::Delete),
        1 => (any::<u8>(), 1u8..16).prop_map(|(k, n)| Op::DeleteRange(k, n)),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => proptest::collection::vec(op(), 1..6).prop_map(Step::Batch),
        3 => any::<u8>().prop_map(Step::Get),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Step::Scan(a, b)),
        1 => Just(Step::TakeSnapshot),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Step::ScanSnapshot(a, b)),
        1 => Just(Step::Flush),
        1 => Just(Step::Compact),
        1 => Just(Step::Reopen),
        1 => Just(Step::Checkpoint),
    ]
}

fn options() -> Options {
    Options {
        memtable_bytes: 4 << 10,
        sst_target_bytes: 2 << 10,
        block_bytes: 512,
        l0_compaction_trigger: 2,
        l1_target_bytes: 8 << 10,
        level_size_ratio: 2,
        background_compaction: false,
        ..Options::default()
    }
}

fn value(k: u8, v: u8) -> Vec<u8> {
    let mut value = vec![v; usize::from(v % 50)];
    value.push(k);
    value
}

fn apply(model: &mut Model, ops: &[Op], batch: &mut WriteBatch) {
    for op in ops {
        match *op {
            Op::Put(k, v) => {
                batch.put(&key(k), &value(k, v));
                model.insert(key(k), value(k, v));
            }
            Op::Delete(k) => {
                batch.delete(&key(k));
                model.remove(&key(k));
            }
            Op::DeleteRange(k, n) => {
                let (start, end) = (
                    key(k),
                    format!("key{:03}", u32::from(k % 64) + u32::from(n)).into_bytes(),
                );
                batch.delete_range(&start, &end);
                model.retain(|key, _| !(start <= *key && *key < end));
            }
        }
    }
}

fn scan_model(model: &Model, a: u8, b: u8) -> Vec<(Vec<u8>, Vec<u8>)> {
    let (start, end) = bounds(a, b);
    model
        .range(start..end)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn bounds(a: u8, b: u8) -> (Vec<u8>, Vec<u8>) {
    let (a, b) = (a % 64, b % 64);
    (key(a.min(b)), key(a.max(b)))
}

/// Every entry of `cursor`, read through the lending cursor (`advance` + borrowed accessors).
fn drain_cursor(mut cursor: RangeIter) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while cursor.advance().unwrap() {
        out.push((cursor.key().to_vec(), cursor.value().to_vec()));
    }
    assert!(!cursor.advance().unwrap(), "the cursor is fused at its end");
    out
}

fn run(steps: Vec<Step>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut engine = Engine::open(&path, options()).unwrap();
    let mut model = Model::new();
    let mut snapshots: Vec<(Snapshot, Model)> = Vec::new();
    for (index, step) in steps.into_iter().enumerate() {
        match step {
            Step::Batch(ops) => {
                let mut batch = WriteBatch::new();
                apply(&mut model, &ops, &mut batch);
                let durability = if index % 2 == 0 {
                    Durability::Sync
                } else {
                    Durability::Buffered
                };
                engine.write(&batch, durability).unwrap();
            }
            Step::Get(k) => assert_eq!(
                engine.get(&key(k)).unwrap(),
                model.get(&key(k)).cloned(),
                "step {index}"
            ),
            Step::Scan(a, b) => {
                let (start, end) = bounds(a, b);
                let got: Vec<_> = engine
                    .range(&start..&end)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                assert_eq!(got, scan_model(&model, a, b), "step {index}");
                let lent = drain_cursor(engine.range(&start..&end).unwrap());
                assert_eq!(lent, got, "cursor at step {index}");
            }
            Step::TakeSnapshot => snapshots.push((engine.snapshot(), model.clone())),
            Step::ScanSnapshot(a, b) => {
                if let Some((snapshot, old)) = snapshots.last() {
                    let (start, end) = bounds(a, b);
                    let got: Vec<_> = snapshot.range(&start..&end).map(Result::unwrap).collect();
                    assert_eq!(got, scan_model(old, a, b), "step {index}");
                    let lent = drain_cursor(snapshot.range(&start..&end));
                    assert_eq!(lent, got, "cursor at step {index}");
                    assert_eq!(snapshot.get(&key(a)).unwrap(), old.get(&key(a)).cloned());
                }
            }
            Step::Flush => engine.flush().unwrap(),
            Step::Compact => engine.compact().unwrap(),
            Step::Reopen => {
                snapshots.clear();
                engine.close().unwrap();
                engine = Engine::open(&path, options()).unwrap();
            }
            Step::Checkpoint => {
                let copy = dir.path().join(format!("copy{index}"));
                engine.checkpoint(&copy).unwrap();
                let read_only = Engine::open_read_only(&copy).unwrap();
                let got: Vec<_> = read_only
                    .range(b"".as_slice()..b"\xff".as_slice())
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                assert_eq!(got, want, "checkpoint at step {index}");
            }
        }
    }
    let got: Vec<_> = engine
        .range(b"".as_slice()..b"\xff".as_slice())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got, want);
    drop(snapshots);
    engine.close().unwrap();
    Engine::check(&path).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]
    #[test]
    fn engine_model_every_read_equals_the_btreemap(steps in proptest::collection::vec(step(), 1..120)) {
        run(steps);
    }
}
