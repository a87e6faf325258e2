//! The Azure Table data model: validated names, keys, EDM values and entities (SPEC §2).
//!
//! Every rule of the service is enforced at construction; a violation is a [`ModelError`]
//! naming the rule and the offending input.

mod datetime;
mod entity;
mod error;
mod guid;
pub mod limits;
mod names;
mod value;
mod wire;

pub use datetime::DateTime;
pub(crate) use datetime::ISO8601_LEN;
pub use entity::Entity;
pub use error::{KeyKind, ModelError};
pub use guid::Guid;
pub(crate) use names::utf16_bytes;
pub use names::{PartitionKey, PropertyName, RowKey, TableName};
pub use value::{EdmType, Value};

/// Result alias of the model layer.
pub type Result<T, E = ModelError> = std::result::Result<T, E>;
