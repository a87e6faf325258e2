//! The single file: the I/O trait under the engine, its real and fault-injecting
//! implementations, the superblock pair and the extent allocator.

mod extent;
mod faulty;
pub mod format;
mod real;
mod superblock;

pub use extent::{Extent, ExtentAllocator};
pub use faulty::{CrashMode, Fault, FaultyStorage};
pub use format::{DATA_START, PAGE_SIZE};
pub use real::{FileStorage, OpenMode};
pub use superblock::{
    ExtentRef, SlotError, Superblock, WalSegmentRef, read_superblock, write_superblock,
};

use std::io;
use std::path::Path;

use crate::engine::limits::ZERO_CHUNK_BYTES;

/// Positional I/O on the one database file. Everything the engine does to disk goes through
/// this trait so tests can inject torn writes, failed syncs, full disks and crashes.
pub trait Storage: Send + Sync + std::fmt::Debug {
    /// Fills `buf` from `offset`; reading past the end is an `UnexpectedEof` error.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset`, growing the file if needed.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes every completed write (and the file length) durable.
    fn sync_data(&self) -> io::Result<()>;
    /// Writes all of `buf` at `offset` and makes at least that write durable (with the file
    /// length), as `write_all_at` then `sync_data` does. On Linux one `RWF_DSYNC` write: it
    /// waits for its own pages only, not for the dirty pages of a compaction in the same file.
    fn write_all_at_durable(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.write_all_at(buf, offset)?;
        self.sync_data()
    }
    /// Writes whole pages (`pages.len()` and `offset` multiples of [`PAGE_SIZE`]) over blocks
    /// the file already holds and makes them durable, as `write_all_at_durable` does. The real
    /// storage writes them past the page cache (`O_DIRECT | O_DSYNC`), which costs the kernel
    /// less than a synced buffered write; it needs `pages` page-aligned in memory and falls
    /// back to `write_all_at_durable` when it is not or the file system refuses direct I/O.
    /// Any cached copy of the range is written back first and dropped, so later reads and
    /// buffered writes see these bytes.
    fn write_pages_durable(&self, pages: &[u8], offset: u64) -> io::Result<()> {
        self.write_all_at_durable(pages, offset)
    }
    /// The current file length.
    fn len(&self) -> io::Result<u64>;
    /// Whether the file is empty (a fresh database).
    fn is_empty(&self) -> io::Result<bool> {
        self.len().map(|len| len == 0)
    }
    /// Grows or truncates the file.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Gives the pages of `offset..offset + len` back to the file system (they read as zeros
    /// afterwards; the file length is unchanged). Only ever asked for free space; storages
    /// that cannot do it keep the pages.
    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Ok(())
    }
    /// Starts writing back dirty pages of `len` bytes from `offset` (`len` 0: to the end of
    /// the file) without waiting for them, so a later sync has less to write. Only a hint:
    /// durability still comes from `sync_data`; storages without such a call do nothing.
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Ok(())
    }
    /// Writes zeroes over `len` bytes from `offset` ahead of durable writes that will overwrite
    /// them, so those find blocks the file system has already allocated and written. The
    /// zeroes need not be durable, and nothing waits for them to reach the disk unless the
    /// storage writes them directly. The real storage writes the whole pages of the range past
    /// the page cache: cached zero pages would cost every later direct write of the range a
    /// write-back check and an invalidation per page. This default writes them through
    /// `write_all_at` and starts their writeback.
    fn write_zeroes_ahead(&self, offset: u64, len: u64) -> io::Result<()> {
        write_zeroes(self, offset, len)?;
        // Only a hint: the zeroes need not be on disk.
        let _ = self.start_writeback(offset, len);
        Ok(())
    }
    /// The file's path, for error messages (`<in-memory>` for storages without one).
    fn path(&self) -> &Path {
        Path::new("<in-memory>")
    }
}

/// Writes zeroes over `len` bytes of `storage` from `offset` through `write_all_at`, a chunk of
/// `ZERO_CHUNK_BYTES` at a time.
pub(crate) fn write_zeroes<S: Storage + ?Sized>(
    storage: &S,
    offset: u64,
    len: u64,
) -> io::Result<()> {
    let chunk = usize::try_from(len).map_or(ZERO_CHUNK_BYTES, |len| len.min(ZERO_CHUNK_BYTES));
    let zeros = vec![0u8; chunk];
    let end = offset.saturating_add(len);
    let mut at = offset;
    while at < end {
        let n = usize::try_from(end - at).map_or(chunk, |left| left.min(chunk));
        storage.write_all_at(zeros.get(..n).unwrap_or_default(), at)?;
        at += n as u64;
    }
    Ok(())
}
