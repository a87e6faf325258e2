//! Flushes and leveled compaction: picking work, merging inputs into new SSTs, and committing
//! the new version.
//!
//! L0 holds one SST per flushed memtable (newest first, overlapping); every deeper level holds
//! non-overlapping SSTs sorted by key, each level `level_size_ratio` times larger than the one
//! above. All L0 SSTs move to L1 together once `l0_compaction_trigger` of them exist, so the
//! newest version of a key is always in the highest level that holds the key.

mod flush;
mod full;
mod merge;
mod output;
mod pace;
mod pick;
mod preempt;
mod priority;
mod reclaim;
#[cfg(test)]
mod test_engine;

use merge::{EntrySource, KeyRange, SstMerge};
use output::SstOutput;
pub use pick::{CompactionJob, pick};
pub use preempt::Preempt;

use std::sync::Arc;

use super::file::Extent;
use super::inner::Inner;
use super::manifest::SstMeta;
use super::sst::{SstOptions, SstReader, SstWriter};
use super::stall::{Debt, Mode};
use super::version::{SstHandle, Version};
use super::{Error, Result, ValueKind};

/// Holes smaller than `sst_target_bytes / HOLE_FILL_MIN_DIV` are not worth cutting an SST for.
const HOLE_FILL_MIN_DIV: usize = 8;
/// Room left in a hole for the error of `SstWriter::estimated_len` (filters, index, last block).
const HOLE_FILL_SLACK_BYTES: u64 = 16 << 10;

/// Bound on the relocation passes of one `compact()` (each commits a new version). Passes stop
/// earlier, as soon as one moves nothing: every move lands strictly below its source, so the
/// layout only ever packs downwards and the bound merely caps the work on a fragmented file.
const RELOCATE_MAX_PASSES: usize = 32;
/// Relocation copies SSTs in chunks of this size.
const RELOCATE_CHUNK_BYTES: usize = 256 << 10;

/// What a merge drops on its way to the output, and how it writes it.
#[derive(Debug, Clone, Copy)]
pub struct DropRules {
    /// Point tombstones can go: no deeper SST may hold an older version of their key.
    pub tombstones: bool,
    /// Split the output into SSTs of about `sst_target_bytes`.
    pub split: bool,
    /// A background job: it stops, writing nothing durable, once `compact()` waits.
    pub preemptible: bool,
    /// A background job started beside `Sync` writers and not urgent: every part runs on a
    /// thread of its own, at the lowest CPU priority while the writers stay active (see
    /// [`priority`]); one that cannot take its priority back stops like a preempted job
    /// (writing nothing durable) if writers get held back, to be picked again.
    pub yield_to_sync: bool,
}

impl Inner {
    /// Flushes frozen memtables, then compacts while any level is over its budget.
    /// Runs on the background thread, or inline in writers without one.
    pub fn maintain(&self) -> Result<()> {
        {
            let _guard = self.flushing.lock();
            self.flush_frozen()?;
        }
        let _guard = self.compaction.lock();
        while !self.preempt.requested() {
            let Some(job) = pick(&self.view().version, &self.options) else {
                break;
            };
            self.run_compaction(&job)?;
            // Memtables frozen during the job go to L0 now, not after the whole backlog:
            // otherwise writers stop at the frozen-memtable limit and flush them themselves.
            if !self.frozen.lock().is_empty()
                && let Some(_flushing) = self.flushing.try_lock()
            {
                self.flush_frozen()?;
            }
        }
        if self.preempt.requested() {
            // Whatever `compact()` leaves over budget (writes made meanwhile) is picked up
            // once it returns the lock.
            self.signal_work();
        }
        Ok(())
    }

    /// Runs one compaction job and commits its result, unless a waiting `compact()`
    /// preempts it (then nothing changes). Caller holds `compaction`.
    pub fn run_compaction(&self, job: &CompactionJob) -> Result<()> {
        if let Some(moved) = self.trivial_move(job) {
            return moved;
        }
        let (parts, urgent) = self.subcompactions(job);
        let rules = DropRules {
            tombstones: job.drop_tombstones,
            split: true,
            preemptible: true,
            // Only beside `Sync` writers: elsewhere the first part stays on this thread, as
            // spawning every part costs a thread's heap arena (peak RSS +2–5 MiB measured).
            yield_to_sync: !urgent && self.stall.sync_writers_active(),
        };
        let Some(outputs) = self.merge_parts(job, parts, rules)? else {
            return Ok(());
        };
        self.commit_job(job, outputs)?;
        self.punch_after_merge();
        Ok(())
    }

