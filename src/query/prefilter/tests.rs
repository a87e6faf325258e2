//! The prefilter against the filter it stands for, and its byte tests against plain ones.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use super::{Prefilter, Verdict};
use crate::codec::property;
use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
use crate::query::{EncodedEntity, Filter};

fn row(properties: &[(&str, Value)]) -> Vec<u8> {
    let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    for (name, value) in properties {
        entity
            .set(PropertyName::new(*name).unwrap(), value.clone())
            .unwrap();
    }
    property::encode(&entity)
}

#[test]
fn the_prefilter_never_rules_out_a_matching_row() {
    let rows = [
        row(&[("Group", Value::string("g1").unwrap())]),
        row(&[
            ("N", Value::Int32(7)),
            ("Group", Value::string("g1").unwrap()),
            ("Payload", Value::string("Group g1").unwrap()),
        ]),
        row(&[("Group", Value::string("g10").unwrap())]),
        row(&[("Group", Value::Int32(1))]),
        row(&[("group", Value::string("g1").unwrap())]),
        row(&[("Other", Value::string("g1").unwrap())]),
        row(&[("N", Value::Int64(7)), ("B", Value::Boolean(true))]),
        row(&[("N", Value::Int32(7)), ("D", Value::Double(-0.0))]),
        row(&[("Group", Value::binary(b"g1".to_vec()).unwrap())]),
        row(&[
            ("N", Value::Int32(-7)),
            ("Group", Value::string("g").unwrap()),
        ]),
        row(&[]),
    ];
    let filters = [
        "Group eq 'g1'",
        "Group eq 'g1' and N eq 7",
        "N eq 7L and B",
        "N eq 7 or Group eq 'g1'",
        "D eq 0.0",
        "Group ne 'g1'",
        "not (Group eq 'g2')",
        "Group eq 'g1' and Group eq 'g1'",
        "Group eq 'g1' and Group eq 'g2'",
        "N eq 7 and Group eq 'g1' and N eq 7L",
    ];
    let (mut ruled_out, mut said_yes) = (0, 0);
    for text in filters {
        let filter = Filter::parse(text).unwrap();
        let prefilter = Prefilter::new(&filter);
        for bytes in &rows {
            let encoded = EncodedEntity {
                partition_key: "p",
                row_key: "r",
                reader: property::PropertyReader::new(bytes).unwrap(),
            };
            let matches = filter.matches(&encoded).unwrap();
            let may = prefilter.may_match(bytes);
            assert!(may || !matches, "{text} ruled out a matching row");
            let verdict = prefilter.verdict(bytes);
            assert_eq!(verdict == Verdict::No, !may, "{text}");
            if verdict == Verdict::Yes {
                assert!(matches, "{text} said yes to a row the filter rejects");
                said_yes += 1;
            }
            ruled_out += usize::from(!may);
        }
    }
    // The test is not vacuous: most rows fail `Group eq 'g1'` on their bytes alone.
    assert!(ruled_out >= 10, "{ruled_out}");
    assert!(said_yes >= 3, "{said_yes}");
}

