//! Superblock pair: encoding, slot choice by generation, fallback on damage, error kinds.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::engine::Error;
use strata::engine::file::format::{MAX_WAL_SEGMENTS, SLOT_OFFSETS, SLOT_SIZE};
use strata::engine::file::{
    Extent, ExtentRef, FaultyStorage, Storage, Superblock, WalSegmentRef, read_superblock,
    write_superblock,
};

fn sb(generation: u64) -> Superblock {
    Superblock {
        generation,
        manifest: Some(ExtentRef {
            extent: Extent {
                offset: 8192,
                len: 8192,
            },
            len: 5000,
            crc: 0xDEAD_BEEF,
        }),
        wal_segments: vec![
            WalSegmentRef {
                extent: Extent {
                    offset: 16384,
                    len: 65536,
                },
                id: 3,
            },
            WalSegmentRef {
                extent: Extent {
                    offset: 81920,
                    len: 131_072,
                },
                id: 4,
            },
        ],
        flushed_seq: 42 + generation,
        next_segment_id: 5,
    }
}

#[test]
fn superblock_empty_file_is_none() {
    let s = FaultyStorage::new();
    assert_eq!(read_superblock(&s).unwrap(), None);
}

#[test]
fn superblock_zeroed_creation_area_is_none() {
    let s = FaultyStorage::from_image(vec![0; 8192]);
    assert_eq!(read_superblock(&s).unwrap(), None);
}

#[test]
fn superblock_round_trips_through_its_slot() {
    let s = FaultyStorage::new();
    for g in [1, 2] {
        write_superblock(&s, &sb(g)).unwrap();
        assert_eq!(read_superblock(&s).unwrap(), Some(sb(g)));
    }
    let no_manifest = Superblock {
        manifest: None,
        wal_segments: vec![],
        ..sb(3)
    };
    write_superblock(&s, &no_manifest).unwrap();
    assert_eq!(read_superblock(&s).unwrap(), Some(no_manifest));
}

#[test]
fn superblock_highest_valid_generation_wins() {
    let s = FaultyStorage::new();
    write_superblock(&s, &sb(7)).unwrap();
    write_superblock(&s, &sb(8)).unwrap();
    assert_eq!(read_superblock(&s).unwrap().unwrap().generation, 8);
    write_superblock(&s, &sb(9)).unwrap();
    assert_eq!(read_superblock(&s).unwrap().unwrap().generation, 9);
}

#[test]
fn superblock_flipped_bit_in_newest_slot_falls_back_to_older() {
    for byte in [0usize, 17, 40, 70, 100, 4000, SLOT_SIZE - 1] {
        let s = FaultyStorage::new();
        write_superblock(&s, &sb(4)).unwrap();
        write_superblock(&s, &sb(5)).unwrap();
        assert!(s.flip_bit(SLOT_OFFSETS[1] + byte as u64, 3));
        assert_eq!(
            read_superblock(&s).unwrap(),
            Some(sb(4)),
            "flip at slot byte {byte}"
        );
    }
}

