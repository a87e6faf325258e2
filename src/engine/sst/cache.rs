//! A bounded cache of decoded data blocks shared by all SSTs.

/// Decoded data blocks keyed by (SST id, block offset), bounded in bytes.
#[derive(Debug)]
pub struct BlockCache {}

impl BlockCache {
    /// A cache holding at most `capacity_bytes` of blocks.
    pub fn new(capacity_bytes: usize) -> Self {
        let _ = capacity_bytes;
        todo!()
    }
}
