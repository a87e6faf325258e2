//! Reads an SST from its extent through the block cache.

use std::sync::Arc;

use super::block::{Block, BlockCursor, BlockGet};
use super::bloom::{Bloom, bloom_hash};
use super::format::{
    BLOCK_TRAILER_LEN, BLOCK_TYPE_RAW, BLOOM_KEY_SEED, BLOOM_PREFIX_SEED, BlockHandle, FOOTER_LEN,
    Footer, corruption, open_block,
};
use super::index::BlockIndex;
use super::{BlockCache, SstIter, SstProperties};
use crate::engine::file::{Extent, Storage};
use crate::engine::{Error, Result, Seq, ValueKind};

/// Read buffers larger than this (a huge raw block) are freed rather than kept per thread.
const MAX_REUSED_READ_BUFFER: usize = 256 << 10;

thread_local! {
    static READ_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// One internal entry read from an SST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstEntry {
    /// The user key.
    pub key: Vec<u8>,
    /// Its sequence number.
    pub seq: Seq,
    /// Put or tombstone.
    pub kind: ValueKind,
    /// The value (empty for tombstones).
    pub value: Vec<u8>,
}

impl SstEntry {
    /// The owned entry of a `get_into` hit: the key asked for, the version found, its value.
    pub(crate) fn found(key: &[u8], (seq, kind): (Seq, ValueKind), value: Vec<u8>) -> Self {
        Self {
            key: key.to_vec(),
            seq,
            kind,
            value,
        }
    }
}

/// An open SST: footer, index and filters in memory, data blocks through the cache.
#[derive(Debug)]
pub struct SstReader {
    storage: Arc<dyn Storage>,
    extent: Extent,
    len: u64,
    id: u64,
    cache: Arc<BlockCache>,
    index: BlockIndex,
    bloom: Option<Bloom>,
    prefix: Option<Bloom>,
    properties: SstProperties,
    /// Bytes of index, filters and properties pinned against the cache's budget until drop.
    pinned: u64,
}

impl Drop for SstReader {
    fn drop(&mut self) {
        self.cache.unpin(self.pinned);
    }
}

impl SstReader {
    /// Opens the SST of `len` bytes stored at `extent`; `id` keys its blocks in `cache`.
    /// Every structure read is checksummed and bounds-checked (`Error::Corruption` with offset).
    pub fn open(
        storage: Arc<dyn Storage>,
        extent: Extent,
        len: u64,
        id: u64,
        cache: Arc<BlockCache>,
    ) -> Result<Self> {
        let base = extent.offset;
        if len < FOOTER_LEN as u64 || len > extent.len {
            return Err(corruption(
                base,
                format!(
                    "SST length {len} does not fit extent of {} bytes",
                    extent.len
                ),
            ));
        }
        let footer_start = len - FOOTER_LEN as u64;
        let mut footer_buf = [0u8; FOOTER_LEN];
        read_at(
            &*storage,
            &mut footer_buf,
            base + footer_start,
            "read SST footer",
        )?;
        let footer = Footer::decode(&footer_buf, base + footer_start)?;

        // Metadata blocks are contiguous, in this order, and end at the footer.
        let metas = [footer.bloom, footer.prefix, footer.index, footer.properties];
        let mut end = footer_start;
        for (i, h) in metas.iter().enumerate().rev() {
            let required = i >= 2;
            if h.len == 0 && !required {
                continue;
            }
            if h.len < BLOCK_TRAILER_LEN as u64 || h.end() != Some(end) {
                return Err(corruption(
                    base + footer_start,
                    format!(
                        "SST footer handle {i} ({}, {}) is out of place",
                        h.offset, h.len
                    ),
                ));
            }
            end = h.offset;
        }
        let data_end = end;
        let mut meta = vec![0u8; (footer_start - data_end) as usize];
        read_at(&*storage, &mut meta, base + data_end, "read SST metadata")?;
        let block = |h: BlockHandle| -> Result<&[u8]> {
            let from = (h.offset - data_end) as usize;
            let stored = meta.get(from..from + h.len as usize).unwrap_or_default();
            let (contents, t) = open_block(stored, base + h.offset)?;
            if t != BLOCK_TYPE_RAW {
                return Err(corruption(
                    base + h.offset,
                    format!("SST metadata block has compression type {t}"),
                ));
            }
            Ok(contents)
        };
        let filter = |h: BlockHandle| -> Result<Option<Bloom>> {
            if h.len == 0 {
                return Ok(None);
            }
            Bloom::decode(block(h)?, base + h.offset).map(Some)
        };
        let bloom = filter(footer.bloom)?;
        let prefix = filter(footer.prefix)?;
        let index = BlockIndex::decode(block(footer.index)?, base + footer.index.offset, data_end)?;
        let props_at = base + footer.properties.offset;
        let properties = SstProperties::decode(block(footer.properties)?, props_at)?;
        let last_sep = index.last_separator().unwrap_or_default();
        if properties.max_key.as_slice() != last_sep {
            return Err(corruption(props_at, "SST max key disagrees with its index"));
        }
        // The reader lives in an `Arc`: its struct plus the two counters.
        let pinned = (size_of::<Self>()
            + size_of::<[usize; 2]>()
            + index.heap_bytes()
            + bloom.as_ref().map_or(0, Bloom::heap_bytes)
            + prefix.as_ref().map_or(0, Bloom::heap_bytes)
            + properties.heap_bytes()) as u64;
        cache.pin(pinned);
        Ok(Self {
            storage,
            extent,
            len,
            id,
            cache,
            index,
            bloom,
            prefix,
            properties,
            pinned,
        })
    }

