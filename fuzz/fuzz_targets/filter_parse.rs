//! cargo-fuzz wrapper of `strata::fuzz_targets::filter_parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::fuzz_targets::filter_parse(data));