#[test]
fn superblock_both_slots_bad_is_corruption_with_offset() {
    let s = FaultyStorage::new();
    write_superblock(&s, &sb(4)).unwrap();
    write_superblock(&s, &sb(5)).unwrap();
    s.flip_bit(100, 0);
    s.flip_bit(4096 + 200, 0);
    match read_superblock(&s) {
        Err(Error::Corruption { offset, what }) => {
            assert_eq!(offset, 0, "{what}");
            assert!(what.contains("crc"), "{what}");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn superblock_bad_magic_in_both_slots_is_not_a_database() {
    let s = FaultyStorage::from_image(b"hello, this is a text file\n".repeat(400));
    assert!(matches!(
        read_superblock(&s),
        Err(Error::NotADatabase { .. })
    ));
}

#[test]
fn superblock_torn_short_file_uses_surviving_slot() {
    let s = FaultyStorage::new();
    write_superblock(&s, &sb(2)).unwrap();
    // Slot B is only partly there: the file ends inside it.
    s.write_raw(4096, &[0x89, b'S', b'D']);
    assert_eq!(read_superblock(&s).unwrap(), Some(sb(2)));
}

#[test]
fn superblock_generation_in_wrong_slot_is_rejected() {
    let s = FaultyStorage::new();
    let bytes = sb(3).encode().unwrap();
    // Generation 3 belongs in slot B; placed in slot A it must not be believed.
    s.write_raw(0, &bytes);
    s.write_raw(4096, &[0u8; 4096]);
    assert!(matches!(
        read_superblock(&s),
        Err(Error::Corruption { offset: 16, .. })
    ));
}

#[test]
fn superblock_too_many_wal_segments_is_rejected() {
    let segs = (0..=MAX_WAL_SEGMENTS as u64)
        .map(|i| WalSegmentRef {
            extent: Extent {
                offset: 16384 + i * 4096,
                len: 4096,
            },
            id: i,
        })
        .collect();
    let big = Superblock {
        wal_segments: segs,
        next_segment_id: 1000,
        ..sb(1)
    };
    assert!(matches!(
        write_superblock(&FaultyStorage::new(), &big),
        Err(Error::InvalidArgument(_))
    ));
    let mut fits = big.clone();
    fits.wal_segments.pop();
    let s = FaultyStorage::new();
    write_superblock(&s, &fits).unwrap();
    assert_eq!(read_superblock(&s).unwrap(), Some(fits));
}

#[test]
fn superblock_unknown_version_is_not_a_database() {
    let s = FaultyStorage::new();
    let mut bytes = sb(2).encode().unwrap();
    bytes[8] = 9;
    let crc = crc32fast::hash(&bytes[..SLOT_SIZE - 4]);
    bytes[SLOT_SIZE - 4..].copy_from_slice(&crc.to_le_bytes());
    s.write_raw(0, &bytes);
    match read_superblock(&s) {
        Err(Error::NotADatabase { what, .. }) => assert!(what.contains("version 9"), "{what}"),
        other => panic!("expected NotADatabase, got {other:?}"),
    }
}

#[test]
fn superblock_extents_past_superblock_area_only() {
    let s = FaultyStorage::new();
    let mut bad = sb(2);
    bad.wal_segments[0].extent.offset = 4096;
    let mut bytes = bad.encode().unwrap();
    s.write_raw(0, &bytes);
    assert!(matches!(
        read_superblock(&s),
        Err(Error::Corruption { offset: 72, .. })
    ));
    // Same with overlapping extents.
    let mut overlap = sb(2);
    overlap.wal_segments[1].extent.offset = 16384;
    bytes = overlap.encode().unwrap();
    s.write_raw(0, &bytes);
    assert!(matches!(read_superblock(&s), Err(Error::Corruption { .. })));
    assert!(s.len().unwrap() >= 4096);
}

#[test]
fn superblock_any_flipped_bit_never_yields_a_damaged_slot() {
    let s = FaultyStorage::new();
    write_superblock(&s, &sb(4)).unwrap();
    write_superblock(&s, &sb(5)).unwrap();
    for byte in 0..2 * SLOT_SIZE as u64 {
        let bit = (byte % 8) as u8;
        s.flip_bit(byte, bit);
        let got = read_superblock(&s).unwrap().unwrap();
        // A flip in the newest slot falls back to the older one; in the older, changes nothing.
        let expected = if byte >= SLOT_OFFSETS[1] {
            sb(4)
        } else {
            sb(5)
        };
        assert_eq!(got, expected, "bit {bit} of byte {byte}");
        s.flip_bit(byte, bit);
    }
}

#[test]
fn superblock_any_flipped_bit_in_only_slot_is_an_error_within_it() {
    let s = FaultyStorage::new();
    write_superblock(&s, &sb(1)).unwrap();
    for byte in SLOT_OFFSETS[1]..SLOT_OFFSETS[1] + SLOT_SIZE as u64 {
        s.flip_bit(byte, 7);
        match read_superblock(&s) {
            Err(Error::Corruption { offset, .. }) => assert!((4096..8192).contains(&offset)),
            Err(Error::NotADatabase { .. }) => assert!(byte < 4096 + 8, "magic byte {byte}"),
            other => panic!("flip at {byte}: {other:?}"),
        }
        s.flip_bit(byte, 7);
    }
}

#[test]
fn superblock_short_foreign_file_is_not_a_database() {
    for text in [
        &b"x"[..],
        b"hello",
        b"a short text file, well under one page\n",
    ] {
        let s = FaultyStorage::from_image(text.to_vec());
        assert!(
            matches!(read_superblock(&s), Err(Error::NotADatabase { .. })),
            "{text:?}"
        );
    }
}

#[test]
fn superblock_torn_write_at_every_byte_keeps_previous_generation() {
    use strata::engine::file::Fault;
    for keep in 0..=SLOT_SIZE {
        let s = FaultyStorage::new();
        write_superblock(&s, &sb(4)).unwrap();
        s.sync_data().unwrap();
        s.inject(Fault::TornWrite { keep });
        assert!(write_superblock(&s, &sb(5)).is_err());
        let expected = if keep == SLOT_SIZE { sb(5) } else { sb(4) };
        assert_eq!(
            read_superblock(&s).unwrap(),
            Some(expected),
            "torn at byte {keep}"
        );
    }
}
