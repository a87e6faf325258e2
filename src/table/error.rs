//! Errors of the table layer: one variant per Azure Table error code.

use crate::codec::CodecError;
use crate::engine;
use crate::model::ModelError;
use crate::query::QueryError;

/// Result alias of the table layer.
pub type Result<T, E = TableError> = std::result::Result<T, E>;

/// Everything an account, table, batch or query operation can report. Each variant maps to one
/// Azure Table error code ([`TableError::azure_code`]) and HTTP status
/// ([`TableError::http_status`]), and carries the table, keys or batch index it is about.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// `create_table` of a name that exists (compared case-insensitively).
    #[error("table {table:?} already exists")]
    TableAlreadyExists {
        /// The name asked for.
        table: String,
    },
    /// The table does not exist.
    #[error("table {table:?} does not exist")]
    TableNotFound {
        /// The name asked for.
        table: String,
    },
    /// `insert` of a key that exists.
    #[error("entity ({partition_key:?}, {row_key:?}) already exists in table {table:?}")]
    EntityAlreadyExists {
        /// The table.
        table: String,
        /// The PartitionKey.
        partition_key: String,
        /// The RowKey.
        row_key: String,
    },
    /// A read, update or delete of an entity that does not exist.
    #[error("entity ({partition_key:?}, {row_key:?}) does not exist in table {table:?}")]
    ResourceNotFound {
        /// The table.
        table: String,
        /// The PartitionKey.
        partition_key: String,
        /// The RowKey.
        row_key: String,
    },
    /// The `If-Match` ETag differs from the stored one.
    #[error(
        "entity ({partition_key:?}, {row_key:?}) of table {table:?} has ETag {current}, not {expected}"
    )]
    UpdateConditionNotSatisfied {
        /// The table.
        table: String,
        /// The PartitionKey.
        partition_key: String,
        /// The RowKey.
        row_key: String,
        /// The ETag the caller required.
        expected: String,
        /// The ETag stored.
        current: String,
    },
    /// A String or Binary value over 64 KiB.
    #[error("a property value is too large: {source}")]
    PropertyValueTooLarge {
        /// The model's description (which value, how large).
        source: ModelError,
    },
    /// An entity (possibly after a merge) over 1 MiB.
    #[error("entity ({partition_key:?}, {row_key:?}) would be {size} bytes, over 1 MiB")]
    EntityTooLarge {
        /// The PartitionKey.
        partition_key: String,
        /// The RowKey.
        row_key: String,
        /// Its size as the service counts it.
        size: usize,
    },
    /// An entity (possibly after a merge) with more than 252 custom properties.
    #[error("entity ({partition_key:?}, {row_key:?}) would have {count} custom properties")]
    TooManyProperties {
        /// The PartitionKey.
        partition_key: String,
        /// The RowKey.
        row_key: String,
        /// The count it would have.
        count: usize,
    },
    /// Any other violated rule of the data model (names, keys, values), with its own code.
    #[error(transparent)]
    Model(ModelError),
    /// A malformed request: a bad ETag, a batch over 100 operations, a bad `$top`.
    #[error("invalid input: {reason}")]
    InvalidInput {
        /// What was wrong.
        reason: String,
    },
    /// A value outside its permitted range (e.g. `$top` of 0).
    #[error("value out of range: {reason}")]
    OutOfRangeInput {
        /// What was wrong.
        reason: String,
    },
    /// A batch names the same RowKey twice.
    #[error("batch operation {index} repeats RowKey {row_key:?} (first at operation {first})")]
    InvalidDuplicateRow {
        /// Index of the repeating operation.
        index: usize,
        /// Index of the earlier operation on the same RowKey.
        first: usize,
        /// The RowKey.
        row_key: String,
    },
    /// A batch operation names a PartitionKey other than the batch's.
    #[error(
        "batch operation {index} targets PartitionKey {found:?}, the batch targets {expected:?}"
    )]
    CommandsInBatchActOnDifferentPartitions {
        /// Index of the operation.
        index: usize,
        /// The batch's PartitionKey.
        expected: String,
        /// The operation's PartitionKey.
        found: String,
    },
    /// A batch payload of 4 MiB or more.
    #[error("batch payload of {size} bytes is not under the 4 MiB limit")]
    RequestBodyTooLarge {
        /// The payload size, counted as documented on `BATCH_MAX_PAYLOAD_BYTES`.
        size: usize,
    },
    /// Operation `index` of a batch failed; nothing of the batch was written.
    #[error("{index}:{source}")]
    BatchOperationFailed {
        /// 0-based index of the failing operation.
        index: usize,
        /// Why it failed.
        source: Box<TableError>,
    },
    /// A `$filter` that does not parse (the error names the byte position).
    #[error(transparent)]
    InvalidFilter(#[from] QueryError),
    /// A continuation token that is not one this layer wrote.
    #[error("invalid continuation token {token:?}: {reason}")]
    InvalidContinuationToken {
        /// The token text (cut short).
        token: String,
        /// What was wrong.
        reason: &'static str,
    },
    /// Stored bytes of a row failed to decode: corruption, never returned as data.
    #[error("stored row of table id {table_id} at key {key:?} is corrupt: {source}")]
    CorruptRow {
        /// The table id whose row is bad.
        table_id: u32,
        /// The engine key (lossy UTF-8).
        key: String,
        /// What the decoder found.
        source: CodecError,
    },
    /// A catalog row decodes but does not describe what it should.
    #[error("catalog row at key {key:?} is corrupt: {what}")]
    CorruptCatalog {
        /// The engine key (lossy UTF-8).
        key: String,
        /// What was wrong.
        what: &'static str,
    },
    /// The engine failed (I/O, corruption, locked file, read-only handle).
    #[error(transparent)]
    Engine(#[from] engine::Error),
}

impl TableError {
    /// The Azure Table error code (`x-ms-error-code`) of this error.
    #[must_use]
    pub fn azure_code(&self) -> &'static str {
        match self {
            Self::TableAlreadyExists { .. } => "TableAlreadyExists",
            Self::TableNotFound { .. } => "TableNotFound",
            Self::EntityAlreadyExists { .. } => "EntityAlreadyExists",
            Self::ResourceNotFound { .. } => "ResourceNotFound",
            Self::UpdateConditionNotSatisfied { .. } => "UpdateConditionNotSatisfied",
            Self::PropertyValueTooLarge { .. } => "PropertyValueTooLarge",
            Self::EntityTooLarge { .. } => "EntityTooLarge",
            Self::TooManyProperties { .. } => "TooManyProperties",
            Self::Model(source) => source.azure_code(),
            Self::InvalidInput { .. }
            | Self::InvalidFilter(_)
            | Self::InvalidContinuationToken { .. } => "InvalidInput",
            Self::OutOfRangeInput { .. } => "OutOfRangeInput",
            Self::InvalidDuplicateRow { .. } => "InvalidDuplicateRow",
            Self::CommandsInBatchActOnDifferentPartitions { .. } => {
                "CommandsInBatchActOnDifferentPartitions"
            }
            Self::RequestBodyTooLarge { .. } => "RequestBodyTooLarge",
            Self::BatchOperationFailed { source, .. } => source.azure_code(),
            Self::CorruptRow { .. } | Self::CorruptCatalog { .. } | Self::Engine(_) => {
                "InternalError"
            }
        }
    }

    /// The HTTP status the service answers this error with.
    #[must_use]
    pub fn http_status(&self) -> u16 {
        match self {
            Self::TableNotFound { .. } | Self::ResourceNotFound { .. } => 404,
            Self::TableAlreadyExists { .. } | Self::EntityAlreadyExists { .. } => 409,
            Self::UpdateConditionNotSatisfied { .. } => 412,
            Self::RequestBodyTooLarge { .. } => 413,
            Self::BatchOperationFailed { source, .. } => source.http_status(),
            Self::CorruptRow { .. } | Self::CorruptCatalog { .. } | Self::Engine(_) => 500,
            Self::PropertyValueTooLarge { .. }
            | Self::EntityTooLarge { .. }
            | Self::TooManyProperties { .. }
            | Self::Model(_)
            | Self::InvalidInput { .. }
            | Self::OutOfRangeInput { .. }
            | Self::InvalidDuplicateRow { .. }
            | Self::CommandsInBatchActOnDifferentPartitions { .. }
            | Self::InvalidFilter(_)
            | Self::InvalidContinuationToken { .. } => 400,
        }
    }

    /// The index of the failing batch operation, for errors of a batch.
    #[must_use]
    pub fn batch_index(&self) -> Option<usize> {
        match self {
            Self::BatchOperationFailed { index, .. }
            | Self::InvalidDuplicateRow { index, .. }
            | Self::CommandsInBatchActOnDifferentPartitions { index, .. } => Some(*index),
            _ => None,
        }
    }

    /// Maps a model error about the entity `(pk, rk)` onto the service's error codes.
    pub(crate) fn from_model(error: ModelError, partition_key: &str, row_key: &str) -> Self {
        match error {
            ModelError::EntityTooLarge { size } => Self::EntityTooLarge {
                partition_key: partition_key.to_owned(),
                row_key: row_key.to_owned(),
                size,
            },
            ModelError::TooManyProperties { count } => Self::TooManyProperties {
                partition_key: partition_key.to_owned(),
                row_key: row_key.to_owned(),
                count,
            },
            other => Self::from(other),
        }
    }
}

impl From<ModelError> for TableError {
    fn from(error: ModelError) -> Self {
        match error {
            ModelError::StringTooLarge { .. } | ModelError::BinaryTooLarge { .. } => {
                Self::PropertyValueTooLarge { source: error }
            }
            ModelError::EntityTooLarge { size } => Self::EntityTooLarge {
                partition_key: String::new(),
                row_key: String::new(),
                size,
            },
            ModelError::TooManyProperties { count } => Self::TooManyProperties {
                partition_key: String::new(),
                row_key: String::new(),
                count,
            },
            other => Self::Model(other),
        }
    }
}
