//! Extents (runs of whole pages) and the free-extent allocator.

use std::collections::BTreeMap;

use super::format::{DATA_START, PAGE_SIZE};
use crate::engine::{Error, Result};

/// A run of pages: `offset` and `len` are multiples of [`PAGE_SIZE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Extent {
    /// First byte.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

impl Extent {
    /// One past the last byte (saturating, so a corrupt extent cannot overflow).
    #[must_use]
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.len)
    }

    /// Whether the extent is non-empty, page-aligned, past the superblock area and does not
    /// overflow `u64`; anything else read from disk is corruption.
    #[must_use]
    pub const fn is_well_formed(&self) -> bool {
        self.len > 0
            && self.offset.is_multiple_of(PAGE_SIZE)
            && self.len.is_multiple_of(PAGE_SIZE)
            && self.offset >= DATA_START
            && self.offset.checked_add(self.len).is_some()
    }
}

/// Tracks free page runs of the file (rebuilt on open from what the superblock and manifest
/// reference; never persisted). Allocation is first-fit from the lowest offset so live data
/// drifts toward the front and the tail can be truncated.
///
/// Invariants: free runs lie in `DATA_START..end`, are disjoint, never touch each other
/// (neighbours are merged) and never touch `end` (a free run reaching `end` is given back to
/// the tail, which is what lets the file shrink).
#[derive(Debug)]
pub struct ExtentAllocator {
    /// Free runs below `end`: offset → length.
    free: BTreeMap<u64, u64>,
    /// One past the highest allocated byte (at least `DATA_START`).
    end: u64,
    /// Extents of at least `PUNCH_MIN_BYTES` freed since the last `take_unpunched`.
    unpunched: Vec<Extent>,
}

/// Freed extents smaller than this are not worth a hole: they are reused soon.
pub const PUNCH_MIN_BYTES: u64 = 64 << 10;
/// Bound on the extents remembered for punching; past it the oldest are forgotten (they
/// stay free, only not returned to the file system early).
const UNPUNCHED_MAX: usize = 4096;

impl Default for ExtentAllocator {
    fn default() -> Self {
        Self {
            free: BTreeMap::new(),
            end: DATA_START,
            unpunched: Vec::new(),
        }
    }
}

impl ExtentAllocator {
    /// An allocator for a file in which exactly `used` is allocated (the superblock area is
    /// implicitly used). Misaligned, empty or overlapping extents are `Error::Corruption`
    /// naming the offending extent's offset. `used` extents may reach past the current file
    /// length: a WAL segment's pages are only written as records arrive.
    pub fn rebuild(used: &[Extent]) -> Result<Self> {
        let mut sorted = used.to_vec();
        sorted.sort_unstable();
        let mut alloc = Self::default();
        for extent in sorted {
            if !extent.is_well_formed() {
                return Err(Error::Corruption {
                    offset: extent.offset,
                    what: format!(
                        "extent {}+{} is not a page-aligned run after the superblocks",
                        extent.offset, extent.len
                    ),
                });
            }
            if extent.offset < alloc.end {
                return Err(Error::Corruption {
                    offset: extent.offset,
                    what: format!(
                        "extent {}+{} overlaps another extent ending at {}",
                        extent.offset, extent.len, alloc.end
                    ),
                });
            }
            if extent.offset > alloc.end {
                alloc.free.insert(alloc.end, extent.offset - alloc.end);
            }
            alloc.end = extent.end();
        }
        Ok(alloc)
    }

    /// An extent of at least `len` bytes (rounded up to whole pages, at least one page): the
    /// lowest free run that fits, else fresh pages at the end.
    pub fn allocate(&mut self, len: u64) -> Extent {
        let need = len.max(1).div_ceil(PAGE_SIZE).saturating_mul(PAGE_SIZE);
        let fit = self
            .free
            .iter()
            .find(|&(_, &run)| run >= need)
            .map(|(&offset, &run)| (offset, run));
        if let Some((offset, run)) = fit {
            self.free.remove(&offset);
            if run > need {
                self.free.insert(offset + need, run - need);
            }
            return Extent { offset, len: need };
        }
        let extent = Extent {
            offset: self.end,
            len: need,
        };
        self.end = self.end.saturating_add(need);
        extent
    }

