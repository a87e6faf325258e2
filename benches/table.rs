//! Table-layer benchmarks (issue 4 goals in parentheses):
//! - `readrandom_entity`: point `get` of a warm, decoded entity (≥ 430k/s on one thread);
//! - `fillbatch_100`: `insert` batches of 100 entities, Buffered (≥ 500,000 entities/s);
//! - `partition_query_residual`: a 1,000-entity partition scanned with a non-key filter
//!   (≥ 5,000,000 entities examined/s);
//! - `table_scan_no_match`: a table scan whose filter matches nothing (≥ 5,000,000/s);
//! - `delete_table`: drop a table of 1,000,000 entities (≤ 10 ms; set
//!   `STRATA_BENCH_DELETE_ENTITIES` to change the size).
//!
//! `cargo bench --bench table`; figures go to docs/PERFORMANCE.md. On a shared machine set
//! `STRATA_BENCH_CLOCK=cpu`: the point-get and batch-insert rows then time the bench threads'
//! on-CPU time (the two-thread row: the busier thread's, so contention between the threads
//! still shows while other processes' load does not).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::measurement::Measurement;
use criterion::{BatchSize, Criterion, SamplingMode, Throughput};
use strata::engine::Durability;
use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
use strata::{Account, Options, Query, Table};

/// A typical entity: five properties of mixed types, about 150 bytes encoded.
fn typical(pk: &str, rk: &str, n: i32) -> Entity {
    let mut e = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
    let mut set = |name: &str, value: Value| {
        e.set(PropertyName::new(name).unwrap(), value).unwrap();
    };
    set(
        "Name",
        Value::string(format!("customer number {n}")).unwrap(),
    );
    set(
        "Email",
        Value::string(format!("user{n}@example.com")).unwrap(),
    );
    set("Age", Value::Int32(n % 90));
    set("Balance", Value::Double(f64::from(n) * 1.5));
    set("Active", Value::Boolean(n % 2 == 0));
    e
}

fn open() -> (tempfile::TempDir, Account) {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        durability: Durability::Buffered,
        ..Options::default()
    };
    let account = Account::open_with(dir.path().join("bench.strata"), options).unwrap();
    (dir, account)
}

fn fill(table: &Table, partitions: usize, per_partition: usize) {
    for p in 0..partitions {
        let pk = format!("p{p:06}");
        for chunk in 0..per_partition.div_ceil(100) {
            let mut batch = table.batch(&pk).unwrap();
            for i in chunk * 100..((chunk + 1) * 100).min(per_partition) {
                let n = i32::try_from(i).unwrap();
                batch.insert(typical(&pk, &format!("{i:08}"), n));
            }
            batch.submit().unwrap();
        }
    }
}

/// Runs `work` and returns how long it took: on-CPU time of this thread with
/// `STRATA_BENCH_CLOCK=cpu`, else wall time.
fn timed(cpu: bool, work: impl FnOnce()) -> Duration {
    if cpu {
        let clock = cpu_time::CpuTime;
        let start = clock.start();
        work();
        Duration::from_nanos(clock.end(start))
    } else {
        let start = Instant::now();
        work();
        start.elapsed()
    }
}

/// The keys of `fill(_, partitions, 1000)`, formatted once so the timed loops measure `get`,
/// not `format!`.
fn loaded_keys(partitions: u64) -> Vec<(String, String)> {
    (0..partitions * 1000)
        .map(|n| (format!("p{:06}", n / 1000), format!("{:08}", n % 1000)))
        .collect()
}

/// The `i`-th key of a walk over `keys` in a scattered order (a multiplicative hash).
fn scattered(keys: &[(String, String)], i: u64) -> (&str, &str) {
    let n = i.wrapping_mul(2_654_435_761) % keys.len() as u64;
    let (pk, rk) = &keys[usize::try_from(n).unwrap()];
    (pk, rk)
}

