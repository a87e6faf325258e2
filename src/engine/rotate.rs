//! WAL rotation and memtable freezing: how the writer moves the log to a new segment (the
//! sync-free way into the listed spare, or the synced way) and hands a full or flushed
//! memtable to the flusher. Called by the leader with the writer lock held (see `commit.rs`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Result;
use super::commit::WriterState;
use super::file::WalSegmentRef;
use super::inner::{Frozen, Inner};
use super::limits::WAL_SEGMENT_MIN_BYTES;
use super::memtable::Memtable;
use super::version::ReadView;
use super::wal::WalWriter;

impl Inner {
    /// Moves the log to a new segment of at least `min_len` bytes. Segments double in size
    /// while they fill up (`grow`) and start small again after an explicit flush or on open,
    /// so a tiny database stays tiny.
    ///
    /// A growing rotation usually takes the spare segment the superblock already lists (see
    /// [`WalSpare`](super::inner::WalSpare)): the seal is a plain write and nothing waits for
    /// the disk. Otherwise (no spare, one not yet confirmed, too small, or an explicit flush)
    /// the seal is synced and a superblock listing the new segment and a new spare is made
    /// durable before anything is appended to it.
    pub fn rotate(&self, writer: &mut WriterState, min_len: u64, grow: bool) -> Result<()> {
        if !grow {
            writer.next_segment_len = WAL_SEGMENT_MIN_BYTES;
        }
        let needed = WalWriter::segment_len_for(min_len);
        let Some(wal) = writer.wal.as_mut() else {
            return self.rotate_synced(writer, needed);
        };
        wal.seal(&*self.storage).map_err(|err| self.poisoned(err))?;
        let taken = {
            let mut spare = self.spare.lock();
            match spare.segment {
                // An explicit flush (`!grow`) wants a small segment in the lowest free
                // extent (`compact()` relies on it to let the file shrink): not the spare,
                // allocated wherever space was free at the time.
                Some(segment) if grow && !spare.unconfirmed && segment.extent.len >= needed => {
                    spare.segment = None;
                    spare.unconfirmed = true;
                    // Counted under `spare`: whoever reads `unconfirmed` before a sync
                    // also sees this seal as written before it.
                    self.seals_written.fetch_add(1, Ordering::AcqRel);
                    Some(segment)
                }
                _ => None,
            }
        };
        let Some(segment) = taken else {
            return self.rotate_synced(writer, needed);
        };
        writer.wal = Some(WalWriter::fresh(segment));
        self.grow_segments(writer, segment.extent.len);
        Ok(())
    }

    /// The rotation that waits for the disk: syncs the seal (replay requires every segment
    /// but the last two to end with one, and the disk may reorder unsynced writes), then lists
    /// a new segment of at least `needed` bytes and a new spare in a durable superblock. An
    /// unused spare that is too small is dropped from the list.
    fn rotate_synced(&self, writer: &mut WriterState, needed: u64) -> Result<()> {
        if writer.wal.is_some() {
            self.sync_covering_seals("sync sealed WAL segment")
                .map_err(|err| self.poisoned(err))?;
        }
        let len = writer.next_segment_len.max(needed);
        // A reused extent keeps its stale bytes: frames of an earlier segment carry another
        // id and anything else fails its CRC, so replay ends cleanly where our frames end.
        let extent = self.allocate(len);
        self.grow_segments(writer, extent.len);
        let mut meta = self.meta.lock();
        let unused = self.spare.lock().segment.take();
        if let Some(unused) = unused {
            meta.sb.wal_segments.retain(|s| s.id != unused.id);
        }
        let segment = WalSegmentRef {
            extent,
            id: meta.sb.next_segment_id,
        };
        meta.sb.next_segment_id += 1;
        meta.sb.wal_segments.push(segment);
        let spare = self.list_spare(&mut meta);
        self.commit_superblock(&mut meta)?;
        self.publish_spare(spare);
        drop(meta);
        if let Some(unused) = unused {
            self.free(&[unused.extent]);
        }
        writer.wal = Some(WalWriter::fresh(segment));
        Ok(())
    }

    /// Sets the size of the segments after one of `len` bytes (doubling up to the maximum),
    /// which the next spare gets too.
    fn grow_segments(&self, writer: &mut WriterState, len: u64) {
        writer.next_segment_len = len.saturating_mul(2).min(
            self.options
                .wal_segment_max_bytes
                .max(WAL_SEGMENT_MIN_BYTES),
        );
        self.spare.lock().len = writer.next_segment_len;
    }

    /// Freezes the active memtable behind a fresh WAL segment (so every older segment can go
    /// once it is flushed) and wakes the flusher.
    pub fn freeze(&self, writer: &mut WriterState) -> Result<()> {
        // A memtable that filled up is followed by more writes: its successor's WAL keeps the
        // segment size reached so far, so a busy writer rotates about once per memtable rather
        // than at every doubling from the minimum. An explicit flush of a part-filled memtable starts small again.
        let full = self.view.read().mem.approximate_bytes() >= self.options.memtable_bytes;
        self.rotate(writer, 0, full)?;
        self.freeze_behind_current_segment(writer)
    }

    /// As [`Inner::freeze`] for an explicit `Engine::flush()` of a part-filled memtable: the
    /// log stays in its segment (no seal, no sync, no superblock), so the flush that ends a
    /// bulk load starts building its SST at once. The install records the memtable's last
    /// sequence number as flushed, which replay skips, and keeps this segment.
    pub fn freeze_for_flush(&self, writer: &mut WriterState) -> Result<()> {
        let full = self.view.read().mem.approximate_bytes() >= self.options.memtable_bytes;
        if full || writer.wal.is_none() {
            return self.freeze(writer);
        }
        self.freeze_behind_current_segment(writer)
    }

    /// Freezes the active memtable; the WAL segments before the writer's current one go with
    /// its flush.
    fn freeze_behind_current_segment(&self, writer: &mut WriterState) -> Result<()> {
        let first_live_segment = writer.wal.as_ref().map_or(0, |wal| wal.segment().id);
        let old = {
            let mut view = self.view.write();
            let old = Arc::clone(&view.mem);
            let mut imms = vec![Arc::clone(&old)];
            imms.extend(view.imms.iter().cloned());
            *view = Arc::new(ReadView {
                mem: Arc::new(Memtable::new()),
                imms,
                version: Arc::clone(&view.version),
            });
            old
        };
        self.frozen.lock().push(Frozen {
            mem: old,
            first_live_segment,
        });
        self.refresh_stall();
        self.signal_work();
        Ok(())
    }
}
