//! The real [`Storage`](super::Storage): a `std::fs::File` with pread/pwrite and a lock.

/// How [`FileStorage::open`] locks the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create if absent; exclusive lock (a second writer gets `Error::Locked`).
    ReadWrite,
    /// Must exist; shared lock (many readers may share).
    ReadOnly,
}

/// The database file on a real file system.
#[derive(Debug)]
pub struct FileStorage {}
