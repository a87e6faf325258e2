//! FileStorage: exclusive writer lock, shared readers, creation and pread/pwrite.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::engine::Error;
use strata::engine::file::{FileStorage, OpenMode, Storage};

#[test]
fn file_lock_second_writer_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.strata");
    let first = FileStorage::open(&path, OpenMode::ReadWrite).unwrap();
    match FileStorage::open(&path, OpenMode::ReadWrite) {
        Err(Error::Locked { path: p }) => assert_eq!(p, path),
        other => panic!("expected Locked, got {other:?}"),
    }
    // A reader is refused while the writer holds its exclusive lock.
    assert!(matches!(
        FileStorage::open(&path, OpenMode::ReadOnly),
        Err(Error::Locked { .. })
    ));
    drop(first);
    FileStorage::open(&path, OpenMode::ReadWrite).unwrap();
}

#[test]
fn file_lock_readers_share_and_exclude_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.strata");
    drop(FileStorage::open(&path, OpenMode::ReadWrite).unwrap());
    let r1 = FileStorage::open(&path, OpenMode::ReadOnly).unwrap();
    let r2 = FileStorage::open(&path, OpenMode::ReadOnly).unwrap();
    assert!(matches!(
        FileStorage::open(&path, OpenMode::ReadWrite),
        Err(Error::Locked { .. })
    ));
    drop((r1, r2));
    FileStorage::open(&path, OpenMode::ReadWrite).unwrap();
}

#[test]
fn file_read_only_open_of_missing_file_is_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = FileStorage::open(dir.path().join("absent"), OpenMode::ReadOnly).unwrap_err();
    assert!(
        matches!(err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );
}

#[test]
fn file_storage_positional_io_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.strata");
    let s = FileStorage::open(&path, OpenMode::ReadWrite).unwrap();
    assert_eq!(s.len().unwrap(), 0);
    assert_eq!(s.path(), path);
    s.write_all_at(b"world", 8192).unwrap();
    s.write_all_at(b"hello", 0).unwrap();
    s.sync_data().unwrap();
    assert_eq!(s.len().unwrap(), 8197);
    let mut buf = [0u8; 5];
    s.read_exact_at(&mut buf, 8192).unwrap();
    assert_eq!(&buf, b"world");
    let err = s.read_exact_at(&mut buf, 8195).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    s.set_len(4096).unwrap();
    assert_eq!(s.len().unwrap(), 4096);
    drop(s);
    let r = FileStorage::open(&path, OpenMode::ReadOnly).unwrap();
    r.read_exact_at(&mut buf, 0).unwrap();
    assert_eq!(&buf, b"hello");
    assert!(
        r.write_all_at(b"x", 0).is_err(),
        "a read-only handle cannot write"
    );
}
