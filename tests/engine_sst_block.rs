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
        encode_block(&entries[..1], 16, Compression::None),
        encode_block(&[], 16, Compression::None),
    ]
}

proptest! {
    #[test]
    fn block_decode_inverts_encode(
        entries in prop::collection::vec(entry_strategy(), 0..50),
        restart_interval in 0..20usize,
        zstd in any::<bool>(),
    ) {
        let compression = if zstd { Compression::Zstd(1) } else { Compression::None };
        let block = encode_block(&entries, restart_interval, compression);
        prop_assert_eq!(decode_block(&block).unwrap(), entries);
    }

    #[test]
    fn block_decode_of_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        strata::fuzz_targets::sst_block::sst_block(&bytes);
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

/// Replays the committed seed corpus of the `sst_block` fuzz target.
#[test]
fn block_fuzz_corpus_replays_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/sst_block");
    if std::env::var_os("STRATA_WRITE_SST_CORPUS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (i, block) in seed_blocks().iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{i}")), block).unwrap();
        }
    }
    let mut replayed = 0;
    for file in std::fs::read_dir(&dir).unwrap() {
        strata::fuzz_targets::sst_block::sst_block(&std::fs::read(file.unwrap().path()).unwrap());
        replayed += 1;
    }
    assert!(replayed >= 5, "only {replayed} corpus files");
}
