//! WAL replay under faults: torn tails at every byte, clean ends, mid-log corruption,
//! segment seals, resumed segments, and random crashes against a model.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use proptest::prelude::*;
use strata::engine::Error;
use strata::engine::file::{CrashMode, Extent, Fault, FaultyStorage, Storage, WalSegmentRef};
use strata::engine::wal::format::HEADER_LEN;
use strata::engine::wal::{WalRecord, WalReplayEnd, WalWriter, encode_record, replay};

fn seg(offset: u64, len: u64, id: u64) -> WalSegmentRef {
    WalSegmentRef {
        extent: Extent { offset, len },
        id,
    }
}

fn payload(seq: u64) -> Vec<u8> {
    format!("batch-{seq}-")
        .repeat(1 + (seq % 5) as usize)
        .into_bytes()
}

/// Every replayed record as (seq, payload).
type Replayed = Vec<(u64, Vec<u8>)>;

fn replay_all(
    s: &dyn Storage,
    segs: &[WalSegmentRef],
) -> strata::engine::Result<(Replayed, WalReplayEnd)> {
    let mut got = Vec::new();
    let end = replay(s, segs, &mut |seq, p, _at| {
        got.push((seq, p.to_vec()));
        Ok(())
    })?;
    Ok((got, end))
}

fn append(w: &mut WalWriter, s: &dyn Storage, seq: u64) -> bool {
    let p = payload(seq);
    w.append_records(s, &[WalRecord { seq, payload: &p }])
        .unwrap()
}

fn seqs(got: &[(u64, Vec<u8>)]) -> Vec<u64> {
    got.iter().map(|(s, _)| *s).collect()
}

#[test]
fn wal_torn_last_record_at_every_byte_keeps_exactly_complete_records() {
    let segment = seg(8192, 64 << 10, 1);
    let last = payload(6);
    let frame_len = HEADER_LEN + last.len();
    for keep in 0..frame_len {
        let s = FaultyStorage::new();
        let mut w = WalWriter::new(segment, 0);
        for seq in 1..=5 {
            assert!(append(&mut w, &s, seq));
        }
        w.sync(&s).unwrap();
        s.inject(Fault::TornWrite { keep });
        assert!(
            w.append_records(
                &s,
                &[WalRecord {
                    seq: 6,
                    payload: &last
                }]
            )
            .is_err()
        );
        let (got, end) = replay_all(&s, &[segment]).unwrap();
        assert_eq!(seqs(&got), vec![1, 2, 3, 4, 5], "torn at byte {keep}");
        assert_eq!(got[4].1, payload(5));
        assert_eq!(end.pos, w.pos(), "torn at byte {keep}");
        // The log resumes where replay ended.
        let mut w2 = WalWriter::new(segment, end.pos);
        assert!(append(&mut w2, &s, 6));
        w2.sync(&s).unwrap();
        let (got, _) = replay_all(&s, &[segment]).unwrap();
        assert_eq!(seqs(&got), vec![1, 2, 3, 4, 5, 6]);
    }
}

#[test]
fn wal_zeroed_tail_ends_replay_cleanly() {
    let s = FaultyStorage::new();
    s.write_raw(8192, &vec![0u8; 64 << 10]);
    let segment = seg(8192, 64 << 10, 3);
    let mut w = WalWriter::new(segment, 0);
    append(&mut w, &s, 1);
    append(&mut w, &s, 2);
    let (got, end) = replay_all(&s, &[segment]).unwrap();
    assert_eq!(seqs(&got), vec![1, 2]);
    assert_eq!(
        end,
        WalReplayEnd {
            segment_index: 0,
            pos: w.pos()
        }
    );
}