    /// Key ranges `job` is merged in, one per thread (RocksDB's subcompactions): a long
    /// L0 → L1 job on one thread let L0 pile up to the write stop while the other core idled.
    /// Only while compaction is behind (RocksDB's "speedup" bound: L0 a quarter of the way
    /// from its trigger to the slowdown, or writers held back): otherwise the extra thread
    /// only takes a core from the writers. Cut at the first keys of the job's output-level
    /// inputs, which are disjoint and tell how the keys spread (L0 SSTs span about all keys).
    /// Also tells whether the job is urgent: writers are already held back.
    fn subcompactions(&self, job: &CompactionJob) -> (Vec<KeyRange>, bool) {
        let current = Arc::clone(&self.view().version);
        let frozen = self.frozen.lock().len();
        let debt = Debt::of(&current, frozen, &self.options);
        // The controller's mode too: a lowered job stops on it, and must come back urgent.
        let urgent = debt.mode(&self.options) != Mode::Normal
            || self.stall.mode().is_some_and(|mode| mode != Mode::Normal);
        let trigger = self.options.l0_compaction_trigger;
        let speedup_at = trigger + self.options.l0_slowdown_at().saturating_sub(trigger) / 4;
        if debt.files() < speedup_at && !urgent {
            return (vec![KeyRange::default()], urgent);
        }
        let Some(level) = current.levels.get(job.output_level) else {
            return (vec![KeyRange::default()], urgent);
        };
        let lower: Vec<Arc<SstHandle>> = job
            .inputs
            .iter()
            .filter(|input| level.iter().any(|sst| Arc::ptr_eq(sst, input)))
            .cloned()
            .collect();
        let min_part = full::MIN_PART_SSTS * self.options.sst_target_bytes as u64;
        let total: u64 = lower.iter().map(|sst| sst.meta.len).sum();
        let parts = full::split_ranges(&lower, full::part_count(total, min_part));
        (parts, urgent)
    }

    /// Merges `job` into new SSTs per `rules`, one key range of `parts` per thread (the first
    /// on this one, unless `rules.yield_to_sync`: then each on a thread of its own, whose
    /// priority may be lowered). On an error, or `None` when preempted, the outputs of every
    /// part are freed.
    fn merge_parts(
        &self,
        job: &CompactionJob,
        parts: Vec<KeyRange>,
        rules: DropRules,
    ) -> Result<Option<Vec<Arc<SstHandle>>>> {
        let current = Arc::clone(&self.view().version);
        let tombstones = current.range_tombstones.as_slice();
        let merge_part = |range: KeyRange, rules: DropRules| {
            let mut source = SstMerge::bounded(&job.inputs, range);
            self.write_ssts_unless_preempted(&mut source, job.output_level, rules, tombstones, 0)
        };
        let mut parts = parts.into_iter();
        let first = if rules.yield_to_sync {
            None
        } else {
            Some(parts.next().unwrap_or_default())
        };
        let results: Vec<Result<Option<Vec<Arc<SstHandle>>>>> = std::thread::scope(|scope| {
            // A part whose thread cannot be created (a thread limit) runs on this thread,
            // never lowered: this thread's priority is never changed.
            let spawned: Vec<_> = parts
                .map(|range| {
                    let fallback = range.clone();
                    std::thread::Builder::new()
                        .spawn_scoped(scope, move || merge_part(range, rules))
                        .map_err(|_| fallback)
                })
                .collect();
            let mut results: Vec<_> = first
                .into_iter()
                .map(|range| merge_part(range, rules))
                .collect();
            let inline = DropRules {
                yield_to_sync: false,
                ..rules
            };
            results.extend(spawned.into_iter().map(|spawned| match spawned {
                Ok(handle) => handle.join().unwrap_or_else(|_| {
                    Err(Error::InvalidArgument("compaction thread panicked".into()))
                }),
                Err(range) => merge_part(range, inline),
            }));
            results
        });
        let mut outputs = Vec::new();
        let mut failure = None;
        let mut preempted = false;
        for result in results {
            match result {
                Ok(Some(ssts)) => outputs.extend(ssts),
                Ok(None) => preempted = true,
                Err(err) => failure = failure.or(Some(err)),
            }
        }
        if failure.is_some() || preempted {
            let extents: Vec<Extent> = outputs.iter().map(|sst| sst.meta.extent).collect();
            drop(outputs);
            self.free(&extents);
            return failure.map_or(Ok(None), Err);
        }
        Ok(Some(outputs))
    }

