//! Whole-key bloom and partition-prefix filters: no false negatives, false positives near
//! theory, and SSTs without a filter never claim absence.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod engine_sst_support;

use std::sync::Arc;

use engine_sst_support::{Entry, SlashPrefix, build, open_image, options};
use strata::engine::{Compression, ValueKind};

fn keys(n: u32) -> Vec<Entry> {
    (0..n)
        .map(|i| {
            (
                format!("user{i:08}").into_bytes(),
                1,
                ValueKind::Put,
                b"v".to_vec(),
            )
        })
        .collect()
}

#[test]
fn bloom_false_positive_rate_at_10_bits_per_key_is_below_3_percent() {
    let entries = keys(20_000);
    let reader = open_image(&build(options(4096, 16, Compression::None), &entries), 0).unwrap();
    for (k, ..) in &entries {
        assert!(reader.may_contain_key(k), "false negative for {k:?}");
    }
    let probes = 100_000u32;
    let false_positives = (0..probes)
        .filter(|i| reader.may_contain_key(format!("absent{i:08}").as_bytes()))
        .count();
    let rate = false_positives as f64 / f64::from(probes);
    // Theory for m/n = 10, k = 7: (1 - e^(-7/10))^7 ~ 0.82%.
    assert!(rate < 0.03, "false-positive rate {rate}");
    assert!(
        rate > 0.0005,
        "rate {rate} is implausibly low: is the filter consulted?"
    );
}

#[test]
fn bloom_absent_key_get_returns_none_without_error() {
    let entries = keys(1000);
    let reader = open_image(&build(options(256, 4, Compression::None), &entries), 0).unwrap();
    for i in 0..1000 {
        assert_eq!(
            reader.get(format!("zzz{i}").as_bytes(), u64::MAX).unwrap(),
            None
        );
    }
}

#[test]
fn bloom_disabled_sst_may_contain_everything() {
    let mut opts = options(4096, 16, Compression::None);
    opts.bloom_bits_per_key = 0;
    let entries = keys(100);
    let reader = open_image(&build(opts, &entries), 0).unwrap();
    assert!(reader.may_contain_key(b"absent"));
    assert!(reader.may_contain_prefix(b"absent/"));
    assert_eq!(reader.get(b"absent", 9).unwrap(), None);
    assert_eq!(reader.get(b"user00000042", 9).unwrap().unwrap().value, b"v");
}

fn partitioned(bloom_bits_per_key: usize) -> Arc<strata::engine::sst::SstReader> {
    let mut entries: Vec<Entry> = Vec::new();
    for p in (0..2000u32).filter(|p| p % 2 == 0) {
        for r in 0..3u32 {
            let key = format!("part{p:06}/row{r}").into_bytes();
            entries.push((key, 1, ValueKind::Put, b"v".to_vec()));
        }
    }
    // A key without a prefix is stored but not indexed by the prefix filter.
    entries.push((
        b"zzz-no-partition".to_vec(),
        1,
        ValueKind::Put,
        b"v".to_vec(),
    ));
    let mut opts = options(4096, 16, Compression::None);
    opts.bloom_bits_per_key = bloom_bits_per_key;
    opts.prefix_extractor = Some(Arc::new(SlashPrefix));
    open_image(&build(opts, &entries), 1 << 20).unwrap()
}

#[test]
fn prefix_filter_skips_absent_partitions() {
    for bits in [0, 10] {
        let reader = partitioned(bits);
        let mut skipped = 0;
        for p in 0..2000u32 {
            let prefix = format!("part{p:06}/");
            let may = reader.may_contain_prefix(prefix.as_bytes());
            if p % 2 == 0 {
                assert!(may, "false negative for partition {prefix}");
            } else if !may {
                skipped += 1;
            }
        }
        assert!(
            skipped > 970,
            "only {skipped} of 1000 absent partitions skipped"
        );
    }
}
