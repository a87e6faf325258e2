//! Every constant of the codec byte formats (docs/FORMAT.md, "Engine keys" and "Property values").

/// Width of the big-endian table id that starts every engine key.
pub const TABLE_ID_LEN: usize = 4;

/// Table id reserved for the catalog of tables; user tables get ids from 1 up.
pub const CATALOG_TABLE_ID: u32 = 0;

/// Byte between PartitionKey and RowKey; valid keys never contain U+0000, so it is unambiguous.
pub const KEY_SEPARATOR: u8 = 0x00;

/// Byte after a table id that bounds the table's range: UTF-8 never contains 0xFF, so
/// `table id ++ 0xFF` sorts after every key of the table and before the next table id.
pub const TABLE_END_MARKER: u8 = 0xFF;

/// Format version written in the first byte of every property value.
pub const PROPERTY_FORMAT_VERSION: u8 = 1;

/// Header flag: the 8-byte Timestamp follows the flags byte.
pub const FLAG_HAS_TIMESTAMP: u8 = 0x01;

/// Every flag bit this version defines; any other bit set is an error.
pub const KNOWN_FLAGS: u8 = FLAG_HAS_TIMESTAMP;

/// Length of the header without the Timestamp: version byte and flags byte.
pub const HEADER_FIXED_LEN: usize = 2;

/// Width of a little-endian Timestamp or `Edm.DateTime` tick count.
pub const TICKS_LEN: usize = 8;

/// Width of the little-endian bits of an `Edm.Double`.
pub const DOUBLE_LEN: usize = 8;

/// Width of an `Edm.Guid` (bytes in textual order).
pub const GUID_LEN: usize = 16;

/// Width of an `Edm.Boolean` (0x00 false, 0x01 true; other bytes are rejected).
pub const BOOLEAN_LEN: usize = 1;

/// Longest LEB128 encoding of a `u64`.
pub const MAX_VARINT_LEN: usize = 10;

/// Fewest bytes one property can take: name length varint, a 1-byte name, the tag and a
/// 1-byte value (Boolean, a small Int32/Int64, or the length of an empty String/Binary).
pub const MIN_PROPERTY_LEN: usize = 4;
