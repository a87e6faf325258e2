//! WAL benchmarks: framing, appends (buffered and `fillsync`-style synced) through the real
//! `FileStorage`, and replay of a full 4 MiB segment.
//!
//! `cargo bench --bench wal`; figures go to docs/PERFORMANCE.md.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use strata::engine::file::{Extent, FileStorage, OpenMode, Storage, WalSegmentRef};
use strata::engine::wal::{WalRecord, WalWriter, encode_record, replay};

/// A typical entity batch: one put of a ~200-byte value.
const PAYLOAD_LEN: usize = 200;
const SEGMENT_LEN: u64 = 4 << 20;

fn segment(id: u64) -> WalSegmentRef {
    WalSegmentRef {
        extent: Extent {
            offset: 8192,
            len: SEGMENT_LEN,
        },
        id,
    }
}

fn wal(c: &mut Criterion) {
    let payload = vec![0x5Au8; PAYLOAD_LEN];
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let storage = FileStorage::open(dir.path().join("wal.strata"), OpenMode::ReadWrite).unwrap();

    let mut group = c.benchmark_group("wal");
    group.throughput(Throughput::Bytes(PAYLOAD_LEN as u64));
    let mut out = Vec::new();
    group.bench_function("encode_record_200b", |b| {
        b.iter(|| {
            out.clear();
            encode_record(
                7,
                &WalRecord {
                    seq: 1,
                    payload: black_box(&payload),
                },
                &mut out,
            );
        });
    });

    let mut id = 1;
    let mut writer = WalWriter::new(segment(id), 0);
    let mut seq = 0;
    let mut append = |storage: &FileStorage, sync: bool| {
        seq += 1;
        let record = [WalRecord {
            seq,
            payload: &payload,
        }];
        if !writer.append_records(storage, &record).unwrap() {
            id += 1;
            writer = WalWriter::new(segment(id), 0);
            assert!(writer.append_records(storage, &record).unwrap());
        }
        if sync {
            writer.sync(storage).unwrap();
        }
    };
    group.bench_function("append_buffered_200b", |b| {
        b.iter(|| append(&storage, false))
    });
    group.bench_function("fillsync_append_and_sync_200b", |b| {
        b.iter(|| append(&storage, true));
    });

    // Replay: one full segment of 200-byte records.
    let full = segment(1_000_000);
    let mut w = WalWriter::new(full, 0);
    let mut n = 0u64;
    while w
        .append_records(
            &storage,
            &[WalRecord {
                seq: n,
                payload: &payload,
            }],
        )
        .unwrap()
    {
        n += 1;
    }
    storage.sync_data().unwrap();
    group.throughput(Throughput::Bytes(w.pos()));
    group.bench_function("replay_4mib_segment", |b| {
        b.iter(|| {
            let mut count = 0u64;
            replay(&storage, &[full], &mut |_, p, _| {
                count += p.len() as u64;
                Ok(())
            })
            .unwrap();
            assert_eq!(count, n * PAYLOAD_LEN as u64);
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = wal
}
criterion_main!(benches);
