//! Options of an account.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::limits::DEFAULT_PAGE_TIME_BUDGET;
use crate::engine::{self, Durability};
use crate::model::DateTime;

/// Where Timestamps come from. The default reads the system clock; tests substitute a clock
/// that steps backwards to check that Timestamps still advance.
pub trait TimeSource: Send + Sync + fmt::Debug {
    /// The current wall-clock time.
    fn now(&self) -> DateTime;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemTime;

impl TimeSource for SystemTime {
    fn now(&self) -> DateTime {
        DateTime::now()
    }
}

/// Options of [`crate::Account::open_with`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Options of the engine underneath. Its prefix extractor is always replaced by the
    /// partition-prefix extractor of the table key layout.
    pub engine: engine::Options,
    /// Time after which a query page ends early, possibly empty, with a continuation token.
    pub page_time_budget: Duration,
    /// How durable a write is when the call returns.
    pub durability: Durability,
    /// The wall clock Timestamps are taken from.
    pub time_source: Arc<dyn TimeSource>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            engine: engine::Options::default(),
            page_time_budget: DEFAULT_PAGE_TIME_BUDGET,
            durability: Durability::Sync,
            time_source: Arc::new(SystemTime),
        }
    }
}
