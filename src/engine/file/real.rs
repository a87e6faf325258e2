//! The real [`Storage`](super::Storage): a `std::fs::File` with pread/pwrite and a lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use super::Storage;
use super::format::PAGE_SIZE;
use super::stable::StableRanges;
use crate::engine::{Error, Result};

/// How [`FileStorage::open`] locks the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create if absent; exclusive lock (a second writer gets `Error::Locked`).
    ReadWrite,
    /// Must exist; shared lock (many readers may share).
    ReadOnly,
}

/// The database file on a real file system. The lock lives as long as the value: std's file
/// locks belong to the open file description, so dropping the `File` releases it.
#[derive(Debug)]
pub struct FileStorage {
    file: File,
    /// A second descriptor of the file opened `O_DIRECT | O_DSYNC` (read-write opens on
    /// Linux, when the file system allows it) for [`Storage::write_pages_durable`].
    direct: Option<File>,
    /// The one-write-one-flush path for durable overwrites of stable pages (Linux ext4).
    flush: Option<FlushPath>,
    /// Pages whose allocation is durable (kept only when `flush` is set).
    stable: Mutex<StableRanges>,
    path: PathBuf,
    mode: OpenMode,
}

/// Durable page writes without the file's inode: a direct write, then a device flush.
///
/// A synced write makes the file's inode durable too, and on ext4 without a journal any
/// dirty inode is written at every sync, though only its mtime changed (it does every 4 ms
/// tick): a second device write and wait per durable append. An overwrite of pages whose
/// allocation is already durable (`StableRanges`) needs neither the inode nor any other
/// metadata to be read back, only its data on stable storage: the direct write puts it in
/// the device (its volatile cache), and a flush of the device's cache persists it. ext4
/// without a journal issues that flush for an `fdatasync` of any of its files, so one of the
/// file system's root directory (clean: nothing written) flushes the device without writing
/// anything else. Only there (see `flush_path.rs` for every condition checked): with a journal
/// a clean directory's `fsync` may flush nothing, XFS does not flush for a directory, btrfs
/// not for a clean file; elsewhere durable writes stay synced writes.
#[derive(Debug)]
struct FlushPath {
    /// The file again, `O_DIRECT` without `O_DSYNC`.
    direct: File,
    /// The root directory of the file system holding the file.
    dir: File,
}

