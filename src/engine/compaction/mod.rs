//! Leveled compaction.
