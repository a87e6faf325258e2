//! Tuning knobs of the engine. Defaults keep peak memory bounded (≤ 64 MiB in total).

use std::sync::Arc;

use super::Error;

/// How far a write must get before `Engine::write` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Acknowledged = on stable storage (the WAL record is fsynced, shared with a group).
    #[default]
    Sync,
    /// Acknowledged = in the OS page cache; a later `Sync` write or `flush` makes it durable.
    Buffered,
}

/// Per-block compression of SST data blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Blocks are stored as they are.
    None,
    /// Blocks are compressed with zstd at the given level when that saves space: the
    /// smallest files, at several times LZ4's CPU cost to write and to read.
    Zstd(i32),
    /// Blocks are compressed with LZ4 when that saves space: cheap to write and to decode.
    Lz4,
}

/// Maps a key to the prefix the partition-prefix filter indexes (e.g. table id + PartitionKey),
/// or `None` when the key has no such prefix. Keeps the engine ignorant of the key layout.
///
/// Prefixes must be self-delimiting: every key that starts with a prefix this returns for some
/// key must map to that same prefix (e.g. a prefix that ends at a terminator byte). A range scan
/// whose keys all start with one prefix relies on it to skip SSTs whose filter lacks the prefix.
pub trait PrefixExtractor: Send + Sync + std::fmt::Debug {
    /// The prefix of `key`, which must itself be a prefix of `key`.
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]>;
}

/// Options of [`crate::engine::Engine::open`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Memory at which the active memtable is frozen and flushed to an SST (entries are
    /// charged the whole arena slot they take: skip-list node, key and value); at most three
    /// exist at once (the active one and two frozen ones waiting).
    pub memtable_bytes: usize,
    /// Memory budget of the shared block cache, which also covers the open SSTs' index and
    /// filters and the memtables' memory (data blocks get what those leave, at least a quarter).
    pub block_cache_bytes: usize,
    /// Uncompressed size of an SST data block.
    pub block_bytes: usize,
    /// Entries between restart points in a data block.
    pub restart_interval: usize,
    /// Target size of one SST produced by compaction.
    pub sst_target_bytes: usize,
    /// Number of L0 SSTs that triggers an L0 → L1 compaction.
    pub l0_compaction_trigger: usize,
    /// Target total size of level 1; each deeper level is `level_size_ratio` times larger.
    /// About the size of a full L0 (`l0_compaction_trigger` flushed memtables), as RocksDB
    /// advises: every L0 → L1 compaction rewrites all of L1 under random keys, so a larger L1
    /// costs more rewriting than it saves deeper down.
    pub l1_target_bytes: u64,
    /// Size ratio between adjacent levels.
    pub level_size_ratio: u64,
    /// Compression of L0 (hot, short-lived) SST blocks.
    pub l0_compression: Compression,
    /// Compression of L1 SST blocks (default LZ4). `None` saves the CPU of compressing L1's
    /// data on every L0 → L1 rewrite, but its larger compaction writes then compete with
    /// `Sync` writers for the disk: 8 concurrent `Sync` writers during compaction ran at
    /// 22–44k writes/s with L1 uncompressed vs 65–75k with LZ4 (session 6, sync_cpu A/B).
    pub l1_compression: Compression,
    /// Compression of SST blocks of level 2 and deeper (default LZ4; `Zstd` for smaller files
    /// at several times the CPU per block read and per compaction).
    pub compression: Compression,
    /// Bits per key of the whole-key bloom filter (0 disables it).
    pub bloom_bits_per_key: usize,
    /// Prefix extractor for the partition-prefix filter (`None` disables it).
    pub prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
    /// Largest WAL segment; segments start small and double up to this.
    pub wal_segment_max_bytes: u64,
    /// Run flushes and compactions on a background thread (tests may turn this off).
    pub background_compaction: bool,
    /// L0 SSTs at which writers are delayed by the bytes they write (at most
    /// `delayed_write_rate`); raised to `l0_compaction_trigger` if below it, as RocksDB does.
    pub l0_slowdown_trigger: usize,
    /// L0 SSTs at which writers stop until compaction brings L0 below it (bounds read cost and
    /// compaction debt); at least `l0_slowdown_trigger`, and raised above
    /// `l0_compaction_trigger` if needed (a stop must wait for a compaction that gets picked).
    pub l0_stop_trigger: usize,
    /// Bytes compaction is behind its level budgets by at which writers are delayed.
    pub pending_compaction_slowdown_bytes: u64,
    /// Bytes per second delayed writers may write at most; the rate shrinks by 0.8 while the
    /// debt keeps growing and recovers as it falls. Not 0.
    pub delayed_write_rate: u64,
    /// Bytes of SST output after which their writeback is started, so a WAL sync never waits
    /// for a whole compaction's dirty pages (0: leave it to the kernel).
    pub bytes_per_sync: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            memtable_bytes: 4 << 20,
            block_cache_bytes: 16 << 20,
            block_bytes: 4 << 10,
            restart_interval: 16,
            sst_target_bytes: 4 << 20,
            l0_compaction_trigger: 4,
            l1_target_bytes: 16 << 20,
            level_size_ratio: 10,
            l0_compression: Compression::None,
            l1_compression: Compression::Lz4,
            compression: Compression::Lz4,
            bloom_bits_per_key: 10,
            prefix_extractor: None,
            wal_segment_max_bytes: 4 << 20,
            background_compaction: true,
            l0_slowdown_trigger: 20,
            l0_stop_trigger: 36,
            pending_compaction_slowdown_bytes: 1 << 30,
            delayed_write_rate: 16 << 20,
            bytes_per_sync: 1 << 20,
        }
    }
}

