//! Data-block codec: `decode_block` inverts `encode_block`, and is total over arbitrary and
//! damaged bytes (typed errors, never a panic).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;

use proptest::prelude::*;
use strata::engine::sst::{SstEntry, decode_block, encode_block};
use strata::engine::{Compression, Error, ValueKind};

fn entry_strategy() -> impl Strategy<Value = SstEntry> {
    (
        prop::collection::vec(prop::sample::select(vec![b'k', b'e', 0u8, 0xff]), 0..12),
        any::<u64>(),
        any::<bool>(),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(key, seq, put, value)| SstEntry {
            key,
            seq,
            kind: if put {
                ValueKind::Put
            } else {
                ValueKind::Delete
            },
            value,
        })
}

/// Blocks a fuzzer should start from: the writer's own output for a few shapes.
fn seed_blocks() -> Vec<Vec<u8>> {
    let entries: Vec<SstEntry> = (0..40u64)
        .map(|i| SstEntry {
            key: format!("partition{}/row{i:04}", i % 4).into_bytes(),
            seq: 1000 - i,
            kind: if i % 7 == 0 {
                ValueKind::Delete
            } else {
                ValueKind::Put
            },
            value: if i % 7 == 0 {
                Vec::new()
            } else {
                format!("value {i} {i} {i}").into_bytes()
            },
        })
        .collect();
    vec![
        encode_block(&entries, 16, Compression::None),
        encode_block(&entries, 1, Compression::None),
        encode_block(&entries, 4, Compression::Zstd(3)),
        encode_block(&entries, 8, Compression::Lz4),
        encode_block(&entries[..1], 16, Compression::None),
        encode_block(&[], 16, Compression::None),
    ]
}

proptest! {
    #[test]
    fn block_decode_inverts_encode(
        entries in prop::collection::vec(entry_strategy(), 0..50),
        restart_interval in 0..20usize,
        codec in 0..3u8,
    ) {
        let compression = match codec {
            0 => Compression::None,
            1 => Compression::Zstd(1),
            _ => Compression::Lz4,
        };
        let block = encode_block(&entries, restart_interval, compression);
        prop_assert_eq!(decode_block(&block).unwrap(), entries);
    }

    #[test]
    fn block_decode_of_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        strata::fuzz_targets::sst_block(&bytes);
    }
}

#[test]
fn block_decode_of_every_truncation_is_corruption() {
    for block in seed_blocks() {
        for len in 0..block.len() {
            let err = decode_block(&block[..len]).unwrap_err();
            assert!(matches!(err, Error::Corruption { .. }), "len {len}: {err}");
        }
    }
}

#[test]
fn block_decode_of_unknown_compression_type_is_corruption() {
    let mut block = encode_block(&[], 16, Compression::None);
    let type_pos = block.len() - 5;
    block[type_pos] = 9;
    let crc = crc32fast::hash(&block[..block.len() - 4]);
    let crc_pos = block.len() - 4;
    block[crc_pos..].copy_from_slice(&crc.to_le_bytes());
    let err = decode_block(&block).unwrap_err();
    assert!(err.to_string().contains("compression type 9"), "{err}");
}

/// Re-seals `block` (contents with a new type byte and CRC) so only the payload is wrong.
fn reseal(contents: &[u8], block_type: u8) -> Vec<u8> {
    let mut block = contents.to_vec();
    block.push(block_type);
    let crc = crc32fast::hash(&block);
    block.extend_from_slice(&crc.to_le_bytes());
    block
}

fn compressible_entries() -> Vec<SstEntry> {
    (0..100u64)
        .map(|i| SstEntry {
            key: format!("key{i:05}").into_bytes(),
            seq: i + 1,
            kind: ValueKind::Put,
            value: vec![b'v'; 60],
        })
        .collect()
}

#[test]
fn lz4_block_is_smaller_than_raw_and_decodes() {
    let entries = compressible_entries();
    let raw = encode_block(&entries, 16, Compression::None);
    let lz4 = encode_block(&entries, 16, Compression::Lz4);
    assert!(
        lz4.len() < raw.len() / 2,
        "lz4 {} raw {}",
        lz4.len(),
        raw.len()
    );
    assert_eq!(lz4[lz4.len() - 5], 2, "LZ4 type byte");
    assert_eq!(decode_block(&lz4).unwrap(), entries);
}

/// Values of pseudo-random bytes: LZ4 cannot save the 12.5% a compressed block must save.
fn incompressible_entries() -> Vec<SstEntry> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..20u64)
        .map(|i| SstEntry {
            key: format!("key{i:05}").into_bytes(),
            seq: i + 1,
            kind: ValueKind::Put,
            value: (0..180)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect(),
        })
        .collect()
}

#[test]
fn lz4_block_that_does_not_shrink_enough_is_stored_raw() {
    let entries = incompressible_entries();
    let raw = encode_block(&entries, 16, Compression::None);
    let lz4 = encode_block(&entries, 16, Compression::Lz4);
    assert_eq!(lz4, raw, "stored raw, byte for byte");
    assert_eq!(lz4[lz4.len() - 5], 0, "raw type byte");
    assert_eq!(decode_block(&lz4).unwrap(), entries);
}

#[test]
fn lz4_block_decodes_with_its_length_prefix() {
    let entries = compressible_entries();
    let lz4 = encode_block(&entries, 16, Compression::Lz4);
    let raw = encode_block(&entries, 16, Compression::None);
    let declared = u32::from_le_bytes(lz4[..4].try_into().unwrap()) as usize;
    assert_eq!(
        declared,
        raw.len() - 5,
        "prefix = uncompressed contents length"
    );
}

#[test]
fn lz4_block_declaring_more_than_lz4_can_expand_is_corruption() {
    let lz4 = encode_block(&compressible_entries(), 16, Compression::Lz4);
    let payload = &lz4[4..lz4.len() - 5];
    let mut contents = ((payload.len() * 255 + 1) as u32).to_le_bytes().to_vec();
    contents.extend_from_slice(payload);
    let err = decode_block(&reseal(&contents, 2)).unwrap_err();
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
    assert!(err.to_string().contains("LZ4 block declares"), "{err}");
}

#[test]
fn lz4_block_with_wrong_declared_length_is_corruption() {
    let lz4 = encode_block(&compressible_entries(), 16, Compression::Lz4);
    let declared = u32::from_le_bytes(lz4[..4].try_into().unwrap());
    for wrong in [declared - 1, declared + 1, 0] {
        let mut contents = wrong.to_le_bytes().to_vec();
        contents.extend_from_slice(&lz4[4..lz4.len() - 5]);
        let err = decode_block(&reseal(&contents, 2)).unwrap_err();
        assert!(matches!(err, Error::Corruption { .. }), "{wrong}: {err}");
    }
}

#[test]
fn lz4_block_with_garbage_payload_is_corruption() {
    let mut contents = 4096u32.to_le_bytes().to_vec();
    contents.extend_from_slice(&[0xff; 40]);
    let err = decode_block(&reseal(&contents, 2)).unwrap_err();
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
}

/// Writes the writer-made seeds of the `sst_block` fuzz corpus (replayed by
/// `tests/fuzz_corpus.rs`); run by hand after a format change.
#[test]
#[ignore = "writes the committed seed corpus"]
fn write_sst_block_seed_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/sst_block");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, block) in seed_blocks().iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i}")), block).unwrap();
    }
}
