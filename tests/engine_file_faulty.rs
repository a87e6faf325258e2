//! FaultyStorage: the crash model and each injected fault behave as documented.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::io::ErrorKind;

use strata::engine::file::{CrashMode, Fault, FaultyStorage, Storage};

#[test]
fn faulty_crash_drops_everything_not_synced() {
    let s = FaultyStorage::new();
    s.write_all_at(b"synced", 0).unwrap();
    s.sync_data().unwrap();
    s.write_all_at(b"SYNCED and more", 0).unwrap();
    assert_eq!(s.live_image(), b"SYNCED and more");
    let handle = s.clone();
    handle.crash();
    assert_eq!(s.live_image(), b"synced");
    assert_eq!(s.durable_image(), b"synced");
}

#[test]
fn faulty_torn_write_keeps_prefix_then_crashes() {
    let s = FaultyStorage::new();
    s.write_all_at(b"0123", 0).unwrap();
    s.sync_data().unwrap();
    s.write_all_at(b"lost", 4).unwrap();
    s.inject(Fault::TornWrite { keep: 3 });
    assert!(s.write_all_at(b"abcdef", 8).is_err());
    // The unsynced "lost" is gone, the torn write left 3 bytes (zero-filled gap before them).
    assert_eq!(s.live_image(), b"0123\0\0\0\0abc");
    assert_eq!(s.crash_count(), 1);
}

#[test]
fn faulty_fail_write_changes_nothing() {
    let s = FaultyStorage::new();
    s.inject_after(1, Fault::FailWrite);
    s.write_all_at(b"a", 0).unwrap();
    let err = s.write_all_at(b"b", 1).unwrap_err();
    assert!(err.to_string().contains("injected"));
    s.write_all_at(b"c", 1).unwrap();
    assert_eq!(s.live_image(), b"ac");
    assert_eq!(s.write_count(), 3);
}

#[test]
fn faulty_failed_sync_loses_its_writes_for_good() {
    let s = FaultyStorage::new();
    s.write_all_at(b"aaaa", 0).unwrap();
    s.inject(Fault::FailSync);
    assert!(s.sync_data().is_err());
    // A retried sync "succeeds" but the data it was meant to persist is gone (fsyncgate).
    s.sync_data().unwrap();
    assert_eq!(s.live_image(), b"aaaa");
    s.crash();
    assert_eq!(s.live_image(), b"");
}

#[test]
fn faulty_disk_full_fails_growth_until_lifted() {
    let s = FaultyStorage::new();
    s.set_disk_limit(Some(8));
    s.write_all_at(b"12345678", 0).unwrap();
    let err = s.write_all_at(b"9", 8).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StorageFull);
    // Overwriting inside the file still works; growing by set_len does not.
    s.write_all_at(b"x", 0).unwrap();
    assert_eq!(s.set_len(9).unwrap_err().kind(), ErrorKind::StorageFull);
    s.set_disk_limit(None);
    s.write_all_at(b"9", 8).unwrap();
    assert_eq!(s.live_image(), b"x23456789");
}

#[test]
fn faulty_keep_prefix_crash_keeps_an_ordered_prefix() {
    for seed in 0..50 {
        let s = FaultyStorage::new();
        s.set_crash_mode(CrashMode::KeepPrefix { seed });
        for i in 0..8u8 {
            s.write_all_at(&[i + 1; 4], u64::from(i) * 4).unwrap();
        }
        s.crash();
        let img = s.live_image();
        // Some prefix of the writes survived completely, at most one was torn after it.
        let complete = img.chunks(4).take_while(|c| c.len() == 4).count();
        for (i, c) in img.chunks(4).enumerate() {
            assert!(c.iter().all(|&b| b == i as u8 + 1), "seed {seed}: {img:?}");
        }
        assert!(img.len() <= 32 && complete <= 8);
    }
}

#[test]
fn faulty_random_pages_crash_keeps_whole_pages_only() {
    let mut kept_some = false;
    let mut dropped_some = false;
    for seed in 0..20 {
        let s = FaultyStorage::new();
        s.write_all_at(&vec![0u8; 4 * 4096], 0).unwrap();
        s.sync_data().unwrap();
        s.set_crash_mode(CrashMode::KeepRandomPages { seed });
        s.write_all_at(&vec![7u8; 4 * 4096], 0).unwrap();
        s.crash();
        for page in s.live_image().chunks(4096) {
            assert!(page.iter().all(|&b| b == page[0]), "a page is torn");
            kept_some |= page[0] == 7;
            dropped_some |= page[0] == 0;
        }
    }
    assert!(kept_some && dropped_some);
}

#[test]
fn faulty_flip_bit_changes_both_images() {
    let s = FaultyStorage::from_image(vec![0u8; 10]);
    assert!(s.flip_bit(3, 2));
    assert!(!s.flip_bit(10, 0));
    assert_eq!(s.live_image()[3], 4);
    assert_eq!(s.durable_image()[3], 4);
    let mut b = [0u8; 1];
    s.read_exact_at(&mut b, 3).unwrap();
    assert_eq!(b[0], 4);
    assert_eq!(
        s.read_exact_at(&mut b, 10).unwrap_err().kind(),
        ErrorKind::UnexpectedEof
    );
}
