//! cargo-fuzz wrapper of `strata::fuzz_targets::wal_record`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::fuzz_targets::wal_record(data));
