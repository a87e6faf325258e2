//! The lending range cursor (`RangeIter::advance` + borrowed `key`/`value`) and the owned
//! iterator agree with a `BTreeMap` model over data spread across the memtable and several
//! SSTs, with overwrites, deletes and range tombstones, at the latest and at older snapshots.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use proptest::prelude::*;
use strata::engine::{Advance, Durability, Engine, Options, RangeIter, WriteBatch};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Debug, Clone)]
enum Op {
    Put(u16, u8),
    Delete(u16),
    DeleteRange(u16, u16),
}

fn key(k: u16) -> Vec<u8> {
    format!("k{:04}", k % 400).into_bytes()
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (any::<u16>(), any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => any::<u16>().prop_map(Op::Delete),
        1 => (any::<u16>(), 1u16..40).prop_map(|(k, n)| Op::DeleteRange(k, n)),
    ]
}

fn options() -> Options {
    Options {
        // Large enough that the memtable holds several scan chunks of entries.
        memtable_bytes: 1 << 20,
        block_bytes: 256,
        background_compaction: false,
        ..Options::default()
    }
}

fn apply(model: &mut Model, ops: &[Op], seed: u8) -> WriteBatch {
    let mut batch = WriteBatch::new();
    for op in ops {
        match *op {
            Op::Put(k, v) => {
                let value = vec![v ^ seed; usize::from(v % 40)];
                batch.put(&key(k), &value);
                model.insert(key(k), value);
            }
            Op::Delete(k) => {
                batch.delete(&key(k));
                model.remove(&key(k));
            }
            Op::DeleteRange(k, n) => {
                let start = key(k);
                let end = format!("k{:04}", k % 400 + n).into_bytes();
                batch.delete_range(&start, &end);
                model.retain(|key, _| !(start <= *key && *key < end));
            }
        }
    }
    batch
}

fn drain_cursor(mut cursor: RangeIter) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while cursor.advance().unwrap() {
        out.push((cursor.key().to_vec(), cursor.value().to_vec()));
    }
    assert!(!cursor.advance().unwrap());
    assert!(cursor.key().is_empty() && cursor.value().is_empty());
    out
}

/// Drains `cursor` with `advance_where(wanted)`: the entries taken, and every value offered
/// to `wanted` (each live entry of the range once, in order).
fn drain_where(mut cursor: RangeIter, wanted: impl Fn(&[u8]) -> bool) -> (Entries, Vec<Vec<u8>>) {
    let (mut taken, mut offered) = (Vec::new(), Vec::new());
    while cursor
        .advance_where(|value| {
            offered.push(value.to_vec());
            wanted(value)
        })
        .unwrap()
    {
        taken.push((cursor.key().to_vec(), cursor.value().to_vec()));
    }
    assert!(!cursor.advance_where(|_| true).unwrap());
    assert!(cursor.key().is_empty() && cursor.value().is_empty());
    (taken, offered)
}

/// `advance_where` takes exactly the live entries `wanted` accepts and offers every live
/// entry once, in order: the same as `advance` followed by the test.
fn check_where(cursor: impl Fn() -> RangeIter, want: &[(Vec<u8>, Vec<u8>)]) {
    let tests: [fn(&[u8]) -> bool; 3] = [
        |v| v.len() % 3 == 0,
        |v| v.first().is_some_and(|b| b % 7 == 1),
        |_| false,
    ];
    for wanted in tests {
        let (taken, offered) = drain_where(cursor(), wanted);
        let values: Vec<Vec<u8>> = want.iter().map(|(_, v)| v.clone()).collect();
        assert_eq!(offered, values, "values offered");
        let kept: Vec<_> = want.iter().filter(|(_, v)| wanted(v)).cloned().collect();
        assert_eq!(taken, kept, "entries taken");
    }
}

