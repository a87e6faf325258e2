//! Fuzz target: the engine key decoder.

use crate::codec::key;

/// Decoding `data` as an engine key never panics; a key that decodes re-encodes to exactly
/// `data`, lies in its table's and partition's ranges, and its partition prefix is found.
pub fn key_decode(data: &[u8]) {
    if let Some(prefix) = key::partition_prefix_of(data) {
        assert!(
            data.starts_with(prefix),
            "prefix must be a prefix of the key"
        );
    }
    let _ = key::decode_table_id(data);
    let Ok((table_id, pk, rk)) = key::decode(data) else {
        return;
    };
    let bytes = key::encode(table_id, &pk, &rk);
    assert_eq!(
        bytes, data,
        "decode accepted a key that encode does not produce"
    );
    let prefix = key::partition_prefix(table_id, &pk);
    assert_eq!(key::partition_prefix_of(data), Some(prefix.as_slice()));
    for (start, end) in [
        key::table_range(table_id),
        key::partition_range(table_id, &pk),
    ] {
        assert!(
            start.as_slice() <= data && data < end.as_slice(),
            "key outside its range"
        );
    }
    assert!(key::successor(data).as_slice() > data);
}