#[test]
fn wal_other_segment_tail_ends_replay_cleanly() {
    let s = FaultyStorage::new();
    // An earlier segment (id 3) used the same extent and wrote more than the new one will.
    let mut stale = Vec::new();
    for seq in 1..50 {
        encode_record(
            3,
            &WalRecord {
                seq,
                payload: b"old data of a reused extent",
            },
            &mut stale,
        );
    }
    s.write_raw(8192, &stale);
    let segment = seg(8192, 64 << 10, 4);
    let mut w = WalWriter::new(segment, 0);
    append(&mut w, &s, 100);
    append(&mut w, &s, 101);
    let (got, end) = replay_all(&s, &[segment]).unwrap();
    assert_eq!(seqs(&got), vec![100, 101]);
    assert_eq!(end.pos, w.pos());
}

#[test]
fn wal_segment_past_file_end_reads_as_empty() {
    let s = FaultyStorage::new();
    let (got, end) = replay_all(&s, &[seg(1 << 20, 64 << 10, 1)]).unwrap();
    assert!(got.is_empty());
    assert_eq!(
        end,
        WalReplayEnd {
            segment_index: 0,
            pos: 0
        }
    );
    assert_eq!(
        replay_all(&s, &[]).unwrap().1,
        WalReplayEnd {
            segment_index: 0,
            pos: 0
        }
    );
}

/// Two segments: the first filled until it seals itself, the second holding a few records.
fn two_segments(s: &FaultyStorage) -> (Vec<WalSegmentRef>, Vec<u64>, u64) {
    let first = seg(8192, 8192, 1);
    let second = seg(16384, 8192, 2);
    let mut w = WalWriter::new(first, 0);
    let mut seq = 1;
    let mut offsets = Vec::new();
    loop {
        let at = w.pos();
        if !append(&mut w, s, seq) {
            break;
        }
        offsets.push(first.extent.offset + at);
        seq += 1;
    }
    assert!(w.is_sealed());
    let mut w = WalWriter::new(second, 0);
    for _ in 0..3 {
        assert!(append(&mut w, s, seq));
        seq += 1;
        // Frames after a sync claim durability, which makes the first segment's end binding.
        w.sync(s).unwrap();
    }
    (vec![first, second], offsets, seq - 1)
}

#[test]
fn wal_rolls_over_sealed_segments_in_order() {
    let s = FaultyStorage::new();
    let (segs, offsets, last_seq) = two_segments(&s);
    assert!(offsets.len() > 5);
    let (got, end) = replay_all(&s, &segs).unwrap();
    assert_eq!(seqs(&got), (1..=last_seq).collect::<Vec<_>>());
    assert_eq!(end.segment_index, 1);
}