    /// Commits `outputs` in place of `job`'s inputs.
    fn commit_job(&self, job: &CompactionJob, outputs: Vec<Arc<SstHandle>>) -> Result<()> {
        let edit = |current: &Version| {
            let mut version = current.clone();
            for level in &mut version.levels {
                level.retain(|sst| !job.inputs.iter().any(|input| Arc::ptr_eq(sst, input)));
            }
            if let Some(level) = version.levels.get_mut(job.output_level) {
                level.extend(outputs);
                level.sort_by(|a, b| a.meta.props.min_key.cmp(&b.meta.props.min_key));
            }
            version
        };
        self.install(edit, job.inputs.clone(), None)
    }

    /// Moves the single input of `job` down a level without rewriting it (RocksDB's "trivial
    /// move"), when nothing in the output level overlaps it and the merge would drop nothing:
    /// no point tombstone the job could drop, no range tombstone over older entries of it.
    /// L0 SSTs are not moved: they are stored uncompressed. `None` when the job needs a merge.
    fn trivial_move(&self, job: &CompactionJob) -> Option<Result<()>> {
        let [sst] = job.inputs.as_slice() else {
            return None;
        };
        let current = Arc::clone(&self.view().version);
        let from = current
            .levels
            .iter()
            .position(|level| level.iter().any(|slot| Arc::ptr_eq(slot, sst)))?;
        let props = &sst.meta.props;
        let shadowed = current
            .range_tombstones
            .iter()
            .any(|t| t.seq > props.min_seq && t.overlaps(&props.min_key, &props.max_key));
        if from == 0
            || from >= job.output_level
            || shadowed
            || (job.drop_tombstones && props.tombstones > 0)
        {
            return None;
        }
        drop(current);
        let edit = |current: &Version| {
            let mut version = current.clone();
            for level in &mut version.levels {
                level.retain(|slot| !Arc::ptr_eq(slot, sst));
            }
            if let Some(level) = version.levels.get_mut(job.output_level) {
                level.push(Arc::clone(sst));
                level.sort_by(|a, b| a.meta.props.min_key.cmp(&b.meta.props.min_key));
            }
            version
        };
        Some(self.install(edit, Vec::new(), None))
    }

    /// Writes the newest version of each key of `entries` (internal order) into SSTs of
    /// `level`, dropping entries deleted by `range_tombstones` and, per `rules`, tombstones.
    /// Without `rules.split` the single output reserves `capacity` bytes up front.
    fn write_ssts(
        &self,
        entries: &mut impl EntrySource,
        level: usize,
        rules: DropRules,
        range_tombstones: &[super::RangeTombstone],
        capacity: u64,
    ) -> Result<Vec<Arc<SstHandle>>> {
        let rules = DropRules {
            preemptible: false,
            yield_to_sync: false,
            ..rules
        };
        let written =
            self.write_ssts_unless_preempted(entries, level, rules, range_tombstones, capacity)?;
        Ok(written.unwrap_or_default())
    }

