//! Replays every committed fuzz corpus through its target, so CI exercises the fuzz targets
//! without a fuzzer. To add a target: one line in [`TARGETS`] and a seed directory
//! `fuzz/corpus/<name>/`.
//!
//! The codec seeds are regenerated with
//! `cargo test --test fuzz_corpus -- --ignored write_codec_seed_corpora`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod codec_support;

use std::fs;
use std::path::{Path, PathBuf};

use strata::codec::{key, property};
use strata::fuzz_targets;
use strata::model::{DateTime, Entity, PartitionKey, PropertyName, RowKey, Value};

/// The body of a fuzz target: panics exactly when a property of its decoder breaks.
type Target = fn(&[u8]);

/// Every fuzz target: its name (= `fuzz/corpus/<name>/` and the cargo-fuzz binary) and body.
const TARGETS: &[(&str, Target)] = &[
    ("property_decode", fuzz_targets::property_decode),
    ("key_decode", fuzz_targets::key_decode),
    ("wal_record", fuzz_targets::wal_record),
    ("open_file", fuzz_targets::open_file),
    ("filter_parse", fuzz_targets::filter_parse),
];

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
}

#[test]
fn fuzz_corpus_every_seed_passes_its_target() {
    for (target, run) in TARGETS {
        let dir = corpus_dir(target);
        let entries = fs::read_dir(&dir).unwrap_or_else(|error| {
            panic!("{target}: no seed corpus at {}: {error}", dir.display())
        });
        let mut replayed = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_file() {
                let data = fs::read(&path).unwrap();
                let outcome = std::panic::catch_unwind(|| run(&data));
                assert!(outcome.is_ok(), "{target}: seed {} fails", path.display());
                replayed += 1;
            }
        }
        assert!(
            replayed > 0,
            "{target}: seed corpus {} is empty",
            dir.display()
        );
    }
}

#[test]
#[ignore = "writes the committed seed corpora; run by hand after a format change"]
fn write_codec_seed_corpora() {
    let mut properties: Vec<(&str, Vec<u8>)> = Vec::new();
    let typical = property::encode(&codec_support::typical_entity());
    let every_type = property::encode(&codec_support::every_type_entity());
    properties.push(("typical_entity", typical.clone()));
    properties.push(("every_type", every_type.clone()));
    properties.push(("empty_without_timestamp", property::encode(&bare())));
    properties.push(("special_doubles", property::encode(&special_doubles())));
    properties.push(("max_252_properties", property::encode(&many_properties())));
    properties.push((
        "truncated_every_type",
        every_type[..every_type.len() / 2].to_vec(),
    ));
    let mut bad_tag = every_type.clone();
    bad_tag[15] = 9; // the tag of the first property ("Bin")
    properties.push(("bad_type_tag", bad_tag));
    properties.push(("trailing_byte", [typical, vec![0]].concat()));

    let keys: Vec<(&str, Vec<u8>)> = vec![
        (
            "catalog_empty_keys",
            key::encode(key::CATALOG_TABLE_ID, &pk(""), &rk("")),
        ),
        (
            "ascii",
            key::encode(7, &pk("customer-0042"), &rk("order-2024-000917")),
        ),
        (
            "supplementary_plane",
            key::encode(u32::MAX, &pk("\u{FFFD}\u{10000}"), &rk("é😀")),
        ),
        ("missing_separator", b"\0\0\0\x07abc".to_vec()),
        ("forbidden_char", b"\0\0\0\x07a/b\0r".to_vec()),
        ("short", vec![0, 0, 1]),
    ];
    for (target, seeds) in [("property_decode", properties), ("key_decode", keys)] {
        let dir = corpus_dir(target);
        fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in seeds {
            fs::write(dir.join(name), bytes).unwrap();
        }
    }
}

fn pk(s: &str) -> PartitionKey {
    PartitionKey::new(s).unwrap()
}

fn rk(s: &str) -> RowKey {
    RowKey::new(s).unwrap()
}

fn bare() -> Entity {
    Entity::new(pk("p"), rk("r"))
}

fn special_doubles() -> Entity {
    let mut entity = bare();
    entity.set_timestamp(DateTime::parse("2024-01-01T00:00:00Z").unwrap());
    for (name, bits) in [
        ("NegZero", 0x8000_0000_0000_0000_u64),
        ("NaNPayload", 0xFFF8_0000_0000_0001),
        ("Inf", 0x7FF0_0000_0000_0000),
    ] {
        let value = Value::Double(f64::from_bits(bits));
        entity.set(PropertyName::new(name).unwrap(), value).unwrap();
    }
    entity
}

fn many_properties() -> Entity {
    let mut entity = bare();
    for i in 0..252 {
        let value = if i % 2 == 0 {
            Value::Int32(i)
        } else {
            Value::Boolean(true)
        };
        entity
            .set(PropertyName::new(format!("P{i}")).unwrap(), value)
            .unwrap();
    }
    entity
}
