//! Appends records to the current WAL segment.

use super::format::{HEADER_LEN, KIND_RECORD, KIND_SEAL, MAX_PAYLOAD_LEN, PREWRITE_LEN};
use super::record::{WalRecord, encode_frame};
use super::tail::{DIRECT_MAX_LEN, TailPage};
use crate::engine::file::{PAGE_SIZE, Storage, WalSegmentRef, write_zeroes};
use crate::engine::{Error, Result};

/// Appends framed records at the tail of one WAL segment.
///
/// Protocol the engine follows (see `docs/FORMAT.md`, "Write-ahead log"):
/// - a segment is listed in a durable superblock before its first frame is written, so its id
///   is never handed out twice;
/// - every write reserves room for a seal frame; when frames no longer fit, `append` writes
///   the seal and returns `Ok(false)`, and the engine lists a new segment after this one.
///   To leave a segment early (e.g. at a memtable switch), call [`WalWriter::seal`] first:
///   replay requires every segment but the last two to end with a seal, and lets the second
///   to last lack one only while no frame of the last claims durability (the engine's
///   sync-free move into a spare segment listed ahead of use);
/// - the first write of a writer that resumes a segment (`pos > 0`, or any trace of this
///   segment's id past `pos`) zeroes the rest of the segment and syncs, so frames of a crashed
///   run that lie beyond `pos` can never be chained onto the new ones;
/// - a durable append that reaches past the zeroes written so far first writes zeroes over the
///   next [`PREWRITE_LEN`] bytes of the segment (whole pages, [`Storage::write_zeroes_ahead`]),
///   so durable appends overwrite blocks the file system has already allocated and written: an
///   `O_DSYNC` write or `fdatasync` that extends the file, fills a hole or converts an
///   unwritten extent must also commit the file system's journal, which costs more kernel CPU
///   and several times the latency. The zeroes need not be durable (stale bytes end replay as
///   cleanly);
/// - a durable append with nothing unsynced before it rewrites the whole pages it touches
///   (the tail page's earlier bytes, kept in memory, then the frames, then zeroes) with one
///   synced direct write ([`Storage::write_pages_durable`]): no page cache, no writeback, less
///   kernel CPU than a synced buffered write of the frames alone. The bytes on disk are the
///   same either way.
///
/// ```
/// use strata::engine::file::{Extent, FaultyStorage, WalSegmentRef};
/// use strata::engine::wal::{WalRecord, WalWriter, replay};
///
/// let disk = FaultyStorage::new();
/// let segment = WalSegmentRef { extent: Extent { offset: 8192, len: 65536 }, id: 1 };
/// let mut wal = WalWriter::new(segment, 0);
/// let group = [WalRecord { seq: 1, payload: b"batch one" }, WalRecord { seq: 2, payload: b"two" }];
/// assert!(wal.append_records(&disk, &group)?);
/// wal.sync(&disk)?;
/// let mut seqs = Vec::new();
/// let end = replay(&disk, &[segment], &mut |seq, _payload, _at| Ok(seqs.push(seq)))?;
/// assert_eq!((seqs, end.pos), (vec![1, 2], wal.pos()));
/// # Ok::<(), strata::engine::Error>(())
/// ```
#[derive(Debug)]
pub struct WalWriter {
    segment: WalSegmentRef,
    pos: u64,
    /// Segment offset up to which everything is known durable (claimed in each frame).
    synced: u64,
    /// Whether the resume check of the first write has run.
    prepared: bool,
    /// Segment offset up to which zeroes were written ahead of the tail.
    prewritten: u64,
    sealed: bool,
    buf: Vec<u8>,
    /// The segment's bytes from the tail's page start to `pos`.
    tail: TailPage,
    /// Whether the last write at the tail went past the page cache (which then holds no
    /// copy of the tail page).
    tail_uncached: bool,
}

