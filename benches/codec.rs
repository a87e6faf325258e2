//! Codec benchmarks (filled in by the codec work).
fn main() {}
