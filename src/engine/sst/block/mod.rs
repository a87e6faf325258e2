//! Data blocks: prefix-compressed internal entries with restart points (LevelDB table format).
//!
//! ```text
//! contents:
//! +---------+---------+-----+-----------+-----+-----------+-----------------+
//! | entry 0 | entry 1 | ... | restart 0 | ... | restart r | restart count r |
//! +---------+---------+-----+-----------+-----+-----------+-----------------+
//!                             u32 LE offsets of entries      u32 LE
//!                             whose key is stored whole
//! entry:
//! shared varint | unshared varint | value_len varint | key[shared..] | seq varint
//! | kind u8 | value
//! ```
//!
//! `shared` is the length of the prefix this key has in common with the previous key of the
//! block; it is 0 at every restart point, so a reader can binary-search the restart points
//! and then scan at most `restart_interval` entries.

mod builder;
mod decoder;
mod entry;

pub use builder::{BlockBuilder, BlockSealer, encode_block};
pub use decoder::{Block, BlockCursor, BlockGet};

#[cfg(test)]
mod tests;
