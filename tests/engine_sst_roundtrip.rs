//! SST writer/reader round trip against a `BTreeMap` model: gets at any read sequence and
//! iteration from any start key return exactly what was written.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod engine_sst_support;

use std::cmp::Reverse;
use std::collections::BTreeMap;

use engine_sst_support::{Entry, build, open_image, options};
use proptest::prelude::*;
use strata::engine::sst::{SstEntry, SstOptions, SstWriter};
use strata::engine::{Compression, Error, Seq, ValueKind};

type Model = BTreeMap<(Vec<u8>, Reverse<Seq>), (ValueKind, Vec<u8>)>;

fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    // A tiny alphabet makes shared prefixes, repeated keys and prefix-of-key pairs common.
    prop::collection::vec(prop::sample::select(vec![b'a', b'b', 0u8, 0xff]), 0..6)
}

fn entry_strategy() -> impl Strategy<Value = (Vec<u8>, Seq, bool, Vec<u8>)> {
    (
        key_strategy(),
        0..40u64,
        any::<bool>(),
        prop::collection::vec(any::<u8>(), 0..40),
    )
}

fn compression_strategy() -> impl Strategy<Value = Compression> {
    prop_oneof![
        Just(Compression::None),
        Just(Compression::Zstd(1)),
        Just(Compression::Zstd(3)),
        Just(Compression::Lz4)
    ]
}

fn to_entries(model: &Model) -> Vec<Entry> {
    model
        .iter()
        .map(|((k, Reverse(s)), (kind, v))| (k.clone(), *s, *kind, v.clone()))
        .collect()
}

fn to_sst(e: &Entry) -> SstEntry {
    SstEntry {
        key: e.0.clone(),
        seq: e.1,
        kind: e.2,
        value: e.3.clone(),
    }
}

