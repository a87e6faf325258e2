//! When durable WAL appends may take a plain direct write plus a device flush (see
//! `FlushPath` in `real.rs`), and the descriptors that path uses.
//!
//! The path is only sound where each of these holds, so each is checked and anything
//! unsure keeps the synced write:
//! - ext4 **without a journal**: its `fsync` of any file, even a clean directory, ends in a
//!   device cache flush. With a journal, a clean directory's `fsync` only forces a journal
//!   commit, and none happens when no transaction is running: no flush at all.
//! - the directory synced is on the **same file system** as the database file (a
//!   bind-mounted or symlinked file must not flush some other device);
//! - the file takes **real direct I/O** (`statx` reports direct-I/O alignment the writes
//!   meet): ext4 silently turns direct writes into buffered ones for encrypted, verity,
//!   inline-data and data-journalled files, and a directory's sync would not write those.
//! - the second descriptor is **the same file** (not a file renamed over the path meanwhile).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, StatxFlags, statx};

use super::format::PAGE_SIZE;

/// `f_type` of ext2/3/4 (`statfs`).
const EXT4_SUPER_MAGIC: i64 = 0xEF53;

/// `(direct, dir)`: `file` opened again `O_DIRECT` (no `O_DSYNC`) and the root directory of
/// its file system, where every condition of the module holds; `None` elsewhere.
pub(super) fn open(file: &File, path: &Path) -> Option<(File, File)> {
    let stat = rustix::fs::fstatfs(file).ok()?;
    // `f_type`'s integer type differs between targets.
    #[allow(clippy::useless_conversion)]
    if i64::from(stat.f_type) != EXT4_SUPER_MAGIC {
        return None;
    }
    let meta = file.metadata().ok()?;
    if !has_no_journal(meta.dev()) || !takes_direct_io(file) {
        return None;
    }
    let direct = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ok()?;
    let again = direct.metadata().ok()?;
    if (again.dev(), again.ino()) != (meta.dev(), meta.ino()) {
        return None;
    }
    let dir = File::open(mount_root(path, meta.dev())?).ok()?;
    if dir.metadata().ok()?.dev() != meta.dev() {
        return None;
    }
    Some((direct, dir))
}

/// Whether the ext4 file system on device `dev` runs without a journal: its
/// `/sys/fs/ext4/<name>/journal_task` reads `<none>` (a journal shows its thread there).
fn has_no_journal(dev: u64) -> bool {
    let link = format!(
        "/sys/dev/block/{}:{}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    );
    let Ok(target) = std::fs::read_link(&link) else {
        return false;
    };
    let Some(name) = target.file_name() else {
        return false;
    };
    let task = Path::new("/sys/fs/ext4").join(name).join("journal_task");
    std::fs::read_to_string(task).is_ok_and(|s| s.trim() == "<none>")
}

/// Whether direct writes of whole pages from page-aligned memory go past the page cache:
/// `statx` reports direct-I/O support (`STATX_DIOALIGN`, Linux 6.1) with alignments a page
/// meets. Older kernels and files without direct I/O answer no.
fn takes_direct_io(file: &File) -> bool {
    let Ok(st) = statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN) else {
        return false;
    };
    let page = u32::try_from(PAGE_SIZE).unwrap_or(u32::MAX);
    st.stx_mask & StatxFlags::DIOALIGN.bits() != 0
        && (1..=page).contains(&st.stx_dio_offset_align)
        && (1..=page).contains(&st.stx_dio_mem_align)
}

/// The topmost directory above `path` (symlinks resolved, the file's own path included)
/// still on device `dev`: the root of the file's file system as this process sees it. Its
/// inode shares an inode-table block only with the file system's reserved inodes, so its
/// `fdatasync` finds nothing dirty to write; the database's own directory would not do: its
/// inode usually shares a block with the file's, which the file's every mtime change dirties.
fn mount_root(path: &Path, dev: u64) -> Option<PathBuf> {
    let file = std::fs::canonicalize(path).ok()?;
    let mut root = None;
    for ancestor in file.ancestors().skip(1) {
        if ancestor.metadata().ok()?.dev() != dev {
            break;
        }
        root = Some(ancestor.to_path_buf());
    }
    root
}

#[cfg(test)]
mod tests {
    // `f_type`'s integer type differs between targets.
    #![allow(clippy::unwrap_used, clippy::useless_conversion)]
    use super::*;

    #[test]
    fn flush_path_mount_root_is_on_the_files_own_device() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        std::fs::write(&path, b"x").unwrap();
        let dev = std::fs::metadata(&path).unwrap().dev();
        let root = mount_root(&path, dev).unwrap();
        assert_eq!(std::fs::metadata(&root).unwrap().dev(), dev);
        assert!(std::fs::canonicalize(&path).unwrap().starts_with(&root));
        // A device the file is not on has no root above it.
        assert_eq!(mount_root(&path, dev.wrapping_add(1)), None);
    }

    #[test]
    fn flush_path_unknown_device_counts_as_journalled() {
        // No /sys/dev/block entry for this device: the synced write stays.
        assert!(!has_no_journal(u64::MAX));
    }

    #[test]
    fn flush_path_agrees_with_the_file_system_it_finds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let file = File::create(&path).unwrap();
        let dev = file.metadata().unwrap().dev();
        let ext4 =
            rustix::fs::fstatfs(&file).is_ok_and(|s| i64::from(s.f_type) == EXT4_SUPER_MAGIC);
        let expected = ext4 && has_no_journal(dev) && takes_direct_io(&file);
        assert_eq!(open(&file, &path).is_some(), expected);
    }
}
