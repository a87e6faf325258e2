//! Writing data blocks: entries, restart array, compression and trailer.

use super::super::SstEntry;
use super::super::format::{
    BLOCK_TYPE_LZ4, BLOCK_TYPE_RAW, BLOCK_TYPE_ZSTD, COMPRESSION_MIN_SAVING_DIV,
    DECODED_LEN_PREFIX, MAX_DECOMPRESSED_BLOCK, RESTART_ENTRY_LEN, put_varint, seal_block,
};
use crate::engine::{Compression, Seq, ValueKind};

/// Accumulates the entries of one data block.
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    since_restart: usize,
    restart_interval: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    /// An empty block with a restart point every `restart_interval` entries (at least 1).
    pub fn new(restart_interval: usize) -> Self {
        Self {
            buf: Vec::new(),
            restarts: Vec::new(),
            since_restart: 0,
            restart_interval: restart_interval.max(1),
            last_key: Vec::new(),
        }
    }

    /// True when no entry was added since the last reset.
    pub fn is_empty(&self) -> bool {
        self.restarts.is_empty()
    }

    /// Size of the contents if finished now.
    pub fn estimated_len(&self) -> usize {
        self.buf.len() + (self.restarts.len() + 1) * RESTART_ENTRY_LEN
    }

    /// Appends an entry; the caller guarantees internal order.
    pub fn add(&mut self, key: &[u8], seq: Seq, kind: ValueKind, value: &[u8]) {
        let shared = if self.since_restart == 0 || self.restarts.is_empty() {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        } else {
            key.iter()
                .zip(self.last_key.iter())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let delta = key.get(shared..).unwrap_or_default();
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, delta.len() as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(delta);
        put_varint(&mut self.buf, seq);
        self.buf.push(kind as u8);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(delta);
        self.since_restart += 1;
        if self.since_restart >= self.restart_interval {
            self.since_restart = 0;
        }
    }

    /// Appends the restart array and returns the finished contents; `reset` before reuse.
    pub fn finish(&mut self) -> &[u8] {
        for r in &self.restarts {
            self.buf.extend_from_slice(&r.to_le_bytes());
        }
        self.buf
            .extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        &self.buf
    }

    /// Empties the builder for the next block.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.since_restart = 0;
        self.last_key.clear();
    }
}

/// Turns finished block contents into a stored block (optionally compressed, with trailer),
/// keeping the zstd context, the LZ4 hash table and the scratch buffer across blocks.
#[derive(Default)]
pub struct BlockSealer {
    compressor: Option<(i32, zstd::bulk::Compressor<'static>)>,
    /// Reused so an LZ4 block costs a clear of the table, not an allocation of it.
    lz4_table: Option<Box<lz4_flex::block::CompressTable>>,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for BlockSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockSealer").finish_non_exhaustive()
    }
}

impl BlockSealer {
    /// Appends `raw` contents to `out` as a stored block: compressed when asked and when that
    /// saves at least 12.5%, raw otherwise; then the trailer.
    pub fn seal(&mut self, raw: &[u8], compression: Compression, out: &mut Vec<u8>) {
        let start = out.len();
        let compressed = match compression {
            _ if raw.len() > MAX_DECOMPRESSED_BLOCK => None,
            Compression::None => None,
            Compression::Zstd(level) => self.zstd(raw, level).map(|n| (n, BLOCK_TYPE_ZSTD)),
            Compression::Lz4 => self.lz4(raw).map(|n| (n, BLOCK_TYPE_LZ4)),
        };
        match compressed {
            Some((n, block_type)) => {
                out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
                out.extend_from_slice(self.scratch.get(..n).unwrap_or_default());
                seal_block(out, start, block_type);
            }
            None => {
                out.extend_from_slice(raw);
                seal_block(out, start, BLOCK_TYPE_RAW);
            }
        }
    }

    /// The largest compressed form of `raw` worth keeping.
    fn budget(raw: &[u8]) -> usize {
        (raw.len() - raw.len() / COMPRESSION_MIN_SAVING_DIV).saturating_sub(DECODED_LEN_PREFIX)
    }

    /// Compresses `raw` with zstd into `scratch`; its length when worth keeping.
    fn zstd(&mut self, raw: &[u8], level: i32) -> Option<usize> {
        if self.compressor.as_ref().is_none_or(|(l, _)| *l != level) {
            self.compressor = zstd::bulk::Compressor::new(level).ok().map(|c| (level, c));
        }
        let (_, c) = self.compressor.as_mut()?;
        // zstd writes a Vec from its start, so the length prefix is added by the caller.
        self.scratch.clear();
        self.scratch
            .reserve(zstd::zstd_safe::compress_bound(raw.len()));
        c.compress_to_buffer(raw, &mut self.scratch)
            .ok()
            .filter(|&n| n <= Self::budget(raw))
    }

    /// Compresses `raw` with LZ4 (block format) into `scratch`; its length when worth keeping.
    fn lz4(&mut self, raw: &[u8]) -> Option<usize> {
        let bound = lz4_flex::block::get_maximum_output_size(raw.len());
        // Zero only what the scratch grows by: LZ4 overwrites what it reports as written.
        if self.scratch.len() < bound {
            self.scratch.resize(bound, 0);
        }
        let scratch = self.scratch.get_mut(..bound).unwrap_or_default();
        let table = self.lz4_table.get_or_insert_with(Box::default);
        lz4_flex::block::compress_into_with_table(raw, scratch, table)
            .ok()
            .filter(|&n| n <= Self::budget(raw))
    }
}

/// Encodes `entries` (in any order) as one stored data block; with [`decode_block`] the
/// inverse, used by tests and the fuzz target.
///
/// [`decode_block`]: super::super::decode_block
pub fn encode_block(
    entries: &[SstEntry],
    restart_interval: usize,
    compression: Compression,
) -> Vec<u8> {
    let mut builder = BlockBuilder::new(restart_interval);
    for e in entries {
        builder.add(&e.key, e.seq, e.kind, &e.value);
    }
    let mut out = Vec::new();
    BlockSealer::default().seal(builder.finish(), compression, &mut out);
    out
}
