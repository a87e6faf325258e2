//! Every limit and constant of the table layer (SPEC §3–6), in one place.

use std::time::Duration;

/// Most operations in one entity group transaction.
pub const BATCH_MAX_OPERATIONS: usize = 100;

/// A batch's payload must stay under this many bytes (4 MiB). The payload is counted as the
/// sum of each operation's entity size ([`crate::model::Entity::size`]); a delete counts the
/// size of an entity with its keys and no properties.
pub const BATCH_MAX_PAYLOAD_BYTES: usize = 4 * 1024 * 1024;

/// Operations from which a batch first checks, by one seek, whether any row exists between its
/// least and greatest RowKey; if none does, it skips one point read per operation.
pub const EXISTENCE_PROBE_MIN_OPERATIONS: usize = 8;

/// Engine keys up to this many bytes are built on the stack by a point get.
pub const ENGINE_KEY_STACK_BYTES: usize = 128;

/// Most entities one query page returns.
pub const PAGE_MAX_ENTITIES: usize = 1000;

/// Time after which a query page ends early, unless configured otherwise (the service's 5 s).
pub const DEFAULT_PAGE_TIME_BUDGET: Duration = Duration::from_secs(5);

/// Entities examined between two looks at the clock while a page is being filled: keeps the
/// time budget check off the per-entity path.
pub const BUDGET_CHECK_INTERVAL: u32 = 256;

/// Number of partition lock stripes; a power of two so a hash maps to a stripe by masking.
pub const LOCK_STRIPES: usize = 1024;

/// How far ahead of the Timestamps handed out the persisted clock record reaches (1 s). A
/// larger window costs fewer clock writes; after a restart, Timestamps resume at most this far
/// ahead of the wall clock.
pub const CLOCK_WINDOW_TICKS: i64 = 10_000_000;

/// PartitionKey, within the catalog table id, of the rows describing user tables.
pub const CATALOG_TABLES_PARTITION: &str = "tables";

/// PartitionKey, within the catalog table id, of the account's bookkeeping rows.
pub const CATALOG_META_PARTITION: &str = "meta";

/// RowKey of the clock record (the persisted Timestamp high-water mark).
pub const CATALOG_CLOCK_ROW: &str = "clock";

/// RowKey of the table id counter (the next id to hand out; ids are never reused).
pub const CATALOG_NEXT_ID_ROW: &str = "nextTableId";

/// Property of a catalog row holding the table name as created (case preserved).
pub const CATALOG_NAME_PROPERTY: &str = "TableName";

/// Property of a catalog row holding the table id (`Edm.Int64`).
pub const CATALOG_ID_PROPERTY: &str = "TableId";

/// Property of a catalog row holding the table's access policies (`Edm.Binary`, empty until
/// signed identifiers are supported).
pub const CATALOG_ACL_PROPERTY: &str = "Acl";

/// Property of the clock record holding the reserved high-water mark (`Edm.Int64` ticks).
pub const CATALOG_CLOCK_PROPERTY: &str = "ReservedTicks";

/// Property of the id counter row holding the next table id (`Edm.Int64`).
pub const CATALOG_NEXT_ID_PROPERTY: &str = "NextId";

/// The first table id handed to a user table (0 is the catalog's).
pub const FIRST_TABLE_ID: u32 = 1;

/// Version byte that starts every continuation token.
pub const TOKEN_VERSION: u8 = 1;

/// Bytes of a continuation token before its keys: version and PartitionKey length.
pub const TOKEN_HEADER_LEN: usize = 5;

/// Longest continuation token text accepted: two keys of at most 1536 UTF-8 bytes each (1 KiB
/// of UTF-16) and the header, in base64 (4 characters per 3 bytes), rounded up.
pub const TOKEN_MAX_TEXT_LEN: usize = 4200;