/// A cursor asked to pause every `every` visited entries returns the same entries as one that
/// never pauses, through `advance_or_pause` and `advance_where_or_pause` alike; each pause is
/// on a key past every one returned, and a new cursor from that key (`from(key)`) returns
/// exactly the entries not returned yet: a scan resumed there loses and repeats nothing.
fn check_pauses(from: impl Fn(&[u8]) -> RangeIter, start: &[u8], want: &[(Vec<u8>, Vec<u8>)]) {
    for every in [1u64, 3, 17] {
        for filtered in [false, true] {
            let mut cursor = from(start);
            cursor.pause_after(every);
            let mut got: Entries = Vec::new();
            loop {
                let step = if filtered {
                    cursor
                        .advance_where_or_pause(&mut |v: &[u8]| v.len().is_multiple_of(2))
                        .unwrap()
                } else {
                    cursor.advance_or_pause().unwrap()
                };
                match step {
                    Advance::End => break,
                    Advance::Entry => {
                        assert!(cursor.paused_key().is_empty());
                        got.push((cursor.key().to_vec(), cursor.value().to_vec()));
                    }
                    Advance::Paused => {
                        let key = cursor.paused_key().to_vec();
                        assert!(cursor.key().is_empty() && cursor.value().is_empty());
                        assert!(got.last().is_none_or(|(last, _)| *last < key));
                        let mut rest: Entries = drain_cursor(from(&key));
                        if filtered {
                            rest.retain(|(_, v)| v.len() % 2 == 0);
                        }
                        let left: Entries = want
                            .iter()
                            .filter(|(k, v)| *k >= key && (!filtered || v.len() % 2 == 0))
                            .cloned()
                            .collect();
                        assert_eq!(rest, left, "resumed at {key:?}");
                        assert!(cursor.visited() > every);
                        cursor.pause_after(cursor.visited() + every);
                    }
                }
            }
            let kept: Entries = want
                .iter()
                .filter(|(_, v)| !filtered || v.len() % 2 == 0)
                .cloned()
                .collect();
            assert_eq!(got, kept, "pausing every {every}, filtered: {filtered}");
        }
    }
}

fn expected(model: &Model, start: &[u8], end: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .range(start.to_vec()..end.to_vec())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Rounds of batches; each round but the last ends in a flush (one more L0 SST), so the
/// final state spans several overlapping SSTs plus a memtable of newer versions; with
/// `compact`, the SSTs are then merged into one.
fn run(rounds: &[Vec<Vec<Op>>], ranges: &[(u16, u16)], compact: bool) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("db"), options()).unwrap();
    let mut model = Model::new();
    let mut old = None;
    for (round, batches) in rounds.iter().enumerate() {
        for ops in batches {
            let seed = u8::try_from(round % 256).unwrap();
            let batch = apply(&mut model, ops, seed);
            engine.write(&batch, Durability::Buffered).unwrap();
        }
        if round + 1 < rounds.len() {
            engine.flush().unwrap();
        }
        if round == rounds.len() / 2 {
            old = Some((engine.snapshot(), model.clone()));
        }
    }
    if compact {
        // One SST holding several versions of keys (the old snapshot pins them): the merge
        // then tells repeated keys apart without comparing them.
        engine.compact().unwrap();
    }
    let mut checked = ranges.to_vec();
    checked.push((0, 400));
    for &(a, b) in &checked {
        let (a, b) = (a % 401, b % 401);
        let bound = |k: u16| format!("k{k:04}").into_bytes();
        let (start, end) = (bound(a.min(b)), bound(a.max(b)));
        let want = expected(&model, &start, &end);
        let owned: Vec<_> = engine
            .range(&start..&end)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(owned, want, "owned iterator over {start:?}..{end:?}");
        let lent = drain_cursor(engine.range(&start..&end).unwrap());
        assert_eq!(lent, want, "cursor over {start:?}..{end:?}");
        check_where(|| engine.range(&start..&end).unwrap(), &want);
        let latest = engine.snapshot();
        check_pauses(|from| latest.range(from..end.as_slice()), &start, &want);
        if let Some((snapshot, then)) = &old {
            let lent = drain_cursor(snapshot.range(&start..&end));
            assert_eq!(lent, expected(then, &start, &end), "old snapshot cursor");
            check_where(
                || snapshot.range(&start..&end),
                &expected(then, &start, &end),
            );
            check_pauses(
                |from| snapshot.range(from..end.as_slice()),
                &start,
                &expected(then, &start, &end),
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn range_cursor_and_owned_iterator_equal_the_model_across_memtable_and_ssts(
        rounds in proptest::collection::vec(
            proptest::collection::vec(proptest::collection::vec(op(), 1..20), 1..12),
            1..5,
        ),
        ranges in proptest::collection::vec((any::<u16>(), any::<u16>()), 1..6),
        compact in any::<bool>(),
    ) {
        run(&rounds, &ranges, compact);
    }

    /// Without range tombstones the filtered cursor walks whole blocks and memtable runs
    /// on its own; it must still agree with the model.
    #[test]
    fn filtered_range_cursor_equals_the_filtered_model_without_range_tombstones(
        rounds in proptest::collection::vec(
            proptest::collection::vec(proptest::collection::vec(op(), 1..40), 1..12),
            1..5,
        ),
        ranges in proptest::collection::vec((any::<u16>(), any::<u16>()), 1..6),
        compact in any::<bool>(),
    ) {
        let rounds: Vec<Vec<Vec<Op>>> = rounds
            .into_iter()
            .map(|batches| {
                batches
                    .into_iter()
                    .map(|ops| ops.into_iter().filter(|op| !matches!(op, Op::DeleteRange(..))).collect())
                    .collect()
            })
            .collect();
        run(&rounds, &ranges, compact);
    }
}

#[test]
fn range_cursor_lends_the_newest_version_when_every_source_holds_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("db"), options()).unwrap();
    for round in 0u8..4 {
        let mut batch = WriteBatch::new();
        for k in 0..200u16 {
            batch.put(&key(k), &[round; 3]);
        }
        engine.write(&batch, Durability::Buffered).unwrap();
        if round < 3 {
            engine.flush().unwrap();
        }
    }
    let got = drain_cursor(engine.range(b"k".as_slice()..b"l".as_slice()).unwrap());
    assert_eq!(got.len(), 200);
    assert!(got.iter().all(|(_, v)| v == &[3, 3, 3]));
}

