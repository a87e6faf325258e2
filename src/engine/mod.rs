//! A generic, ordered byte-key/byte-value LSM store living in ONE file. It knows nothing of
//! tables: the table layer maps its data model onto keys and values.

mod batch;
mod check;
mod checkpoint;
mod commit;
mod compaction;
mod db;
mod error;
pub mod file;
mod inner;
mod iter;
mod limits;
mod manifest;
mod memtable;
mod options;
mod recovery;
mod rotate;
mod snapshot;
pub mod sst;
mod stall;
mod stats;
mod types;
mod version;
mod wake;
pub mod wal;

pub use batch::{BatchDecodeError, BatchOp, WriteBatch};
pub use check::{CHECK_MAX_PROBLEMS, CheckProblem, CheckReport};
pub use db::Engine;
pub use error::{Error, Result};
pub use iter::{Advance, RangeIter, ValueTest};
pub use options::{Compression, Durability, Options, PrefixExtractor};
pub use snapshot::Snapshot;
pub use stats::{LevelStats, Stats};
pub use types::{RangeTombstone, RunVisitor, Seq, ValueKind};
