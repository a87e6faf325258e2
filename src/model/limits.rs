//! Every limit of the data model (SPEC §2), in one place.
//!
//! Sizes of strings are counted the way the service counts them: in UTF-16 code units, two
//! bytes each, whatever their UTF-8 length in memory.

/// Shortest table name, in characters.
pub const TABLE_NAME_MIN_LEN: usize = 3;
/// Longest table name, in characters.
pub const TABLE_NAME_MAX_LEN: usize = 63;
/// The table name no user table may take (compared case-insensitively): the service's own
/// table of tables.
pub const RESERVED_TABLE_NAME: &str = "tables";

/// Largest PartitionKey or RowKey: 1 KiB, counted as UTF-16 code units × 2.
pub const KEY_MAX_BYTES: usize = 1024;

/// Longest property name, in UTF-16 code units (the service's "characters").
pub const PROPERTY_NAME_MAX_LEN: usize = 255;
/// System property names that cannot be used for custom properties (case-sensitive).
pub const RESERVED_PROPERTY_NAMES: [&str; 3] = ["PartitionKey", "RowKey", "Timestamp"];

/// Most custom properties per entity: 255 in all, minus the 3 system properties.
pub const MAX_CUSTOM_PROPERTIES: usize = 252;
/// Largest entity, as estimated by [`crate::model::Entity::size`]: 1 MiB.
pub const ENTITY_MAX_BYTES: usize = 1024 * 1024;

/// Largest `Edm.String`: 64 KiB counted as UTF-16 code units × 2 (32 Ki code units).
pub const STRING_MAX_BYTES: usize = 64 * 1024;
/// Largest `Edm.Binary`: 64 KiB.
pub const BINARY_MAX_BYTES: usize = 64 * 1024;

/// Bytes per UTF-16 code unit, the unit in which the service measures strings.
pub const UTF16_UNIT_BYTES: usize = 2;

/// Fixed part of the entity size estimate (the service's "4 bytes").
pub const ENTITY_SIZE_OVERHEAD: usize = 4;
/// Per-property part of the entity size estimate (the service's "8 bytes").
pub const PROPERTY_SIZE_OVERHEAD: usize = 8;
/// Length prefix counted for each String and Binary value in the entity size estimate.
pub const VARIABLE_VALUE_OVERHEAD: usize = 4;
/// Size counted for an `Edm.Boolean` value.
pub const BOOLEAN_VALUE_BYTES: usize = 1;
/// Size counted for an `Edm.Int32` value.
pub const INT32_VALUE_BYTES: usize = 4;
/// Size counted for an `Edm.Int64`, `Edm.Double` or `Edm.DateTime` value.
pub const EIGHT_BYTE_VALUE_BYTES: usize = 8;
/// Size counted for an `Edm.Guid` value.
pub const GUID_VALUE_BYTES: usize = 16;

/// Ticks (100 ns) per second.
pub const TICKS_PER_SECOND: i64 = 10_000_000;
/// Ticks per day.
pub const TICKS_PER_DAY: i64 = 86_400 * TICKS_PER_SECOND;
/// Nanoseconds per tick.
pub const NANOS_PER_TICK: i64 = 100;
/// Days from 0001-01-01 (tick 0) to 1970-01-01 (the Unix epoch).
pub const DAYS_TO_UNIX_EPOCH: i64 = 719_162;
/// Ticks of 1970-01-01T00:00:00Z.
pub const UNIX_EPOCH_TICKS: i64 = DAYS_TO_UNIX_EPOCH * TICKS_PER_DAY;
/// Ticks of the earliest `Edm.DateTime`, 1601-01-01T00:00:00Z.
pub const DATETIME_MIN_TICKS: i64 = 504_911_232_000_000_000;
/// Ticks of the latest `Edm.DateTime`, 9999-12-31T23:59:59.9999999Z.
pub const DATETIME_MAX_TICKS: i64 = 3_155_378_975_999_999_999;
/// Most fractional-second digits in an ISO 8601 DateTime (100 ns resolution).
pub const DATETIME_FRACTION_DIGITS: usize = 7;

/// Longest excerpt of an offending input kept in a [`crate::model::ModelError`], in
/// characters, so a huge bad input does not make a huge error.
pub const ERROR_INPUT_MAX_CHARS: usize = 128;
