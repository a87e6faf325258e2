//! Byte-layout constants of the file layer: pages, the superblock area and the slot format.
//! `docs/FORMAT.md` ("File, superblocks and extents") draws the layout these numbers describe.

/// The allocation unit of the file: every extent starts and ends on a page boundary.
pub const PAGE_SIZE: u64 = 4096;

/// Size of one superblock slot (one page).
pub const SLOT_SIZE: usize = 4096;

/// File offsets of superblock slot A and slot B; a superblock of generation `g` lives in
/// slot `g % 2`.
pub const SLOT_OFFSETS: [u64; 2] = [0, 4096];

/// First byte after the superblock pair: extents are allocated from here on.
pub const DATA_START: u64 = 8192;

/// The 8 magic bytes at the start of each slot. The `\r\n` and `\x1a` catch text-mode
/// mangling, the high-bit first byte catches 7-bit transports (the PNG trick).
pub const MAGIC: [u8; 8] = *b"\x89SDB\r\n\x1a\n";

/// The format version this build writes. Version 2 lets the log move into a listed spare
/// segment without a sync (see docs/FORMAT.md, "Spare segment"), which a version-1 reader
/// would take for corruption; the version tells it the file is not its own instead.
pub const FORMAT_VERSION: u32 = 2;

/// The oldest format version this build reads (version 1 files replay under the same rules).
pub const MIN_FORMAT_VERSION: u32 = 1;

/// Field offsets inside a slot (all little-endian).
pub mod slot {
    /// `[u8; 8]` magic.
    pub const MAGIC: usize = 0;
    /// `u32` format version.
    pub const VERSION: usize = 8;
    /// `u32` page size.
    pub const PAGE_SIZE: usize = 12;
    /// `u64` generation.
    pub const GENERATION: usize = 16;
    /// `u64` flushed sequence number.
    pub const FLUSHED_SEQ: usize = 24;
    /// `u64` next WAL segment id.
    pub const NEXT_SEGMENT_ID: usize = 32;
    /// `u64` manifest extent offset (0 = no manifest).
    pub const MANIFEST_OFFSET: usize = 40;
    /// `u64` manifest extent length.
    pub const MANIFEST_EXTENT_LEN: usize = 48;
    /// `u64` manifest byte length.
    pub const MANIFEST_LEN: usize = 56;
    /// `u32` CRC32 of the manifest bytes.
    pub const MANIFEST_CRC: usize = 64;
    /// `u32` number of WAL segments.
    pub const WAL_COUNT: usize = 68;
    /// First WAL segment entry: `u64` offset, `u64` length, `u64` id.
    pub const WAL_SEGMENTS: usize = 72;
    /// Bytes per WAL segment entry.
    pub const WAL_ENTRY_LEN: usize = 24;
    /// `u32` CRC32 of bytes `0..CRC` of the slot.
    pub const CRC: usize = super::SLOT_SIZE - 4;
}

/// The most WAL segments one slot can list.
pub const MAX_WAL_SEGMENTS: usize = (slot::CRC - slot::WAL_SEGMENTS) / slot::WAL_ENTRY_LEN;
