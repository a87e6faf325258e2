//! The real [`Storage`](super::Storage): a `std::fs::File` with pread/pwrite and a lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::format::PAGE_SIZE;
use super::{Storage, write_zeroes};
use crate::engine::limits::ZERO_CHUNK_BYTES;
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
    path: PathBuf,
    mode: OpenMode,
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
                let direct = match mode {
                    OpenMode::ReadWrite => open_direct(&path),
                    OpenMode::ReadOnly => None,
                };
                Ok(Self {
                    file,
                    direct,
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

/// Most chunks of zeroes one direct write of [`write_zero_pages`] gathers.
#[cfg(target_os = "linux")]
const ZERO_CHUNKS_PER_WRITE: usize = 64;

/// Writes zeroes over the whole pages `offset..offset + len` through `direct` (an `O_DIRECT`
/// descriptor), gathering up to [`ZERO_CHUNKS_PER_WRITE`] views of one page-aligned chunk of
/// zeroes per call. Returns the bytes written: fewer than `len` when a write came back short
/// or not in whole pages, which the caller finishes by other means.
#[cfg(target_os = "linux")]
fn write_zero_pages(direct: &File, offset: u64, len: u64) -> io::Result<u64> {
    use std::io::IoSlice;
    let page = PAGE_SIZE as usize;
    let backing = vec![0u8; ZERO_CHUNK_BYTES + page];
    let start = backing.as_ptr().align_offset(page);
    let zeros = backing
        .get(start..start + ZERO_CHUNK_BYTES)
        .unwrap_or_default();
    let mut done = 0u64;
    while done < len {
        let mut slices = Vec::with_capacity(ZERO_CHUNKS_PER_WRITE);
        let mut gathered = 0u64;
        while gathered < len - done && slices.len() < ZERO_CHUNKS_PER_WRITE {
            let n = usize::try_from(len - done - gathered)
                .map_or(zeros.len(), |left| left.min(zeros.len()));
            slices.push(IoSlice::new(zeros.get(..n).unwrap_or_default()));
            gathered += n as u64;
        }
        let written = match rustix::io::pwritev(direct, &slices, offset + done) {
            Ok(written) => written as u64,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        done += written;
        if written < gathered || !written.is_multiple_of(PAGE_SIZE) {
            break;
        }
    }
    Ok(done)
}

/// Makes a newly created directory entry durable (POSIX leaves it volatile until the
/// directory itself is fsynced).
fn sync_parent_dir(path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)
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
        self.file.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        // sync_data also persists a changed file length (it is needed to read the data back).
        self.file.sync_data()
    }
    fn len(&self) -> io::Result<u64> {
        self.file.metadata().map(|m| m.len())
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
    #[cfg(target_os = "linux")]
    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        use rustix::fs::{FallocateFlags, fallocate};
        let mode = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
        fallocate(&self.file, mode, offset, len).map_err(io::Error::from)
    }
    #[cfg(target_os = "linux")]
    fn write_all_at_durable(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
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
    #[cfg(target_os = "linux")]
    fn write_pages_durable(&self, pages: &[u8], offset: u64) -> io::Result<()> {
        if let Some(direct) = &self.direct
            && direct_aligned(pages, offset)
        {
            match direct.write_all_at(pages, offset) {
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
    /// The whole pages of the range go out through the direct descriptor in a few large
    /// writes (each synced: one device flush per prewrite window, which is cheaper than the
    /// per-page invalidations cached zeroes cost the durable appends that overwrite them).
    #[cfg(target_os = "linux")]
    fn write_zeroes_ahead(&self, offset: u64, len: u64) -> io::Result<()> {
        let end = offset.saturating_add(len);
        let pages_from = offset.next_multiple_of(PAGE_SIZE).min(end);
        let pages_to = (end - end % PAGE_SIZE).max(pages_from);
        let direct_done = match &self.direct {
            Some(direct) if pages_to > pages_from => {
                match write_zero_pages(direct, pages_from, pages_to - pages_from) {
                    Ok(done) => done,
                    // Refused as `write_pages_durable` may be: the buffered path below.
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => 0,
                    Err(e) => return Err(e),
                }
            }
            _ => 0,
        };
        if direct_done == 0 {
            write_zeroes(self, offset, len)?;
            // Only a hint: the zeroes need not be on disk.
            let _ = self.start_writeback(offset, len);
            return Ok(());
        }
        write_zeroes(self, offset, pages_from - offset)?;
        let rest = pages_from + direct_done;
        write_zeroes(self, rest, end - rest)
    }
    fn path(&self) -> &Path {
        &self.path
    }
}
