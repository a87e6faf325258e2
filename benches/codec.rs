//! Codec benchmarks: encode and decode of a typical entity (6 properties of mixed types, about
//! 200 bytes), single-property reads and projections through `PropertyReader`, and engine keys.
//!
//! `cargo bench --bench codec`; figures go to docs/PERFORMANCE.md. On a shared machine set
//! `STRATA_BENCH_CLOCK=cpu` to measure the bench thread's on-CPU time (Linux,
//! `CLOCK_THREAD_CPUTIME_ID`) instead of wall time, which other processes inflate.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

#[path = "../tests/codec_support/mod.rs"]
mod codec_support;

use std::hint::black_box;

use criterion::measurement::{Measurement, ValueFormatter};
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
#[derive(Debug, Clone, Copy, Default)]
struct CpuTime;

/// `struct timespec` of 64-bit Linux.
#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// Linux's id of the calling thread's CPU-time clock.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

unsafe extern "C" {
    fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
}

impl CpuTime {
    fn now() -> u64 {
        let mut time = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `time` is a valid, writable timespec; std links the C library.
        let status = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &raw mut time) };
        assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
        time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
    }
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        Self::now()
    }

    fn end(&self, start: u64) -> u64 {
        Self::now().saturating_sub(start)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        self
    }
}

impl ValueFormatter for CpuTime {
    fn scale_values(&self, _typical: f64, _values: &mut [f64]) -> &'static str {
        "ns (cpu)"
    }

    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let per_iteration = match throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) | Throughput::Elements(n) => *n,
        } as f64;
        for value in values.iter_mut() {
            *value = per_iteration * 1e9 / *value;
        }
        "elem/s (cpu)"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn main() {
    if std::env::var("STRATA_BENCH_CLOCK").as_deref() == Ok("cpu") {
        let mut c = Criterion::default()
            .with_measurement(CpuTime)
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
