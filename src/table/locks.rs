//! Striped partition locks: conditional writes read, check and write under the lock of their
//! partition, so writers of different partitions almost never contend.

use parking_lot::{Mutex, MutexGuard};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::limits::LOCK_STRIPES;

/// One lock on its own cache line, so threads locking neighbouring stripes do not share one.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Stripe(Mutex<()>);

/// A fixed set of mutexes; a partition (table id, PartitionKey) maps to one by hash.
#[derive(Debug)]
pub(crate) struct PartitionLocks {
    stripes: Box<[Stripe; LOCK_STRIPES]>,
}

impl PartitionLocks {
    pub(crate) fn new() -> Self {
        Self {
            stripes: Box::new(std::array::from_fn(|_| Stripe::default())),
        }
    }

    /// Locks the stripe of partition `partition_key` of table `table_id`.
    pub(crate) fn lock(&self, table_id: u32, partition_key: &str) -> MutexGuard<'_, ()> {
        self.stripe(table_id, partition_key).lock()
    }

    /// Locks the stripe of the partition if no one holds it (this thread included).
    pub(crate) fn try_lock(
        &self,
        table_id: u32,
        partition_key: &str,
    ) -> Option<MutexGuard<'_, ()>> {
        self.stripe(table_id, partition_key).try_lock()
    }

    /// The mutex of the partition's stripe.
    fn stripe(&self, table_id: u32, partition_key: &str) -> &Mutex<()> {
        let hash = xxh3_64_with_seed(partition_key.as_bytes(), u64::from(table_id));
        #[expect(
            clippy::cast_possible_truncation,
            reason = "only the low bits select a stripe"
        )]
        let index = hash as usize & (LOCK_STRIPES - 1);
        #[expect(
            clippy::indexing_slicing,
            reason = "masked by LOCK_STRIPES - 1 (a power of two), below the array length"
        )]
        &self.stripes[index].0
    }
}
