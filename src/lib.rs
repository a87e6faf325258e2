//! strata: an embedded, log-structured, single-file database implementing the Azure Table
//! storage data model.
//!
//! Layers, each knowing only the one below (see `docs/ARCHITECTURE.md`):
//! `model` + `codec` (names, EDM values, key and property encodings) over `engine` (a generic
//! ordered key-value LSM store living in one file).
#![deny(missing_docs)]
#![deny(clippy::unwrap_used, clippy::indexing_slicing)]

pub mod codec;
pub mod engine;
#[doc(hidden)]
pub mod fuzz_targets;
pub mod model;
pub mod query;
pub mod server;
pub mod table;

pub use table::{
    Account, Batch, ContinuationToken, ETag, IfMatch, Options, Page, Query, QueryIter, RowChunk,
    RowRef, StoredEntity, Table, TableError, TablePage, TableQuery, TimeSource,
};
