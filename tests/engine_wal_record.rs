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
