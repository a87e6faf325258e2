//! Entities: keys, Timestamp and ordered custom properties.

use super::{DateTime, PartitionKey, PropertyName, RowKey, Value};

/// An entity: its keys, the server-managed Timestamp and up to 252 custom properties in the
/// order they were given. Invariants (property count, 1 MiB total, no duplicate names) are
/// enforced by its checked constructors and mutators.
#[derive(Debug, Clone)]
pub struct Entity {
    partition_key: PartitionKey,
    row_key: RowKey,
    timestamp: Option<DateTime>,
    properties: Vec<(PropertyName, Value)>,
}
