//! Space freed by flushes and compactions goes back to the file system at once (holes are
//! punched), so the file's allocated blocks follow the live data between compactions; and
//! only free pages are ever punched.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::os::unix::fs::MetadataExt;

use strata::engine::file::{DATA_START, Extent, ExtentAllocator, PAGE_SIZE};
use strata::engine::{Durability, Engine, Options, WriteBatch};

const MIB: u64 = 1 << 20;

fn extent(page: u64, pages: u64) -> Extent {
    Extent {
        offset: DATA_START + page * PAGE_SIZE,
        len: pages * PAGE_SIZE,
    }
}

#[test]
fn allocator_lists_for_punching_only_freed_pages_that_are_still_free() {
    let mut alloc = ExtentAllocator::default();
    let a = alloc.allocate(64 * PAGE_SIZE);
    let b = alloc.allocate(64 * PAGE_SIZE);
    let c = alloc.allocate(64 * PAGE_SIZE);
    let tail = alloc.allocate(PAGE_SIZE);
    assert_eq!((a, b, c), (extent(0, 64), extent(64, 64), extent(128, 64)));
    alloc.free(a);
    alloc.free(b);
    alloc.free(c);
    // Half of the merged hole is handed out again before anything is punched.
    let reused = alloc.allocate(96 * PAGE_SIZE);
    assert_eq!(reused, extent(0, 96));
    assert_eq!(alloc.take_unpunched(), vec![extent(96, 96)]);
    assert!(
        alloc.take_unpunched().is_empty(),
        "each free is listed once"
    );
    // A freed extent merged into the tail is truncated, not punched; a small one is reused.
    alloc.free(tail);
    alloc.free(extent(0, 1));
    assert!(alloc.take_unpunched().is_empty());
}

#[test]
fn engine_space_overwrites_leave_no_free_pages_allocated_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let options = Options {
        memtable_bytes: 256 << 10,
        sst_target_bytes: 256 << 10,
        l1_target_bytes: 1 << 20,
        background_compaction: false,
        ..Options::default()
    };
    let engine = Engine::open(&path, options).unwrap();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..300 {
        let mut batch = WriteBatch::new();
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = format!("key{:06}", x % 20_000);
            let value: Vec<u8> = (0..100).map(|i| (x >> (i % 56)) as u8).collect();
            batch.put(key.as_bytes(), &value);
        }
        engine.write(&batch, Durability::Buffered).unwrap();
    }
    engine.flush().unwrap();
    let stats = engine.stats().unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    let allocated = meta.blocks() * 512;
    eprintln!("allocated {allocated} B, {stats:?}");
    assert!(
        stats.free_bytes >= MIB,
        "the workload leaves holes in the file: {stats:?}"
    );
    // Allocated blocks may exceed the used pages only by what the allocator keeps for reuse
    // (pieces under the punch threshold) and the file system's own rounding.
    let used = stats.file_bytes - stats.free_bytes;
    assert!(
        allocated <= used + stats.free_bytes / 4,
        "allocated {allocated} B, used {used} B, free {} B",
        stats.free_bytes
    );
    let expected: Vec<_> = engine
        .range(b"".as_slice()..b"\xff".as_slice())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    engine.close().unwrap();
    Engine::check(&path).unwrap();
    let engine = Engine::open(&path, Options::default()).unwrap();
    let found: Vec<_> = engine
        .range(b"".as_slice()..b"\xff".as_slice())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(found, expected);
}