fn model_get(model: &Model, key: &[u8], read_seq: Seq) -> Option<SstEntry> {
    model
        .range((key.to_vec(), Reverse(read_seq))..)
        .next()
        .filter(|((k, _), _)| k == key)
        .map(|((k, Reverse(s)), (kind, v))| SstEntry {
            key: k.clone(),
            seq: *s,
            kind: *kind,
            value: v.clone(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn sst_roundtrip_matches_model(
        raw in prop::collection::vec(entry_strategy(), 1..200),
        block_bytes in prop::sample::select(vec![1usize, 24, 64, 256, 4096]),
        restart_interval in prop::sample::select(vec![1usize, 2, 3, 16]),
        compression in compression_strategy(),
        cache_bytes in prop::sample::select(vec![0usize, 1 << 20]),
        gets in prop::collection::vec((key_strategy(), 0..45u64), 0..60),
        starts in prop::collection::vec(key_strategy(), 0..8),
    ) {
        let mut model = Model::new();
        for (k, s, put, v) in raw {
            let kind = if put { ValueKind::Put } else { ValueKind::Delete };
            let v = if put { v } else { Vec::new() };
            model.insert((k, Reverse(s)), (kind, v));
        }
        let entries = to_entries(&model);
        let image = build(options(block_bytes, restart_interval, compression), &entries);
        let reader = open_image(&image, cache_bytes).unwrap();
        reader.verify().unwrap();

        let props = reader.properties();
        prop_assert_eq!(props.entries, entries.len() as u64);
        prop_assert_eq!(&props.min_key, &entries[0].0);
        prop_assert_eq!(&props.max_key, &entries[entries.len() - 1].0);
        prop_assert_eq!(
            props.tombstones,
            entries.iter().filter(|e| e.2 == ValueKind::Delete).count() as u64
        );

        let all: Vec<SstEntry> = reader.iter(&[]).collect::<Result<_, _>>().unwrap();
        let expected: Vec<SstEntry> = entries.iter().map(to_sst).collect();
        prop_assert_eq!(&all, &expected);
        let mut refilled = Vec::new();
        let mut it = reader.iter(&[]);
        let mut entry = SstEntry { key: b"stale".to_vec(), seq: 0, kind: ValueKind::Put, value: b"stale".to_vec() };
        while it.next_into(&mut entry).unwrap() {
            refilled.push(entry.clone());
        }
        prop_assert_eq!(&refilled, &expected);

        for (key, read_seq) in gets.iter().map(|(k, s)| (k, s)).chain(entries.iter().map(|e| (&e.0, &e.1))) {
            prop_assert_eq!(reader.get(key, *read_seq).unwrap(), model_get(&model, key, *read_seq));
        }
        for start in starts {
            let got: Vec<SstEntry> = reader.iter(&start).collect::<Result<_, _>>().unwrap();
            let want: Vec<SstEntry> =
                entries.iter().filter(|e| e.0 >= start).map(to_sst).collect();
            prop_assert_eq!(got, want);
        }
    }
}

#[test]
fn sst_versions_spanning_blocks_are_found() {
    // One key with many versions in one-entry blocks: the newest visible version may sit
    // several blocks after the one the index points to.
    let entries: Vec<Entry> = (0..50u64)
        .rev()
        .map(|s| {
            (
                b"k".to_vec(),
                s * 2,
                ValueKind::Put,
                s.to_be_bytes().to_vec(),
            )
        })
        .chain(std::iter::once((
            b"l".to_vec(),
            1,
            ValueKind::Put,
            b"x".to_vec(),
        )))
        .collect();
    let reader = open_image(&build(options(1, 1, Compression::None), &entries), 1 << 20).unwrap();
    assert!(reader.data_blocks() > 40);
    for read_seq in 0..120u64 {
        let got = reader.get(b"k", read_seq).unwrap().unwrap();
        assert_eq!(got.seq, (read_seq / 2).min(49) * 2);
    }
    assert_eq!(reader.get(b"l", 0).unwrap(), None);
    assert_eq!(reader.get(b"j", 100).unwrap(), None);
    assert_eq!(reader.get(b"m", 100).unwrap(), None);
}

#[test]
fn sst_writer_without_entries_finishes_empty() {
    let w = SstWriter::new(options(4096, 16, Compression::None));
    assert!(w.finish().unwrap().is_none());
}

fn misordered(first: (&[u8], Seq), second: (&[u8], Seq)) -> Error {
    let mut w = SstWriter::new(options(4096, 16, Compression::None));
    w.add(first.0, first.1, ValueKind::Put, b"v");
    w.add(second.0, second.1, ValueKind::Put, b"v");
    w.finish().unwrap_err()
}

#[test]
fn sst_writer_out_of_order_key_is_rejected() {
    assert!(matches!(
        misordered((b"b", 1), (b"a", 1)),
        Error::InvalidArgument(_)
    ));
}

#[test]
fn sst_writer_ascending_seq_of_one_key_is_rejected() {
    assert!(matches!(
        misordered((b"a", 1), (b"a", 2)),
        Error::InvalidArgument(_)
    ));
    assert!(matches!(
        misordered((b"a", 1), (b"a", 1)),
        Error::InvalidArgument(_)
    ));
}

#[test]
fn sst_zstd_compresses_repetitive_blocks() {
    let entries: Vec<Entry> = (0..2000u32)
        .map(|i| {
            (
                format!("key{i:08}").into_bytes(),
                1,
                ValueKind::Put,
                vec![b'v'; 100],
            )
        })
        .collect();
    let raw = build(options(4096, 16, Compression::None), &entries);
    let zstd = build(options(4096, 16, Compression::Zstd(3)), &entries);
    assert!(
        zstd.len() * 4 < raw.len(),
        "zstd {} vs raw {}",
        zstd.len(),
        raw.len()
    );
    let reader = open_image(&zstd, 0).unwrap();
    reader.verify().unwrap();
    assert_eq!(
        reader.get(b"key00001234", 5).unwrap().unwrap().value,
        vec![b'v'; 100]
    );
}

#[test]
fn sst_estimated_len_tracks_image_len() {
    let mut w = SstWriter::new(SstOptions {
        ..options(4096, 16, Compression::None)
    });
    for i in 0..5000u32 {
        w.add(
            format!("key{i:08}").as_bytes(),
            1,
            ValueKind::Put,
            &[7u8; 50],
        );
    }
    let estimate = w.estimated_len();
    let (image, _) = w.finish().unwrap().unwrap();
    let diff = estimate.abs_diff(image.len());
    assert!(
        diff * 20 < image.len(),
        "estimate {estimate} vs {}",
        image.len()
    );
}

#[test]
fn sst_reader_iter_and_cache_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<strata::engine::sst::SstReader>();
    assert_send_sync::<strata::engine::sst::SstIter>();
    assert_send_sync::<strata::engine::sst::BlockCache>();
    assert_send_sync::<SstWriter>();
}

#[test]
fn sst_entry_larger_than_a_block_roundtrips() {
    let big: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 251) as u8).collect();
    let entries: Vec<Entry> = vec![
        (b"a".to_vec(), 5, ValueKind::Put, b"small".to_vec()),
        (b"b".to_vec(), 4, ValueKind::Put, big.clone()),
        (b"c".to_vec(), 3, ValueKind::Put, vec![0u8; 1 << 20]),
    ];
    for compression in [Compression::None, Compression::Zstd(1)] {
        let reader = open_image(&build(options(4096, 16, compression), &entries), 1 << 20).unwrap();
        reader.verify().unwrap();
        assert_eq!(reader.get(b"b", 9).unwrap().unwrap().value, big);
        assert_eq!(
            reader.get(b"c", 9).unwrap().unwrap().value,
            vec![0u8; 1 << 20]
        );
        let keys: Vec<Vec<u8>> = reader.iter(b"a\0").map(|e| e.unwrap().key).collect();
        assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec()]);
    }
}
