//! Choosing the next compaction.

use std::sync::Arc;

use crate::engine::Options;
use crate::engine::limits::NUM_LEVELS;
use crate::engine::version::{SstHandle, Version};

/// One compaction: merge `inputs` (newest first) into `output_level`.
#[derive(Debug, Clone)]
pub struct CompactionJob {
    /// Input SSTs, newest data first.
    pub inputs: Vec<Arc<SstHandle>>,
    /// Where the outputs go.
    pub output_level: usize,
    /// True when no deeper SST overlaps the inputs, so point tombstones can be dropped.
    pub drop_tombstones: bool,
}

/// The target size of `level` (≥ 1).
#[must_use]
pub fn level_target(options: &Options, level: usize) -> u64 {
    let exponent = u32::try_from(level.saturating_sub(1)).unwrap_or(u32::MAX);
    options
        .l1_target_bytes
        .saturating_mul(options.level_size_ratio.max(2).saturating_pow(exponent))
}

/// Fixed-point unit of a compaction score: a level scoring `SCORE_ONE` is exactly at its budget.
const SCORE_ONE: u64 = 1 << 10;

/// The most urgent compaction, if any level is over its budget. Levels are ranked by score as
/// in RocksDB: L0 by SST count over `l0_compaction_trigger`, deeper levels by bytes over their
/// target; the highest score goes first (ties: the upper level). Serving L0 first whatever
/// the scores let L1 grow to several times its target during a load, so every L0 → L1 job
/// rewrote all of it. From a level over budget, the SST that rewrites the fewest bytes of the
/// level below per byte it moves goes first (RocksDB's "min overlapping ratio"; ties: the
/// oldest data first), which lowers write amplification against oldest-first picking.
#[must_use]
pub fn pick(version: &Version, options: &Options) -> Option<CompactionJob> {
    let l0_files = version.levels.first().map_or(0, Vec::len);
    let level_bytes: Vec<u64> = (0..NUM_LEVELS).map(|l| version.level_bytes(l)).collect();
    let level = most_urgent(l0_files, &level_bytes, options)?;
    if level == 0 {
        return Some(job(version, version.levels.first()?.clone(), 1));
    }
    let next = version.levels.get(level + 1)?;
    let cheapest = version
        .levels
        .get(level)?
        .iter()
        .min_by_key(|sst| (overlap_ratio(sst, next), sst.meta.props.min_seq))?;
    Some(job(version, vec![Arc::clone(cheapest)], level + 1))
}

/// The level to compact from, given L0's SST count and every level's bytes: the highest
/// score among L0 (once it holds `l0_compaction_trigger` SSTs) and the levels over their
/// target (never the last, which has nowhere to go); ties go to the upper level.
fn most_urgent(l0_files: usize, level_bytes: &[u64], options: &Options) -> Option<usize> {
    let trigger = options.l0_compaction_trigger.max(1) as u64;
    let l0_files = l0_files as u64;
    let l0 = (l0_files >= trigger).then(|| (0, l0_files.saturating_mul(SCORE_ONE) / trigger));
    let deeper = (1..NUM_LEVELS - 1).filter_map(|level| {
        let bytes = level_bytes.get(level).copied().unwrap_or(0);
        let target = level_target(options, level);
        (bytes > target).then(|| (level, bytes.saturating_mul(SCORE_ONE) / target.max(1)))
    });
    l0.into_iter()
        .chain(deeper)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(level, _)| level)
}

/// Bytes of `below` that `sst` overlaps, per 1/1024 of `sst`'s own size.
fn overlap_ratio(sst: &SstHandle, below: &[Arc<SstHandle>]) -> u64 {
    let (min, max) = (&sst.meta.props.min_key, &sst.meta.props.max_key);
    let overlap: u64 = below
        .iter()
        .filter(|other| other.overlaps(min, max))
        .map(|other| other.meta.len)
        .sum();
    overlap.saturating_mul(1024) / sst.meta.len.max(1)
}

/// A job merging `upper` with every SST of `output_level` its key range overlaps.
fn job(version: &Version, mut inputs: Vec<Arc<SstHandle>>, output_level: usize) -> CompactionJob {
    let min = inputs
        .iter()
        .map(|sst| sst.meta.props.min_key.clone())
        .min()
        .unwrap_or_default();
    let max = inputs
        .iter()
        .map(|sst| sst.meta.props.max_key.clone())
        .max()
        .unwrap_or_default();
    if let Some(level) = version.levels.get(output_level) {
        inputs.extend(level.iter().filter(|sst| sst.overlaps(&min, &max)).cloned());
    }
    let deeper_overlap = version
        .levels
        .iter()
        .skip(output_level + 1)
        .flatten()
        .any(|sst| sst.overlaps(&min, &max));
    CompactionJob {
        inputs,
        output_level,
        drop_tombstones: !deeper_overlap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn bytes(per_level: &[u64]) -> Vec<u64> {
        let mut all = vec![0; NUM_LEVELS];
        for (slot, b) in all.iter_mut().zip(per_level) {
            *slot = *b;
        }
        all
    }

    #[test]
    fn level_further_over_its_target_than_l0_over_its_trigger_goes_first() {
        let options = Options::default();
        // L0 at 5/4 of its trigger, L1 at 6× its 16 MiB target: L1 → L2 first.
        assert_eq!(most_urgent(5, &bytes(&[0, 96 * MIB]), &options), Some(1));
        // L0 at 8/4, L1 at 1.5×: L0 → L1 first.
        assert_eq!(most_urgent(8, &bytes(&[0, 24 * MIB]), &options), Some(0));
    }

    #[test]
    fn equal_scores_go_to_the_upper_level() {
        let options = Options::default();
        assert_eq!(most_urgent(8, &bytes(&[0, 32 * MIB]), &options), Some(0));
        assert_eq!(
            most_urgent(0, &bytes(&[0, 32 * MIB, 320 * MIB]), &options),
            Some(1)
        );
    }

    #[test]
    fn nothing_is_due_below_the_trigger_and_the_targets() {
        let options = Options::default();
        assert_eq!(
            most_urgent(3, &bytes(&[0, 16 * MIB, 160 * MIB]), &options),
            None
        );
    }

    #[test]
    fn last_level_is_never_a_source() {
        let options = Options::default();
        let mut all = bytes(&[]);
        if let Some(last) = all.last_mut() {
            *last = u64::MAX;
        }
        assert_eq!(most_urgent(0, &all, &options), None);
    }
}
