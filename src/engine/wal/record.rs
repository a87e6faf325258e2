//! The WAL record frame.

use crate::engine::Seq;

/// A decoded WAL record: the sequence number of its batch and the encoded batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalRecord<'a> {
    /// Sequence number of the first operation of the batch.
    pub seq: Seq,
    /// The encoded write batch (opaque to the WAL).
    pub payload: &'a [u8],
}

/// Appends the frame of `record` for segment `segment_id` to `out`.
pub fn encode_record(segment_id: u64, record: &WalRecord<'_>, out: &mut Vec<u8>) {
    let _ = (segment_id, record, out);
    todo!()
}

/// Decodes the record at the start of `bytes`: `Ok(Some((record, frame_len)))`, `Ok(None)` at a
/// clean end of the log (zeroes, or a frame of another segment id), `Err` for a torn or corrupt frame.
pub fn decode_record(segment_id: u64, bytes: &[u8]) -> Result<Option<(WalRecord<'_>, usize)>, String> {
    let _ = (segment_id, bytes);
    todo!()
}
