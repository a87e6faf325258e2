//! Deterministic keys, values and random numbers, identical for every engine.
//!
//! A key is laid out as the table layer lays out an entity key:
//!
//! ```text
//! +-------------+------------------+------+-----------------+
//! | table id    | PartitionKey     | 0x00 | RowKey          |
//! | u32 BE (4)  | 6 ASCII digits   | (1)  | 10 ASCII digits |
//! +-------------+------------------+------+-----------------+
//! ```
//!
//! Entry `i` of a table lives in partition `i / rows_per_partition` with RowKey
//! `2 * (i % rows_per_partition)`; odd RowKeys are never written, so they are absent keys that
//! fall inside live partitions (the partition filter cannot reject them, only the key filter).

/// Bytes of the big-endian table id that starts every key.
pub const TABLE_ID_BYTES: usize = 4;
/// Digits of the PartitionKey.
const PK_DIGITS: usize = 6;
/// Digits of the RowKey.
const RK_DIGITS: usize = 10;
/// Length of every key.
pub const KEY_BYTES: usize = TABLE_ID_BYTES + PK_DIGITS + 1 + RK_DIGITS;
/// Largest partition number that fits the PartitionKey digits.
pub const MAX_PARTITIONS: u64 = 999_999;
/// Bytes of the value pool values are cut from; large enough that values rarely repeat.
const POOL_BYTES: usize = 1 << 20;
/// Values repeat each run of this many random bytes once, so they compress to about half,
/// like LevelDB db_bench's default `compression_ratio` of 0.5.
const POOL_RUN: usize = 16;
/// Bytes of the per-entry header at the start of a value (entry index, version, table id).
const VALUE_HEADER_BYTES: usize = 16;

/// A fixed-seed splitmix64 generator: the same seed gives every engine the same sequence.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`); the modulo bias is below 2^-40 for our bounds.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = usize::try_from(self.below(i as u64 + 1)).unwrap_or(i);
            items.swap(i, j);
        }
    }
}

/// Builds keys and values for tables of `rows_per_partition` rows per partition.
#[derive(Debug)]
pub struct KeySpace {
    rows_per_partition: u64,
    value_bytes: usize,
    pool: Vec<u8>,
}

impl KeySpace {
    /// A key space with `rows_per_partition` rows per partition and values of `value_bytes`.
    pub fn new(rows_per_partition: u64, value_bytes: usize, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed ^ 0x5EED_F00D);
        let mut pool = Vec::with_capacity(POOL_BYTES);
        while pool.len() < POOL_BYTES {
            let run: Vec<u8> = (0..POOL_RUN)
                .map(|_| b' ' + (rng.below(95) as u8))
                .collect();
            pool.extend_from_slice(&run);
            pool.extend_from_slice(&run);
        }
        Self {
            rows_per_partition,
            value_bytes: value_bytes.max(VALUE_HEADER_BYTES),
            pool,
        }
    }

    /// Rows in one partition.
    pub const fn rows_per_partition(&self) -> u64 {
        self.rows_per_partition
    }

    /// The key of entry `index` of `table`.
    pub fn key(&self, table: u32, index: u64) -> [u8; KEY_BYTES] {
        let partition = index / self.rows_per_partition;
        let row = 2 * (index % self.rows_per_partition);
        encode_key(table, partition, row)
    }

    /// A key inside the partition of entry `index` of `table` that is never written.
    pub fn absent_key(&self, table: u32, index: u64) -> [u8; KEY_BYTES] {
        let partition = index / self.rows_per_partition;
        let row = 2 * (index % self.rows_per_partition) + 1;
        encode_key(table, partition, row)
    }

    /// The range `[start, end)` holding exactly the keys of `partition` of `table`.
    pub fn partition_range(&self, table: u32, partition: u64) -> (Vec<u8>, Vec<u8>) {
        let full = encode_key(table, partition, 0);
        let prefix = full.get(..KEY_BYTES - RK_DIGITS).unwrap_or(&full);
        let start = prefix.to_vec();
        let mut end = prefix.to_vec();
        // The separator 0x00 is the last prefix byte; 0x01 there bounds every RowKey.
        if let Some(last) = end.last_mut() {
            *last = 1;
        }
        (start, end)
    }

    /// Writes version `version` of the value of entry `index` of `table` into `out`.
    pub fn value(&self, table: u32, index: u64, version: u32, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&index.to_le_bytes());
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&table.to_le_bytes());
        let body = self.value_bytes - VALUE_HEADER_BYTES;
        let mut mix =
            SplitMix64::new(index ^ (u64::from(version) << 40) ^ (u64::from(table) << 56));
        let span = (self.pool.len() - body) as u64;
        let offset = usize::try_from(mix.below(span)).unwrap_or(0);
        out.extend_from_slice(self.pool.get(offset..offset + body).unwrap_or_default());
    }

    /// Bytes of one value.
    pub const fn value_bytes(&self) -> usize {
        self.value_bytes
    }
}

/// The start of `table`'s keys; `table_start(t + 1)` bounds them.
pub fn table_start(table: u32) -> [u8; TABLE_ID_BYTES] {
    table.to_be_bytes()
}

fn encode_key(table: u32, partition: u64, row: u64) -> [u8; KEY_BYTES] {
    let mut key = [0u8; KEY_BYTES];
    let (id, rest) = key.split_at_mut(TABLE_ID_BYTES);
    id.copy_from_slice(&table.to_be_bytes());
    let (pk, rest) = rest.split_at_mut(PK_DIGITS);
    write_digits(pk, partition);
    let (_separator, rk) = rest.split_at_mut(1);
    write_digits(rk, row);
    key
}

/// Writes `n` as zero-padded decimal filling `out` (callers keep `n` within the width).
fn write_digits(out: &mut [u8], mut n: u64) {
    for digit in out.iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
    }
}
