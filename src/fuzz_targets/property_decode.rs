//! Fuzz target: the property value decoder and the in-place reader.

use crate::codec::property::{self, PropertyReader};
use crate::model::{PartitionKey, RowKey};

/// Decoding `data` as a property value never panics, nor does any walk of the reader; a value
/// that decodes re-encodes to exactly `data`, decodes again to the same entity, and the reader
/// agrees with the decoder on the Timestamp and every property.
pub fn property_decode(data: &[u8]) {
    let reader = PropertyReader::new(data);
    if let Ok(reader) = &reader {
        let mut last = None;
        for raw in reader {
            let Ok(raw) = raw else { break };
            let _ = raw.value();
            let _ = raw.property_name();
            last = Some(raw.name());
        }
        // One lookup walks every frame before its target; the last name walks them all.
        if let Some(name) = last {
            let _ = reader.get_ref(name);
        }
        let _ = reader.project(&["A", "Name", "Total"]);
    }
    let (pk, rk) = keys();
    let Ok(entity) = property::decode(pk.clone(), rk.clone(), data) else {
        return;
    };
    let bytes = property::encode(&entity);
    assert_eq!(
        bytes, data,
        "decode accepted bytes that encode does not produce"
    );
    assert_eq!(property::encoded_len(&entity), bytes.len());
    assert_eq!(property::decode(pk, rk, &bytes).as_ref(), Ok(&entity));
    let Ok(reader) = reader else {
        panic!("decode succeeded where the reader's header check failed");
    };
    assert_eq!(reader.timestamp(), entity.timestamp());
    assert_eq!(reader.len(), entity.properties().len());
    // Each lookup is a walk, so check a bounded sample to keep executions fast.
    let properties = entity.properties();
    let step = properties.len() / SAMPLED_LOOKUPS + 1;
    for (name, value) in properties.iter().step_by(step).chain(properties.last()) {
        assert_eq!(reader.get(name.as_str()), Ok(Some(value.clone())));
    }
}

/// Most reader lookups checked per input.
const SAMPLED_LOOKUPS: usize = 16;

fn keys() -> (PartitionKey, RowKey) {
    match (PartitionKey::new("pk"), RowKey::new("rk")) {
        (Ok(pk), Ok(rk)) => (pk, rk),
        _ => panic!("the fixed fuzz keys are valid"),
    }
}
