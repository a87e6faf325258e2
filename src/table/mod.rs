//! Azure Table semantics on the engine: accounts, tables, entities, ETags, batches and queries
//! (SPEC §3–6).
//!
//! An [`Account`] is one database file. Its catalog of tables lives under the reserved table
//! id (see docs/FORMAT.md, "Table layer"); each table's entities live under the table's own
//! id, keyed by `codec::key` so that a partition and a table are each one contiguous key
//! range. Writes to one partition are serialised by a striped lock, which makes conditional
//! writes (insert's existence check, `If-Match`) atomic without a global lock.

mod account;
mod batch;
mod catalog;
mod clock;
mod continuation;
mod entities;
mod error;
mod etag;
mod group;
pub mod limits;
mod locks;
mod ops;
mod options;
mod raw;
mod row;
mod rows;
mod scan;
mod table_list;

pub use account::Account;
pub use batch::{Batch, Submitted, Written};
pub use continuation::ContinuationToken;
pub use entities::Table;
pub use error::{Result, TableError};
pub use etag::{ETag, IfMatch};
pub(crate) use group::GroupWrite;
pub(crate) use ops::OpKind;
pub use options::{Options, SystemTime, TimeSource};
pub use row::StoredEntity;
pub use rows::{RowChunk, RowRef};
pub use scan::{Page, Query, QueryIter};
pub use table_list::{TablePage, TableQuery};
