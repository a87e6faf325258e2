//! Durable WAL appends rewrite whole pages past the page cache: the bytes they leave are the
//! ones a buffered append leaves, on the fault-injecting storage and on a real file (where the
//! direct write must also invalidate any cached copy, or later reads would see stale bytes).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod engine_wal_support;

use strata::engine::file::{
    CrashMode, Extent, FaultyStorage, FileStorage, OpenMode, PAGE_SIZE, Storage, WalSegmentRef,
};
use strata::engine::wal::{WalRecord, WalWriter, replay};
use strata::engine::{Durability, Engine, Options, WriteBatch};

const SEGMENT: WalSegmentRef = WalSegmentRef {
    extent: Extent {
        offset: 8192,
        len: 256 << 10,
    },
    id: 11,
};

fn replayed(disk: &dyn Storage) -> Vec<(u64, Vec<u8>)> {
    engine_wal_support::replayed(disk, SEGMENT)
}

fn payload(seq: u64) -> Vec<u8> {
    vec![seq as u8; 1 + (seq as usize * 577) % 5000]
}

/// Appends records 1..=n, every third one buffered, the rest durable, each at least once
/// spanning a page boundary; returns what replay must see.
fn append_mixed(disk: &dyn Storage, wal: &mut WalWriter, seqs: std::ops::Range<u64>) {
    for seq in seqs {
        let mut frames = Vec::new();
        let payload = payload(seq);
        wal.encode(
            &WalRecord {
                seq,
                payload: &payload,
            },
            &mut frames,
        );
        let fitted = if seq % 3 == 0 || seq == 59 {
            wal.append(disk, &frames).unwrap()
        } else {
            wal.append_durable(disk, &frames).unwrap()
        };
        assert!(fitted, "record {seq} fits the segment");
    }
}

fn expected(seqs: std::ops::Range<u64>) -> Vec<(u64, Vec<u8>)> {
    seqs.map(|seq| (seq, payload(seq))).collect()
}

#[test]
fn wal_direct_durable_appends_leave_the_bytes_buffered_appends_leave() {
    let dir = tempfile::tempdir().unwrap();
    let real = FileStorage::open(dir.path().join("db"), OpenMode::ReadWrite).unwrap();
    let model = FaultyStorage::new();
    for disk in [&real as &dyn Storage, &model] {
        let mut wal = WalWriter::fresh(SEGMENT);
        append_mixed(disk, &mut wal, 1..60);
        // A seal right after a direct write is a buffered write into the uncached tail page.
        wal.seal(disk).unwrap();
        wal.sync(disk).unwrap();
        assert_eq!(replayed(disk), expected(1..60));
    }
    let read = |disk: &dyn Storage| {
        let mut bytes = vec![0u8; SEGMENT.extent.len as usize];
        disk.read_exact_at(&mut bytes, SEGMENT.extent.offset)
            .unwrap();
        bytes
    };
    assert!(read(&real) == read(&model), "segment bytes differ");
}

#[test]
fn wal_resumed_writer_keeps_the_bytes_before_its_tail_in_the_tail_page() {
    let disk = FaultyStorage::new();
    let mut wal = WalWriter::fresh(SEGMENT);
    append_mixed(&disk, &mut wal, 1..10);
    wal.sync(&disk).unwrap();
    assert!(
        !wal.pos().is_multiple_of(PAGE_SIZE),
        "the tail is inside a page"
    );
    disk.crash();
    let end = replay(&disk, &[SEGMENT], &mut |_, _, _| Ok(())).unwrap();
    // A new writer at the replayed tail: its first direct write rewrites the tail page, so
    // it must know the page's earlier bytes.
    let mut resumed = WalWriter::new(SEGMENT, end.pos);
    append_mixed(&disk, &mut resumed, 10..20);
    disk.crash();
    let survived = replayed(&disk);
    // Record 18 is buffered (18 % 3 == 0) and 19 durable, so everything survives the crash.
    assert_eq!(survived, expected(1..20));
}

