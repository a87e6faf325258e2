//! Atomic write batches.

/// Puts, deletes and range deletes applied atomically and in isolation by `Engine::write`.
#[derive(Debug, Clone, Default)]
pub struct WriteBatch {}
