//! Flush and compaction outputs are streamed into their extents chunk by chunk: the bytes must
//! equal the in-memory image, outputs that outgrow their reserved extent must move intact, and
//! the unused end of every extent must go back to the allocator.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::engine::sst::{SstOptions, SstWriter};
use strata::engine::{Compression, Durability, Engine, Options, ValueKind, WriteBatch};

fn sst_options(compression: Compression) -> SstOptions {
    SstOptions {
        block_bytes: 4096,
        restart_interval: 16,
        compression,
        bloom_bits_per_key: 10,
        prefix_extractor: None,
    }
}

/// Incompressible bytes, so SST sizes follow value sizes under every compression.
fn value(i: u64, len: usize) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn sst_writer_streamed_output_is_byte_identical_to_the_image() {
    for compression in [Compression::None, Compression::Lz4] {
        let mut whole = SstWriter::new(sst_options(compression));
        let mut streamed = SstWriter::new(sst_options(compression));
        let mut bytes = Vec::new();
        for i in 0..20_000u64 {
            let key = format!("key{i:08}");
            let v = value(i, (i % 300) as usize);
            whole.add(key.as_bytes(), 5, ValueKind::Put, &v);
            streamed.add(key.as_bytes(), 5, ValueKind::Put, &v);
            // Take at irregular points, as a chunk threshold would.
            if i % 997 == 0 {
                streamed
                    .take_output(|offset, chunk| {
                        assert_eq!(offset, bytes.len() as u64, "chunks arrive in order");
                        bytes.extend_from_slice(chunk);
                        Ok::<(), ()>(())
                    })
                    .unwrap();
                assert_eq!(streamed.buffered_len(), 0);
            }
        }
        let (image, props) = whole.finish().unwrap().unwrap();
        let tail = streamed.finish_tail().unwrap().unwrap();
        assert!(tail.offset > 0, "part of the SST was streamed");
        assert_eq!(tail.offset, bytes.len() as u64);
        bytes.extend_from_slice(&tail.bytes);
        assert_eq!(tail.len, bytes.len() as u64);
        assert_eq!(bytes, image, "{compression:?}");
        assert_eq!(tail.props.entries, props.entries);
    }
}

#[test]
fn sst_writer_refuses_an_image_after_streaming() {
    let mut w = SstWriter::new(sst_options(Compression::None));
    for i in 0..2_000u64 {
        w.add(
            format!("k{i:06}").as_bytes(),
            1,
            ValueKind::Put,
            &value(i, 100),
        );
    }
    w.take_output(|_, _| Ok::<(), ()>(())).unwrap();
    w.add(b"z", 1, ValueKind::Put, b"v");
    assert!(w.finish().is_err());
}

/// Values far larger than the slack reserved past `sst_target_bytes` force outputs to move to
/// larger extents mid-write; every value must survive, the file must check clean and shrink
/// back once everything is compacted.
const KEYS: u64 = 400;

#[test]
fn compaction_outputs_larger_than_their_extent_move_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let options = Options {
        memtable_bytes: 1 << 20,
        // Above the streaming chunk, so a big value can arrive after the first write.
        sst_target_bytes: 512 << 10,
        l1_target_bytes: 2 << 20,
        background_compaction: false,
        ..Options::default()
    };
    let engine = Engine::open(&path, options.clone()).unwrap();
    let big = |i: u64| value(i, if i % 50 == 49 { 600 << 10 } else { 3 << 10 });
    for round in 0..3u64 {
        let mut batch = WriteBatch::new();
        for i in 0..KEYS {
            let key = format!("key{:04}", (i * 7 + round) % KEYS);
            batch.put(key.as_bytes(), &big(i + round));
            if batch.len() == 10 {
                engine.write(&batch, Durability::Buffered).unwrap();
                batch.clear();
            }
        }
        engine.flush().unwrap();
    }
    let expect = |engine: &Engine| {
        for i in 0..KEYS {
            let key = format!("key{:04}", (i * 7 + 2) % KEYS);
            assert_eq!(
                engine.get(key.as_bytes()).unwrap().as_deref(),
                Some(big(i + 2).as_slice()),
                "{key}"
            );
        }
    };
    expect(&engine);
    engine.compact().unwrap();
    expect(&engine);
    engine.close().unwrap();
    assert!(Engine::check(&path).unwrap().is_clean());
    let engine = Engine::open(&path, options).unwrap();
    expect(&engine);
    let file = std::fs::metadata(&path).unwrap().len();
    let live: u64 = (0..KEYS).map(|i| big(i + 2).len() as u64 + 7).sum();
    assert!(
        file <= live + live / 4 + (1 << 20),
        "file {file} B for {live} B of live data: unused extent ends were not freed"
    );
}

/// A flush of a memtable whose SST needs more than the memtable's own estimate (one batch far
/// over `memtable_bytes`) still produces a correct L0 SST.
#[test]
fn flush_of_an_oversized_memtable_is_intact_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let options = Options {
        memtable_bytes: 256 << 10,
        background_compaction: false,
        ..Options::default()
    };
    let engine = Engine::open(&path, options.clone()).unwrap();
    let mut batch = WriteBatch::new();
    for i in 0..3_000u64 {
        batch.put(format!("k{i:06}").as_bytes(), &value(i, 1000));
    }
    engine.write(&batch, Durability::Sync).unwrap();
    engine.flush().unwrap();
    engine.close().unwrap();
    assert!(Engine::check(&path).unwrap().is_clean());
    let engine = Engine::open(&path, options).unwrap();
    for i in (0..3_000u64).step_by(7) {
        assert_eq!(
            engine.get(format!("k{i:06}").as_bytes()).unwrap(),
            Some(value(i, 1000))
        );
    }
}
