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

/// The most urgent compaction, if any level is over its budget: L0 by SST count, deeper
/// levels by bytes. From a level over budget, the SST that rewrites the fewest bytes of the
/// level below per byte it moves goes first (RocksDB's "min overlapping ratio"; ties: the
/// oldest data first), which lowers write amplification against oldest-first picking.
#[must_use]
pub fn pick(version: &Version, options: &Options) -> Option<CompactionJob> {
    let l0 = version.levels.first()?;
    if !l0.is_empty() && l0.len() >= options.l0_compaction_trigger.max(1) {
        return Some(job(version, l0.clone(), 1));
    }
    for level in 1..NUM_LEVELS - 1 {
        if version.level_bytes(level) > level_target(options, level) {
            let next = version.levels.get(level + 1)?;
            let cheapest = version
                .levels
                .get(level)?
                .iter()
                .min_by_key(|sst| (overlap_ratio(sst, next), sst.meta.props.min_seq))?;
            return Some(job(version, vec![Arc::clone(cheapest)], level + 1));
        }
    }
    None
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
