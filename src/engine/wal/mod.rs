//! The write-ahead log: CRC-framed records inside WAL segment extents of the one file.
//! One record = one atomic write batch (or a group-committed run of them).

mod reader;
mod record;
mod writer;

pub use reader::{WalReplayEnd, replay};
pub use record::{WalRecord, decode_record, encode_record};
pub use writer::WalWriter;
