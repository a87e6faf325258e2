//! FileStorage on ext4: durable overwrites of pages whose allocation is durable take the
//! direct-write-and-device-flush path, and only those pages.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::engine::file::{DATA_START, FileStorage, OpenMode, PAGE_SIZE, Storage};

const P: u64 = PAGE_SIZE;

/// `len` bytes of `byte` starting at a page-aligned address inside the returned vector.
fn aligned(byte: u8, len: usize) -> (Vec<u8>, usize) {
    let buf = vec![byte; len + P as usize];
    let start = buf.as_ptr().align_offset(P as usize);
    (buf, start)
}

fn open() -> Option<(tempfile::TempDir, FileStorage)> {
    let dir = tempfile::tempdir().unwrap();
    let storage = FileStorage::open(dir.path().join("db.strata"), OpenMode::ReadWrite).unwrap();
    // Only ext4 has the path; elsewhere every durable write is a synced write.
    storage.flushes_device_directly().then_some((dir, storage))
}

fn read(storage: &FileStorage, offset: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    storage.read_exact_at(&mut out, offset).unwrap();
    out
}

#[test]
fn file_pages_become_stable_only_after_a_sync_covering_their_write() {
    let Some((_dir, storage)) = open() else {
        return;
    };
    storage
        .write_all_at(&vec![0; 16 * P as usize], DATA_START)
        .unwrap();
    assert!(!storage.is_stable(DATA_START, P));
    storage.sync_data().unwrap();
    assert!(storage.is_stable(DATA_START, 16 * P));
    assert!(!storage.is_stable(DATA_START, 17 * P));
}

#[test]
fn file_durable_page_writes_read_back_on_both_paths() {
    let Some((_dir, storage)) = open() else {
        return;
    };
    // Unstable pages (past the end: a hole to fill): the synced path, which makes them stable.
    let (buf, at) = aligned(7, 2 * P as usize);
    storage
        .write_pages_durable(&buf[at..at + 2 * P as usize], DATA_START)
        .unwrap();
    assert!(storage.is_stable(DATA_START, 2 * P));
    // Stable pages: the direct write and the device flush.
    let (buf, at) = aligned(9, P as usize);
    storage
        .write_pages_durable(&buf[at..at + P as usize], DATA_START + P)
        .unwrap();
    let back = read(&storage, DATA_START, 2 * P as usize);
    assert!(back[..P as usize].iter().all(|&b| b == 7));
    assert!(back[P as usize..].iter().all(|&b| b == 9));
}

#[test]
fn file_punched_or_truncated_pages_are_not_stable() {
    let Some((_dir, storage)) = open() else {
        return;
    };
    storage
        .write_all_at(&vec![1; 32 * P as usize], DATA_START)
        .unwrap();
    storage.sync_data().unwrap();
    storage.punch_hole(DATA_START + 4 * P, 4 * P).unwrap();
    assert!(storage.is_stable(DATA_START, 4 * P));
    assert!(!storage.is_stable(DATA_START + 4 * P, P));
    assert!(!storage.is_stable(DATA_START + 7 * P, P));
    assert!(storage.is_stable(DATA_START + 8 * P, 24 * P));
    storage.set_len(DATA_START + 16 * P).unwrap();
    assert!(!storage.is_stable(DATA_START + 16 * P, P));
    assert!(storage.is_stable(DATA_START + 8 * P, 8 * P));
    // A punched page written durably is read back whole and is stable again.
    let (buf, at) = aligned(5, P as usize);
    storage
        .write_pages_durable(&buf[at..at + P as usize], DATA_START + 5 * P)
        .unwrap();
    assert!(storage.is_stable(DATA_START + 5 * P, P));
    assert!(
        read(&storage, DATA_START + 5 * P, P as usize)
            .iter()
            .all(|&b| b == 5)
    );
    assert!(
        read(&storage, DATA_START + 4 * P, P as usize)
            .iter()
            .all(|&b| b == 0)
    );
}

/// Flush requests the block device holding `path` has completed (`/sys/dev/block/M:m/stat`,
/// field 16), where the kernel reports them.
fn device_flushes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (major, minor) = ((dev >> 8) & 0xfff, (dev & 0xff) | ((dev >> 12) & 0xfff00));
    let stat = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/stat")).ok()?;
    stat.split_whitespace().nth(15)?.parse().ok()
}

/// The point of the path: the bytes are durable only if the device's cache is flushed after
/// the direct write, so every durable write over stable pages must complete a flush request
/// (other processes' flushes may add to the count, never take from it).
#[test]
fn file_every_stable_durable_write_flushes_the_device() {
    let Some((dir, storage)) = open() else {
        return;
    };
    storage
        .write_all_at(&vec![0; 4 * P as usize], DATA_START)
        .unwrap();
    storage.sync_data().unwrap();
    assert!(storage.is_stable(DATA_START, 4 * P));
    let Some(mut before) = device_flushes(&dir.path().join("db.strata")) else {
        return;
    };
    let (buf, at) = aligned(5, P as usize);
    for i in 0..20 {
        storage
            .write_pages_durable(&buf[at..at + P as usize], DATA_START + (i % 4) * P)
            .unwrap();
        let after = device_flushes(&dir.path().join("db.strata")).unwrap();
        assert!(
            after > before,
            "write {i}: no device flush ({before} -> {after})"
        );
        before = after;
    }
}
