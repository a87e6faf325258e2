//! Engine statistics.

/// Levels, files, live vs total bytes and amplification figures.
#[derive(Debug, Clone, Default)]
pub struct Stats {}
