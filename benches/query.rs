//! Query benchmarks: parsing and planning a `$filter`, and the residual evaluation a
//! partition query pays per row (encoded rows read in place, as the engine hands them over).
//!
//! `cargo bench --bench query`. On a shared machine set `STRATA_BENCH_CLOCK=cpu` to measure
//! the bench thread's on-CPU time (Linux, `CLOCK_THREAD_CPUTIME_ID`) instead of wall time,
//! which other processes inflate.
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;

use criterion::measurement::Measurement;
use criterion::{Criterion, Throughput};
use strata::codec::property::{self, PropertyReader};
use strata::model::{DateTime, Entity, Guid, PartitionKey, PropertyName, RowKey, Value};
use strata::query::{EncodedEntity, Filter, Plan};

const ROWS: usize = 1_000;

/// A typical entity of 8 properties of mixed types.
fn entity(i: usize) -> Entity {
    let mut entity = Entity::new(
        PartitionKey::new("customer-0042").unwrap(),
        RowKey::new(format!("order-{i:08}")).unwrap(),
    );
    entity.set_timestamp(DateTime::parse("2024-05-01T12:00:00Z").unwrap());
    let n = i32::try_from(i).unwrap();
    let properties = [
        (
            "Kind",
            Value::string(if i.is_multiple_of(3) {
                "refund"
            } else {
                "order"
            })
            .unwrap(),
        ),
        ("Customer", Value::string("Jane Q. Example").unwrap()),
        ("Email", Value::string("jane@example.com").unwrap()),
        ("Quantity", Value::Int32(n % 17)),
        ("Total", Value::Double(f64::from(n) * 1.25)),
        (
            "Placed",
            Value::DateTime(DateTime::from_ticks(638_500_000_000_000_000 + i64::from(n)).unwrap()),
        ),
        ("Shipped", Value::Boolean(i.is_multiple_of(2))),
        ("Id", Value::Guid(Guid([7; 16]))),
    ];
    for (name, value) in properties {
        entity.set(PropertyName::new(name).unwrap(), value).unwrap();
    }
    entity
}

fn evaluate<M: Measurement + 'static>(c: &mut Criterion<M>) {
    let entities: Vec<Entity> = (0..ROWS).map(entity).collect();
    let rows: Vec<(String, String, Vec<u8>)> = entities
        .iter()
        .map(|e| {
            (
                e.partition_key().to_string(),
                e.row_key().to_string(),
                property::encode(e),
            )
        })
        .collect();
    let mut group = c.benchmark_group("query_residual");
    group.throughput(Throughput::Elements(ROWS as u64));
    for (name, text) in [
        (
            "matches_nothing_last_property",
            "Id eq guid'00000000-0000-0000-0000-000000000000'",
        ),
        ("int_first_touched", "Quantity gt 20"),
        ("two_predicates", "Kind eq 'order' and Total gt 1000.0"),
    ] {
        let filter = Filter::parse(text).unwrap();
        group.bench_function(format!("encoded_{name}"), |b| {
            b.iter(|| {
                let mut hits = 0_usize;
                for (pk, rk, bytes) in &rows {
                    let row = EncodedEntity {
                        partition_key: pk,
                        row_key: rk,
                        reader: PropertyReader::new(bytes).unwrap(),
                    };
                    hits += usize::from(filter.matches(black_box(&row)).unwrap());
                }
                hits
            });
        });
        group.bench_function(format!("decoded_{name}"), |b| {
            b.iter(|| {
                entities
                    .iter()
                    .filter(|e| filter.matches(black_box(*e)).unwrap())
                    .count()
            });
        });
    }
    group.finish();
}

fn parse_and_plan<M: Measurement + 'static>(c: &mut Criterion<M>) {
    let text = "PartitionKey eq 'customer-0042' and RowKey ge 'order-2024' and RowKey lt 'order-2025' \
                and (Kind eq 'order' or Total gt 99.5) and not (Shipped eq true) \
                and Placed ge datetime'2024-01-01T00:00:00Z'";
    c.bench_function("filter_parse_typical", |b| {
        b.iter(|| Filter::parse(black_box(text)).unwrap());
    });
    let filter = Filter::parse(text).unwrap();
    c.bench_function("plan_typical", |b| {
        b.iter(|| Plan::new(Some(black_box(&filter))));
    });
}

fn main() {
    if cpu_time::cpu_clock_requested() {
        let mut c = Criterion::default()
            .with_measurement(cpu_time::CpuTime)
            .configure_from_args();
        evaluate(&mut c);
        parse_and_plan(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default().configure_from_args();
        evaluate(&mut c);
        parse_and_plan(&mut c);
        c.final_summary();
    }
}
