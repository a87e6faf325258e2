//! The engine the compaction unit tests drive by hand.

use std::sync::Arc;

use crate::engine::file::{FaultyStorage, Storage};
use crate::engine::inner::Inner;
use crate::engine::{Options, Result};

/// Options without a background thread whose L0 is due for a merge at 2 SSTs: flushes called
/// directly run no compaction, so a test decides when one runs.
pub(super) fn manual_options() -> Options {
    Options {
        background_compaction: false,
        l0_compaction_trigger: 2,
        ..Options::default()
    }
}

/// An engine with [`manual_options`] on a fault-injecting disk, returned with it (to count
/// its punches).
pub(super) fn manual_engine() -> Result<(Inner, Arc<FaultyStorage>)> {
    manual_engine_with(manual_options())
}

/// An engine with `options` on a fault-injecting disk, returned with it.
pub(super) fn manual_engine_with(options: Options) -> Result<(Inner, Arc<FaultyStorage>)> {
    let faulty = Arc::new(FaultyStorage::new());
    let storage: Arc<dyn Storage> = Arc::clone(&faulty) as Arc<dyn Storage>;
    let inner = crate::engine::recovery::open(storage, options, false)?;
    Ok((inner, faulty))
}
