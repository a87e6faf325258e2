//! `PropertyReader::get_ref` skips frames with a fast byte walk and falls back to the checked
//! frame reader on anything unusual: on intact and on damaged bytes alike it must answer
//! exactly as the checked walk behind `PropertyReader::get` (same value, same error).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod codec_support;

use codec_support::entity;
use proptest::prelude::*;
use strata::codec::property::{self, PropertyReader};

fn agree(bytes: &[u8], names: &[String]) -> Result<(), TestCaseError> {
    let Ok(reader) = PropertyReader::new(bytes) else {
        return Ok(());
    };
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
        for (at, byte) in damage {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        agree(&bytes, &names)?;
        let len = cut.index(bytes.len() + 1);
        agree(&bytes[..len], &names)?;
    }
}
