//! The account clock: Timestamps that strictly increase across restarts and clock steps.

use std::sync::Arc;

use parking_lot::Mutex;

use super::catalog;
use super::error::{Result, TableError};
use super::limits::CLOCK_WINDOW_TICKS;
use super::options::TimeSource;
use crate::engine::{Durability, Engine, WriteBatch};
use crate::model::DateTime;

/// Hands out Timestamps: `max(now, last + 1 tick)`, so each is later than every earlier one
/// even if the wall clock steps back. Before handing out a Timestamp above the persisted
/// high-water mark, the mark is moved [`CLOCK_WINDOW_TICKS`] ahead and synced; after a restart
/// the clock resumes above the mark, hence above every Timestamp ever handed out.
#[derive(Debug)]
pub(crate) struct Clock {
    source: Arc<dyn TimeSource>,
    state: Mutex<ClockState>,
}

#[derive(Debug, Clone, Copy)]
struct ClockState {
    /// The last Timestamp handed out (ticks).
    last: i64,
    /// The persisted high-water mark: no Timestamp above it has been handed out.
    reserved: i64,
}

impl Clock {
    /// A clock resuming above the persisted mark `reserved` (0 for a new account).
    pub(crate) fn new(source: Arc<dyn TimeSource>, reserved: i64) -> Self {
        Self {
            source,
            state: Mutex::new(ClockState {
                last: reserved,
                reserved,
            }),
        }
    }

    /// The next Timestamp, persisting a new high-water mark first when needed.
    pub(crate) fn next(&self, engine: &Engine) -> Result<DateTime> {
        let mut state = self.state.lock();
        let now = self.source.now().ticks();
        let ticks = now.max(state.last.saturating_add(1));
        let timestamp = DateTime::from_ticks(ticks).map_err(|_| TableError::OutOfRangeInput {
            reason: "the account clock has passed 9999-12-31T23:59:59.9999999Z".to_owned(),
        })?;
        if ticks > state.reserved {
            let reserved = ticks
                .saturating_add(CLOCK_WINDOW_TICKS)
                .min(DateTime::MAX.ticks());
            let mut batch = WriteBatch::new();
            let (key, value) = catalog::clock_record(reserved)?;
            batch.put(&key, &value);
            // Always synced: a Timestamp may be handed out only once its mark is durable, or
            // a crash could let the clock repeat it.
            engine.write(&batch, Durability::Sync)?;
            state.reserved = reserved;
        }
        state.last = ticks;
        Ok(timestamp)
    }
}
