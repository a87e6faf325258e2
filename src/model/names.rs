//! Validated names: tables, keys and properties.

/// A table name: `^[A-Za-z][A-Za-z0-9]{2,62}$`, not `tables`; compares and hashes
/// case-insensitively while keeping the spelling it was created with.
#[derive(Debug, Clone)]
pub struct TableName(String);

/// A PartitionKey: at most 1 KiB (UTF-16 code units × 2), none of `/ \ # ?` nor control characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartitionKey(String);

/// A RowKey: the same rules as [`PartitionKey`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey(String);

/// A custom property name: a C# identifier of 1..=255 characters, not a system property name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PropertyName(String);