    /// As [`Inner::write_ssts`]; with `rules.preemptible`, stops once `compact()` waits,
    /// frees what it wrote and returns `None`.
    fn write_ssts_unless_preempted(
        &self,
        entries: &mut impl EntrySource,
        level: usize,
        rules: DropRules,
        range_tombstones: &[super::RangeTombstone],
        capacity: u64,
    ) -> Result<Option<Vec<Arc<SstHandle>>>> {
        let mut outputs = Vec::new();
        let mut target = self.output_target(rules.split);
        let mut out = self.new_output(level, target, capacity, rules.split);
        let mut preempted = false;
        let mut write_all = || -> Result<()> {
            let mut last: Vec<u8> = Vec::new();
            let mut first = true;
            // A job started beside `Sync` writers polls at its first entry, so it yields at once.
            let mut until_poll = if rules.yield_to_sync {
                1
            } else {
                preempt::PREEMPT_POLL_ENTRIES
            };
            let mut lowered: Option<priority::Lowered> = None;
            // Key and value bytes merged since the last poll, for pacing.
            let mut merged = 0u64;
            while entries.advance()? {
                until_poll -= 1;
                if until_poll == 0 {
                    until_poll = preempt::PREEMPT_POLL_ENTRIES;
                    if rules.preemptible && self.preempt.requested() {
                        preempted = true;
                        return Ok(());
                    }
                    if rules.preemptible {
                        // Every background job, also one started before the writer came.
                        // A waiting `compact()` ends the sleep: it preempts this job at once.
                        self.stall.pace_merge(merged, || {
                            !self.preempt.requested() && self.pace_for_sync()
                        });
                        merged = 0;
                    }
                    if rules.yield_to_sync {
                        let active = self.stall.sync_writers_active();
                        let urgent = self.stall.mode().is_some_and(|mode| mode != Mode::Normal);
                        match lowered {
                            None if active && !urgent => {
                                lowered = Some(priority::lower_current_thread());
                            }
                            Some(saved) if !active || urgent => {
                                if saved.restore() {
                                    lowered = None;
                                } else if urgent {
                                    // Unprivileged: redone from the start at normal priority.
                                    preempted = true;
                                    return Ok(());
                                }
                            }
                            _ => {}
                        }
                    }
                }
                let (key, seq, kind) = (entries.key(), entries.seq(), entries.kind());
                if !first && last == key {
                    continue;
                }
                first = false;
                last.clear();
                last.extend_from_slice(key);
                if range_tombstones
                    .iter()
                    .any(|t| t.contains(key) && seq < t.seq)
                    || (rules.tombstones && kind == ValueKind::Delete)
                {
                    continue;
                }
                let value = entries.value();
                merged += (key.len() + value.len()) as u64;
                self.output_add(&mut out, key, seq, kind, value)?;
                if rules.split && out.estimated_len() >= target {
                    target = self.output_target(true);
                    let next = self.new_output(level, target, capacity, true);
                    outputs.extend(self.output_finish(std::mem::replace(&mut out, next))?);
                }
            }
            Ok(())
        };
        if let Err(err) = write_all() {
            self.output_abandon(out);
            return Err(err);
        }
        if preempted {
            self.output_abandon(out);
            let extents: Vec<Extent> = outputs.iter().map(|sst| sst.meta.extent).collect();
            drop(outputs);
            self.free(&extents);
            return Ok(None);
        }
        outputs.extend(self.output_finish(out)?);
        Ok(Some(outputs))
    }

    /// A fresh output for `level`, reserving room for `target` plus slack when splitting.
    fn new_output(&self, level: usize, target: usize, capacity: u64, split: bool) -> SstOutput {
        let capacity = if split {
            target as u64 + HOLE_FILL_SLACK_BYTES
        } else {
            capacity
        };
        SstOutput::new(SstWriter::new(self.sst_options(level)), capacity)
    }

    /// Size to cut the next compaction output at: `sst_target_bytes`, or less to fill the
    /// lowest hole worth filling exactly, so outputs land in the holes of the file instead of
    /// past its tail (which then cannot be truncated).
    fn output_target(&self, split: bool) -> usize {
        let target = self.options.sst_target_bytes;
        if !split {
            return usize::MAX;
        }
        let min = (target / HOLE_FILL_MIN_DIV) as u64 + HOLE_FILL_SLACK_BYTES;
        let mut alloc = self.alloc.lock();
        for extent in self.graveyard.drain() {
            alloc.free(extent);
        }
        alloc.lowest_hole(min).map_or(target, |hole| {
            let fill = hole.len.saturating_sub(HOLE_FILL_SLACK_BYTES);
            target.min(usize::try_from(fill).unwrap_or(usize::MAX))
        })
    }

    /// SST options for `level`.
    pub fn sst_options(&self, level: usize) -> SstOptions {
        SstOptions {
            block_bytes: self.options.block_bytes,
            restart_interval: self.options.restart_interval,
            compression: self.options.compression_at(level),
            bloom_bits_per_key: self.options.bloom_bits_per_key,
            prefix_extractor: self.options.prefix_extractor.clone(),
        }
    }

    /// Moves SSTs down into free holes, pass after pass (each pass frees the places it moved
    /// SSTs from, which merge into larger holes for the next), so the free space ends up at
    /// the tail and is truncated away.
    pub(super) fn relocate_tail(&self) -> Result<()> {
        for _ in 0..RELOCATE_MAX_PASSES {
            if !self.relocate_pass()? {
                break;
            }
        }
        self.truncate_tail()?;
        // Only now: the passes refill the holes the merge left, and punching them first
        // would make the file system allocate those pages again.
        self.punch_free_space();
        Ok(())
    }