#[test]
fn the_first_frame_test_answers_as_the_walk_on_stored_rows() {
    // Stored rows carry a Timestamp, which the usual-row test reads past; its answer must
    // be the general walk's for every row, cut or damaged anywhere.
    let stamped = |properties: &[(&str, Value)]| {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        entity.set_timestamp(crate::model::DateTime::from_ticks(638_000_000_000_000_123).unwrap());
        for (name, value) in properties {
            entity
                .set(PropertyName::new(*name).unwrap(), value.clone())
                .unwrap();
        }
        property::encode(&entity)
    };
    let many: Vec<(String, Value)> = (0..130)
        .map(|i| (format!("P{i:03}"), Value::Int32(i)))
        .chain([("Group".to_owned(), Value::string("g1").unwrap())])
        .collect();
    let many: Vec<(&str, Value)> = many.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
    let long = "A".repeat(40);
    let rows = [
        stamped(&[("Group", Value::string("g1").unwrap())]),
        stamped(&[("Group", Value::string("g2").unwrap())]),
        stamped(&[
            ("N", Value::Int32(7)),
            ("Group", Value::string("g1").unwrap()),
            ("Payload", Value::string("x".repeat(100)).unwrap()),
        ]),
        stamped(&[
            ("Alpha", Value::Int32(7)),
            ("Group", Value::string("g3").unwrap()),
        ]),
        stamped(&[
            ("Group", Value::string("g1").unwrap()),
            ("Zpad", Value::string("z".repeat(30)).unwrap()),
        ]),
        stamped(&[
            ("Group", Value::string("g2").unwrap()),
            ("Zpad", Value::string("z".repeat(30)).unwrap()),
        ]),
        stamped(&[
            ("Alpha", Value::Int32(7)),
            ("Group", Value::string("g1").unwrap()),
            ("Zpad", Value::string("z".repeat(30)).unwrap()),
        ]),
        stamped(&[("Zed", Value::Boolean(true))]),
        stamped(&[(long.as_str(), Value::string("g1").unwrap())]),
        stamped(&[]),
        stamped(&many),
        row(&[("Group", Value::string("g1").unwrap())]),
    ];
    let filters = [
        "Group eq 'g1'",
        "N eq 7",
        "Group eq 'g1' and N eq 7",
        &format!("{long} eq 'g1'"),
        "Group eq 'a much longer literal than a word'",
    ];
    for text in filters {
        let prefilter = Prefilter::new(&Filter::parse(text).unwrap());
        for whole in &rows {
            let mut inputs: Vec<Vec<u8>> =
                (0..=whole.len()).map(|cut| whole[..cut].to_vec()).collect();
            for at in 0..whole.len().min(40) {
                for byte in [0x00, 0x01, 0x7F, 0x80, 0xFF] {
                    let mut damaged = whole.clone();
                    damaged[at] = byte;
                    inputs.push(damaged);
                }
            }
            for input in &inputs {
                let expected = match prefilter.walk(input) {
                    Some(false) => Verdict::No,
                    Some(true) if prefilter.decides => Verdict::Yes,
                    _ => Verdict::Maybe,
                };
                assert_eq!(prefilter.verdict(input), expected, "{text} {input:?}");
            }
        }
    }
}

#[test]
fn only_required_equalities_make_needles() {
    for (text, needles) in [
        ("Group eq 'g1'", 1),
        ("Group eq 'g1' and N eq 7 and M gt 3", 2),
        ("Group eq 'g1' or N eq 7", 0),
        ("D eq 1.5", 0),
        ("PartitionKey eq 'p'", 0),
        ("not (Group eq 'g1')", 0),
    ] {
        let prefilter = Prefilter::new(&Filter::parse(text).unwrap());
        assert_eq!(prefilter.needles.len(), needles, "{text}");
        // Only a filter made of needles alone can be decided by them.
        let alone = !text.contains(" or ") && !text.contains(" gt ") && needles > 0;
        assert_eq!(prefilter.decides, alone, "{text}");
    }
}

#[test]
fn the_prefilter_leaves_rows_it_cannot_frame_to_the_filter() {
    let prefilter = Prefilter::new(&Filter::parse("Group eq 'g1'").unwrap());
    let whole = row(&[
        ("N", Value::Int32(7)),
        ("Group", Value::string("g1").unwrap()),
    ]);
    assert!(prefilter.may_match(&whole));
    // Cut inside the N frame: the walk cannot frame the row, so the filter must read it
    // (and report the damage) rather than have it skipped unread.
    for cut in 0..whole.len() {
        assert!(prefilter.may_match(&whole[..cut]), "cut at {cut}");
    }
    let wrong = row(&[("Group", Value::string("g2").unwrap())]);
    assert!(!prefilter.may_match(&wrong));
}

#[test]
fn a_word_prefix_test_agrees_with_starts_with() {
    let input: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37)).collect();
    for len in 0..=20 {
        for at in 0..input.len() {
            let rest = &input[at..];
            let mut prefix = input[at..].iter().take(len).copied().collect::<Vec<_>>();
            let same = super::Prefix::new(&prefix);
            assert_eq!(
                same.starts(rest),
                rest.starts_with(&prefix),
                "{len} at {at}"
            );
            // A name of any shorter length against this frame: `compare` tells the
            // frame, the name alone or neither, as two `starts_with` would.
            for name_len in 0..=prefix.len() {
                let name = super::Prefix::new(&prefix[..name_len]);
                let expected = if rest.starts_with(&prefix) {
                    super::Found::Frame
                } else if rest.starts_with(&prefix[..name_len]) {
                    super::Found::Name
                } else {
                    super::Found::Neither
                };
                assert_eq!(
                    same.compare(&name, rest),
                    expected,
                    "{len} {name_len} at {at}"
                );
            }
            if let Some(last) = prefix.last_mut() {
                *last ^= 0x80;
                let other = super::Prefix::new(&prefix);
                assert!(!other.starts(rest), "{len} at {at}");
            }
        }
    }
}
