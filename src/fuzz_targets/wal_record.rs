//! Fuzz target: the WAL frame decoder.

use crate::engine::wal::format::field;
use crate::engine::wal::{Frame, WalRecord, decode_frame, decode_record, encode_record};

/// Decoding `data` as the rest of a WAL segment never panics, for the segment id taken from
/// its first 8 bytes and for a fixed one; an intact record re-encodes to exactly its frame
/// (claims of durability aside), and a record's frame never runs past the input.
pub fn wal_record(data: &[u8]) {
    let id = data
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0, u64::from_le_bytes);
    let body = data.get(8..).unwrap_or_default();
    for segment_id in [id, 1] {
        let decoded = decode_record(segment_id, body);
        let frame = decode_frame(segment_id, body);
        match (decoded, frame) {
            (Ok(Some((record, len))), Ok(Frame::Record { frame_len, .. })) => {
                assert_eq!(len, frame_len);
                let frame = body
                    .get(..len)
                    .expect("a decoded frame lies inside the input");
                let mut again = Vec::new();
                encode_record(segment_id, &record, &mut again);
                // The writer's durability claim is the one field encode_record leaves 0.
                assert_eq!(again.len(), frame.len());
                assert_eq!(
                    again.get(field::LEN..field::SYNCED),
                    frame.get(field::LEN..field::SYNCED)
                );
                assert_eq!(again.get(field::SEQ..), frame.get(field::SEQ..));
                let round = WalRecord {
                    seq: record.seq,
                    payload: record.payload,
                };
                assert_eq!(decode_record(segment_id, &again), Ok(Some((round, len))));
            }
            (Ok(None), Ok(Frame::End | Frame::Seal { .. })) | (Err(_), Err(_)) => {}
            (d, f) => panic!("decode_record {d:?} disagrees with decode_frame {f:?}"),
        }
    }
}