    /// Returns `extent` to the free set, merging with neighbours (and with the tail, which
    /// lowers `end()`). Freeing what is not allocated is a bug of the caller: it is caught by
    /// a debug assertion and otherwise ignored, so the free set stays consistent.
    pub fn free(&mut self, extent: Extent) {
        let allocated = self.is_allocated(extent);
        debug_assert!(allocated, "freeing {extent:?}, which is not allocated");
        if !allocated {
            return;
        }
        if extent.len >= PUNCH_MIN_BYTES {
            if self.unpunched.len() >= UNPUNCHED_MAX {
                self.unpunched.remove(0);
            }
            self.unpunched.push(extent);
        }
        let mut start = extent.offset;
        let mut end = extent.end();
        if let Some((&prev, &prev_len)) = self.free.range(..start).next_back()
            && prev + prev_len == start
        {
            self.free.remove(&prev);
            start = prev;
        }
        if let Some(next_len) = self.free.remove(&end) {
            end += next_len;
        }
        if end == self.end {
            self.end = start;
        } else {
            self.free.insert(start, end - start);
        }
    }

    /// Whether every page of `extent` is currently allocated (and it is well formed).
    #[must_use]
    pub fn is_allocated(&self, extent: Extent) -> bool {
        if !extent.is_well_formed() || extent.end() > self.end {
            return false;
        }
        // The free run starting at or before the extent is the only one that could reach into
        // it from the left; any run starting inside it overlaps too.
        let left = self
            .free
            .range(..=extent.offset)
            .next_back()
            .is_some_and(|(&off, &len)| off + len > extent.offset);
        let inside = self
            .free
            .range(extent.offset..extent.end())
            .next()
            .is_some();
        !left && !inside
    }

    /// The file length needed to hold every allocated extent (free space at the end excluded).
    #[must_use]
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Bytes in free extents below `end()`.
    #[must_use]
    pub fn free_bytes(&self) -> u64 {
        self.free.values().sum()
    }

    /// The lowest free run of at least `min` bytes below `end()`: where the next SST of that
    /// size would land, and the size a writer can aim for to fill it exactly.
    #[must_use]
    pub fn lowest_hole(&self, min: u64) -> Option<Extent> {
        self.free
            .iter()
            .find(|&(_, &len)| len >= min)
            .map(|(&offset, &len)| Extent { offset, len })
    }

    /// The free runs below `end()`, lowest first.
    pub fn free_extents(&self) -> impl Iterator<Item = Extent> + '_ {
        self.free
            .iter()
            .map(|(&offset, &len)| Extent { offset, len })
    }

    /// The parts of the extents freed since the last call that are still free and below
    /// `end()`, in runs of at least `PUNCH_MIN_BYTES`: the space to give back to the file
    /// system. Extents reallocated since, or given back to the tail, are left out.
    pub fn take_unpunched(&mut self) -> Vec<Extent> {
        let mut holes = Vec::new();
        for freed in std::mem::take(&mut self.unpunched) {
            // The free run holding `freed` starts at or before it (neighbours are merged).
            let from = self
                .free
                .range(..=freed.offset)
                .next_back()
                .map_or(freed.offset, |(&offset, _)| offset);
            for (&offset, &len) in self.free.range(from..freed.end()) {
                let start = offset.max(freed.offset);
                let end = (offset + len).min(freed.end());
                if end >= start + PUNCH_MIN_BYTES {
                    holes.push(Extent {
                        offset: start,
                        len: end - start,
                    });
                }
            }
        }
        holes.sort_unstable();
        // Pieces of neighbouring frees inside one free run become one hole.
        let mut merged: Vec<Extent> = Vec::with_capacity(holes.len());
        for hole in holes {
            match merged.last_mut() {
                Some(last) if hole.offset <= last.end() => {
                    last.len = last.len.max(hole.end() - last.offset);
                }
                _ => merged.push(hole),
            }
        }
        merged
    }
}
