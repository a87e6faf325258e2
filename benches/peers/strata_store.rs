//! strata: the engine with default options, plus the partition-prefix extractor the table
//! layer would install (table id + PartitionKey + `0x00`).

use std::path::Path;
use std::sync::Arc;

use strata::engine::{Compression, Engine, Options, PrefixExtractor, WriteBatch};

use crate::keys::TABLE_ID_BYTES;
use crate::store::{BenchResult, Durability, KvReader, KvStore, StoreOptions};

/// Extracts table id + PartitionKey + separator, the prefix a partition scan shares.
#[derive(Debug)]
struct PartitionPrefix;

impl PrefixExtractor for PartitionPrefix {
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        let rest = key.get(TABLE_ID_BYTES..)?;
        let separator = rest.iter().position(|&byte| byte == 0)?;
        key.get(..TABLE_ID_BYTES + separator + 1)
    }
}

/// strata adapter.
pub struct StrataStore {
    engine: Engine,
}

impl StrataStore {
    /// Creates `dir/strata.db` with default options and a block cache of `options.cache_bytes`.
    pub fn open(dir: &Path, options: StoreOptions) -> BenchResult<Self> {
        let mut engine_options = Options {
            block_cache_bytes: options.cache_bytes,
            prefix_extractor: Some(Arc::new(PartitionPrefix)),
            ..Options::default()
        };
        match options.strata_zstd {
            None => {}
            Some(0) => engine_options.compression = Compression::None,
            Some(level) => engine_options.compression = Compression::Zstd(level),
        }
        Ok(Self {
            engine: Engine::open(dir.join("strata.db"), engine_options)?,
        })
    }
}

impl KvStore for StrataStore {
    fn write(&self, entries: &[(&[u8], &[u8])], durability: Durability) -> BenchResult<()> {
        let mut batch = WriteBatch::new();
        for (key, value) in entries {
            batch.put(key, value);
        }
        let durability = match durability {
            Durability::Sync => strata::engine::Durability::Sync,
            Durability::Buffered => strata::engine::Durability::Buffered,
        };
        self.engine.write(&batch, durability)?;
        Ok(())
    }

    fn reader(&self) -> BenchResult<Box<dyn KvReader + '_>> {
        Ok(Box::new(StrataReader {
            engine: &self.engine,
        }))
    }

    fn sync(&self) -> BenchResult<()> {
        self.engine.flush()?;
        Ok(())
    }

    fn compact(&mut self) -> BenchResult<()> {
        self.engine.compact()?;
        Ok(())
    }
}

/// Reads straight from the engine (each read sees the latest data).
struct StrataReader<'e> {
    engine: &'e Engine,
}

impl KvReader for StrataReader<'_> {
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> BenchResult<bool> {
        match self.engine.get(key)? {
            Some(value) => {
                visit(&value);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn scan(
        &mut self,
        start: &[u8],
        end: &[u8],
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> BenchResult<usize> {
        // The lending cursor: key and value are borrowed in place, no copy per entry.
        let mut cursor = self.engine.range(start..end)?;
        let mut visited = 0;
        while visited < limit && cursor.advance()? {
            visit(cursor.key(), cursor.value());
            visited += 1;
        }
        Ok(visited)
    }
}
