//! The WAL record frame.
//!
//! ```text
//! +0   crc      u32  CRC32 of segment_id (u64 LE) ‖ bytes 4..25+len of the frame
//! +4   len      u32  payload length
//! +8   segment  u32  low 32 bits of the segment id
//! +12  synced   u32  segment offset known durable when this frame was written
//! +16  seq      u64  sequence number of the batch (0 in a seal)
//! +24  kind     u8   1 = record, 2 = seal
//! +25  payload  len bytes
//! ```

use super::format::{HEADER_LEN, KIND_RECORD, KIND_SEAL, MAX_PAYLOAD_LEN, field};
use crate::engine::Seq;

/// A decoded WAL record: the sequence number of its batch and the encoded batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalRecord<'a> {
    /// Sequence number of the first operation of the batch.
    pub seq: Seq,
    /// The encoded write batch (opaque to the WAL).
    pub payload: &'a [u8],
}

/// One decoded frame position of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    /// An intact record and its frame length.
    Record {
        /// The record.
        record: WalRecord<'a>,
        /// The writer's durable watermark when the frame was written.
        synced: u64,
        /// Header plus payload bytes.
        frame_len: usize,
    },
    /// An intact seal: the segment ends here.
    Seal {
        /// The writer's durable watermark when the seal was written.
        synced: u64,
    },
    /// Zeroes, the end of the bytes, or a frame of another segment: the log ends cleanly.
    End,
}

/// Why the bytes at a frame position are not an intact frame of this segment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// Fewer bytes than a header remain and they are not all zero.
    #[error("frame header cut short: {available} of {HEADER_LEN} bytes")]
    TruncatedHeader {
        /// Bytes left.
        available: usize,
    },
    /// The payload runs past the end of the segment.
    #[error("frame of {needed} bytes runs past the segment end ({available} bytes left)")]
    Truncated {
        /// Header plus payload length.
        needed: u64,
        /// Bytes left.
        available: usize,
    },
    /// The checksum does not match.
    #[error("frame checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    Checksum {
        /// The CRC in the header.
        stored: u32,
        /// The CRC of the bytes.
        computed: u32,
    },
    /// An intact frame of an unknown kind (written by a newer format).
    #[error("frame of unknown kind {0}")]
    UnknownKind(u8),
    /// An intact seal with a payload.
    #[error("seal frame with a {0}-byte payload")]
    SealWithPayload(u32),
}

/// Appends the frame of `record` for segment `segment_id` to `out`, claiming nothing about
/// durability (`synced` = 0; [`super::WalWriter::append_records`] fills it in).
/// `record.payload` must be at most [`MAX_PAYLOAD_LEN`] bytes.
pub fn encode_record(segment_id: u64, record: &WalRecord<'_>, out: &mut Vec<u8>) {
    encode_frame(segment_id, 0, KIND_RECORD, record, out);
}

/// Appends a frame of `kind` with the durability claim `synced` (saturated to `u32`).
pub(super) fn encode_frame(
    segment_id: u64,
    synced: u64,
    kind: u8,
    record: &WalRecord<'_>,
    out: &mut Vec<u8>,
) {
    let payload = record
        .payload
        .get(..MAX_PAYLOAD_LEN)
        .unwrap_or(record.payload);
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&(segment_id as u32).to_le_bytes());
    out.extend_from_slice(&u32::try_from(synced).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&record.seq.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(payload);
    let crc = frame_crc(segment_id, out.get(start + 4..).unwrap_or_default());
    if let Some(dst) = out.get_mut(start..start + 4) {
        dst.copy_from_slice(&crc.to_le_bytes());
    }
}

fn frame_crc(segment_id: u64, covered: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&segment_id.to_le_bytes());
    h.update(covered);
    h.finalize()
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(src) = bytes.get(at..at + 4) {
        a.copy_from_slice(src);
    }
    u32::from_le_bytes(a)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    if let Some(src) = bytes.get(at..at + 8) {
        a.copy_from_slice(src);
    }
    u64::from_le_bytes(a)
}

/// The payload length a header at the start of `bytes` declares, if a whole header is there.
pub(super) fn declared_frame_len(bytes: &[u8]) -> Option<u64> {
    (bytes.len() >= HEADER_LEN).then(|| HEADER_LEN as u64 + u64::from(u32_at(bytes, field::LEN)))
}

/// Decodes the frame at the start of `bytes` (the rest of a segment of id `segment_id`).
pub fn decode_frame(segment_id: u64, bytes: &[u8]) -> Result<Frame<'_>, FrameError> {
    let head = bytes.get(..HEADER_LEN).unwrap_or(bytes);
    if head.iter().all(|&b| b == 0) {
        return Ok(Frame::End);
    }
    if head.len() < HEADER_LEN {
        return Err(FrameError::TruncatedHeader {
            available: head.len(),
        });
    }
    if u32_at(bytes, field::SEGMENT) != segment_id as u32 {
        return Ok(Frame::End);
    }
    let len = u32_at(bytes, field::LEN);
    let needed = HEADER_LEN as u64 + u64::from(len);
    let frame = usize::try_from(needed)
        .ok()
        .and_then(|n| bytes.get(..n))
        .ok_or(FrameError::Truncated {
            needed,
            available: bytes.len(),
        })?;
    let stored = u32_at(frame, field::CRC);
    let computed = frame_crc(segment_id, frame.get(4..).unwrap_or_default());
    if stored != computed {
        return Err(FrameError::Checksum { stored, computed });
    }
    let synced = u64::from(u32_at(frame, field::SYNCED));
    match frame.get(field::KIND).copied().unwrap_or_default() {
        KIND_RECORD => Ok(Frame::Record {
            record: WalRecord {
                seq: u64_at(frame, field::SEQ),
                payload: frame.get(HEADER_LEN..).unwrap_or_default(),
            },
            synced,
            frame_len: frame.len(),
        }),
        KIND_SEAL if len == 0 => Ok(Frame::Seal { synced }),
        KIND_SEAL => Err(FrameError::SealWithPayload(len)),
        kind => Err(FrameError::UnknownKind(kind)),
    }
}

/// Decodes the record at the start of `bytes`: `Ok(Some((record, frame_len)))`, `Ok(None)` at a
/// clean end of the log (zeroes, a seal, or a frame of another segment id), `Err` for a torn
/// or corrupt frame.
pub fn decode_record(
    segment_id: u64,
    bytes: &[u8],
) -> Result<Option<(WalRecord<'_>, usize)>, FrameError> {
    match decode_frame(segment_id, bytes)? {
        Frame::Record {
            record, frame_len, ..
        } => Ok(Some((record, frame_len))),
        Frame::Seal { .. } | Frame::End => Ok(None),
    }
}
