//! Limits and format constants of the engine core (batches, manifest, levels, WAL sizing).

/// Largest user key accepted by `Engine::write`.
pub const MAX_KEY_BYTES: usize = 16 << 10;
/// Largest value accepted by `Engine::write`.
pub const MAX_VALUE_BYTES: usize = 16 << 20;
/// Largest encoded write batch accepted by `Engine::write`.
pub const MAX_BATCH_BYTES: usize = 64 << 20;

/// Batch operation tag: point delete.
pub const OP_DELETE: u8 = 0;
/// Batch operation tag: put.
pub const OP_PUT: u8 = 1;
/// Batch operation tag: range delete.
pub const OP_DELETE_RANGE: u8 = 2;
/// Bytes of the batch header (operation count).
pub const BATCH_HEADER_BYTES: usize = 4;
/// Smallest encoded operation (tag + empty key length), bounds the count a header may claim.
pub const MIN_OP_BYTES: usize = 5;

/// Number of levels of the LSM tree (L0 .. L6).
pub const NUM_LEVELS: usize = 7;

/// Magic at the start of a manifest ("SMAN" little-endian).
pub const MANIFEST_MAGIC: u32 = u32::from_le_bytes(*b"SMAN");
/// Version of the manifest encoding.
pub const MANIFEST_VERSION: u32 = 1;

/// Bytes of zeroes written per call when the engine clears or pre-writes a range of the file.
pub const ZERO_CHUNK_BYTES: usize = 64 << 10;

/// Size of the first WAL segment; later ones double up to `Options::wal_segment_max_bytes`.
pub const WAL_SEGMENT_MIN_BYTES: u64 = 64 << 10;

/// Most batches one group-commit leader frames into a single WAL append.
pub const MAX_GROUP_BATCHES: usize = 128;
/// Most payload bytes one group-commit leader frames into a single WAL append.
pub const MAX_GROUP_BYTES: usize = 4 << 20;
