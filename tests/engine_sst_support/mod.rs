//! Shared fixtures of the SST tests: an in-memory `Storage` and SST builders.
#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing)]

use std::io;
use std::sync::{Arc, Mutex};

use strata::engine::file::{Extent, PAGE_SIZE, Storage};
use strata::engine::sst::{BlockCache, SstOptions, SstReader, SstWriter};
use strata::engine::{Compression, PrefixExtractor, Seq, ValueKind};

/// A file held in memory.
#[derive(Debug, Default)]
pub struct MemStorage(pub Mutex<Vec<u8>>);

impl Storage for MemStorage {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let data = self.0.lock().unwrap();
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| data.get(start..end))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut data = self.0.lock().unwrap();
        let start = offset as usize;
        if data.len() < start + buf.len() {
            data.resize(start + buf.len(), 0);
        }
        data[start..start + buf.len()].copy_from_slice(buf);
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.lock().unwrap().len() as u64)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.lock().unwrap().resize(len as usize, 0);
        Ok(())
    }
}

/// Where test SSTs are placed: after the two superblock slots, like a real file.
pub const SST_OFFSET: u64 = 2 * PAGE_SIZE;

/// One internal entry of a model: (key, seq, kind, value).
pub type Entry = (Vec<u8>, Seq, ValueKind, Vec<u8>);

/// Options with tiny blocks so a few entries span many blocks and restart points.
pub fn options(
    block_bytes: usize,
    restart_interval: usize,
    compression: Compression,
) -> SstOptions {
    SstOptions {
        block_bytes,
        restart_interval,
        compression,
        bloom_bits_per_key: 10,
        prefix_extractor: None,
    }
}

/// Builds the image of `entries` (already in internal order).
pub fn build(options: SstOptions, entries: &[Entry]) -> Vec<u8> {
    let mut w = SstWriter::new(options);
    for (k, s, kind, v) in entries {
        w.add(k, *s, *kind, v);
    }
    w.finish().unwrap().unwrap().0
}

/// Stores `image` in a fresh in-memory file at `SST_OFFSET` and opens it.
pub fn open_image(image: &[u8], cache_bytes: usize) -> strata::engine::Result<Arc<SstReader>> {
    let storage = Arc::new(MemStorage::default());
    let extent = Extent {
        offset: SST_OFFSET,
        len: (image.len() as u64).div_ceil(PAGE_SIZE) * PAGE_SIZE,
    };
    storage.write_all_at(image, SST_OFFSET).unwrap();
    storage.set_len(SST_OFFSET + extent.len).unwrap();
    let cache = Arc::new(BlockCache::new(cache_bytes));
    SstReader::open(storage, extent, image.len() as u64, 1, cache).map(Arc::new)
}

/// A prefix extractor for keys `partition/row`: the prefix is `partition/`.
#[derive(Debug)]
pub struct SlashPrefix;

impl PrefixExtractor for SlashPrefix {
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        let i = key.iter().position(|&b| b == b'/')?;
        key.get(..=i)
    }
}
