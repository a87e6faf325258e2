//! Shared fixtures of the WAL tests.
#![allow(dead_code, clippy::unwrap_used)]

use strata::engine::file::{Storage, WalSegmentRef};
use strata::engine::wal::replay;

/// Every record `segment` replays on `disk`, as (sequence, payload), in replay order.
pub fn replayed(disk: &dyn Storage, segment: WalSegmentRef) -> Vec<(u64, Vec<u8>)> {
    let mut records = Vec::new();
    replay(disk, &[segment], &mut |seq, payload, _| {
        records.push((seq, payload.to_vec()));
        Ok(())
    })
    .unwrap();
    records
}