    /// Bytes of index, filters and properties this reader keeps in memory, charged to the
    /// block cache's budget while it is open.
    pub fn pinned_bytes(&self) -> u64 {
        self.pinned
    }

    /// The newest entry for `key` with `seq <= read_seq`, consulting the bloom filter first.
    pub fn get(&self, key: &[u8], read_seq: Seq) -> Result<Option<SstEntry>> {
        let mut value = Vec::new();
        let found = self.get_into(key, read_seq, &mut value)?;
        Ok(found.map(|version| SstEntry::found(key, version, value)))
    }

    /// As [`SstReader::get`], but copying the value into `value` (cleared first; left as it
    /// was when nothing is found) and returning the version's sequence number and kind.
    pub fn get_into(
        &self,
        key: &[u8],
        read_seq: Seq,
        value: &mut Vec<u8>,
    ) -> Result<Option<(Seq, ValueKind)>> {
        if !self.may_contain_key(key) {
            return Ok(None);
        }
        // The versions of `key` may continue past the end of a block into the next.
        for idx in self.find_block(key)..self.index.len() {
            let block = self.block(idx)?;
            match block.get(key, read_seq)? {
                BlockGet::Found {
                    seq,
                    kind,
                    value: range,
                } => {
                    value.clear();
                    value.extend_from_slice(block.value(range));
                    return Ok(Some((seq, kind)));
                }
                BlockGet::Absent => return Ok(None),
                BlockGet::Continue => {}
            }
        }
        Ok(None)
    }

    /// False when the partition-prefix filter proves no key with this prefix is present.
    pub fn may_contain_prefix(&self, prefix: &[u8]) -> bool {
        self.prefix
            .as_ref()
            .is_none_or(|f| f.may_contain(bloom_hash(prefix, BLOOM_PREFIX_SEED)))
    }

    /// False when the whole-key bloom filter proves `key` absent.
    pub fn may_contain_key(&self, key: &[u8]) -> bool {
        self.bloom
            .as_ref()
            .is_none_or(|f| f.may_contain(bloom_hash(key, BLOOM_KEY_SEED)))
    }

    /// Iterates entries in (key asc, seq desc) order from the first with `key >= start`.
    pub fn iter(self: &Arc<Self>, start: &[u8]) -> SstIter {
        SstIter::new(Arc::clone(self), start)
    }

    /// The properties recorded when the SST was written.
    pub fn properties(&self) -> &SstProperties {
        &self.properties
    }

    /// The id keying this SST's blocks in the cache.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The extent holding the SST.
    pub fn extent(&self) -> Extent {
        self.extent
    }

    /// Length of the SST image inside its extent.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: an SST holds at least one entry (kept for the `len` convention).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Number of data blocks.
    pub fn data_blocks(&self) -> usize {
        self.index.len()
    }

    /// The index separator of block `idx`: at least every key of that block.
    pub(super) fn separator(&self, idx: usize) -> Option<&[u8]> {
        self.index.separator(idx)
    }

    /// Index of the first block that may hold `key` (== `data_blocks()` if none).
    pub(super) fn find_block(&self, key: &[u8]) -> usize {
        self.index.find(key)
    }

    /// Data block `idx`, from the cache or read, verified and decoded.
    pub(super) fn block(&self, idx: usize) -> Result<Arc<Block>> {
        self.block_filling(idx, true)
    }

