//! Concurrency: optimistic concurrency with ETags under contention, and isolation of batches
//! from concurrent readers.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod table_support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use strata::model::Value;
use strata::{IfMatch, Query, TableError};
use table_support::{Fixture, entity};

const THREADS: usize = 8;
const CYCLES: usize = 1000;
const COUNTERS: [(&str, &str); 4] = [("c", "0"), ("c", "1"), ("d", "0"), ("d", "1")];

#[test]
fn etag_conditional_increments_from_8_threads_lose_no_update() {
    let fx = Fixture::new();
    let t = fx.table("Counters");
    for (pk, rk) in COUNTERS {
        t.insert(&entity(pk, rk, &[("N", Value::Int64(0))]))
            .unwrap();
    }
    let successes = AtomicU64::new(0);
    let conflicts = AtomicU64::new(0);
    thread::scope(|scope| {
        for worker in 0..THREADS {
            let t = t.clone();
            let (successes, conflicts) = (&successes, &conflicts);
            scope.spawn(move || {
                for cycle in 0..CYCLES {
                    let (pk, rk) = COUNTERS[(worker + cycle) % COUNTERS.len()];
                    loop {
                        let current = t.get(pk, rk, None).unwrap();
                        let Some(Value::Int64(n)) = current.entity.get("N") else {
                            panic!()
                        };
                        let next = entity(pk, rk, &[("N", Value::Int64(n + 1))]);
                        match t.replace(&next, IfMatch::Etag(current.etag)) {
                            Ok(_) => {
                                successes.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            Err(TableError::UpdateConditionNotSatisfied { .. }) => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(other) => panic!("{other}"),
                        }
                    }
                }
            });
        }
    });
    let total: i64 = COUNTERS
        .iter()
        .map(
            |(pk, rk)| match t.get(pk, rk, None).unwrap().entity.get("N") {
                Some(Value::Int64(n)) => *n,
                other => panic!("{other:?}"),
            },
        )
        .sum();
    let successes = successes.load(Ordering::Relaxed);
    assert_eq!(successes, (THREADS * CYCLES) as u64);
    assert_eq!(total, successes as i64);
    eprintln!("{} conflicts retried", conflicts.load(Ordering::Relaxed));
}

#[test]
fn concurrent_inserts_of_one_key_succeed_exactly_once() {
    let fx = Fixture::new();
    let t = fx.table("Race");
    for round in 0..50 {
        let rk = format!("{round:03}");
        let wins = AtomicU64::new(0);
        thread::scope(|scope| {
            for _ in 0..4 {
                let (t, rk, wins) = (t.clone(), rk.as_str(), &wins);
                scope.spawn(move || match t.insert(&entity("p", rk, &[])) {
                    Ok(_) => {
                        wins.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(TableError::EntityAlreadyExists { .. }) => {}
                    Err(other) => panic!("{other}"),
                });
            }
        });
        assert_eq!(wins.load(Ordering::Relaxed), 1);
    }
}

const ROWS: usize = 40;

#[test]
fn readers_paging_while_batches_commit_never_see_half_a_batch() {
    let fx = Fixture::new();
    let t = fx.table("Isolation");
    let partitions = ["p0", "p1", "p2"];
    for pk in partitions {
        let mut batch = t.batch(pk).unwrap();
        for r in 0..ROWS {
            batch.insert(entity(pk, &format!("{r:03}"), &[("V", Value::Int32(0))]));
        }
        batch.submit().unwrap();
    }
    let done = AtomicBool::new(false);
    let checked = AtomicU64::new(0);
    thread::scope(|scope| {
        for (w, pk) in partitions.into_iter().enumerate() {
            let (t, done) = (t.clone(), &done);
            scope.spawn(move || {
                for v in 1..=150 {
                    let mut batch = t.batch(pk).unwrap();
                    for r in 0..ROWS {
                        let value = Value::Int32(v);
                        if (r + w) % 2 == 0 {
                            batch.insert_or_replace(entity(
                                pk,
                                &format!("{r:03}"),
                                &[("V", value)],
                            ));
                        } else {
                            batch.merge(
                                entity(pk, &format!("{r:03}"), &[("V", value)]),
                                IfMatch::Any,
                            );
                        }
                    }
                    batch.submit().unwrap();
                }
                if w == 0 {
                    done.store(true, Ordering::SeqCst);
                }
            });
        }
        for _ in 0..3 {
            let (t, done, checked) = (t.clone(), &done, &checked);
            scope.spawn(move || {
                // At least one pass whatever the writers' pace (a `while !done` loop never ran
                // when the writers finished first, and the final check failed on a busy host).
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    // The whole table through pages of one partition each: every page is read
                    // from one snapshot, so all rows of a partition carry one version.
                    let pages = t.query_all(Query {
                        top: Some(ROWS as u32),
                        ..Query::default()
                    });
                    let rows: Vec<_> = pages.map(Result::unwrap).collect();
                    assert_eq!(rows.len(), ROWS * 3);
                    for chunk in rows.chunks(ROWS) {
                        let versions: Vec<&Value> =
                            chunk.iter().map(|e| e.entity.get("V").unwrap()).collect();
                        assert!(versions.windows(2).all(|w| w[0] == w[1]), "{versions:?}");
                        let etags: Vec<_> = chunk.iter().map(|e| e.etag).collect();
                        assert!(etags.windows(2).all(|w| w[0] == w[1]));
                    }
                    checked.fetch_add(1, Ordering::Relaxed);
                    if finished {
                        break;
                    }
                }
            });
        }
    });
    assert!(checked.load(Ordering::Relaxed) >= 3);
}