impl FileStorage {
    /// Opens `path` and takes the lock of `mode` without blocking: a lock held elsewhere
    /// (another process, or another open of the same path in this one) is `Error::Locked`.
    /// A `ReadWrite` open that creates the file fsyncs the parent directory so the file's
    /// name survives a crash.
    pub fn open(path: impl AsRef<Path>, mode: OpenMode) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = match mode {
            OpenMode::ReadOnly => File::open(&path).map_err(|source| Error::Io {
                op: "open database file read-only",
                source,
            })?,
            OpenMode::ReadWrite => Self::open_or_create(&path)?,
        };
        let locked = match mode {
            OpenMode::ReadWrite => file.try_lock(),
            OpenMode::ReadOnly => file.try_lock_shared(),
        };
        match locked {
            Ok(()) => {
                let (direct, flush) = match mode {
                    OpenMode::ReadWrite => (open_direct(&path), open_flush_path(&file, &path)),
                    OpenMode::ReadOnly => (None, None),
                };
                Ok(Self {
                    file,
                    direct,
                    flush,
                    stable: Mutex::new(StableRanges::default()),
                    path,
                    mode,
                })
            }
            Err(TryLockError::WouldBlock) => Err(Error::Locked { path }),
            Err(TryLockError::Error(source)) => Err(Error::Io {
                op: "lock database file",
                source,
            }),
        }
    }

    fn open_or_create(path: &Path) -> Result<File> {
        let created = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path);
        match created {
            Ok(file) => {
                sync_parent_dir(path)?;
                Ok(file)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map_err(|source| Error::Io {
                    op: "open database file",
                    source,
                }),
            Err(source) => Err(Error::Io {
                op: "create database file",
                source,
            }),
        }
    }

    /// How the file was opened.
    #[must_use]
    pub fn mode(&self) -> OpenMode {
        self.mode
    }

    /// Whether durable overwrites of pages with durable allocation take one data write and one
    /// device flush (ext4 on Linux) rather than a synced write.
    #[must_use]
    pub fn flushes_device_directly(&self) -> bool {
        self.flush.is_some()
    }

    /// Whether every page of `offset..offset + len` is known to have a durable allocation.
    #[must_use]
    pub fn is_stable(&self, offset: u64, len: u64) -> bool {
        self.flush.is_some() && self.stable.lock().contains(offset, len)
    }

    /// Runs `write`, a write that syncs at least its own bytes, and records its pages stable.
    #[cfg(target_os = "linux")]
    fn synced_write(
        &self,
        offset: u64,
        len: usize,
        write: impl FnOnce() -> io::Result<()>,
    ) -> io::Result<()> {
        if self.flush.is_none() {
            return write();
        }
        let epoch = self.stable.lock().epoch();
        write()?;
        self.stable.lock().synced_write(offset, len as u64, epoch);
        Ok(())
    }

    /// Writes all of `buf` at `offset` with `RWF_DSYNC` (or a write and `fdatasync` where the
    /// flag is unsupported).
    #[cfg(target_os = "linux")]
    fn write_dsync(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        while !buf.is_empty() {
            let Ok(at) = i64::try_from(offset) else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("write offset {offset} exceeds i64"),
                ));
            };
            let iov = libc::iovec {
                iov_base: buf.as_ptr().cast_mut().cast(),
                iov_len: buf.len(),
            };
            // SAFETY: `iov` points into `buf`, which outlives the call; the kernel only reads it.
            let written = unsafe {
                libc::pwritev2(
                    self.file.as_raw_fd(),
                    &raw const iov,
                    1,
                    at,
                    libc::RWF_DSYNC,
                )
            };
            let Ok(written) = usize::try_from(written) else {
                let err = io::Error::last_os_error();
                match err.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // Kernels or file systems without per-write sync flags: the portable way.
                    Some(libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL) => {
                        self.file.write_all_at(buf, offset)?;
                        return self.file.sync_data();
                    }
                    _ => return Err(err),
                }
            };
            if written == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            buf = buf.get(written..).unwrap_or_default();
            offset += written as u64;
        }
        Ok(())
    }

    /// Writes `pages` (aligned) over stable pages past the page cache, then flushes the
    /// device; `None` when the pages are not all stable or the direct write was refused.
    #[cfg(target_os = "linux")]
    fn write_stable_pages(&self, pages: &[u8], offset: u64) -> Option<io::Result<()>> {
        let flush = self.flush.as_ref()?;
        if !self.stable.lock().contains(offset, pages.len() as u64) {
            return None;
        }
        match flush.direct.write_all_at(pages, offset) {
            Ok(()) => Some(flush.dir.sync_data()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// The device-flush path for `file` at `path` where it is sound (`flush_path::open`: ext4
/// without a journal, real direct I/O, the root directory on the file's own device).
#[cfg(target_os = "linux")]
fn open_flush_path(file: &File, path: &Path) -> Option<FlushPath> {
    let (direct, dir) = super::flush_path::open(file, path)?;
    Some(FlushPath { direct, dir })
}

#[cfg(not(target_os = "linux"))]
fn open_flush_path(_file: &File, _path: &Path) -> Option<FlushPath> {
    None
}

/// Opens `path` again for synced direct writes, or `None` where direct I/O is unavailable
/// (tmpfs, other systems): durable page writes then take the buffered path.
#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT | libc::O_DSYNC)
        .open(path)
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_path: &Path) -> Option<File> {
    None
}

#[cfg(target_os = "linux")]
/// Whether a direct write of `pages` at `offset` meets the alignment O_DIRECT asks for.
fn direct_aligned(pages: &[u8], offset: u64) -> bool {
    let page = PAGE_SIZE as usize;
    !pages.is_empty()
        && offset.is_multiple_of(PAGE_SIZE)
        && pages.len().is_multiple_of(page)
        && pages.as_ptr().align_offset(page) == 0
}

/// The directory holding `path`.
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes a newly created directory entry durable (POSIX leaves it volatile until the
/// directory itself is fsynced).
fn sync_parent_dir(path: &Path) -> Result<()> {
    File::open(parent_dir(path))
        .and_then(|dir| dir.sync_all())
        .map_err(|source| Error::Io {
            op: "sync parent directory of new database file",
            source,
        })
}

impl Storage for FileStorage {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset)?;
        if self.flush.is_some() {
            self.stable.lock().written(offset, buf.len() as u64);
        }
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        if self.flush.is_none() {
            // sync_data also persists a changed file length (needed to read the data back).
            return self.file.sync_data();
        }
        let ticket = self.stable.lock().begin_sync();
        let synced = self.file.sync_data();
        self.stable.lock().end_sync(ticket, synced.is_ok());
        synced
    }
    fn len(&self) -> io::Result<u64> {
        self.file.metadata().map(|m| m.len())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        if self.flush.is_some() {
            self.stable.lock().resized(len);
        }
        self.file.set_len(len)
    }
    #[cfg(target_os = "linux")]
    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        use rustix::fs::{FallocateFlags, fallocate};
        if self.flush.is_some() {
            self.stable.lock().forget(offset, len);
        }
        let mode = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
        fallocate(&self.file, mode, offset, len).map_err(io::Error::from)
    }
    #[cfg(target_os = "linux")]
    fn write_all_at_durable(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.synced_write(offset, buf.len(), || self.write_dsync(buf, offset))
    }
    #[cfg(target_os = "linux")]
    fn write_pages_durable(&self, pages: &[u8], offset: u64) -> io::Result<()> {
        if !direct_aligned(pages, offset) {
            return self.write_all_at_durable(pages, offset);
        }
        if let Some(done) = self.write_stable_pages(pages, offset) {
            return done;
        }
        if let Some(direct) = &self.direct {
            let written =
                self.synced_write(offset, pages.len(), || direct.write_all_at(pages, offset));
            match written {
                Ok(()) => return Ok(()),
                // A file system that opened the descriptor but refuses this direct write
                // (alignment stricter than a page): the buffered path has no such limits, and
                // a partial direct write is rewritten whole by it.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                Err(e) => return Err(e),
            }
        }
        self.write_all_at_durable(pages, offset)
    }
    #[cfg(target_os = "linux")]
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("writeback range {offset}+{len} exceeds i64"),
            ));
        };
        // SAFETY: a plain syscall on a descriptor this value owns; no memory is passed.
        let rc = unsafe {
            libc::sync_file_range(
                self.file.as_raw_fd(),
                offset,
                len,
                libc::SYNC_FILE_RANGE_WRITE,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    fn path(&self) -> &Path {
        &self.path
    }
}