#[test]
fn wal_flipped_bit_in_middle_record_of_earlier_segment_is_corruption_with_offset() {
    let s = FaultyStorage::new();
    let (segs, offsets, _) = two_segments(&s);
    let victim = offsets[offsets.len() / 2];
    s.flip_bit(victim + HEADER_LEN as u64 + 2, 5);
    match replay_all(&s, &segs) {
        Err(Error::Corruption { offset, what }) => assert_eq!(offset, victim, "{what}"),
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn wal_flipped_bit_in_last_record_of_earlier_segment_is_corruption() {
    let s = FaultyStorage::new();
    let (segs, offsets, _) = two_segments(&s);
    let victim = *offsets.last().unwrap();
    s.flip_bit(victim + 1, 0);
    assert!(
        matches!(replay_all(&s, &segs), Err(Error::Corruption { offset, .. }) if offset == victim)
    );
}

/// Segment 1 holding record 1 without a seal, then segment 2 holding record 2. Returns
/// segment 1, its writer, the file offset where its records end, and segment 2's writer.
fn unsealed_first_then_second(s: &FaultyStorage) -> (WalSegmentRef, WalWriter, u64, WalWriter) {
    let first = seg(8192, 8192, 1);
    let mut w = WalWriter::new(first, 0);
    append(&mut w, s, 1);
    let end_of_first = first.extent.offset + w.pos();
    let mut w2 = WalWriter::new(seg(16384, 8192, 2), 0);
    append(&mut w2, s, 2);
    (first, w, end_of_first, w2)
}

#[test]
fn wal_earlier_segment_without_seal_is_corruption() {
    let s = FaultyStorage::new();
    let (first, mut w, end_of_first, mut w2) = unsealed_first_then_second(&s);
    w2.sync(&s).unwrap();
    append(&mut w2, &s, 3);
    let segs = [first, seg(16384, 8192, 2)];
    assert!(
        matches!(replay_all(&s, &segs), Err(Error::Corruption { offset, .. }) if offset == end_of_first)
    );
    // With the seal written the same log is fine.
    w.seal(&s).unwrap();
    assert_eq!(seqs(&replay_all(&s, &segs).unwrap().0), vec![1, 2, 3]);
}

#[test]
fn wal_segment_before_the_last_two_without_seal_is_corruption() {
    let s = FaultyStorage::new();
    let (first, _, end_of_first, mut w2) = unsealed_first_then_second(&s);
    w2.seal(&s).unwrap();
    let segs = [first, seg(16384, 8192, 2), seg(24576, 8192, 3)];
    assert!(
        matches!(replay_all(&s, &segs), Err(Error::Corruption { offset, .. }) if offset == end_of_first)
    );
}

#[test]
fn wal_unsealed_second_to_last_segment_ends_the_log_when_the_last_claims_nothing_durable() {
    // The engine's sync-free rotation: the seal of the segment it left may be lost while
    // buffered frames of the spare it moved into reached the disk.
    let s = FaultyStorage::new();
    let first = seg(8192, 8192, 1);
    let mut w = WalWriter::new(first, 0);
    append(&mut w, &s, 1);
    append(&mut w, &s, 2);
    let end_of_first = w.pos();
    let spare = seg(16384, 8192, 2);
    let mut w2 = WalWriter::fresh(spare);
    append(&mut w2, &s, 3);
    append(&mut w2, &s, 4);
    let (got, end) = replay_all(&s, &[first, spare]).unwrap();
    assert_eq!(seqs(&got), vec![1, 2], "the spare's frames must not replay");
    assert_eq!(
        end,
        WalReplayEnd {
            segment_index: 0,
            pos: end_of_first
        }
    );
    // An unwritten spare after an unsealed segment is the normal shape of a live log.
    let t = FaultyStorage::new();
    let mut w = WalWriter::new(first, 0);
    append(&mut w, &t, 1);
    let (got, end) = replay_all(&t, &[first, spare]).unwrap();
    assert_eq!((seqs(&got), end.segment_index), (vec![1], 0));
}

#[test]
fn wal_flipped_bit_in_synced_record_of_last_segment_is_corruption() {
    let s = FaultyStorage::new();
    let segment = seg(8192, 64 << 10, 1);
    let mut w = WalWriter::new(segment, 0);
    let mut offsets = Vec::new();
    for seq in 1..=4 {
        offsets.push(segment.extent.offset + w.pos());
        append(&mut w, &s, seq);
        w.sync(&s).unwrap();
    }
    s.flip_bit(offsets[1] + HEADER_LEN as u64, 1);
    assert!(
        matches!(replay_all(&s, &segs_of(segment)), Err(Error::Corruption { offset, .. }) if offset == offsets[1])
    );
}

fn segs_of(s: WalSegmentRef) -> [WalSegmentRef; 1] {
    [s]
}

#[test]
fn wal_damaged_unsynced_record_followed_by_unsynced_ones_is_torn_tail() {
    // Pages of one unsynced group can reach the disk out of order: a bad frame followed by a
    // good one written in the same group is a torn tail, not corruption.
    let s = FaultyStorage::new();
    let segment = seg(8192, 64 << 10, 1);
    let mut w = WalWriter::new(segment, 0);
    append(&mut w, &s, 1);
    w.sync(&s).unwrap();
    let second = segment.extent.offset + w.pos();
    let (p2, p3) = (payload(2), payload(3));
    w.append_records(
        &s,
        &[
            WalRecord {
                seq: 2,
                payload: &p2,
            },
            WalRecord {
                seq: 3,
                payload: &p3,
            },
        ],
    )
    .unwrap();
    s.flip_bit(second + HEADER_LEN as u64, 0);
    let (got, end) = replay_all(&s, &[segment]).unwrap();
    assert_eq!(seqs(&got), vec![1]);
    assert_eq!(segment.extent.offset + end.pos, second);
}

#[test]
fn wal_resumed_segment_never_chains_frames_of_the_crashed_run() {
    let s = FaultyStorage::new();
    let segment = seg(8192, 64 << 10, 1);
    let mut w = WalWriter::new(segment, 0);
    append(&mut w, &s, 1);
    w.sync(&s).unwrap();
    let second = segment.extent.offset + w.pos();
    // Records 2..4 of the crashed run: 2 is damaged, 3 and 4 survived.
    let payloads: Vec<Vec<u8>> = (2..=4).map(|_| b"same size".to_vec()).collect();
    let recs: Vec<WalRecord<'_>> = (2..=4)
        .zip(&payloads)
        .map(|(seq, p)| WalRecord { seq, payload: p })
        .collect();
    w.append_records(&s, &recs).unwrap();
    s.flip_bit(second + 3, 0);
    let (got, end) = replay_all(&s, &[segment]).unwrap();
    assert_eq!(seqs(&got), vec![1]);
    // The new run writes a record exactly the size of the damaged one: the old 3 and 4 sit
    // right behind it and must not be replayed.
    let mut w = WalWriter::new(segment, end.pos);
    w.append_records(
        &s,
        &[WalRecord {
            seq: 2,
            payload: b"new  size",
        }],
    )
    .unwrap();
    w.sync(&s).unwrap();
    let (got, _) = replay_all(&s, &[segment]).unwrap();
    assert_eq!(got, vec![(1, payload(1)), (2, b"new  size".to_vec())]);
}

#[test]
fn wal_sealed_last_segment_resumes_over_its_seal() {
    let s = FaultyStorage::new();
    let segment = seg(8192, 64 << 10, 1);
    let mut w = WalWriter::new(segment, 0);
    append(&mut w, &s, 1);
    w.seal(&s).unwrap();
    assert!(!append(&mut w, &s, 2), "a sealed writer takes no records");
    let (got, end) = replay_all(&s, &[segment]).unwrap();
    assert_eq!(seqs(&got), vec![1]);
    assert_eq!(end.pos, w.pos());
    let mut w = WalWriter::new(segment, end.pos);
    append(&mut w, &s, 2);
    assert_eq!(seqs(&replay_all(&s, &[segment]).unwrap().0), vec![1, 2]);
}

#[test]
fn wal_oversized_group_needs_a_bigger_segment() {
    let s = FaultyStorage::new();
    let big = vec![7u8; 10_000];
    let mut w = WalWriter::new(seg(8192, 8192, 1), 0);
    assert!(
        !w.append_records(
            &s,
            &[WalRecord {
                seq: 1,
                payload: &big
            }]
        )
        .unwrap()
    );
    let len = WalWriter::segment_len_for((HEADER_LEN + big.len()) as u64);
    assert_eq!(len, 12288);
    let segment = seg(16384, len, 2);
    let mut w = WalWriter::new(segment, 0);
    assert!(
        w.append_records(
            &s,
            &[WalRecord {
                seq: 1,
                payload: &big
            }]
        )
        .unwrap()
    );
    w.seal(&s).unwrap();
    assert_eq!(seqs(&replay_all(&s, &[segment]).unwrap().0), vec![1]);
}

#[test]
fn wal_disk_full_is_a_clean_error_then_recovers() {
    let s = FaultyStorage::new();
    let segment = seg(8192, 64 << 10, 1);
    let mut w = WalWriter::new(segment, 0);
    append(&mut w, &s, 1);
    s.set_disk_limit(Some(s.len().unwrap()));
    let p = payload(2);
    match w.append_records(
        &s,
        &[WalRecord {
            seq: 2,
            payload: &p,
        }],
    ) {
        Err(Error::Io { source, .. }) => assert_eq!(source.kind(), std::io::ErrorKind::StorageFull),
        other => panic!("expected ENOSPC, got {other:?}"),
    }
    s.set_disk_limit(None);
    assert!(append(&mut w, &s, 2));
    assert_eq!(seqs(&replay_all(&s, &[segment]).unwrap().0), vec![1, 2]);
}

#[derive(Debug, Clone)]
enum Op {
    Append(Vec<usize>),
    Sync,
    Crash(u64, bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop::collection::vec(prop::sample::select(vec![0usize, 16, 100, 600]), 1..4).prop_map(Op::Append),
        3 => Just(Op::Sync),
        1 => (any::<u64>(), any::<bool>()).prop_map(|(seed, pages)| Op::Crash(seed, pages)),
    ]
}

proptest! {
    /// After any crash, replay returns exactly a prefix of the appended records that contains
    /// every synced one, never an error; the log then continues from there.
    #[test]
    fn wal_random_crashes_replay_a_prefix_with_every_synced_record(ops in prop::collection::vec(op(), 1..60)) {
        let s = FaultyStorage::new();
        let seg_len = 8192u64;
        let mut next_offset = 8192u64;
        let mut next_id = 1u64;
        let new_segment = |next_offset: &mut u64, next_id: &mut u64| {
            let sg = seg(*next_offset, seg_len, *next_id);
            *next_offset += seg_len;
            *next_id += 1;
            sg
        };
        // `segments` is what a durable superblock lists; rolling syncs it, like the engine.
        let mut segments = vec![new_segment(&mut next_offset, &mut next_id)];
        let mut w = WalWriter::new(segments[0], 0);
        let mut written: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut synced = 0usize;
        let mut seq = 1u64;
        for op in ops {
            match op {
                Op::Append(sizes) => {
                    let batch: Vec<(u64, Vec<u8>)> = sizes.iter().map(|&n| {
                        let r = (seq, vec![(seq % 251) as u8; n]);
                        seq += 1;
                        r
                    }).collect();
                    let recs: Vec<WalRecord<'_>> = batch.iter().map(|(q, p)| WalRecord { seq: *q, payload: p }).collect();
                    if !w.append_records(&s, &recs).unwrap() {
                        let next = new_segment(&mut next_offset, &mut next_id);
                        segments.push(next);
                        s.sync_data().unwrap();
                        synced = written.len();
                        w = WalWriter::new(next, 0);
                        prop_assert!(w.append_records(&s, &recs).unwrap());
                    }
                    written.extend(batch);
                }
                Op::Sync => {
                    w.sync(&s).unwrap();
                    synced = written.len();
                }
                Op::Crash(seed, pages) => {
                    s.set_crash_mode(if pages { CrashMode::KeepRandomPages { seed } } else { CrashMode::KeepPrefix { seed } });
                    s.crash();
                    let (got, end) = replay_all(&s, &segments).unwrap();
                    prop_assert!(got.len() >= synced, "lost synced records: {} < {}", got.len(), synced);
                    prop_assert!(got.len() <= written.len());
                    prop_assert_eq!(&got[..], &written[..got.len()]);
                    written.truncate(got.len());
                    synced = written.len();
                    seq = written.last().map_or(1, |(q, _)| q + 1);
                    w = WalWriter::new(segments[end.segment_index], end.pos);
                }
            }
        }
    }
}

#[test]
fn wal_writer_encoded_frames_carry_the_durability_watermark() {
    let s = FaultyStorage::new();
    let segment = seg(8192, 64 << 10, 1);
    let mut w = WalWriter::new(segment, 0);
    let mut offsets = Vec::new();
    for seq in 1..=3 {
        offsets.push(segment.extent.offset + w.pos());
        let p = payload(seq);
        let mut frames = Vec::new();
        w.encode(&WalRecord { seq, payload: &p }, &mut frames);
        assert!(w.append(&s, &frames).unwrap());
        w.sync(&s).unwrap();
    }
    s.flip_bit(offsets[1] + HEADER_LEN as u64, 1);
    assert!(
        matches!(replay_all(&s, &[segment]), Err(Error::Corruption { offset, .. }) if offset == offsets[1])
    );
}
