//! Replays WAL segments on open.

use super::record::{Frame, declared_frame_len, decode_frame};
use crate::engine::file::{Storage, WalSegmentRef};
use crate::engine::{Error, Result, Seq};

/// Where replay stopped: the writer continues here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalReplayEnd {
    /// Index into the segment list of the segment to continue in: the last one, or the one
    /// before it when that ended without a seal (see [`replay`]); 0 for an empty list.
    pub segment_index: usize,
    /// Byte offset inside that segment just after the last good record (at a seal, the seal's
    /// own offset: the writer overwrites it).
    pub pos: u64,
}

/// What replay calls for each intact record: `(seq, payload, file offset of its frame)`.
pub type ApplyRecord<'a> = dyn FnMut(Seq, &[u8], u64) -> Result<()> + 'a;

/// Calls `apply(seq, payload, offset)` for every intact record of `segments` in order, with
/// the file offset of the record's frame (for errors about its payload).
///
/// How the end of the log is told from damage (`Error::Corruption` names the file offset of
/// the first bad byte position):
/// - every segment but the last two must end with a seal frame; anything else first (a bad
///   frame, zeroes, a foreign frame) is corruption;
/// - the second to last may instead end like a last segment (the engine's sync-free rotation
///   into the listed spare), provided no intact frame of the last segment claims that part of
///   it was synced: then the log ends there and the last segment is not replayed;
/// - in the last segment the log ends at a seal, zeroes, a frame of another segment, or a torn
///   frame, unless the frame after it (found through the damaged frame's length field) is an
///   intact frame of this segment whose durability watermark lies beyond the damaged one:
///   that proves the damaged frame had been synced, so it is corruption, not a torn tail.
pub fn replay(
    storage: &dyn Storage,
    segments: &[WalSegmentRef],
    apply: &mut ApplyRecord<'_>,
) -> Result<WalReplayEnd> {
    let file_len = storage.len().map_err(|source| Error::Io {
        op: "read file length",
        source,
    })?;
    let mut end = WalReplayEnd {
        segment_index: 0,
        pos: 0,
    };
    for (index, segment) in segments.iter().enumerate() {
        let last = index + 1 == segments.len();
        let bytes = read_segment(storage, segment, file_len)?;
        let mut pos = 0usize;
        loop {
            let rest = bytes.get(pos..).unwrap_or_default();
            let offset = segment.extent.offset + pos as u64;
            let damage = match decode_frame(segment.id, rest) {
                Ok(Frame::Record {
                    record, frame_len, ..
                }) => {
                    apply(record.seq, record.payload, offset)?;
                    pos += frame_len;
                    continue;
                }
                Ok(Frame::Seal { .. }) => None,
                Ok(Frame::End) => Some("the log ends (zeroes or a foreign frame)".to_string()),
                Err(e) => Some(e.to_string()),
            };
            if let Some(what) = damage {
                if synced_frame_follows(segment.id, &bytes, pos) {
                    return Err(Error::Corruption {
                        offset,
                        what: format!(
                            "WAL segment {} at {pos}: {what}, yet a later frame was written after it was synced",
                            segment.id
                        ),
                    });
                }
                let next = segments.get(index + 1);
                let second_to_last = index + 2 == segments.len();
                if let Some(next) = next.filter(|_| second_to_last)
                    && !claims_durability(&read_segment(storage, next, file_len)?, next.id)
                {
                    // The engine moves into the listed spare with an unsynced seal: if the
                    // seal did not reach the disk, nothing after it was acknowledged as
                    // durable either, and the log ends here (its frames are never replayed).
                    return Ok(WalReplayEnd {
                        segment_index: index,
                        pos: pos as u64,
                    });
                }
                if !last {
                    return Err(Error::Corruption {
                        offset,
                        what: format!(
                            "WAL segment {} (not the last) ends at {pos} without a seal: {what}",
                            segment.id
                        ),
                    });
                }
            }
            end = WalReplayEnd {
                segment_index: index,
                pos: pos as u64,
            };
            break;
        }
    }
    Ok(end)
}

/// Reads the part of `segment` that lies inside the file; pages past the end read as absent
/// (a WAL segment is written lazily, so its tail may never have reached the file).
fn read_segment(storage: &dyn Storage, segment: &WalSegmentRef, file_len: u64) -> Result<Vec<u8>> {
    let available = file_len
        .saturating_sub(segment.extent.offset)
        .min(segment.extent.len);
    let len = usize::try_from(available).map_err(|_| Error::Corruption {
        offset: segment.extent.offset,
        what: format!("WAL segment of {available} bytes does not fit in memory"),
    })?;
    let mut bytes = vec![0u8; len];
    storage
        .read_exact_at(&mut bytes, segment.extent.offset)
        .map_err(|source| Error::Io {
            op: "read WAL segment",
            source,
        })?;
    Ok(bytes)
}

/// Whether any intact frame at the start of a segment's `bytes` claims that part of the segment
/// was durable when it was written (its `synced` watermark is past 0): the engine syncs the
/// seal of the segment before first.
fn claims_durability(bytes: &[u8], segment_id: u64) -> bool {
    let mut pos = 0usize;
    while let Some(rest) = bytes.get(pos..) {
        match decode_frame(segment_id, rest) {
            Ok(Frame::Record {
                synced, frame_len, ..
            }) => {
                if synced > 0 {
                    return true;
                }
                pos += frame_len;
            }
            Ok(Frame::Seal { synced }) => return synced > 0,
            Ok(Frame::End) | Err(_) => return false,
        }
    }
    false
}

/// Whether the frame that the (damaged or foreign) header at `pos` says comes next is an intact
/// frame of this segment written after `pos` had been synced.
fn synced_frame_follows(segment_id: u64, bytes: &[u8], pos: usize) -> bool {
    let next = bytes
        .get(pos..)
        .and_then(declared_frame_len)
        .and_then(|len| usize::try_from(len).ok())
        .and_then(|len| pos.checked_add(len));
    let Some(rest) = next.and_then(|n| bytes.get(n..)) else {
        return false;
    };
    match decode_frame(segment_id, rest) {
        Ok(Frame::Record { synced, .. } | Frame::Seal { synced }) => synced > pos as u64,
        Ok(Frame::End) | Err(_) => false,
    }
}
