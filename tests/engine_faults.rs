//! Fault injection through `FaultyStorage`: failed syncs poison the engine, a full disk is a
//! clean error that goes away once space is freed (after a reopen), a crash keeps exactly the
//! synced batches, and a flipped bit in an SST or superblock is corruption, never data.
//!
//! Full disk policy: the write that hits ENOSPC fails with `Error::Io`, the engine is poisoned
//! (it cannot know what reached the disk), and a reopen once space is available works again.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::sync::Arc;

use strata::engine::file::{Fault, FaultyStorage, Storage};
use strata::engine::{Durability, Engine, Error, Options, WriteBatch};

fn options() -> Options {
    Options {
        memtable_bytes: 8 << 10,
        background_compaction: false,
        ..Options::default()
    }
}

fn batch(i: u32) -> WriteBatch {
    let mut batch = WriteBatch::new();
    batch.put(
        format!("k{i:05}").as_bytes(),
        format!("value-{i}").as_bytes(),
    );
    batch
}

#[test]
fn engine_failed_sync_poisons_every_later_write() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), options()).unwrap();
    engine.write(&batch(0), Durability::Sync).unwrap();
    storage.inject(Fault::FailSync);
    assert!(engine.write(&batch(1), Durability::Sync).is_err());
    storage.clear_faults();
    assert!(matches!(
        engine.write(&batch(2), Durability::Sync),
        Err(Error::Poisoned { .. })
    ));
    assert!(matches!(engine.flush(), Err(Error::Poisoned { .. })));
    drop(engine);
    storage.crash();
    let engine = Engine::open_with_storage(storage, options()).unwrap();
    assert_eq!(engine.get(b"k00000").unwrap(), Some(b"value-0".to_vec()));
    engine.write(&batch(3), Durability::Sync).unwrap();
}

#[test]
fn engine_full_disk_is_a_clean_error_and_works_again_after_space_is_freed() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), options()).unwrap();
    let len = storage.len().unwrap();
    storage.set_disk_limit(Some(len));
    let mut failed = None;
    for i in 0..2000 {
        if let Err(err) = engine.write(&batch(i), Durability::Sync) {
            failed = Some((i, err));
            break;
        }
    }
    let (first_failed, err) = failed.expect("the disk limit was never hit");
    assert!(
        matches!(err, Error::Io { .. } | Error::Poisoned { .. }),
        "{err}"
    );
    drop(engine);
    storage.set_disk_limit(None);
    let engine = Engine::open_with_storage(storage, options()).unwrap();
    for i in 0..first_failed {
        assert_eq!(
            engine.get(format!("k{i:05}").as_bytes()).unwrap(),
            Some(format!("value-{i}").into_bytes())
        );
    }
    engine.write(&batch(9999), Durability::Sync).unwrap();
}

#[test]
fn engine_crash_keeps_exactly_the_synced_batches() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), options()).unwrap();
    for i in 0..300 {
        engine.write(&batch(i), Durability::Sync).unwrap();
    }
    engine.write(&batch(300), Durability::Buffered).unwrap();
    storage.crash();
    drop(engine);
    let engine = Engine::open_with_storage(storage, options()).unwrap();
    for i in 0..300 {
        assert!(
            engine.get(format!("k{i:05}").as_bytes()).unwrap().is_some(),
            "batch {i} lost"
        );
    }
}

#[test]
fn engine_damaged_synced_wal_record_is_corruption_not_a_torn_tail() {
    let storage = Arc::new(FaultyStorage::new());
    let opts = Options {
        memtable_bytes: 1 << 20,
        ..options()
    };
    let engine = Engine::open_with_storage(storage.clone(), opts.clone()).unwrap();
    for i in 0..3 {
        engine.write(&batch(i), Durability::Sync).unwrap();
    }
    drop(engine);
    let image = storage.live_image();
    let at = image
        .windows(b"value-0".len())
        .position(|w| w == b"value-0")
        .unwrap() as u64;
    assert!(storage.flip_bit(at, 0));
    // Later frames claim the damaged one was synced: losing it silently would drop acknowledged
    // batches, so the open must fail and name the damaged frame's offset.
    match Engine::open_with_storage(storage, opts) {
        Err(Error::Corruption { offset, .. }) => assert!(offset <= at, "offset {offset} > {at}"),
        other => panic!("expected corruption, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn engine_torn_write_at_every_offset_keeps_every_earlier_batch() {
    for keep in (0..200).step_by(7) {
        let storage = Arc::new(FaultyStorage::new());
        let engine = Engine::open_with_storage(storage.clone(), options()).unwrap();
        for i in 0..5 {
            engine.write(&batch(i), Durability::Sync).unwrap();
        }
        storage.inject(Fault::TornWrite { keep });
        assert!(engine.write(&batch(5), Durability::Sync).is_err());
        drop(engine);
        let engine = Engine::open_with_storage(storage, options()).unwrap();
        for i in 0..5 {
            assert!(
                engine.get(format!("k{i:05}").as_bytes()).unwrap().is_some(),
                "keep {keep}: batch {i} lost"
            );
        }
        // A write torn past its whole frame reached the disk intact: replaying it is right.
        let torn = engine.get(b"k00005").unwrap();
        assert!(
            torn.is_none() || torn == Some(b"value-5".to_vec()),
            "keep {keep}: {torn:?}"
        );
    }
}

/// One live key and its value.
type KeyValue = (Vec<u8>, Vec<u8>);

/// A database with every key in SSTs and nothing in the WAL.
fn flushed_image() -> (Vec<u8>, Vec<KeyValue>) {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), options()).unwrap();
    for i in 0..200 {
        engine.write(&batch(i), Durability::Buffered).unwrap();
    }
    engine.compact().unwrap();
    let all = engine
        .range(b"".as_slice()..b"\xff".as_slice())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    engine.close().unwrap();
    if let Ok(dir) = std::env::var("STRATA_WRITE_OPEN_FILE_SEED") {
        std::fs::write(
            std::path::Path::new(&dir).join("compacted_db"),
            storage.live_image(),
        )
        .unwrap();
    }
    (storage.live_image(), all)
}