impl Options {
    /// Checks the fields a typo could make meaningless; the error names the field at fault.
    pub fn validate(&self) -> Result<(), Error> {
        let invalid =
            |name: &'static str, reason: String| Err(Error::InvalidOption { name, reason });
        if self.l0_compaction_trigger == 0 {
            return invalid("l0_compaction_trigger", "must be at least 1".into());
        }
        if self.l0_stop_trigger < self.l0_slowdown_trigger {
            return invalid(
                "l0_stop_trigger",
                format!(
                    "{} is below l0_slowdown_trigger {}",
                    self.l0_stop_trigger, self.l0_slowdown_trigger
                ),
            );
        }
        if self.delayed_write_rate == 0 {
            return invalid("delayed_write_rate", "must be at least 1 byte/s".into());
        }
        Ok(())
    }

    /// The block compression of SSTs written to `level`.
    #[must_use]
    pub fn compression_at(&self, level: usize) -> Compression {
        match level {
            0 => self.l0_compression,
            1 => self.l1_compression,
            _ => self.compression,
        }
    }

    /// The L0 SST count that delays writers, after raising it to the compaction trigger.
    #[must_use]
    pub fn l0_slowdown_at(&self) -> usize {
        self.l0_slowdown_trigger.max(self.l0_compaction_trigger)
    }

    /// The L0 SST count that stops writers: never at or below the compaction trigger.
    #[must_use]
    pub fn l0_stop_at(&self) -> usize {
        self.l0_stop_trigger
            .max(self.l0_slowdown_at())
            .max(self.l0_compaction_trigger.saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_gets_its_own_compression_and_deeper_levels_the_last() {
        let options = Options {
            l0_compression: Compression::None,
            l1_compression: Compression::Zstd(3),
            compression: Compression::Lz4,
            ..Options::default()
        };
        assert_eq!(options.compression_at(0), Compression::None);
        assert_eq!(options.compression_at(1), Compression::Zstd(3));
        assert_eq!(options.compression_at(2), Compression::Lz4);
        assert_eq!(options.compression_at(6), Compression::Lz4);
    }
}