#[test]
fn wal_direct_appends_survive_crashes_that_keep_random_pages() {
    for seed in 0..20 {
        let disk = FaultyStorage::new();
        disk.set_crash_mode(CrashMode::KeepRandomPages { seed });
        let mut wal = WalWriter::fresh(SEGMENT);
        append_mixed(&disk, &mut wal, 1..25);
        disk.crash();
        let survived = replayed(&disk);
        // Record 24 is buffered; 23 and everything before it was durable by 23's write.
        assert!(
            survived.len() >= 23,
            "seed {seed}: {} records",
            survived.len()
        );
        assert_eq!(survived[..23], expected(1..24)[..], "seed {seed}");
    }
}

#[test]
fn wal_direct_writes_of_a_real_engine_are_read_back_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let engine = Engine::open(&path, Options::default()).unwrap();
    for n in 0..300u32 {
        let mut batch = WriteBatch::new();
        batch.put(
            format!("k{n:05}").as_bytes(),
            &vec![n as u8; (n as usize * 37) % 900],
        );
        let durability = if n % 4 == 0 {
            Durability::Buffered
        } else {
            Durability::Sync
        };
        engine.write(&batch, durability).unwrap();
    }
    drop(engine);
    let engine = Engine::open(&path, Options::default()).unwrap();
    for n in 0..300u32 {
        let value = engine.get(format!("k{n:05}").as_bytes()).unwrap();
        assert_eq!(
            value.as_deref(),
            Some(&vec![n as u8; (n as usize * 37) % 900][..])
        );
    }
}

/// Bytes this process has read from the storage device (page-cache hits excluded).
fn device_read_bytes() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap();
    io.lines()
        .find_map(|line| line.strip_prefix("read_bytes: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn wal_buffered_append_after_a_direct_write_does_not_read_the_tail_page_back() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let real = FileStorage::open(dir.path().join("db"), OpenMode::ReadWrite).unwrap();
    let mut wal = WalWriter::fresh(SEGMENT);
    append_mixed(&real, &mut wal, 1..3);
    let before = device_read_bytes();
    // Twenty rounds of durable, durable, buffered inside one page. The second durable write
    // of a round is direct (the first one synced everything); a buffered write of the frames
    // alone into the page it left uncached would read 4 KiB back each round.
    for seq in 3..63 {
        let mut frames = Vec::new();
        wal.encode(&WalRecord { seq, payload: b"x" }, &mut frames);
        let fitted = if seq % 3 == 0 {
            wal.append(&real, &frames).unwrap()
        } else {
            wal.append_durable(&real, &frames).unwrap()
        };
        assert!(fitted);
    }
    let read = device_read_bytes() - before;
    assert!(
        read < 10 * PAGE_SIZE,
        "{read} bytes read back from the device"
    );
}

#[test]
fn zeroes_written_ahead_replace_cached_and_on_disk_bytes_and_nothing_outside_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let real = FileStorage::open(dir.path().join("db"), OpenMode::ReadWrite).unwrap();
    let page = PAGE_SIZE as usize;
    let len = 300 * page;
    let filled: Vec<u8> = (0..len).map(|i| (i % 251) as u8 + 1).collect();
    // Aligned ranges (direct writes of whole pages), ranges with ragged edges (the edges
    // buffered), one inside a page, and one past the end of the file.
    let ranges = [
        (2 * page, 64 * page),
        (5 * page + 100, 70 * page + 7),
        (page + 10, 20),
        (len - 3 * page, 8 * page),
    ];
    for (offset, zeroed) in ranges {
        real.write_all_at(&filled, 0).unwrap();
        // Read the range so the page cache holds the old bytes: the zeroes must replace them.
        let mut cached = vec![0u8; len];
        real.read_exact_at(&mut cached, 0).unwrap();
        real.write_zeroes_ahead(offset as u64, zeroed as u64)
            .unwrap();
        let end = offset + zeroed;
        let mut expected = filled.clone();
        expected.resize(expected.len().max(end), 0);
        expected[offset..end].fill(0);
        let mut got = vec![0xEEu8; expected.len()];
        real.read_exact_at(&mut got, 0).unwrap();
        assert!(got == expected, "range {offset}+{zeroed}");
        assert_eq!(real.len().unwrap(), expected.len() as u64);
    }
}
