//! Model benchmarks: the per-request validation and wire-form costs every write pays.
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use strata::model::{
    DateTime, EdmType, Entity, Guid, PartitionKey, PropertyName, RowKey, TableName, Value,
};

fn names(c: &mut Criterion) {
    let key = "k".repeat(512);
    c.bench_function("partition_key_new_1kib", |b| {
        b.iter(|| PartitionKey::new(black_box(key.as_str())).unwrap());
    });
    c.bench_function("row_key_new_short", |b| {
        b.iter(|| RowKey::new(black_box("0000000042")).unwrap());
    });
    c.bench_function("property_name_new", |b| {
        b.iter(|| PropertyName::new(black_box("CustomerEmailAddress")).unwrap());
    });
    c.bench_function("table_name_new", |b| {
        b.iter(|| TableName::new(black_box("Customers2024")).unwrap());
    });
}

fn wire_forms(c: &mut Criterion) {
    let text = "2024-02-29T12:34:56.1234567Z";
    let t = DateTime::parse(text).unwrap();
    c.bench_function("datetime_parse", |b| {
        b.iter(|| DateTime::parse(black_box(text)).unwrap());
    });
    c.bench_function("datetime_format", |b| b.iter(|| black_box(t).to_string()));
    let guid = "00112233-4455-6677-8899-aabbccddeeff";
    c.bench_function("guid_parse", |b| {
        b.iter(|| Guid::parse(black_box(guid)).unwrap());
    });
    c.bench_function("int64_from_wire", |b| {
        b.iter(|| Value::from_wire(EdmType::Int64, black_box("-9223372036854775808")).unwrap());
    });
    let wire = Value::Binary(vec![0x5a; 65536]).to_wire();
    let mut group = c.benchmark_group("binary_from_wire_64kib");
    group.throughput(Throughput::Bytes(65536));
    group.bench_function("base64", |b| {
        b.iter(|| Value::from_wire(EdmType::Binary, black_box(&wire)).unwrap());
    });
    group.finish();
    let long = "é".repeat(32 * 1024);
    let mut group = c.benchmark_group("string_validate_64kib");
    group.throughput(Throughput::Bytes(long.len() as u64));
    group.bench_function("utf16_count", |b| {
        b.iter(|| Value::string(black_box(long.as_str())).unwrap());
    });
    group.finish();
}

fn entities(c: &mut Criterion) {
    let props: Vec<_> = (0..252)
        .map(|i| {
            (
                PropertyName::new(format!("Prop{i}")).unwrap(),
                Value::Int64(i),
            )
        })
        .collect();
    c.bench_function("entity_with_252_properties", |b| {
        b.iter(|| {
            Entity::with_properties(
                PartitionKey::new("p").unwrap(),
                RowKey::new("r").unwrap(),
                black_box(props.clone()),
            )
            .unwrap()
        });
    });
    let small: Vec<_> = props.iter().take(10).cloned().collect();
    c.bench_function("entity_with_10_properties", |b| {
        b.iter(|| {
            Entity::with_properties(
                PartitionKey::new("p").unwrap(),
                RowKey::new("r").unwrap(),
                black_box(small.clone()),
            )
            .unwrap()
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = names, wire_forms, entities
}
criterion_main!(benches);
