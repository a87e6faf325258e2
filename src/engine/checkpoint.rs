//! Checkpoints: a consistent, fully compacted copy of a snapshot in a new single file.

use super::file::{ExtentAllocator, ExtentRef, Storage, Superblock, write_superblock};
use super::inner::{Inner, io};
use super::limits::NUM_LEVELS;
use super::manifest::{Manifest, SstMeta};
use super::sst::SstWriter;
use super::{Error, Result, Snapshot, ValueKind};

/// Writes the live data of `snapshot` into `target` (an empty file) as bottom-level SSTs, a
/// manifest and a superblock with no WAL. Only reads the source, so writes go on meanwhile.
pub fn write_checkpoint(inner: &Inner, snapshot: &Snapshot, target: &dyn Storage) -> Result<()> {
    if target.len().map_err(io("read checkpoint length"))? != 0 {
        return Err(Error::InvalidArgument(format!(
            "checkpoint target {} already exists and is not empty",
            target.path().display()
        )));
    }
    let level = NUM_LEVELS - 1;
    let mut alloc = ExtentAllocator::default();
    let mut manifest = Manifest::default();
    let mut write_sst = |writer: SstWriter, manifest: &mut Manifest| -> Result<()> {
        if let Some((image, props)) = writer.finish()? {
            let extent = alloc.allocate(image.len() as u64);
            target
                .write_all_at(&image, extent.offset)
                .map_err(io("write checkpoint SST"))?;
            let id = manifest.next_sst_id;
            manifest.next_sst_id += 1;
            if let Some(ssts) = manifest.levels.get_mut(level) {
                ssts.push(SstMeta {
                    id,
                    extent,
                    len: image.len() as u64,
                    props,
                });
            }
        }
        Ok(())
    };
    let mut writer = SstWriter::new(inner.sst_options(level));
    let mut cursor = snapshot.range_all();
    while cursor.advance()? {
        writer.add(cursor.key(), snapshot.seq(), ValueKind::Put, cursor.value());
        if writer.estimated_len() >= inner.options.sst_target_bytes {
            write_sst(
                std::mem::replace(&mut writer, SstWriter::new(inner.sst_options(level))),
                &mut manifest,
            )?;
        }
    }
    write_sst(writer, &mut manifest)?;
    let image = manifest.encode();
    let extent = alloc.allocate(image.len() as u64);
    target
        .write_all_at(&image, extent.offset)
        .map_err(io("write checkpoint manifest"))?;
    target.sync_data().map_err(io("sync checkpoint"))?;
    let sb = Superblock {
        generation: 1,
        manifest: Some(ExtentRef {
            extent,
            len: image.len() as u64,
            crc: crc32fast::hash(&image),
        }),
        wal_segments: Vec::new(),
        flushed_seq: snapshot.seq(),
        next_segment_id: 1,
    };
    write_superblock(target, &sb)?;
    target
        .sync_data()
        .map_err(io("sync checkpoint superblock"))?;
    Ok(())
}
