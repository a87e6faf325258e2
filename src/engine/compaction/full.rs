//! `Engine::compact()`: one merge of every level into the last, cut into key ranges merged on
//! parallel threads, then relocation so the file can shrink.

use std::sync::Arc;

use super::merge::KeyRange;
use super::pick::CompactionJob;
use crate::engine::Result;
use crate::engine::inner::Inner;
use crate::engine::limits::NUM_LEVELS;
use crate::engine::version::SstHandle;

/// Most threads one full compaction merges on (at most one per available core).
const MAX_COMPACTION_THREADS: usize = 4;
/// A key range is not worth a thread of its own below this many target-sized SSTs of input.
pub const MIN_PART_SSTS: u64 = 2;

/// Threads one compaction merges on: one per available core, at most `MAX_COMPACTION_THREADS`.
pub fn compaction_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_COMPACTION_THREADS)
}

impl Inner {
    /// Compacts everything into the last level, then moves SSTs out of the file's tail so the
    /// file can shrink. Caller holds `compaction`.
    pub fn compact_all(&self) -> Result<()> {
        self.flush(false)?;
        // Its own function: every handle on the inputs is dropped on return, so their
        // extents are free for the relocation passes.
        self.merge_all_levels()?;
        // Drop the WAL segment allocated before the compaction (likely mid-file; the flush
        // above kept the log in it), then move SSTs down into the holes the compaction left.
        // The first switch frees the old segment; the second can then land in the lowest hole.
        // Nothing is punched before the relocation passes have refilled the holes.
        self.flush_punching(true, false)?;
        self.flush_punching(true, false)?;
        self.relocate_tail()
    }

    /// Merges every SST into the last level, on parallel threads by key range.
    fn merge_all_levels(&self) -> Result<()> {
        let (inputs, sample) = {
            let version = Arc::clone(&self.view().version);
            let inputs: Vec<Arc<SstHandle>> = version.ssts().cloned().collect();
            let sample: Vec<Arc<SstHandle>> =
                range_sample(&version.levels).into_iter().cloned().collect();
            (inputs, sample)
        };
        if inputs.is_empty() {
            return Ok(());
        }
        let job = CompactionJob {
            inputs,
            output_level: NUM_LEVELS - 1,
            drop_tombstones: true,
        };
        if let Some(moved) = self.trivial_move(&job) {
            return moved;
        }
        let min_part = MIN_PART_SSTS * self.options.sst_target_bytes as u64;
        let total: u64 = job.inputs.iter().map(|sst| sst.meta.len).sum();
        let parts = split_ranges(&sample, part_count(total, min_part));
        drop(sample);
        let rules = super::DropRules {
            tombstones: true,
            split: true,
            preemptible: false,
            yield_to_sync: false,
        };
        match self.merge_parts(&job, parts, rules)? {
            Some(outputs) => self.commit_job(&job, outputs),
            None => Ok(()),
        }
    }
}

/// Threads a merge of `total` input bytes runs on: one per available core, but at least
/// `min_part` bytes each.
pub fn part_count(total: u64, min_part: u64) -> usize {
    compaction_threads().min(usize::try_from(total / min_part.max(1)).unwrap_or(usize::MAX))
}

/// The SSTs whose first keys and sizes tell where a full compaction's bytes lie: those of
/// level 1+, disjoint within a level. An L0 SST spans about every key, so counted at its
/// first key it drags the cut forward (after a bulk load, 18 of them put it at a third of the
/// keys: one thread merged twice the other's input). L0's own when nothing lies deeper.
fn range_sample<T>(levels: &[Vec<T>]) -> Vec<&T> {
    let deeper: Vec<&T> = levels.iter().skip(1).flatten().collect();
    if deeper.is_empty() {
        levels.iter().flatten().collect()
    } else {
        deeper
    }
}

/// Cuts the key space into at most `parts` ranges of about equal bytes of `sample`, at the
/// first keys of its SSTs (see [`range_sample`]). Every range but the first starts where the
/// previous one ends, so each key falls in exactly one.
pub fn split_ranges(sample: &[Arc<SstHandle>], parts: usize) -> Vec<KeyRange> {
    let starts = sample
        .iter()
        .map(|sst| (sst.meta.props.min_key.as_slice(), sst.meta.len))
        .collect();
    cut_ranges(starts, parts)
}

/// [`split_ranges`] on (first key, bytes) pairs.
fn cut_ranges(mut starts: Vec<(&[u8], u64)>, parts: usize) -> Vec<KeyRange> {
    starts.sort_unstable();
    let total: u64 = starts.iter().map(|(_, len)| len).sum();
    let mut cuts: Vec<Vec<u8>> = Vec::new();
    let mut seen = 0u64;
    for (key, len) in starts {
        let part = u64::try_from(cuts.len() + 1).unwrap_or(u64::MAX);
        let due = total / u64::try_from(parts.max(1)).unwrap_or(1) * part;
        if cuts.len() + 1 < parts && seen >= due && cuts.last().is_none_or(|c| c.as_slice() < key) {
            cuts.push(key.to_vec());
        }
        seen += len;
    }
    let mut ranges = Vec::with_capacity(cuts.len() + 1);
    let mut start = None;
    for cut in cuts {
        ranges.push(KeyRange {
            start: start.take(),
            end: Some(cut.clone()),
        });
        start = Some(cut);
    }
    ranges.push(KeyRange { start, end: None });
    ranges
}

#[cfg(test)]
mod tests {
    use super::{cut_ranges, range_sample};

    /// (first key, bytes) of `count` SSTs of `bytes` each, first keys `prefix` + 0, 1, ...
    fn ssts(prefix: u8, count: u8, bytes: u64) -> Vec<(Vec<u8>, u64)> {
        (0..count)
            .map(|i| (vec![prefix, b'0' + i], bytes))
            .collect()
    }

    fn cuts(levels: &[Vec<(Vec<u8>, u64)>], parts: usize) -> Vec<Vec<u8>> {
        let starts = range_sample(levels)
            .into_iter()
            .map(|(key, len)| (key.as_slice(), *len))
            .collect();
        cut_ranges(starts, parts)
            .into_iter()
            .filter_map(|range| range.end)
            .collect()
    }

    #[test]
    fn l0_ssts_do_not_drag_the_cut_to_their_first_keys() {
        // Four 10-byte L0 SSTs starting at "a0".."a3" hold half the bytes; counted at their
        // first keys they would put the cut at "b0", leaving one range with all of L1.
        let levels = vec![ssts(b'a', 4, 10), ssts(b'b', 10, 4)];
        assert_eq!(cuts(&levels, 2), vec![b"b5".to_vec()]);
    }

    #[test]
    fn a_database_held_only_in_l0_is_cut_by_its_l0_ssts() {
        let levels = vec![ssts(b'a', 4, 10), Vec::new()];
        assert_eq!(cuts(&levels, 2), vec![b"a2".to_vec()]);
    }
}
