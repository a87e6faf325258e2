//! Fuzz target bodies, shared by the cargo-fuzz crate in `fuzz/` and by the corpus replay in
//! `tests/fuzz_corpus.rs`. Each function panics exactly when a property of its decoder breaks.

mod key_decode;
mod property_decode;
mod sst_block;

pub use key_decode::key_decode;
pub use property_decode::property_decode;
pub use sst_block::sst_block;
