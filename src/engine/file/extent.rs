//! Extents (runs of whole pages) and the free-extent allocator.

/// The allocation unit of the file.
pub const PAGE_SIZE: u64 = 4096;

/// A run of pages: `offset` and `len` are multiples of [`PAGE_SIZE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Extent {
    /// First byte.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

/// Tracks free page runs of the file (rebuilt on open from what the superblock and manifest
/// reference; never persisted). Allocation is first-fit from the lowest offset so live data
/// drifts toward the front and the tail can be truncated.
#[derive(Debug, Default)]
pub struct ExtentAllocator {}

impl ExtentAllocator {
    /// An allocator for a file of `file_len` bytes in which exactly `used` is allocated
    /// (the superblock area is implicitly used). Overlapping `used` extents are corruption.
    pub fn rebuild(used: &[Extent], file_len: u64) -> Result<Self, String> {
        let _ = (used, file_len);
        todo!()
    }
    /// An extent of at least `len` bytes (rounded up to pages).
    pub fn allocate(&mut self, len: u64) -> Extent {
        let _ = len;
        todo!()
    }
    /// Returns `extent` to the free set, merging with neighbours.
    pub fn free(&mut self, extent: Extent) {
        let _ = extent;
        todo!()
    }
    /// The file length needed to hold every allocated extent (free space at the end excluded).
    pub fn end(&self) -> u64 {
        todo!()
    }
    /// Bytes in free extents below `end()`.
    pub fn free_bytes(&self) -> u64 {
        todo!()
    }
}