#[test]
fn range_cursor_at_a_snapshot_skips_newer_versions_in_one_compacted_sst() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("db"), options()).unwrap();
    let write = |round: u8| {
        let mut batch = WriteBatch::new();
        for k in 0..300u16 {
            batch.put(&key(k), &[round; 5]);
        }
        engine.write(&batch, Durability::Buffered).unwrap();
    };
    write(1);
    let old = engine.snapshot();
    write(2);
    engine.flush().unwrap();
    engine.compact().unwrap();
    let got = drain_cursor(old.range(b"k".as_slice()..b"l".as_slice()));
    assert_eq!(got.len(), 300);
    assert!(got.iter().all(|(_, v)| v == &[1; 5]));
    let now = drain_cursor(engine.range(b"k".as_slice()..b"l".as_slice()).unwrap());
    assert!(now.len() == 300 && now.iter().all(|(_, v)| v == &[2; 5]));
}

/// A key of the entity layout: a shared table prefix, a partition and a row, at least 16
/// bytes, so the merge orders most keys by their first two words and the rest in full.
fn long_key(k: u16) -> Vec<u8> {
    let k = k % 240;
    format!("\0\0\0\x01part{:02}\0row{:04}", k / 40, k % 40 * 7).into_bytes()
}

#[test]
fn range_cursor_skips_older_versions_of_long_keys_in_every_source_and_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("db"), options()).unwrap();
    let mut model = Model::new();
    let mut snapshots = Vec::new();
    // A fixed pseudo-random walk: overwrites land in other SSTs, the same SST (under a
    // snapshot) and the memtable; versions of one key straddle block boundaries.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..6u8 {
        for _ in 0..4 {
            let mut batch = WriteBatch::new();
            for _ in 0..60 {
                let r = next();
                let k = long_key(u16::try_from(r % 240).unwrap());
                if r % 11 == 0 {
                    batch.delete(&k);
                    model.remove(&k);
                } else {
                    let value = vec![round; usize::try_from(r % 30).unwrap()];
                    batch.put(&k, &value);
                    model.insert(k, value);
                }
            }
            engine.write(&batch, Durability::Buffered).unwrap();
            if next() % 3 == 0 {
                snapshots.push((engine.snapshot(), model.clone()));
            }
        }
        match round {
            2 => engine.compact().unwrap(),
            5 => {}
            _ => engine.flush().unwrap(),
        }
    }
    snapshots.push((engine.snapshot(), model.clone()));
    let bounds = [(0u16, 240u16), (3, 77), (40, 41), (119, 200), (0, 1)];
    for (snapshot, then) in &snapshots {
        for &(a, b) in &bounds {
            let (start, end) = (
                long_key(a),
                if b >= 240 {
                    b"\x01".to_vec()
                } else {
                    long_key(b)
                },
            );
            let lent = drain_cursor(snapshot.range(&start..&end));
            assert_eq!(lent, expected(then, &start, &end), "{start:?}..{end:?}");
            check_where(
                || snapshot.range(&start..&end),
                &expected(then, &start, &end),
            );
            check_pauses(
                |from| snapshot.range(from..end.as_slice()),
                &start,
                &expected(then, &start, &end),
            );
        }
    }
}
