//! Durable appends overwrite pre-written WAL blocks, and concurrent `Sync` writers share syncs
//! (group commit with a bounded gather) without losing or reordering anything.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::sync::Arc;

mod engine_wal_support;

use strata::engine::file::{CrashMode, Extent, FaultyStorage, Storage, WalSegmentRef};
use strata::engine::wal::{WalRecord, WalWriter, encode_record, replay};
use strata::engine::{Durability, Engine, Options, WriteBatch};

const SEGMENT: WalSegmentRef = WalSegmentRef {
    extent: Extent {
        offset: 8192,
        len: 65536,
    },
    id: 7,
};

fn replayed(disk: &FaultyStorage) -> Vec<(u64, Vec<u8>)> {
    engine_wal_support::replayed(disk, SEGMENT)
}

fn frame(wal: &WalWriter, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    wal.encode(&WalRecord { seq, payload }, &mut out);
    out
}

#[test]
fn wal_first_durable_append_prewrites_the_rest_of_the_segment() {
    let disk = FaultyStorage::new();
    let mut wal = WalWriter::fresh(SEGMENT);
    let first = frame(&wal, 1, b"one");
    assert!(wal.append_durable(&disk, &first).unwrap());
    // The whole extent is written (not a hole, nor past the end of the file); the zeroes need
    // not be durable, the frame is.
    assert_eq!(disk.len().unwrap(), SEGMENT.extent.end());
    assert!(disk.durable_image().len() as u64 >= SEGMENT.extent.offset + first.len() as u64);
    let writes = disk.write_count();
    let second = frame(&wal, 2, b"two");
    assert!(wal.append_durable(&disk, &second).unwrap());
    // Later durable appends write their frames only.
    assert_eq!(disk.write_count(), writes + 1);
    disk.crash();
    assert_eq!(
        replayed(&disk),
        vec![(1, b"one".to_vec()), (2, b"two".to_vec())]
    );
}

#[test]
fn wal_durable_appends_prewrite_a_bounded_window_ahead_of_the_tail() {
    let disk = FaultyStorage::new();
    let big = WalSegmentRef {
        extent: Extent {
            offset: 8192,
            len: 8 << 20,
        },
        id: 9,
    };
    let mut wal = WalWriter::fresh(big);
    let payload = vec![7u8; 4000];
    let window = 1 << 20;
    let mut seq = 1;
    while wal.pos() < 3 * window {
        let mut frames = Vec::new();
        wal.encode(
            &WalRecord {
                seq,
                payload: &payload,
            },
            &mut frames,
        );
        assert!(wal.append_durable(&disk, &frames).unwrap());
        let written = disk.len().unwrap() - big.extent.offset;
        // Zeroes stay ahead of the tail, but never more than one window past it.
        assert!(written >= wal.pos(), "{written} < {}", wal.pos());
        assert!(
            written <= wal.pos() + window,
            "{written} > {} + {window}",
            wal.pos()
        );
        seq += 1;
    }
    disk.crash();
    let mut count = 0;
    replay(&disk, &[big], &mut |_, p, _| {
        assert_eq!(p, &payload[..]);
        count += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(count, seq - 1);
}

#[test]
fn wal_buffered_appends_do_not_prewrite() {
    let disk = FaultyStorage::new();
    let mut wal = WalWriter::fresh(SEGMENT);
    let first = frame(&wal, 1, b"one");
    assert!(wal.append(&disk, &first).unwrap());
    assert_eq!(
        disk.len().unwrap(),
        SEGMENT.extent.offset + first.len() as u64
    );
}

#[test]
fn wal_stale_frames_of_a_reused_extent_are_never_replayed() {
    let disk = FaultyStorage::new();
    // An earlier segment that used the same extent left intact frames all over it.
    let mut stale = Vec::new();
    for seq in 100..400 {
        encode_record(
            SEGMENT.id - 1,
            &WalRecord {
                seq,
                payload: b"stale",
            },
            &mut stale,
        );
    }
    disk.write_all_at(&stale, SEGMENT.extent.offset).unwrap();
    disk.sync_data().unwrap();
    let mut wal = WalWriter::fresh(SEGMENT);
    let first = frame(&wal, 1, b"fresh");
    assert!(wal.append_durable(&disk, &first).unwrap());
    let second = frame(&wal, 2, b"fresh too");
    assert!(wal.append(&disk, &second).unwrap());
    // The buffered second frame is lost or torn in the crash; nothing stale follows either way.
    disk.set_crash_mode(CrashMode::KeepPrefix { seed: 3 });
    disk.crash();
    let records = replayed(&disk);
    assert!(
        records.first() == Some(&(1, b"fresh".to_vec())),
        "{records:?}"
    );
    assert!(records.iter().all(|(seq, _)| *seq <= 2), "{records:?}");
}

#[test]
fn wal_torn_durable_append_into_a_prewritten_segment_ends_the_log_cleanly() {
    let disk = FaultyStorage::new();
    let mut wal = WalWriter::fresh(SEGMENT);
    let first = frame(&wal, 1, b"kept");
    assert!(wal.append_durable(&disk, &first).unwrap());
    let second = frame(&wal, 2, &[9; 300]);
    disk.inject(strata::engine::file::Fault::TornWrite { keep: 100 });
    assert!(wal.append_durable(&disk, &second).is_err());
    assert_eq!(replayed(&disk), vec![(1, b"kept".to_vec())]);
}

fn key(thread: u32, n: u32) -> Vec<u8> {
    [thread.to_be_bytes(), n.to_be_bytes()].concat()
}

#[test]
fn engine_concurrent_sync_writers_keep_every_acknowledged_write_across_a_crash() {
    let storage = Arc::new(FaultyStorage::new());
    let options = Options {
        memtable_bytes: 64 << 10,
        background_compaction: false,
        ..Options::default()
    };
    let engine = Arc::new(Engine::open_with_storage(storage.clone(), options.clone()).unwrap());
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                let mut seqs = Vec::new();
                let mut last = 0;
                for n in 0..150u32 {
                    let mut batch = WriteBatch::new();
                    batch.put(&key(t, n), &[t as u8; 100]);
                    let seq = engine.write(&batch, Durability::Sync).unwrap();
                    // A writer's own acknowledgements come in sequence order.
                    assert!(seq > last, "seq {seq} after {last}");
                    last = seq;
                    seqs.push(seq);
                }
                seqs
            })
        })
        .collect();
    let mut seqs: Vec<u64> = threads
        .into_iter()
        .flat_map(|thread| thread.join().unwrap())
        .collect();
    seqs.sort_unstable();
    // Every batch got its own sequence number, with no gap.
    assert_eq!(seqs, (1..=8 * 150).collect::<Vec<u64>>());
    storage.crash();
    std::mem::forget(engine);
    let engine = Engine::open_with_storage(storage, options).unwrap();
    for t in 0..8 {
        for n in 0..150 {
            assert_eq!(
                engine.get(&key(t, n)).unwrap(),
                Some(vec![t as u8; 100]),
                "thread {t} write {n}"
            );
        }
    }
}