fn point_get(c: &mut Criterion) {
    let (_dir, account) = open();
    account.create_table("Bench").unwrap();
    let table = account.table("Bench").unwrap();
    fill(&table, 100, 1000);
    account.engine().flush().unwrap();
    let keys = loaded_keys(100);
    let mut group = c.benchmark_group("table");
    group.throughput(Throughput::Elements(1));
    let cpu = cpu_time::cpu_clock_requested();
    let mut next: u64 = 0;
    group.bench_function("readrandom_entity", |b| {
        b.iter_custom(|iters| {
            let first = next;
            next += iters;
            timed(cpu, || {
                for i in first..first + iters {
                    let (pk, rk) = scattered(&keys, i);
                    black_box(table.get(pk, rk, None).unwrap());
                }
            })
        });
    });
    // Two threads share the table handle; each iteration is one get on each thread, so
    // near-linear scaling shows as the same time per iteration as one thread (with twice the
    // throughput). The slower thread decides.
    group.throughput(Throughput::Elements(2));
    group.bench_function("readrandom_entity_2threads", |b| {
        b.iter_custom(|iters| {
            let started = Instant::now();
            let busiest = std::thread::scope(|scope| {
                let workers: Vec<_> = (0..2u64)
                    .map(|thread| {
                        let (table, keys) = (&table, &keys);
                        scope.spawn(move || {
                            timed(cpu, || {
                                for i in 0..iters {
                                    let (pk, rk) = scattered(keys, i * 2 + thread);
                                    black_box(table.get(pk, rk, None).unwrap());
                                }
                            })
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().unwrap())
                    .max()
                    .unwrap()
            });
            if cpu { busiest } else { started.elapsed() }
        });
    });
    group.finish();
}

fn insert_batches(c: &mut Criterion) {
    let (_dir, account) = open();
    account.create_table("Bench").unwrap();
    let table = account.table("Bench").unwrap();
    let next = AtomicU64::new(0);
    let mut group = c.benchmark_group("table");
    group.throughput(Throughput::Elements(100));
    let cpu = cpu_time::cpu_clock_requested();
    group.bench_function("fillbatch_100", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let batch_no = next.fetch_add(1, Ordering::Relaxed);
                let pk = format!("p{batch_no:08}");
                let entities: Vec<Entity> = (0..100)
                    .map(|i| typical(&pk, &format!("{i:04}"), i))
                    .collect();
                total += timed(cpu, || {
                    let mut batch = table.batch(&pk).unwrap();
                    for e in entities {
                        batch.insert(e);
                    }
                    black_box(batch.submit().unwrap());
                });
            }
            total
        });
    });
    group.finish();
}

fn scans<M: Measurement + 'static>(c: &mut Criterion<M>) {
    let (_dir, account) = open();
    account.create_table("Bench").unwrap();
    let table = account.table("Bench").unwrap();
    fill(&table, 100, 1000);
    account.compact().unwrap();
    let mut group = c.benchmark_group("table");
    group.throughput(Throughput::Elements(1000));
    let partition = Query::filter("PartitionKey eq 'p000042' and Age eq 7");
    group.bench_function("partition_query_residual", |b| {
        b.iter(|| {
            let page = table.query(black_box(&partition)).unwrap();
            assert_eq!(page.entities.len(), 12);
            page
        });
    });
    group.throughput(Throughput::Elements(100_000));
    group.sample_size(20);
    let nothing = Query::filter("Age eq 1000");
    group.bench_function("table_scan_no_match", |b| {
        b.iter(|| {
            let mut query = nothing.clone();
            loop {
                let page = table.query(&query).unwrap();
                assert!(page.entities.is_empty());
                match page.continuation {
                    Some(token) => query.continuation = Some(token),
                    None => break,
                }
            }
        });
    });
    group.finish();
}

