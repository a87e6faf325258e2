//! WAL frame codec: round trip, clean ends, and every kind of damaged frame.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use proptest::prelude::*;
use strata::engine::wal::format::HEADER_LEN;
use strata::engine::wal::{FrameError, WalRecord, decode_record, encode_record};

fn frame(segment: u64, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_record(segment, &WalRecord { seq, payload }, &mut out);
    out
}

proptest! {
    #[test]
    fn wal_record_encode_decode_round_trips(
        segment in any::<u64>(),
        seq in any::<u64>(),
        payload in prop::collection::vec(any::<u8>(), 0..300),
        tail in prop::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut bytes = frame(segment, seq, &payload);
        prop_assert_eq!(bytes.len(), HEADER_LEN + payload.len());
        let n = bytes.len();
        bytes.extend_from_slice(&tail);
        let (rec, len) = decode_record(segment, &bytes).unwrap().unwrap();
        prop_assert_eq!(len, n);
        prop_assert_eq!(rec.seq, seq);
        prop_assert_eq!(rec.payload, &payload[..]);
    }

    #[test]
    fn wal_record_any_flipped_bit_is_detected(
        payload in prop::collection::vec(any::<u8>(), 0..100),
        bit in any::<prop::sample::Index>(),
    ) {
        let mut bytes = frame(7, 9, &payload);
        let bit = bit.index(bytes.len() * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
        // Either damaged, or (flip in the segment-id field) a foreign frame: never a record.
        prop_assert!(!matches!(decode_record(7, &bytes), Ok(Some(_))));
    }

    #[test]
    fn wal_record_decoding_arbitrary_bytes_never_panics(
        segment in any::<u64>(),
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let _ = decode_record(segment, &bytes);
    }
}

#[test]
fn wal_record_zeroed_tail_is_clean_end() {
    for n in [0, 1, HEADER_LEN - 1, HEADER_LEN, 4096] {
        assert_eq!(decode_record(1, &vec![0u8; n]), Ok(None), "{n} zero bytes");
    }
}

#[test]
fn wal_record_other_segment_id_is_clean_end() {
    let bytes = frame(41, 3, b"stale");
    assert_eq!(decode_record(42, &bytes), Ok(None));
    assert!(decode_record(41, &bytes).unwrap().is_some());
}

#[test]
fn wal_record_same_low_bits_other_segment_fails_checksum() {
    // Only the low 32 bits are in the header; the whole id is in the CRC.
    let bytes = frame(5, 3, b"x");
    assert!(matches!(
        decode_record(5 + (1 << 32), &bytes),
        Err(FrameError::Checksum { .. })
    ));
}

#[test]
fn wal_record_truncated_frame_is_error() {
    let bytes = frame(1, 1, b"payload");
    for cut in 1..bytes.len() {
        let got = decode_record(1, &bytes[..cut]);
        assert!(
            matches!(
                got,
                Err(FrameError::TruncatedHeader { .. } | FrameError::Truncated { .. })
            ),
            "cut at {cut}: {got:?}"
        );
    }
}

#[test]
fn wal_record_empty_payload_is_a_record() {
    let bytes = frame(1, 0, b"");
    let (rec, len) = decode_record(1, &bytes).unwrap().unwrap();
    assert_eq!((rec.seq, rec.payload, len), (0, &b""[..], HEADER_LEN));
}

#[test]
#[ignore = "writes the committed wal_record seed corpus; run by hand after a format change"]
fn write_wal_record_seed_corpus() {
    use strata::engine::file::{Extent, FaultyStorage, WalSegmentRef};
    use strata::engine::wal::WalWriter;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/wal_record");
    std::fs::create_dir_all(&dir).unwrap();
    let id = 0x0102_0304_0506_0708u64;
    let with_id = |frames: &[u8]| [&id.to_le_bytes()[..], frames].concat();
    let one = frame(id, 42, b"a batch payload");
    let two = [frame(id, 1, b"first"), frame(id, 2, b"second")].concat();
    // A writer's frames: a synced record, then a record claiming it, then a seal.
    let s = FaultyStorage::new();
    let segment = WalSegmentRef {
        extent: Extent {
            offset: 8192,
            len: 8192,
        },
        id,
    };
    let mut w = WalWriter::new(segment, 0);
    w.append_records(
        &s,
        &[WalRecord {
            seq: 7,
            payload: b"synced",
        }],
    )
    .unwrap();
    w.sync(&s).unwrap();
    w.append_records(
        &s,
        &[WalRecord {
            seq: 8,
            payload: b"claims seq 7 durable",
        }],
    )
    .unwrap();
    w.seal(&s).unwrap();
    let written = s.live_image()[8192..8192 + w.pos() as usize + HEADER_LEN].to_vec();
    let seeds: Vec<(&str, Vec<u8>)> = vec![
        ("one_record", with_id(&one)),
        ("two_records", with_id(&two)),
        ("writer_records_and_seal", with_id(&written)),
        ("empty_payload", with_id(&frame(id, 0, b""))),
        ("zero_tail", with_id(&[one.clone(), vec![0; 40]].concat())),
        ("foreign_segment", with_id(&frame(id + 1, 5, b"stale"))),
        ("torn", with_id(&one[..one.len() - 3])),
        ("bad_crc", {
            let mut b = with_id(&one);
            let last = b.len() - 1;
            b[last] ^= 1;
            b
        }),
    ];
    for (name, bytes) in seeds {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}
