//! Builds an SST image in memory.

use std::sync::Arc;

use crate::engine::{Compression, PrefixExtractor, Result, Seq, ValueKind};

/// How an SST is built.
#[derive(Debug, Clone)]
pub struct SstOptions {
    /// Uncompressed data block size.
    pub block_bytes: usize,
    /// Entries between restart points.
    pub restart_interval: usize,
    /// Per-block compression.
    pub compression: Compression,
    /// Bloom filter bits per key (0 = none).
    pub bloom_bits_per_key: usize,
    /// Partition-prefix filter extractor.
    pub prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
}

/// What the manifest records about an SST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstProperties {
    /// Smallest user key.
    pub min_key: Vec<u8>,
    /// Largest user key.
    pub max_key: Vec<u8>,
    /// Smallest sequence number.
    pub min_seq: Seq,
    /// Largest sequence number.
    pub max_seq: Seq,
    /// Number of entries (tombstones included).
    pub entries: u64,
    /// Number of point tombstones.
    pub tombstones: u64,
    /// Sum of user key and value lengths (uncompressed, logical size).
    pub raw_bytes: u64,
}

/// Accumulates entries in (user key ascending, seq descending) order and produces the SST bytes.
#[derive(Debug)]
pub struct SstWriter {}

impl SstWriter {
    /// An empty writer.
    pub fn new(options: SstOptions) -> Self {
        let _ = options;
        todo!()
    }
    /// Adds the next entry; keys must arrive in (user key asc, seq desc) order.
    pub fn add(&mut self, user_key: &[u8], seq: Seq, kind: ValueKind, value: &[u8]) {
        let _ = (user_key, seq, kind, value);
        todo!()
    }
    /// Bytes the SST would take if finished now (approximate before compression).
    pub fn estimated_len(&self) -> usize {
        todo!()
    }
    /// Number of entries added.
    pub fn entries(&self) -> u64 {
        todo!()
    }
    /// The finished SST image and its properties; `None` if no entry was added.
    pub fn finish(self) -> Result<Option<(Vec<u8>, SstProperties)>> {
        todo!()
    }
}
