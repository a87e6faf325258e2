//! Builds an SST: in memory as one image, or streamed out in chunks as its blocks are sealed.

use std::sync::Arc;

use super::SstProperties;
use super::block::{BlockBuilder, BlockSealer};
use super::bloom::{bloom_hash, build_bloom};
use super::format::{
    BLOCK_TRAILER_LEN, BLOCK_TYPE_RAW, BLOOM_KEY_SEED, BLOOM_PREFIX_SEED, BlockHandle,
    DEFAULT_PREFIX_BITS_PER_KEY, FOOTER_LEN, Footer, seal_block,
};
use super::index::put_index_entry;
use crate::engine::{Compression, Error, PrefixExtractor, Result, Seq, ValueKind};

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

/// Accumulates entries in (user key ascending, seq descending) order and produces the SST bytes.
///
/// ```
/// use strata::engine::{Compression, ValueKind};
/// use strata::engine::sst::{SstOptions, SstWriter};
/// let mut w = SstWriter::new(SstOptions {
///     block_bytes: 4096,
///     restart_interval: 16,
///     compression: Compression::None,
///     bloom_bits_per_key: 10,
///     prefix_extractor: None,
/// });
/// w.add(b"apple", 7, ValueKind::Put, b"red");
/// w.add(b"apple", 3, ValueKind::Delete, b"");
/// let (image, props) = w.finish().unwrap().unwrap();
/// assert_eq!((props.entries, props.tombstones), (2, 1));
/// assert!(image.len() > 0);
/// ```
///
/// A caller that writes the SST to storage as it goes takes the sealed bytes with
/// [`SstWriter::take_output`] whenever [`SstWriter::buffered_len`] grows large, and ends with
/// [`SstWriter::finish_tail`], so only one chunk of the SST is ever in memory.
pub struct SstWriter {
    options: SstOptions,
    /// Sealed bytes not yet taken; they start at SST offset `taken`.
    out: Vec<u8>,
    /// Bytes already handed out by `take_output`.
    taken: u64,
    block: BlockBuilder,
    /// (separator, handle) of each finished data block.
    index: Vec<u8>,
    /// The last finished block, whose separator waits for the next key.
    pending: Option<BlockHandle>,
    last_key: Vec<u8>,
    last_seq: Seq,
    key_hashes: Vec<u64>,
    prefix_hashes: Vec<u64>,
    last_prefix: Option<Vec<u8>>,
    props: SstProperties,
    sealer: BlockSealer,
    /// The first misuse seen by `add`, reported by `finish`.
    error: Option<String>,
}

impl std::fmt::Debug for SstWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SstWriter")
            .field("options", &self.options)
            .field("len", &self.len())
            .field("entries", &self.props.entries)
            .finish_non_exhaustive()
    }
}

/// The shortest key `s` with `last <= s < next` (byte order), or `last` when none is shorter.
fn separator(last: &[u8], next: &[u8]) -> Vec<u8> {
    let common = last
        .iter()
        .zip(next.iter())
        .take_while(|(a, b)| a == b)
        .count();
    if let (Some(&l), Some(&n)) = (last.get(common), next.get(common))
        && l < 0xff
        && l + 1 < n
    {
        let mut s = last.get(..common).unwrap_or_default().to_vec();
        s.push(l + 1);
        return s;
    }
    last.to_vec()
}

impl SstWriter {
    /// An empty writer.
    pub fn new(options: SstOptions) -> Self {
        Self {
            block: BlockBuilder::new(options.restart_interval),
            options,
            out: Vec::new(),
            taken: 0,
            index: Vec::new(),
            pending: None,
            last_key: Vec::new(),
            last_seq: 0,
            key_hashes: Vec::new(),
            prefix_hashes: Vec::new(),
            last_prefix: None,
            props: SstProperties {
                min_key: Vec::new(),
                max_key: Vec::new(),
                min_seq: Seq::MAX,
                max_seq: 0,
                entries: 0,
                tombstones: 0,
                raw_bytes: 0,
            },
            sealer: BlockSealer::default(),
            error: None,
        }
    }

    /// Adds the next entry; keys must arrive in (user key asc, seq desc) order. An entry out
    /// of order is dropped and makes `finish` fail with `InvalidArgument`.
    pub fn add(&mut self, user_key: &[u8], seq: Seq, kind: ValueKind, value: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let first = self.props.entries == 0;
        // One comparison decides both the order check and whether the key is new.
        let order = if first {
            std::cmp::Ordering::Greater
        } else {
            user_key.cmp(self.last_key.as_slice())
        };
        let new_key = order.is_gt();
        if order.is_lt() || (order.is_eq() && seq >= self.last_seq) {
            self.error = Some(format!(
                "SST entry (key {user_key:?}, seq {seq}) does not follow (key {:?}, seq {})",
                self.last_key, self.last_seq
            ));
            return;
        }
        if let Some(handle) = self.pending.take() {
            let sep = separator(&self.last_key, user_key);
            self.push_index(&sep, handle);
        }
        if new_key {
            self.key_hashes.push(bloom_hash(user_key, BLOOM_KEY_SEED));
            if let Some(extractor) = &self.options.prefix_extractor
                && let Some(prefix) = extractor.prefix(user_key)
                && self.last_prefix.as_deref() != Some(prefix)
            {
                self.prefix_hashes
                    .push(bloom_hash(prefix, BLOOM_PREFIX_SEED));
                self.last_prefix = Some(prefix.to_vec());
            }
            if first {
                self.props.min_key = user_key.to_vec();
            }
            self.last_key.clear();
            self.last_key.extend_from_slice(user_key);
        }
        self.last_seq = seq;
        self.block.add(user_key, seq, kind, value);
        let p = &mut self.props;
        p.entries += 1;
        p.tombstones += u64::from(kind == ValueKind::Delete);
        p.raw_bytes += (user_key.len() + value.len()) as u64;
        p.min_seq = p.min_seq.min(seq);
        p.max_seq = p.max_seq.max(seq);
        if self.block.estimated_len() >= self.options.block_bytes {
            self.flush_block();
        }
    }

