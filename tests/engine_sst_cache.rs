//! The block cache stays within its byte bound, serves repeated reads from memory, and a
//! zero-byte cache still reads correctly.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod engine_sst_support;

use std::sync::Arc;

use engine_sst_support::{Entry, MemStorage, SST_OFFSET, build, options};
use strata::engine::file::{Extent, PAGE_SIZE, Storage};
use strata::engine::sst::{BlockCache, SstReader};
use strata::engine::{Compression, ValueKind};

fn entries() -> Vec<Entry> {
    (0..5000u32)
        .map(|i| {
            (
                format!("key{i:06}").into_bytes(),
                3,
                ValueKind::Put,
                vec![i as u8; 64],
            )
        })
        .collect()
}

fn open_with(
    storage: &Arc<MemStorage>,
    len: usize,
    id: u64,
    cache: &Arc<BlockCache>,
) -> Arc<SstReader> {
    let extent = Extent {
        offset: SST_OFFSET,
        len: (len as u64).div_ceil(PAGE_SIZE) * PAGE_SIZE,
    };
    Arc::new(SstReader::open(storage.clone(), extent, len as u64, id, Arc::clone(cache)).unwrap())
}

#[test]
fn block_cache_used_bytes_stay_within_capacity() {
    let image = build(options(1024, 16, Compression::None), &entries());
    let storage = Arc::new(MemStorage::default());
    storage.write_all_at(&image, SST_OFFSET).unwrap();
    let cache = Arc::new(BlockCache::new(16 << 10));
    let reader = open_with(&storage, image.len(), 7, &cache);
    assert!(reader.data_blocks() > 100);
    let scanned = reader.iter(&[]).count();
    assert_eq!(scanned, 5000);
    assert!(cache.used_bytes() > 0);
    assert!(
        cache.used_bytes() <= 16 << 10,
        "cache holds {} bytes",
        cache.used_bytes()
    );
}

#[test]
fn block_cache_serves_repeated_reads_without_storage() {
    let image = build(options(1024, 16, Compression::Zstd(1)), &entries());
    let storage = Arc::new(MemStorage::default());
    storage.write_all_at(&image, SST_OFFSET).unwrap();
    let cache = Arc::new(BlockCache::new(8 << 20));
    let reader = open_with(&storage, image.len(), 9, &cache);
    let first: Vec<_> = reader.iter(&[]).map(Result::unwrap).collect();
    // With every block cached, wiping the data area on "disk" must not change what is read.
    let data_len = image.len() / 2;
    storage
        .write_all_at(&vec![0u8; data_len], SST_OFFSET)
        .unwrap();
    let second: Vec<_> = reader.iter(&[]).map(Result::unwrap).collect();
    assert_eq!(first, second);
    assert_eq!(
        reader.get(b"key000042", 3).unwrap().unwrap().value,
        vec![42u8; 64]
    );
}

#[test]
fn block_cache_of_zero_bytes_reads_through() {
    let image = build(options(512, 16, Compression::None), &entries());
    let storage = Arc::new(MemStorage::default());
    storage.write_all_at(&image, SST_OFFSET).unwrap();
    let cache = Arc::new(BlockCache::new(0));
    let reader = open_with(&storage, image.len(), 1, &cache);
    assert_eq!(reader.iter(b"key004990").count(), 10);
    assert_eq!(cache.used_bytes(), 0);
}

#[test]
fn block_cache_separates_ssts_by_id() {
    let a = build(options(1024, 16, Compression::None), &entries());
    let other: Vec<Entry> = entries()
        .into_iter()
        .map(|(k, s, kind, _)| (k, s, kind, b"other".to_vec()))
        .collect();
    let b = build(options(1024, 16, Compression::None), &other);
    let cache = Arc::new(BlockCache::new(8 << 20));
    let (sa, sb) = (
        Arc::new(MemStorage::default()),
        Arc::new(MemStorage::default()),
    );
    sa.write_all_at(&a, SST_OFFSET).unwrap();
    sb.write_all_at(&b, SST_OFFSET).unwrap();
    let ra = open_with(&sa, a.len(), 1, &cache);
    let rb = open_with(&sb, b.len(), 2, &cache);
    for k in [&b"key000000"[..], b"key002500", b"key004999"] {
        assert_eq!(rb.get(k, 3).unwrap().unwrap().value, b"other");
        assert_ne!(ra.get(k, 3).unwrap().unwrap().value, b"other");
    }
}

#[test]
fn block_cache_concurrent_readers_see_the_same_data() {
    let entries = entries();
    let image = build(options(512, 4, Compression::Zstd(1)), &entries);
    let storage = Arc::new(MemStorage::default());
    storage.write_all_at(&image, SST_OFFSET).unwrap();
    // A cache smaller than the SST keeps evicting while four threads read.
    let cache = Arc::new(BlockCache::new(32 << 10));
    let reader = open_with(&storage, image.len(), 3, &cache);
    std::thread::scope(|s| {
        for t in 0..4usize {
            let (reader, entries) = (Arc::clone(&reader), &entries);
            s.spawn(move || {
                for (i, (k, seq, _, v)) in entries.iter().enumerate().skip(t).step_by(7) {
                    let got = reader.get(k, *seq).unwrap().unwrap();
                    assert_eq!(&got.value, v, "thread {t} entry {i}");
                }
                assert_eq!(reader.iter(&[]).count(), entries.len());
            });
        }
    });
    assert!(cache.used_bytes() <= 32 << 10);
}

#[test]
fn sst_iter_without_cache_fill_reads_everything_and_caches_nothing() {
    let image = build(options(1024, 16, Compression::Lz4), &entries());
    let storage = Arc::new(MemStorage::default());
    storage.write_all_at(&image, SST_OFFSET).unwrap();
    let cache = Arc::new(BlockCache::new(8 << 20));
    let reader = open_with(&storage, image.len(), 5, &cache);
    let bypassed: Vec<_> = reader
        .iter(&[])
        .without_cache_fill()
        .map(Result::unwrap)
        .collect();
    assert_eq!(bypassed.len(), 5000);
    assert_eq!(cache.used_bytes(), 0);
    // A filling scan then caches blocks, and a bypassing scan still yields the same entries.
    let filled: Vec<_> = reader.iter(&[]).map(Result::unwrap).collect();
    assert!(cache.used_bytes() > 0);
    assert_eq!(bypassed, filled);
}
