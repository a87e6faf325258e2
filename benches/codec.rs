//! Codec benchmarks: encode and decode of a typical entity (6 properties of mixed types, about
//! 200 bytes), single-property reads and projections through `PropertyReader`, and engine keys.
//!
//! `cargo bench --bench codec`; figures go to docs/PERFORMANCE.md.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

#[path = "../tests/codec_support/mod.rs"]
mod codec_support;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use strata::codec::key;
use strata::codec::property::{self, PropertyReader};

fn property_codec(c: &mut Criterion) {
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

fn key_codec(c: &mut Criterion) {
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

criterion_group!(benches, property_codec, key_codec);
criterion_main!(benches);
