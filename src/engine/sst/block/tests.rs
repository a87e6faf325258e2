//! Point lookups inside one block against a brute-force scan of the same entries.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::sync::Arc;

use proptest::prelude::*;

use super::{Block, BlockCursor, BlockGet, encode_block};
use crate::engine::sst::SstEntry;
use crate::engine::{Compression, Seq, ValueKind};

fn block_of(entries: &[SstEntry], restart_interval: usize) -> Block {
    Block::decode(
        &encode_block(entries, restart_interval, Compression::None),
        0,
    )
    .unwrap()
}

fn entry(key: &[u8], seq: Seq) -> SstEntry {
    SstEntry {
        key: key.to_vec(),
        seq,
        kind: ValueKind::Put,
        value: format!("{}@{seq}", String::from_utf8_lossy(key)).into_bytes(),
    }
}

/// What `Block::get` must answer, from a linear scan of the sorted entries.
fn expected_get(entries: &[SstEntry], target: &[u8], read_seq: Seq) -> Option<SstEntry> {
    let first = entries.iter().position(|e| e.key.as_slice() >= target)?;
    entries[first..]
        .iter()
        .take_while(|e| e.key == target)
        .find(|e| e.seq <= read_seq)
        .cloned()
}

fn got(block: &Block, target: &[u8], read_seq: Seq) -> (Option<SstEntry>, BlockGet) {
    let answer = block.get(target, read_seq).unwrap();
    let entry = match &answer {
        BlockGet::Found { seq, kind, value } => Some(SstEntry {
            key: target.to_vec(),
            seq: *seq,
            kind: *kind,
            value: block.value(value.clone()).to_vec(),
        }),
        _ => None,
    };
    (entry, answer)
}

#[test]
fn seek_skips_keys_sharing_more_than_the_matched_prefix() {
    // "abd" shares "ab" with "abc" while only "a" matches target "ac": it must be passed
    // over without comparing its suffix "d" against target's "c".
    let entries = [entry(b"abc", 1), entry(b"abd", 1), entry(b"ac", 1)];
    for interval in [1, 2, 16] {
        let block = Arc::new(block_of(&entries, interval));
        let mut cursor = BlockCursor::new(Arc::clone(&block));
        assert!(cursor.seek(b"ac").unwrap());
        assert_eq!(cursor.key(), b"ac");
        assert!(cursor.seek(b"abca").unwrap());
        assert_eq!(cursor.key(), b"abd");
        assert!(!cursor.seek(b"b").unwrap());
        assert!(!cursor.advance().unwrap());
        assert_eq!(got(&block, b"abd", 1).0, Some(entry(b"abd", 1)));
        assert_eq!(got(&block, b"ab", 1).1, BlockGet::Absent);
        assert_eq!(got(&block, b"ad", 1).1, BlockGet::Continue);
    }
}

#[test]
fn get_of_versions_reaching_the_block_end_continues() {
    let entries = [entry(b"k", 9), entry(b"k", 5)];
    let block = block_of(&entries, 16);
    assert_eq!(got(&block, b"k", 4).1, BlockGet::Continue);
    assert_eq!(got(&block, b"k", 7).0, Some(entry(b"k", 5)));
}

proptest! {
    #[test]
    fn block_get_and_seek_match_a_linear_scan(
        raw in prop::collection::vec(
            (prop::collection::vec(prop::sample::select(vec![b'a', b'b', 0u8, 0xff]), 0..6), 0..20u64),
            0..60,
        ),
        restart_interval in 1..8usize,
        probes in prop::collection::vec(
            (prop::collection::vec(prop::sample::select(vec![b'a', b'b', 0u8, 0xff]), 0..7), 0..25u64),
            1..30,
        ),
    ) {
        let mut entries: Vec<SstEntry> = raw.iter().map(|(k, s)| entry(k, *s)).collect();
        entries.sort_by(|a, b| a.key.cmp(&b.key).then(b.seq.cmp(&a.seq)));
        entries.dedup_by(|a, b| a.key == b.key && a.seq == b.seq);
        let block = Arc::new(block_of(&entries, restart_interval));
        let mut cursor = BlockCursor::new(Arc::clone(&block));
        for (target, read_seq) in probes {
            let (found, answer) = got(&block, &target, read_seq);
            prop_assert_eq!(&found, &expected_get(&entries, &target, read_seq));
            if found.is_none() {
                let more_versions_may_follow = entries.last().is_none_or(|e| e.key <= target);
                prop_assert_eq!(answer == BlockGet::Continue, more_versions_may_follow);
            }
            let want = entries.iter().find(|e| e.key >= target);
            prop_assert_eq!(cursor.seek(&target).unwrap(), want.is_some());
            if let Some(want) = want {
                prop_assert_eq!(cursor.key(), want.key.as_slice());
                prop_assert_eq!((cursor.seq(), cursor.value()), (want.seq, want.value.as_slice()));
            }
        }
    }
}

#[test]
fn long_keys_and_values_take_the_checked_path_and_are_still_found() {
    // Key lengths of 128+ bytes and value lengths of three varint bytes are outside the
    // header fast path: lookups and the cursor must fall back, not misread or skip them.
    let value_lens = [0usize, 1, 127, 128, 16_383, 16_384, 20_000];
    let key_lens = [1usize, 20, 127, 128, 200, 300];
    let mut entries = Vec::new();
    for (i, &key_len) in key_lens.iter().enumerate() {
        for (j, &value_len) in value_lens.iter().enumerate() {
            let mut key = vec![b'k'; key_len];
            key.push(u8::try_from(i * value_lens.len() + j).unwrap());
            let seq = (1u64 << 40) + j as u64;
            entries.push(SstEntry {
                key,
                seq,
                kind: ValueKind::Put,
                value: vec![u8::try_from(j).unwrap(); value_len],
            });
        }
    }
    entries.sort_by(|a, b| a.key.cmp(&b.key).then(b.seq.cmp(&a.seq)));
    for interval in [1, 3, 8, 16] {
        let block = Arc::new(block_of(&entries, interval));
        for e in &entries {
            let (found, _) = got(&block, &e.key, Seq::MAX);
            assert_eq!(found.as_ref(), Some(e), "interval {interval}");
        }
        let mut cursor = BlockCursor::new(Arc::clone(&block));
        for e in &entries {
            assert!(cursor.advance().unwrap());
            assert_eq!((cursor.key(), cursor.seq()), (e.key.as_slice(), e.seq));
            assert_eq!(cursor.value(), e.value.as_slice());
        }
        assert!(!cursor.advance().unwrap());
    }
}