    /// Data block `idx`, from the cache or read; a block read is inserted into the cache only
    /// when `fill_cache` (a one-pass scan such as a compaction input must not evict the
    /// blocks readers keep hot, nor hold megabytes of blocks nobody reads again).
    pub(super) fn block_filling(&self, idx: usize, fill_cache: bool) -> Result<Arc<Block>> {
        let handle = self
            .index
            .handle(idx)
            .ok_or_else(|| Error::InvalidArgument(format!("SST block {idx} does not exist")))?;
        if let Some(b) = self.cache.get(self.id, handle.offset) {
            return Ok(b);
        }
        let at = self.extent.offset + handle.offset;
        // The stored bytes only live until decoded: read them into a per-thread buffer so a
        // cache miss allocates just the decoded block.
        let block = READ_BUFFER.with(|cell| -> Result<Block> {
            let mut stored = cell.take();
            let len = handle.len as usize;
            // Zero only what the buffer grows by: every byte used is overwritten by the read.
            if stored.len() < len {
                stored.resize(len, 0);
            }
            let buf = stored.get_mut(..len).unwrap_or_default();
            let decoded = read_at(&*self.storage, buf, at, "read SST block")
                .and_then(|()| Block::decode(buf, at));
            if stored.capacity() <= MAX_REUSED_READ_BUFFER {
                cell.replace(stored);
            }
            decoded
        })?;
        let block = Arc::new(block);
        if fill_cache {
            self.cache
                .insert(self.id, handle.offset, Arc::clone(&block));
        }
        Ok(block)
    }

    /// Reads every block and checks order, counts and sequence bounds against the
    /// properties: a full integrity check.
    pub fn verify(self: &Arc<Self>) -> Result<()> {
        let mut it = self.iter(&[]);
        let mut count = 0u64;
        let mut tombstones = 0u64;
        let mut prev: Option<(Vec<u8>, Seq)> = None;
        let p = &self.properties;
        while it.advance()? {
            let at = it.block_offset().unwrap_or(self.extent.offset);
            let (key, seq) = (it.key(), it.seq());
            if let Some((pk, ps)) = &prev {
                let ordered = match pk.as_slice().cmp(key) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Equal => *ps > seq,
                    std::cmp::Ordering::Greater => false,
                };
                if !ordered {
                    return Err(corruption(at, "SST entries out of order"));
                }
            }
            let idx = it.block_index();
            let in_block = self.index.separator(idx).is_some_and(|s| key <= s)
                && (idx == 0 || self.index.separator(idx - 1).is_some_and(|s| key >= s));
            if !in_block {
                return Err(corruption(at, "SST entry outside its block's index range"));
            }
            tombstones += u64::from(it.kind() == ValueKind::Delete);
            if seq < p.min_seq || seq > p.max_seq || key < &p.min_key[..] || key > &p.max_key[..] {
                return Err(corruption(at, "SST entry outside the recorded bounds"));
            }
            count += 1;
            match &mut prev {
                Some((pk, ps)) => {
                    pk.clear();
                    pk.extend_from_slice(key);
                    *ps = seq;
                }
                None => prev = Some((key.to_vec(), seq)),
            }
        }
        if count != p.entries || tombstones != p.tombstones {
            return Err(corruption(
                self.extent.offset,
                format!(
                    "SST holds {count} entries and {tombstones} tombstones, properties say {} and {}",
                    p.entries, p.tombstones
                ),
            ));
        }
        Ok(())
    }
}

fn read_at(storage: &dyn Storage, buf: &mut [u8], offset: u64, op: &'static str) -> Result<()> {
    storage.read_exact_at(buf, offset).map_err(|source| {
        if source.kind() == std::io::ErrorKind::UnexpectedEof {
            corruption(offset, format!("the file ends inside an SST ({op})"))
        } else {
            Error::Io { op, source }
        }
    })
}

/// Decodes one stored data block (trailer, checksum, decompression, entries); a total function
/// over arbitrary bytes, used by the fuzz target.
pub fn decode_block(bytes: &[u8]) -> Result<Vec<SstEntry>> {
    let mut cursor = BlockCursor::new(Arc::new(Block::decode(bytes, 0)?));
    let mut out = Vec::new();
    while cursor.advance()? {
        out.push(SstEntry {
            key: cursor.key().to_vec(),
            seq: cursor.seq(),
            kind: cursor.kind(),
            value: cursor.value().to_vec(),
        });
    }
    Ok(out)
}
