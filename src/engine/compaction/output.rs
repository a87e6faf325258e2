//! Streams a flush or compaction output SST into its extent as its blocks are sealed, so no
//! whole SST image is ever held in memory (peak memory is one chunk per running job).
//!
//! The extent is allocated at the first write with room for the expected size; an output that
//! outgrows it moves to a larger extent (a copy of what was written, rare: one entry larger
//! than the slack, or a flush of an oversized memtable), and the unused pages at its end are
//! freed when it is finished. Crash safety is unchanged: nothing refers to the extent until
//! `Inner::install` has synced the file and written the manifest that names it.

use std::sync::Arc;

use crate::engine::file::{Extent, PAGE_SIZE};
use crate::engine::inner::Inner;
use crate::engine::manifest::SstMeta;
use crate::engine::sst::{SstReader, SstWriter};
use crate::engine::version::SstHandle;
use crate::engine::{Result, Seq, ValueKind};

/// Sealed bytes gathered before one write to the file: large enough that writes are few,
/// small enough that memory stays flat.
pub const STREAM_CHUNK_BYTES: usize = 256 << 10;

/// One output SST being written.
#[derive(Debug)]
pub struct SstOutput {
    writer: SstWriter,
    /// Bytes to reserve at the first write.
    capacity: u64,
    /// Where the bytes go, once the first chunk is written.
    extent: Option<Extent>,
}

impl SstOutput {
    /// An output expected to take about `capacity` bytes in the file.
    pub fn new(writer: SstWriter, capacity: u64) -> Self {
        Self {
            writer,
            capacity,
            extent: None,
        }
    }

    /// The writer's estimate of the finished size.
    pub fn estimated_len(&self) -> usize {
        self.writer.estimated_len()
    }
}

impl Inner {
    /// Adds one entry to `out`, writing the sealed blocks out once a chunk has gathered.
    pub fn output_add(
        &self,
        out: &mut SstOutput,
        key: &[u8],
        seq: Seq,
        kind: ValueKind,
        value: &[u8],
    ) -> Result<()> {
        out.writer.add(key, seq, kind, value);
        if out.writer.buffered_len() >= STREAM_CHUNK_BYTES {
            let SstOutput {
                writer,
                capacity,
                extent,
            } = out;
            writer
                .take_output(|offset, bytes| self.output_write(extent, *capacity, offset, bytes))?;
        }
        Ok(())
    }

    /// Finishes `out`: writes its last bytes, frees the unused end of its extent and opens it.
    /// `None` (and nothing allocated) when it has no entry.
    pub fn output_finish(&self, out: SstOutput) -> Result<Option<Arc<SstHandle>>> {
        let SstOutput {
            writer,
            capacity,
            mut extent,
        } = out;
        let tail = match writer.finish_tail() {
            Ok(Some(tail)) => tail,
            Ok(None) => return Ok(None),
            Err(err) => {
                self.free(extent.as_slice());
                return Err(err);
            }
        };
        // A short SST is allocated at its exact size, as when images were built in memory.
        let capacity = if extent.is_none() { tail.len } else { capacity };
        self.output_write(&mut extent, capacity, tail.offset, &tail.bytes)?;
        let Some(extent) = extent else {
            return Ok(None);
        };
        let used = tail.len.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let extent = if used < extent.len {
            self.free(&[Extent {
                offset: extent.offset + used,
                len: extent.len - used,
            }]);
            Extent {
                offset: extent.offset,
                len: used,
            }
        } else {
            extent
        };
        let id = {
            let mut meta = self.meta.lock();
            meta.next_sst_id += 1;
            meta.next_sst_id - 1
        };
        let reader = SstReader::open(
            Arc::clone(&self.storage),
            extent,
            tail.len,
            id,
            Arc::clone(&self.cache),
        )?;
        let meta = SstMeta {
            id,
            extent,
            len: tail.len,
            props: tail.props,
        };
        Ok(Some(Arc::new(SstHandle::new(
            meta,
            reader,
            Arc::clone(&self.graveyard),
        ))))
    }

    /// Frees the extent of an output abandoned on an error.
    pub fn output_abandon(&self, out: SstOutput) {
        self.free(out.extent.as_slice());
    }

    /// Writes `bytes` at SST offset `offset` into `extent`, allocating it (`capacity` bytes or
    /// more) on first use and moving what was written to a larger extent when it overflows.
    fn output_write(
        &self,
        extent: &mut Option<Extent>,
        capacity: u64,
        offset: u64,
        bytes: &[u8],
    ) -> Result<()> {
        let end = offset + bytes.len() as u64;
        let current = match *extent {
            Some(current) if end > current.len => {
                let grown = self.allocate(end.max(current.len.saturating_mul(2)));
                let mut buf = Vec::new();
                let copied = self.copy_extent(current.offset, grown.offset, offset, &mut buf);
                self.free(&[current]);
                *extent = Some(grown);
                copied?;
                grown
            }
            Some(current) => current,
            None => {
                let fresh = self.allocate(end.max(capacity));
                *extent = Some(fresh);
                fresh
            }
        };
        self.write_at(bytes, current.offset + offset, "write SST")
            .map_err(|err| self.poisoned(err))
    }
}
