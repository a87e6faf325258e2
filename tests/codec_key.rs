//! The order-preserving engine key: order, round trip, ranges, prefixes and decode errors.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod codec_support;

use codec_support::{partition_key, row_key};
use proptest::prelude::*;
use strata::codec::CodecError;
use strata::codec::key::{self, PartitionPrefixExtractor};
use strata::engine::PrefixExtractor;
use strata::model::{PartitionKey, RowKey};

fn table_id() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..3, Just(u32::MAX - 1), Just(u32::MAX), any::<u32>()]
}

fn tuple() -> impl Strategy<Value = (u32, PartitionKey, RowKey)> {
    (table_id(), partition_key(), row_key())
}

fn in_range(key: &[u8], (start, end): &(Vec<u8>, Vec<u8>)) -> bool {
    start.as_slice() <= key && key < end.as_slice()
}

fn pk(s: &str) -> PartitionKey {
    PartitionKey::new(s).unwrap()
}

fn rk(s: &str) -> RowKey {
    RowKey::new(s).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn key_byte_order_equals_tuple_order(a in tuple(), b in tuple()) {
        let tuple_order = (a.0, a.1.as_str().as_bytes(), a.2.as_str().as_bytes())
            .cmp(&(b.0, b.1.as_str().as_bytes(), b.2.as_str().as_bytes()));
        let key_order = key::encode(a.0, &a.1, &a.2).cmp(&key::encode(b.0, &b.1, &b.2));
        prop_assert_eq!(key_order, tuple_order);
    }

    #[test]
    fn key_decode_inverts_encode(t in tuple()) {
        let bytes = key::encode(t.0, &t.1, &t.2);
        prop_assert_eq!(bytes.len(), key::encoded_len(&t.1, &t.2));
        prop_assert_eq!(key::decode_table_id(&bytes).unwrap(), t.0);
        prop_assert_eq!(key::decode(&bytes).unwrap(), t);
    }

    #[test]
    fn key_ranges_contain_exactly_their_table_and_partition(a in tuple(), b in tuple()) {
        let bytes = key::encode(a.0, &a.1, &a.2);
        prop_assert_eq!(in_range(&bytes, &key::table_range(b.0)), a.0 == b.0);
        prop_assert_eq!(
            in_range(&bytes, &key::partition_range(b.0, &b.1)),
            a.0 == b.0 && a.1 == b.1
        );
        prop_assert_eq!(bytes.starts_with(&key::table_prefix(b.0)), a.0 == b.0);
    }

    #[test]
    fn key_partition_prefix_of_matches_partition_prefix(t in tuple()) {
        let bytes = key::encode(t.0, &t.1, &t.2);
        let prefix = key::partition_prefix(t.0, &t.1);
        prop_assert_eq!(key::partition_prefix_of(&bytes), Some(prefix.as_slice()));
        prop_assert_eq!(PartitionPrefixExtractor.prefix(&bytes), Some(prefix.as_slice()));
        prop_assert_eq!(key::partition_range(t.0, &t.1).0, prefix);
    }

    #[test]
    fn key_successor_is_the_next_possible_key(a in tuple(), b in tuple()) {
        let ka = key::encode(a.0, &a.1, &a.2);
        let kb = key::encode(b.0, &b.1, &b.2);
        let next = key::successor(&ka);
        prop_assert!(ka < next);
        // No valid key lies strictly between a key and its successor.
        prop_assert!(!(ka < kb && kb < next));
        prop_assert_eq!(kb > ka, kb >= next);
    }
}

#[test]
fn key_layout_is_big_endian_id_pk_separator_rk() {
    assert_eq!(
        key::encode(0x0102_0304, &pk("ab"), &rk("c")),
        [1, 2, 3, 4, b'a', b'b', 0, b'c']
    );
    assert_eq!(
        key::encode(key::CATALOG_TABLE_ID, &pk(""), &rk("")),
        [0, 0, 0, 0, 0]
    );
}

#[test]
fn key_partition_key_prefix_of_another_sorts_first() {
    let short = key::encode(1, &pk("a"), &rk("zzz"));
    let long = key::encode(1, &pk("a!"), &rk(""));
    assert!(
        short < long,
        "PartitionKey 'a' must sort before 'a!' whatever the RowKeys"
    );
}

#[test]
fn key_code_point_order_differs_from_utf16_above_bmp_as_documented() {
    // U+FFFD is above the surrogates in UTF-16 but below U+10000 as a code point.
    let bmp = key::encode(1, &pk("\u{FFFD}"), &rk(""));
    let astral = key::encode(1, &pk("\u{10000}"), &rk(""));
    assert!(bmp < astral);
    let utf16_order = "\u{FFFD}".encode_utf16().cmp("\u{10000}".encode_utf16());
    assert_eq!(utf16_order, std::cmp::Ordering::Greater);
}

#[test]
fn key_table_range_of_max_id_is_bounded() {
    let (start, end) = key::table_range(u32::MAX);
    assert_eq!(start, [0xFF; 4]);
    assert_eq!(end, [0xFF; 5]);
    let bytes = key::encode(u32::MAX, &pk("\u{10FFFF}"), &rk("\u{10FFFF}"));
    assert!(in_range(&bytes, &(start, end)));
}

#[test]
fn key_decode_shorter_than_table_id_is_truncated() {
    for len in 0..4 {
        assert_eq!(
            key::decode(&vec![0; len]),
            Err(CodecError::Truncated {
                offset: 0,
                needed: 4 - len
            })
        );
        assert!(key::decode_table_id(&vec![0; len]).is_err());
        assert_eq!(key::partition_prefix_of(&vec![0; len]), None);
    }
}

#[test]
fn key_decode_without_separator_is_rejected() {
    assert_eq!(
        key::decode(b"\0\0\0\x01abc"),
        Err(CodecError::MissingSeparator { offset: 4 })
    );
    assert_eq!(key::partition_prefix_of(b"\0\0\0\x01abc"), None);
}

#[test]
fn key_decode_invalid_utf8_reports_its_offset() {
    assert_eq!(
        key::decode(b"\0\0\0\x01ab\xFF\0r"),
        Err(CodecError::InvalidUtf8 { offset: 6 })
    );
    assert_eq!(
        key::decode(b"\0\0\0\x01p\0r\xC3"),
        Err(CodecError::InvalidUtf8 { offset: 7 })
    );
}

#[test]
fn key_decode_forbidden_character_is_rejected_by_the_model() {
    let bad_pk = key::decode(b"\0\0\0\x01a/b\0r");
    assert!(
        matches!(bad_pk, Err(CodecError::Model { offset: 4, .. })),
        "{bad_pk:?}"
    );
    // A second 0x00 belongs to the RowKey, which must not hold control characters.
    let bad_rk = key::decode(b"\0\0\0\x01p\0r\0s");
    assert!(
        matches!(bad_rk, Err(CodecError::Model { offset: 6, .. })),
        "{bad_rk:?}"
    );
}

#[test]
fn key_decode_oversized_key_is_rejected_by_the_model() {
    let mut bytes = vec![0, 0, 0, 1];
    bytes.extend(std::iter::repeat_n(b'a', 513));
    bytes.push(0);
    assert!(matches!(
        key::decode(&bytes),
        Err(CodecError::Model { offset: 4, .. })
    ));
}

#[test]
fn key_partition_prefix_of_ignores_the_row_key() {
    assert_eq!(
        key::partition_prefix_of(b"\0\0\0\x01p\0r\0\xFF"),
        Some(&b"\0\0\0\x01p\0"[..])
    );
}
