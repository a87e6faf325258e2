//! The write-ahead log: CRC-framed records inside WAL segment extents of the one file.
//! One record = one atomic write batch (or a group-committed run of them).

pub mod format;
mod reader;
mod record;
mod tail;
mod writer;

pub use reader::{ApplyRecord, WalReplayEnd, replay};
pub use record::{Frame, FrameError, WalRecord, decode_frame, decode_record, encode_record};
pub use writer::WalWriter;