impl WalWriter {
    /// A writer that appends to `segment` from byte `pos` of the segment (0 for a new segment,
    /// [`WalReplayEnd::pos`](super::WalReplayEnd::pos) to resume after replay).
    #[must_use]
    pub fn new(segment: WalSegmentRef, pos: u64) -> Self {
        Self {
            segment,
            pos,
            synced: 0,
            prepared: false,
            prewritten: 0,
            sealed: false,
            buf: Vec::new(),
            tail: TailPage::default(),
            tail_uncached: false,
        }
    }

    /// A writer for a segment whose id was never used before (just allocated and listed in a
    /// durable superblock): no frame of it can exist yet, so the first write skips the resume
    /// check that would read (and maybe clear) the whole extent.
    #[must_use]
    pub fn fresh(segment: WalSegmentRef) -> Self {
        Self {
            prepared: true,
            ..Self::new(segment, 0)
        }
    }

    /// Writes the already-framed `frames` (see `encode_record`) at the tail in one write, or,
    /// when they do not fit in the segment (leaving room for a seal), writes a seal instead and
    /// returns `Ok(false)`: the caller moves to a new segment and re-frames for its id.
    pub fn append(&mut self, storage: &dyn Storage, frames: &[u8]) -> Result<bool> {
        if self.sealed {
            return Ok(false);
        }
        self.prepare(storage)?;
        self.write_tail(storage, frames, false)
    }

    /// As [`WalWriter::append`], then makes everything appended to the segment durable. When
    /// nothing unsynced precedes `frames` that is one durable write of `frames` alone, which
    /// leaves the rest of the file's dirty pages (a running compaction's) to their writeback.
    pub fn append_durable(&mut self, storage: &dyn Storage, frames: &[u8]) -> Result<bool> {
        if self.sealed {
            return Ok(false);
        }
        self.prepare(storage)?;
        if self.fits(frames.len()) && self.pos + frames.len() as u64 > self.prewritten {
            self.prewrite(storage, frames.len() as u64)?;
        }
        if self.synced != self.pos {
            let fitted = self.append(storage, frames)?;
            if fitted {
                self.sync(storage)?;
            }
            return Ok(fitted);
        }
        self.write_tail(storage, frames, true)
    }

    /// Writes `frames` at the tail (`durable`: with a per-write sync, so they alone become
    /// durable), or seals the segment and returns `Ok(false)` when they do not fit.
    fn write_tail(&mut self, storage: &dyn Storage, frames: &[u8], durable: bool) -> Result<bool> {
        if !self.fits(frames.len()) {
            self.seal(storage)?;
            return Ok(false);
        }
        let at = self.segment.extent.offset + self.pos;
        let written = if durable {
            self.write_durable(storage, frames)
        } else {
            self.write_buffered(storage, frames, at)
        };
        written.map_err(|source| Error::Io {
            op: if durable {
                "write and sync WAL records"
            } else {
                "write WAL records"
            },
            source,
        })?;
        self.pos += frames.len() as u64;
        self.tail.advance(frames, self.pos);
        if durable {
            self.mark_synced();
        }
        Ok(true)
    }

    /// Writes `frames` at the tail and makes them durable: as whole pages past the page cache
    /// when they are few enough, else as one synced buffered write.
    fn write_durable(&mut self, storage: &dyn Storage, frames: &[u8]) -> std::io::Result<()> {
        let page_pos = self.pos - self.pos % PAGE_SIZE;
        let extent = self.segment.extent;
        if frames.len() <= DIRECT_MAX_LEN && extent.offset.is_multiple_of(PAGE_SIZE) {
            let pages = self.tail.pages_with(frames);
            if page_pos + pages.len() as u64 <= extent.len {
                storage.write_pages_durable(pages, extent.offset + page_pos)?;
                self.tail_uncached = true;
                return Ok(());
            }
        }
        self.tail_uncached = false;
        storage.write_all_at_durable(frames, extent.offset + self.pos)
    }