fn delete_table<M: Measurement + 'static>(c: &mut Criterion<M>) {
    let entities: usize = std::env::var("STRATA_BENCH_DELETE_ENTITIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut group = c.benchmark_group("table");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.bench_function(format!("delete_table_{entities}"), |b| {
        b.iter_batched(
            || {
                let (dir, account) = open();
                account.create_table("Doomed").unwrap();
                fill(&account.table("Doomed").unwrap(), entities / 1000, 1000);
                (dir, account)
            },
            |(dir, account)| {
                account.delete_table("Doomed").unwrap();
                (dir, account)
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// The scan and delete rows, under either clock (the point-get and insert rows time
/// themselves with [`timed`], so they always run under the wall-clock `Criterion`).
fn measured_benches<M: Measurement + 'static>(c: &mut Criterion<M>) {
    scans(c);
    delete_table(c);
}

/// `STRATA_TABLE_PROFILE=get|insert|partition|scan` runs a fixed number of operations of one
/// kind instead of the criterion benches, for a profiler that counts instructions, e.g.
/// `valgrind --tool=callgrind --toggle-collect='*profile_loop*' target/release/deps/table-…`;
/// set `STRATA_TABLE_PROFILE_OPS` for the number of operations and
/// `STRATA_TABLE_PROFILE_PARTITIONS` for the number of 1,000-entity partitions (default 10).
fn main() {
    if let Ok(kind) = std::env::var("STRATA_TABLE_PROFILE") {
        let ops: u64 = std::env::var("STRATA_TABLE_PROFILE_OPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        profile(&kind, ops);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    point_get(&mut c);
    insert_batches(&mut c);
    if cpu_time::cpu_clock_requested() {
        let mut cpu = Criterion::default()
            .with_measurement(cpu_time::CpuTime)
            .configure_from_args();
        measured_benches(&mut cpu);
        cpu.final_summary();
    } else {
        measured_benches(&mut c);
    }
    c.final_summary();
}

fn profile(kind: &str, ops: u64) {
    let partitions: usize = std::env::var("STRATA_TABLE_PROFILE_PARTITIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let (_dir, account) = open();
    account.create_table("Bench").unwrap();
    let table = account.table("Bench").unwrap();
    match kind {
        "get" => {
            fill(&table, 10, 1000);
            account.engine().flush().unwrap();
            // Warm: every block in the cache, as in the criterion bench.
            for n in 0..10_000 {
                let pk = format!("p{:06}", n / 1000);
                let rk = format!("{:08}", n % 1000);
                black_box(table.get(&pk, &rk, None).unwrap());
            }
            black_box(profile_loop_get(&table, &loaded_keys(10), ops));
        }
        "insert" => {
            let batches: Vec<(String, Vec<Entity>)> = (0..ops)
                .map(|batch_no| {
                    let pk = format!("p{batch_no:08}");
                    let entities = (0..100)
                        .map(|i| typical(&pk, &format!("{i:04}"), i))
                        .collect();
                    (pk, entities)
                })
                .collect();
            profile_loop_insert(&table, batches);
        }
        "partition" | "scan" => {
            fill(&table, partitions, 1000);
            account.compact().unwrap();
            // Warm: one full scan puts every block in the cache.
            scan_all(&table);
            if kind == "partition" {
                profile_loop_partition(&table, ops);
            } else {
                profile_loop_scan(&table, ops);
            }
        }
        other => panic!("unknown STRATA_TABLE_PROFILE {other:?}"),
    }
}

#[inline(never)]
fn profile_loop_get(table: &Table, keys: &[(String, String)], ops: u64) -> usize {
    let mut found = 0;
    for i in 0..ops {
        let (pk, rk) = scattered(keys, i);
        found += black_box(table.get(pk, rk, None).unwrap())
            .entity
            .properties()
            .len();
    }
    found
}

#[inline(never)]
fn profile_loop_insert(table: &Table, batches: Vec<(String, Vec<Entity>)>) {
    for (pk, entities) in batches {
        let mut batch = table.batch(&pk).unwrap();
        for e in entities {
            batch.insert(e);
        }
        black_box(batch.submit().unwrap());
    }
}

#[inline(never)]
fn profile_loop_partition(table: &Table, ops: u64) {
    let partition = Query::filter("PartitionKey eq 'p000004' and Age eq 7");
    for _ in 0..ops {
        let page = table.query(black_box(&partition)).unwrap();
        assert_eq!(page.entities.len(), 12);
    }
}

#[inline(never)]
fn profile_loop_scan(table: &Table, ops: u64) {
    for _ in 0..ops {
        scan_all(table);
    }
}

fn scan_all(table: &Table) {
    let mut query = Query::filter("Age eq 1000");
    loop {
        let page = table.query(&query).unwrap();
        assert!(page.entities.is_empty());
        match page.continuation {
            Some(token) => query.continuation = Some(token),
            None => break,
        }
    }
}
