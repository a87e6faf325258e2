//! Writing data blocks: entries, restart array, compression and trailer.

use super::super::SstEntry;
use super::super::format::{
    BLOCK_TYPE_LZ4, BLOCK_TYPE_RAW, BLOCK_TYPE_ZSTD, COMPRESSION_MIN_SAVING_DIV,
    DECODED_LEN_PREFIX, LZ4_ACCELERATION, MAX_DECOMPRESSED_BLOCK, RESTART_ENTRY_LEN, put_varint,
    seal_block,
};
use super::entry::common_prefix_len;
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
            common_prefix_len(key, &self.last_key)
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
/// keeping the zstd context and its scratch buffer across blocks.
#[derive(Default)]
pub struct BlockSealer {
    compressor: Option<(i32, zstd::bulk::Compressor<'static>)>,
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
        let block_type = match compression {
            _ if raw.len() > MAX_DECOMPRESSED_BLOCK => None,
            Compression::None => None,
            Compression::Zstd(level) => self.zstd(raw, level, out).then_some(BLOCK_TYPE_ZSTD),
            Compression::Lz4 => compress_lz4(raw, out).then_some(BLOCK_TYPE_LZ4),
        };
        match block_type {
            Some(block_type) => seal_block(out, start, block_type),
            None => {
                out.truncate(start);
                out.extend_from_slice(raw);
                seal_block(out, start, BLOCK_TYPE_RAW);
            }
        }
    }

    /// Appends `raw` compressed with zstd (length prefix, frame) to `out`; false, leaving
    /// `out` as it was, unless that is worth keeping.
    fn zstd(&mut self, raw: &[u8], level: i32, out: &mut Vec<u8>) -> bool {
        if self.compressor.as_ref().is_none_or(|(l, _)| *l != level) {
            self.compressor = zstd::bulk::Compressor::new(level).ok().map(|c| (level, c));
        }
        let Some((_, c)) = self.compressor.as_mut() else {
            return false;
        };
        // zstd writes a Vec from its start, so the length prefix is added here.
        self.scratch.clear();
        self.scratch
            .reserve(zstd::zstd_safe::compress_bound(raw.len()));
        match c.compress_to_buffer(raw, &mut self.scratch) {
            Ok(n) if n <= budget(raw) => {
                out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
                out.extend_from_slice(self.scratch.get(..n).unwrap_or_default());
                true
            }
            _ => false,
        }
    }
}

/// The largest compressed form of `raw` worth keeping, without the length prefix.
fn budget(raw: &[u8]) -> usize {
    (raw.len() - raw.len() / COMPRESSION_MIN_SAVING_DIV).saturating_sub(DECODED_LEN_PREFIX)
}

/// Appends `raw` compressed with LZ4 (length prefix, block format) to `out`; false, with
/// `out` grown by garbage the caller truncates, unless that is worth keeping.
fn compress_lz4(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let room = DECODED_LEN_PREFIX + budget(raw);
    // Zeroed once per block: LZ4 wants an initialised slice. Capping the output at the
    // budget lets the encoder give up as soon as the block turns out not worth compressing.
    out.resize(start + room, 0);
    let Some(dst) = out.get_mut(start..) else {
        return false;
    };
    match lz4::block::compress_to_buffer(
        raw,
        Some(lz4::block::CompressionMode::FAST(LZ4_ACCELERATION)),
        true,
        dst,
    ) {
        Ok(n) => {
            out.truncate(start + n);
            true
        }
        Err(_) => false,
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