    /// Writes `frames` (a group or a seal) at file offset `at`, the tail, through the page
    /// cache. Right after a direct write the tail page is not cached, and a buffered write
    /// into part of it would first read it from disk: then the whole pages are written, the
    /// tail page's bytes from memory, zeroes after the frames (as the direct write does).
    fn write_buffered(
        &mut self,
        storage: &dyn Storage,
        frames: &[u8],
        at: u64,
    ) -> std::io::Result<()> {
        let page_pos = self.pos - self.pos % PAGE_SIZE;
        let extent = self.segment.extent;
        if self.tail_uncached && frames.len() <= DIRECT_MAX_LEN {
            let pages = self.tail.pages_with(frames);
            if page_pos + pages.len() as u64 <= extent.len {
                storage.write_all_at(pages, extent.offset + page_pos)?;
                self.tail_uncached = false;
                return Ok(());
            }
        }
        storage.write_all_at(frames, at)?;
        self.tail_uncached = false;
        Ok(())
    }

    /// Whether `len` bytes of frames fit at the tail with room left for a seal.
    fn fits(&self, len: usize) -> bool {
        self.pos
            .checked_add(len as u64)
            .and_then(|end| end.checked_add(HEADER_LEN as u64))
            .is_some_and(|end| end <= self.segment.extent.len)
    }

