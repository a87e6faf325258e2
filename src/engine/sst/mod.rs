//! Sorted string tables: immutable sorted runs of internal entries stored in one extent.

mod cache;
mod reader;
mod writer;

pub use cache::BlockCache;
pub use reader::{SstEntry, SstIter, SstReader, decode_block};
pub use writer::{SstOptions, SstProperties, SstWriter};
