//! SST micro-benches in db_bench vocabulary: readrandom, readmissing, seekrandom, readseq
//! over an SST of 100k entries (16-byte keys, 100-byte values) held in memory.
//!
//! Run: `cargo bench --bench sst`
#![allow(missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use std::hint::black_box;
use std::io;
use std::sync::{Arc, RwLock};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use strata::engine::file::{Extent, Storage};
use strata::engine::sst::{BlockCache, SstOptions, SstReader, SstWriter};
use strata::engine::{Compression, ValueKind};

const ENTRIES: u64 = 100_000;

#[derive(Debug, Default)]
struct MemStorage(RwLock<Vec<u8>>);

impl Storage for MemStorage {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let data = self.0.read().unwrap();
        let start = offset as usize;
        buf.copy_from_slice(
            data.get(start..start + buf.len())
                .ok_or(io::ErrorKind::UnexpectedEof)?,
        );
        Ok(())
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut data = self.0.write().unwrap();
        let start = offset as usize;
        if data.len() < start + buf.len() {
            data.resize(start + buf.len(), 0);
        }
        data[start..start + buf.len()].copy_from_slice(buf);
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.read().unwrap().len() as u64)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.write().unwrap().resize(len as usize, 0);
        Ok(())
    }
}

fn key(i: u64) -> [u8; 16] {
    // Spread keys like hashed row keys while keeping them sortable by i.
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&i.to_be_bytes());
    k[8..].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes());
    k
}

fn build(compression: Compression) -> Vec<u8> {
    let mut w = SstWriter::new(SstOptions {
        block_bytes: 4096,
        restart_interval: 16,
        compression,
        bloom_bits_per_key: 10,
        prefix_extractor: None,
    });
    let value = [0x5au8; 100];
    for i in 0..ENTRIES {
        w.add(&key(i), i + 1, ValueKind::Put, &value);
    }
    w.finish().unwrap().unwrap().0
}

fn open(image: &[u8], cache_bytes: usize) -> Arc<SstReader> {
    let storage = Arc::new(MemStorage::default());
    storage.write_all_at(image, 8192).unwrap();
    let extent = Extent {
        offset: 8192,
        len: (image.len() as u64).div_ceil(4096) * 4096,
    };
    let cache = Arc::new(BlockCache::new(cache_bytes));
    Arc::new(SstReader::open(storage, extent, image.len() as u64, 1, cache).unwrap())
}

/// A cheap deterministic sequence of indexes (xorshift).
fn indexes() -> impl FnMut() -> u64 {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % ENTRIES
    }
}

fn bench_sst(c: &mut Criterion) {
    let mut group = c.benchmark_group("sst");
    group.throughput(Throughput::Elements(1));
    for (name, compression) in [("raw", Compression::None), ("zstd1", Compression::Zstd(1))] {
        let image = build(compression);
        let reader = open(&image, 64 << 20);
        let mut next = indexes();
        group.bench_function(format!("readrandom/{name}/cached"), |b| {
            b.iter(|| black_box(reader.get(&key(next()), u64::MAX).unwrap()));
        });
        let cold = open(&image, 0);
        group.bench_function(format!("readrandom/{name}/uncached"), |b| {
            b.iter(|| black_box(cold.get(&key(next()), u64::MAX).unwrap()));
        });
        group.bench_function(format!("readmissing/{name}"), |b| {
            b.iter(|| black_box(reader.get(&key(next() + ENTRIES), u64::MAX).unwrap()));
        });
        group.bench_function(format!("seekrandom/{name}"), |b| {
            b.iter(|| {
                let mut it = reader.iter(&key(next()));
                black_box(it.advance().unwrap());
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("sst-scan");
    group.throughput(Throughput::Elements(ENTRIES));
    group.sample_size(20);
    let image = build(Compression::None);
    let reader = open(&image, 64 << 20);
    group.bench_function("readseq/borrowed", |b| {
        b.iter(|| {
            let mut it = reader.iter(&[]);
            let mut n = 0usize;
            while it.advance().unwrap() {
                n += it.value().len();
            }
            black_box(n)
        });
    });
    group.bench_function("readseq/owned", |b| {
        b.iter(|| {
            black_box(
                reader
                    .iter(&[])
                    .map(|e| e.unwrap().value.len())
                    .sum::<usize>(),
            )
        });
    });
    group.finish();

    let mut group = c.benchmark_group("sst-build");
    group.throughput(Throughput::Elements(ENTRIES));
    group.sample_size(10);
    group.bench_function("fillseq/raw", |b| {
        b.iter(|| black_box(build(Compression::None).len()))
    });
    group.bench_function("fillseq/zstd1", |b| {
        b.iter(|| black_box(build(Compression::Zstd(1)).len()));
    });
    group.finish();
}

criterion_group!(benches, bench_sst);
criterion_main!(benches);