    /// Frames `records` for this segment (with its durability watermark) and appends them in
    /// one write, as [`WalWriter::append`]. A payload over the frame limit is `InvalidArgument`.
    pub fn append_records(
        &mut self,
        storage: &dyn Storage,
        records: &[WalRecord<'_>],
    ) -> Result<bool> {
        if let Some(big) = records.iter().find(|r| r.payload.len() > MAX_PAYLOAD_LEN) {
            return Err(Error::InvalidArgument(format!(
                "WAL record of seq {} has {} bytes, over the {MAX_PAYLOAD_LEN}-byte frame limit",
                big.seq,
                big.payload.len()
            )));
        }
        self.prepare(storage)?;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        for r in records {
            encode_frame(self.segment.id, self.synced, KIND_RECORD, r, &mut buf);
        }
        let result = self.append(storage, &buf);
        self.buf = buf;
        result
    }

    /// Appends the frame of `record` for this writer's segment to `out`, carrying the writer's
    /// durability watermark (prefer it to `encode_record` for frames given to `append`: the
    /// watermark is what lets replay tell a damaged synced record from a torn tail).
    pub fn encode(&self, record: &WalRecord<'_>, out: &mut Vec<u8>) {
        encode_frame(self.segment.id, self.synced, KIND_RECORD, record, out);
    }

    /// Writes a seal frame at the tail: the segment takes no more records. Idempotent.
    pub fn seal(&mut self, storage: &dyn Storage) -> Result<()> {
        if self.sealed {
            return Ok(());
        }
        self.prepare(storage)?;
        let mut frame = Vec::with_capacity(HEADER_LEN);
        let seal = WalRecord {
            seq: 0,
            payload: &[],
        };
        encode_frame(self.segment.id, self.synced, KIND_SEAL, &seal, &mut frame);
        self.write_buffered(storage, &frame, self.segment.extent.offset + self.pos)
            .map_err(|source| Error::Io {
                op: "write WAL seal",
                source,
            })?;
        self.sealed = true;
        Ok(())
    }

    /// Syncs the storage and records that everything written so far is durable.
    pub fn sync(&mut self, storage: &dyn Storage) -> Result<()> {
        storage.sync_data().map_err(|source| Error::Io {
            op: "sync WAL",
            source,
        })?;
        self.mark_synced();
        Ok(())
    }

    /// Records that the caller synced the storage after the last append.
    pub fn mark_synced(&mut self) {
        if self.prepared {
            self.synced = self.pos;
        }
    }

    /// The segment written to.
    #[must_use]
    pub fn segment(&self) -> WalSegmentRef {
        self.segment
    }

    /// Segment offset of the next frame.
    #[must_use]
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Whether the segment has been sealed.
    #[must_use]
    pub fn is_sealed(&self) -> bool {
        self.sealed
    }

    /// The extent length a new segment needs so that `frames_len` bytes of frames fit in it
    /// with room for its seal (whole pages).
    #[must_use]
    pub fn segment_len_for(frames_len: u64) -> u64 {
        frames_len
            .saturating_add(HEADER_LEN as u64)
            .div_ceil(PAGE_SIZE)
            .saturating_mul(PAGE_SIZE)
    }

    /// The first write of a writer: if the segment may hold frames of a crashed run of this
    /// same segment beyond `pos`, zero them durably before anything new is written there.
    fn prepare(&mut self, storage: &dyn Storage) -> Result<()> {
        if self.prepared {
            return Ok(());
        }
        if self.pos > 0 || self.may_hold_own_frames(storage)? {
            self.zero_rest(storage)?;
        }
        let in_page = usize::try_from(self.pos % PAGE_SIZE).unwrap_or(0);
        if in_page > 0 {
            let mut head = vec![0u8; in_page];
            let at = self.segment.extent.offset + self.pos - in_page as u64;
            storage
                .read_exact_at(&mut head, at)
                .map_err(|source| Error::Io {
                    op: "read WAL tail page",
                    source,
                })?;
            self.tail.set(&head);
        }
        self.prepared = true;
        self.synced = self.pos;
        Ok(())
    }

    /// Writes zeroes ahead of the tail ([`Storage::write_zeroes_ahead`]), from where the last
    /// prewrite ended (or the page after the tail's: the tail's own page holds frames, so its
    /// blocks are written) to the last page boundary [`PREWRITE_LEN`] past the end of the
    /// `len` bytes about to be appended. Whole pages, so the real storage can write them
    /// directly. Only a performance measure: the zeroes need not be durable.
    fn prewrite(&mut self, storage: &dyn Storage, len: u64) -> Result<()> {
        let extent_len = self.segment.extent.len;
        let from = self
            .prewritten
            .max(self.pos.next_multiple_of(PAGE_SIZE))
            .min(extent_len);
        let window_end = (self.pos + len).saturating_add(PREWRITE_LEN);
        let to = (window_end - window_end % PAGE_SIZE)
            .min(extent_len)
            .max(from);
        if to > from {
            storage
                .write_zeroes_ahead(self.segment.extent.offset + from, to - from)
                .map_err(|source| Error::Io {
                    op: "prewrite WAL segment",
                    source,
                })?;
        }
        self.prewritten = to;
        Ok(())
    }

    /// Writes zeroes from `pos` to the end of the segment and syncs, which also makes every
    /// frame before `pos` durable. Zeroes read as the clean end of the log.
    fn zero_rest(&mut self, storage: &dyn Storage) -> Result<()> {
        let end = self.segment.extent.len;
        let from = self.segment.extent.offset + self.pos;
        write_zeroes(storage, from, end.saturating_sub(self.pos)).map_err(|source| Error::Io {
            op: "clear resumed WAL segment",
            source,
        })?;
        self.prewritten = end;
        storage.sync_data().map_err(|source| Error::Io {
            op: "sync cleared WAL segment",
            source,
        })?;
        self.synced = self.pos;
        Ok(())
    }

    /// Whether the segment from `pos` on may hold frames of this same segment (left by a run
    /// that crashed): any occurrence of the id's low 32 bits counts. A false alarm only costs
    /// a needless clearing; frames of other segments never match.
    fn may_hold_own_frames(&self, storage: &dyn Storage) -> Result<bool> {
        let file_len = storage.len().map_err(|source| Error::Io {
            op: "read file length",
            source,
        })?;
        let start = self.segment.extent.offset + self.pos;
        let available = file_len
            .min(self.segment.extent.end())
            .saturating_sub(start);
        let Ok(len) = usize::try_from(available) else {
            return Ok(true);
        };
        if len < HEADER_LEN {
            return Ok(false);
        }
        let mut tail = vec![0u8; len];
        storage
            .read_exact_at(&mut tail, start)
            .map_err(|source| Error::Io {
                op: "read WAL tail",
                source,
            })?;
        let id = (self.segment.id as u32).to_le_bytes();
        Ok(tail.windows(id.len()).any(|w| w == id))
    }
}
