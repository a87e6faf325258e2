//! The copy-on-write manifest: live SSTs per level and range tombstones.
