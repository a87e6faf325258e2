//! `PropertyReader::get_ref` skips frames with a fast byte walk and falls back to the checked
//! frame reader on anything unusual: on intact and on damaged bytes alike it must answer
//! exactly as the checked walk behind `PropertyReader::get` (same value, same error).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod codec_support;

use codec_support::entity;
use proptest::prelude::*;
use strata::codec::property::{self, PropertyReader};
use strata::model::{PartitionKey, RowKey};

fn agree(bytes: &[u8], names: &[String]) -> Result<(), TestCaseError> {
    // The full decoder checks the header first, with the checked reader: same verdict.
    let decoded = property::decode(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        bytes,
    );
    let reader = match PropertyReader::new(bytes) {
        Ok(reader) => reader,
        Err(error) => {
            prop_assert_eq!(decoded.err(), Some(error));
            return Ok(());
        }
    };
    if let Ok(entity) = &decoded {
        prop_assert_eq!(reader.timestamp(), entity.timestamp());
        prop_assert_eq!(reader.len(), entity.properties().len());
    }
    for name in names {
        let fast = reader
            .get_ref(name)
            .map(|found| found.map(|value| value.to_value().unwrap()));
        prop_assert_eq!(fast, reader.get(name), "property {}", name);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn reader_lookup_equals_the_checked_walk_on_damaged_bytes(
        entity in entity(12),
        damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut names: Vec<String> =
            entity.properties().iter().map(|(n, _)| n.as_str().to_owned()).collect();
        names.push("Absent".to_owned());
        let mut bytes = property::encode(&entity);
        agree(&bytes, &names)?;
        // Damage lands in the header (the first 11 bytes) about half the time.
        for (at, byte) in damage {
            let i = if byte % 2 == 0 { at.index(bytes.len().min(11)) } else { at.index(bytes.len()) };
            bytes[i] = byte;
        }
        agree(&bytes, &names)?;
        let len = cut.index(bytes.len() + 1);
        agree(&bytes[..len], &names)?;
    }
}

#[test]
fn reader_header_with_253_properties_is_rejected_like_the_decoder() {
    let entity =
        strata::model::Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    let mut bytes = property::encode(&entity);
    assert_eq!(
        bytes.last(),
        Some(&0),
        "an empty entity ends with a zero count"
    );
    bytes.pop();
    for count in [252u8, 253] {
        let mut announced = bytes.clone();
        announced.extend_from_slice(&[count | 0x80, 0x01]);
        let error = PropertyReader::new(&announced).err();
        if count == 252 {
            assert_eq!(error, None);
        } else {
            let decoded = property::decode(
                PartitionKey::new("p").unwrap(),
                RowKey::new("r").unwrap(),
                &announced,
            );
            assert!(error.is_some());
            assert_eq!(decoded.err(), error);
        }
    }
}
