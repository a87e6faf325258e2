//! Fuzz target bodies, shared by the cargo-fuzz crate (`fuzz/`) and the corpus replay test.

pub mod sst_block;
