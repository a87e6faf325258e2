//! Fuzz target bodies, shared by the cargo-fuzz crate in `fuzz/` and by the corpus replay in
//! `tests/fuzz_corpus.rs`. Each function panics exactly when a property of its decoder breaks.

mod filter_parse;
mod key_decode;
mod open_file;
mod property_decode;
pub mod sst_block;
mod wal_record;

pub use filter_parse::filter_parse;
pub use key_decode::key_decode;
pub use open_file::open_file;
pub use property_decode::property_decode;
pub use wal_record::wal_record;