    /// Moves every SST that sits above a free hole into the lowest holes, highest SST first,
    /// and commits the moves; false when nothing could move. An SST goes whole into a hole it
    /// fits (a copy); an SST of level 1+ that fits none is rewritten into pieces cut to fill
    /// the lowest holes (pieces stay inside its key range, so the level stays disjoint), kept
    /// only if every piece landed below it. Nothing ever moves up, so passes cannot cycle.
    fn relocate_pass(&self) -> Result<bool> {
        let current = Arc::clone(&self.view().version);
        let mut by_offset: Vec<(usize, Arc<SstHandle>)> = current
            .levels
            .iter()
            .enumerate()
            .flat_map(|(level, ssts)| ssts.iter().map(move |sst| (level, Arc::clone(sst))))
            .collect();
        drop(current);
        by_offset.sort_by_key(|(_, sst)| std::cmp::Reverse(sst.meta.extent.offset));
        let mut moved: Vec<(Arc<SstHandle>, Vec<Arc<SstHandle>>)> = Vec::new();
        let mut buf = Vec::new();
        let min_hole = self.options.sst_target_bytes / HOLE_FILL_MIN_DIV;
        for (level, sst) in by_offset {
            let target = self.allocate(sst.meta.len);
            if target.offset < sst.meta.extent.offset {
                self.copy_extent(
                    sst.meta.extent.offset,
                    target.offset,
                    sst.meta.len,
                    &mut buf,
                )?;
                let reader = SstReader::open(
                    Arc::clone(&self.storage),
                    target,
                    sst.meta.len,
                    sst.meta.id,
                    Arc::clone(&self.cache),
                )?;
                let meta = SstMeta {
                    extent: target,
                    ..sst.meta.clone()
                };
                let handle = Arc::new(SstHandle::new(meta, reader, Arc::clone(&self.graveyard)));
                moved.push((sst, vec![handle]));
                continue;
            }
            self.free(&[target]);
            // Pieces are only cut for holes of at least this size, so only those can take them.
            let room_below: u64 = self
                .alloc
                .lock()
                .free_extents()
                .take_while(|hole| hole.offset < sst.meta.extent.offset)
                .filter(|hole| hole.len >= min_hole as u64 + HOLE_FILL_SLACK_BYTES)
                .map(|hole| hole.len)
                .sum();
            if level > 0 && room_below >= sst.meta.extent.len {
                let mut source = SstMerge::new(std::slice::from_ref(&sst));
                let rules = DropRules {
                    tombstones: false,
                    split: true,
                    preemptible: false,
                    yield_to_sync: false,
                };
                let pieces = self.write_ssts(&mut source, level, rules, &[], 0)?;
                // A piece the holes could not take (cut to a hole but outgrown by a large
                // entry, or left over once the holes are full) lands at the end of the file:
                // moving would then grow the file, so the SST stays where it is.
                if pieces
                    .iter()
                    .all(|piece| piece.meta.extent.offset < sst.meta.extent.offset)
                {
                    moved.push((sst, pieces));
                } else {
                    let extents: Vec<Extent> = pieces.iter().map(|p| p.meta.extent).collect();
                    drop(pieces);
                    self.free(&extents);
                }
            }
        }
        if moved.is_empty() {
            return Ok(false);
        }
        let obsolete = moved.iter().map(|(old, _)| Arc::clone(old)).collect();
        // `move`: the closure, and with it the moved-from handles, is consumed inside
        // `install`, so their extents are free before it truncates the tail.
        let edit = move |current: &Version| {
            let mut version = current.clone();
            for (old, new) in &moved {
                for level in &mut version.levels {
                    if let Some(at) = level.iter().position(|slot| Arc::ptr_eq(slot, old)) {
                        level.splice(at..=at, new.iter().cloned());
                    }
                }
            }
            version
        };
        self.install(edit, obsolete, None)?;
        Ok(true)
    }

    /// Copies `len` bytes from `from` to `to` through `buf`, in chunks so relocating an SST
    /// does not hold its whole image in memory.
    fn copy_extent(&self, from: u64, to: u64, len: u64, buf: &mut Vec<u8>) -> Result<()> {
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(RELOCATE_CHUNK_BYTES as u64) as usize;
            buf.resize(n, 0);
            self.storage
                .read_exact_at(buf, from + done)
                .map_err(super::inner::io("read SST for relocation"))?;
            self.write_at(buf, to + done, "write relocated SST")
                .map_err(|err| self.poisoned(err))?;
            done += n as u64;
        }
        Ok(())
    }
}
