#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::fuzz_targets::sst_block::sst_block(data));
