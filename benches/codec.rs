//! Codec benchmarks: encode and decode of a typical entity (6 properties of mixed types, about
//! 200 bytes), single-property reads and projections through `PropertyReader`, and engine keys.
//!
//! `cargo bench --bench codec`; figures go to docs/PERFORMANCE.md. On a shared machine set
//! `STRATA_BENCH_CLOCK=cpu` to measure the bench thread's on-CPU time (Linux,
//! `CLOCK_THREAD_CPUTIME_ID`) instead of wall time, which other processes inflate.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

#[path = "../tests/codec_support/mod.rs"]
mod codec_support;

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;

use criterion::measurement::Measurement;
use criterion::{Criterion, Throughput};
use strata::codec::key;
use strata::codec::property::{self, PropertyReader};

fn property_codec<M: Measurement>(c: &mut Criterion<M>) {
    let entity = codec_support::typical_entity();
    let bytes = property::encode(&entity);
    let pk = entity.partition_key().clone();
    let rk = entity.row_key().clone();

    let mut group = c.benchmark_group("property");
    group.throughput(Throughput::Elements(1));
    group.bench_function("encode", |b| {
        b.iter(|| property::encode(black_box(&entity)))
    });
    let mut out = Vec::with_capacity(bytes.len());
    group.bench_function("encode_into_reused_buffer", |b| {
        b.iter(|| {
            out.clear();
            property::encode_into(black_box(&entity), &mut out);
        });
    });
    group.bench_function("decode", |b| {
        b.iter(|| property::decode(pk.clone(), rk.clone(), black_box(&bytes)).unwrap());
    });
    // The floor for any decoder into the model's owned types: the same allocations, no parsing.
    group.bench_function("baseline_clone_entity", |b| {
        b.iter(|| black_box(&entity).clone())
    });
    group.bench_function("reader_get_last_guid", |b| {
        b.iter(|| {
            PropertyReader::new(black_box(&bytes))
                .unwrap()
                .get("CustomerId")
                .unwrap()
        });
    });
    group.bench_function("reader_get_ref_string", |b| {
        b.iter(|| {
            PropertyReader::new(black_box(&bytes))
                .unwrap()
                .get_ref("Address")
                .unwrap()
        });
    });
    group.bench_function("reader_project_two", |b| {
        b.iter(|| {
            PropertyReader::new(black_box(&bytes))
                .unwrap()
                .project(&["Quantity", "Total"])
                .unwrap()
        });
    });
    group.finish();
}

fn key_codec<M: Measurement>(c: &mut Criterion<M>) {
    let entity = codec_support::typical_entity();
    let (pk, rk) = (entity.partition_key(), entity.row_key());
    let bytes = key::encode(42, pk, rk);
    let mut group = c.benchmark_group("key");
    group.throughput(Throughput::Elements(1));
    group.bench_function("encode", |b| b.iter(|| key::encode(black_box(42), pk, rk)));
    group.bench_function("decode", |b| {
        b.iter(|| key::decode(black_box(&bytes)).unwrap())
    });
    group.bench_function("partition_prefix_of", |b| {
        b.iter(|| key::partition_prefix_of(black_box(&bytes)));
    });
    group.finish();
}

/// Nanoseconds the current thread has spent on a CPU (`CLOCK_THREAD_CPUTIME_ID`).
fn main() {
    if cpu_time::cpu_clock_requested() {
        let mut c = Criterion::default()
            .with_measurement(cpu_time::CpuTime)
            .configure_from_args();
        property_codec(&mut c);
        key_codec(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default().configure_from_args();
        property_codec(&mut c);
        key_codec(&mut c);
        c.final_summary();
    }
}