#[test]
fn engine_flipped_bit_anywhere_is_corruption_or_the_right_data() {
    let (image, all) = flushed_image();
    // Every 127th bit keeps the test fast while touching superblocks, SST blocks, filters,
    // index, footer and manifest.
    for bit in (0..image.len() * 8).step_by(127) {
        let mut bad = image.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let storage = Arc::new(FaultyStorage::from_image(bad));
        let Ok(engine) = Engine::open_read_only_with_storage(storage) else {
            continue;
        };
        let read: Result<Vec<_>, _> = engine
            .range(b"".as_slice()..b"\xff".as_slice())
            .and_then(|iter| iter.collect());
        match read {
            Ok(got) => assert_eq!(got, all, "bit {bit} flipped: wrong data returned"),
            Err(Error::Corruption { .. }) => {}
            Err(other) => panic!("bit {bit} flipped: {other}"),
        }
    }
}

/// Prefixes `partition/` of keys `partition/row`: self-delimiting, as the contract asks.
#[derive(Debug)]
struct SlashPrefix;

impl strata::engine::PrefixExtractor for SlashPrefix {
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        let i = key.iter().position(|&b| b == b'/')?;
        key.get(..=i)
    }
}

#[test]
fn engine_scan_inside_one_prefix_skips_ssts_whose_filter_lacks_it() {
    let storage = Arc::new(FaultyStorage::new());
    let opts = Options {
        prefix_extractor: Some(Arc::new(SlashPrefix)),
        ..options()
    };
    let engine = Engine::open_with_storage(storage.clone(), opts).unwrap();
    let write = |keys: &[&[u8]]| {
        let mut batch = WriteBatch::new();
        for key in keys {
            batch.put(key, b"payload-of-a-key");
        }
        engine.write(&batch, Durability::Sync).unwrap();
        engine.flush().unwrap();
    };
    write(&[b"a/1", b"a/2", b"c/1"]);
    // Its key range covers `a/`, so only its prefix filter can rule it out.
    write(&[b"0/1", b"b/1", b"c/2"]);
    write(&[b"a/3", b"c/3"]);
    // Damage the data block of the SST without `a/`: a scan of `a/` never reads it...
    let image = storage.live_image();
    // (stale copies in freed WAL extents may match too; damaging those is harmless).
    for (at, _) in image.windows(3).enumerate().filter(|(_, w)| *w == b"b/1") {
        assert!(storage.flip_bit(at as u64, 0));
    }
    let got: Vec<Vec<u8>> = engine
        .range(b"a/".as_slice()..b"a0".as_slice())
        .unwrap()
        .map(|kv| kv.unwrap().0)
        .collect();
    assert_eq!(got, vec![b"a/1".to_vec(), b"a/2".to_vec(), b"a/3".to_vec()]);
    // ...while a scan that spans prefixes must, and reports the damage.
    let all: Result<Vec<_>, _> = engine
        .range(b"a/".as_slice()..b"d".as_slice())
        .unwrap()
        .collect();
    assert!(matches!(all, Err(Error::Corruption { .. })), "{all:?}");
}

#[test]
fn engine_bad_batch_in_an_intact_wal_record_is_corruption_at_its_frame() {
    use strata::engine::wal::{WalRecord, encode_record, format::HEADER_LEN};
    let storage = Arc::new(FaultyStorage::new());
    let opts = Options {
        memtable_bytes: 1 << 20,
        ..options()
    };
    let engine = Engine::open_with_storage(storage.clone(), opts.clone()).unwrap();
    engine.write(&batch(0), Durability::Sync).unwrap();
    drop(engine);
    let image = storage.live_image();
    let payload_at = image
        .windows(b"k00000".len())
        .position(|w| w == b"k00000")
        .unwrap();
    // The batch starts with its count and the put's tag and key length before the key.
    let frame_at = payload_at - 9 - HEADER_LEN;
    let segment = u32::from_le_bytes(image[frame_at + 8..frame_at + 12].try_into().unwrap());
    let seq = u64::from_le_bytes(image[frame_at + 16..frame_at + 24].try_into().unwrap());
    // A count of 1000 operations in a 4-byte batch: checksummed, yet undecodable.
    let mut frame = Vec::new();
    let record = WalRecord {
        seq,
        payload: &1000u32.to_le_bytes(),
    };
    encode_record(u64::from(segment), &record, &mut frame);
    storage.write_raw(frame_at as u64, &frame);
    match Engine::open_with_storage(storage, opts) {
        Err(Error::Corruption { offset, what }) => {
            assert_eq!(offset, frame_at as u64, "{what}");
        }
        other => panic!("expected corruption, got {:?}", other.map(|_| ())),
    }
}
