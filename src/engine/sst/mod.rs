//! Sorted string tables: immutable sorted runs of internal entries stored in one extent.
//!
//! An SST is built whole in memory by [`SstWriter`], written into one extent by the engine,
//! and read by [`SstReader`], which keeps the footer, index and filters in memory and fetches
//! data blocks through the shared [`BlockCache`]. The byte layout is in `format.rs`,
//! `block.rs`, `bloom.rs` and `properties.rs`, and in `docs/FORMAT.md`, "Sorted tables".

mod block;
mod bloom;
mod cache;
mod format;
mod index;
mod iter;
mod properties;
mod reader;
mod writer;

pub use block::encode_block;
pub use cache::BlockCache;
pub use iter::SstIter;
pub use properties::SstProperties;
pub use reader::{SstEntry, SstReader, decode_block};
pub use writer::{SstOptions, SstTail, SstWriter};