    fn push_index(&mut self, sep: &[u8], handle: BlockHandle) {
        put_index_entry(&mut self.index, sep, handle);
    }

    fn flush_block(&mut self) {
        if self.block.is_empty() {
            return;
        }
        let start = self.len();
        self.sealer
            .seal(self.block.finish(), self.options.compression, &mut self.out);
        self.block.reset();
        self.pending = Some(BlockHandle {
            offset: start,
            len: self.len() - start,
        });
    }

    /// Bytes of the SST sealed so far (taken or not).
    fn len(&self) -> u64 {
        self.taken + self.out.len() as u64
    }

    /// Sealed bytes waiting for [`SstWriter::take_output`].
    pub fn buffered_len(&self) -> usize {
        self.out.len()
    }

    /// Hands the sealed bytes not yet taken to `write` with their offset in the SST, then
    /// forgets them (keeping the buffer for the next blocks).
    pub fn take_output<E>(
        &mut self,
        write: impl FnOnce(u64, &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        if self.out.is_empty() {
            return Ok(());
        }
        write(self.taken, &self.out)?;
        self.taken += self.out.len() as u64;
        self.out.clear();
        Ok(())
    }

    /// Bytes the SST would take if finished now (approximate before compression).
    pub fn estimated_len(&self) -> usize {
        let filters = (self.key_hashes.len() + self.prefix_hashes.len())
            * self
                .options
                .bloom_bits_per_key
                .max(DEFAULT_PREFIX_BITS_PER_KEY)
            / 8;
        usize::try_from(self.len()).unwrap_or(usize::MAX)
            + self.block.estimated_len()
            + self.index.len()
            + self.last_key.len()
            + filters
            + self.props.min_key.len()
            + self.last_key.len()
            + 4 * BLOCK_TRAILER_LEN
            + FOOTER_LEN
    }

    /// Number of entries added.
    pub fn entries(&self) -> u64 {
        self.props.entries
    }

    fn put_meta_block(&mut self, contents: &[u8]) -> BlockHandle {
        let start = self.len();
        let at = self.out.len();
        self.out.extend_from_slice(contents);
        seal_block(&mut self.out, at, BLOCK_TYPE_RAW);
        BlockHandle {
            offset: start,
            len: self.len() - start,
        }
    }

    /// The finished SST image and its properties; `None` if no entry was added.
    /// Fails with `InvalidArgument` if part of the output was already taken.
    pub fn finish(self) -> Result<Option<(Vec<u8>, SstProperties)>> {
        match self.finish_tail()? {
            None => Ok(None),
            Some(tail) if tail.offset == 0 => Ok(Some((tail.bytes, tail.props))),
            Some(tail) => Err(Error::InvalidArgument(format!(
                "SST image requested after {} bytes were streamed out",
                tail.offset
            ))),
        }
    }

    /// Seals the last block and the meta blocks; returns the bytes not yet taken, where they
    /// go in the SST, and its properties (`None` if no entry was added).
    pub fn finish_tail(mut self) -> Result<Option<SstTail>> {
        if let Some(what) = self.error.take() {
            return Err(Error::InvalidArgument(what));
        }
        if self.props.entries == 0 {
            return Ok(None);
        }
        self.flush_block();
        if let Some(handle) = self.pending.take() {
            let last = std::mem::take(&mut self.last_key);
            self.push_index(&last, handle);
            self.last_key = last;
        }
        self.props.max_key = self.last_key.clone();
        let mut footer = Footer::default();
        if self.options.bloom_bits_per_key > 0 {
            let filter = build_bloom(&self.key_hashes, self.options.bloom_bits_per_key);
            footer.bloom = self.put_meta_block(&filter);
        }
        if self.options.prefix_extractor.is_some() {
            let bits = match self.options.bloom_bits_per_key {
                0 => DEFAULT_PREFIX_BITS_PER_KEY,
                b => b,
            };
            let filter = build_bloom(&self.prefix_hashes, bits);
            footer.prefix = self.put_meta_block(&filter);
        }
        let index = std::mem::take(&mut self.index);
        footer.index = self.put_meta_block(&index);
        let mut props = Vec::new();
        self.props.encode(&mut props);
        footer.properties = self.put_meta_block(&props);
        footer.encode(&mut self.out);
        Ok(Some(SstTail {
            offset: self.taken,
            len: self.len(),
            bytes: self.out,
            props: self.props,
        }))
    }
}

/// The end of a finished SST: the bytes not yet taken from its writer.
#[derive(Debug)]
pub struct SstTail {
    /// Offset of `bytes` in the SST.
    pub offset: u64,
    /// Length of the whole SST.
    pub len: u64,
    /// The last bytes of the SST.
    pub bytes: Vec<u8>,
    /// Its properties.
    pub props: SstProperties,
}
