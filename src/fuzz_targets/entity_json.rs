//! Fuzz target: the JSON entity reader and writer of the REST server.

use crate::model::{DateTime, Entity, PropertyName, Value};
use crate::server::json::{self, Links, Metadata};
use crate::table::{ETag, StoredEntity};

/// Reading `data` as a JSON entity never panics; encoding it straight into its stored form
/// (what a batch does) gives the bytes of the entity read, or the same error; an entity it
/// accepts, written back in minimal and full metadata, reads back to the same keys and
/// typed properties.
pub fn entity_json(data: &[u8]) {
    let mut row = Vec::new();
    let encoded = json::encode_entity_reusing(data, None, &mut json::Members::default(), &mut row);
    // Read after another body, whose strings are compared rather than scanned (a batch
    // reuses its members): the same bytes, or the same error.
    let reference = summary(&encoded, &row);
    let mut members = json::Members::default();
    for previous in [SDK_BODY, data] {
        let mut scratch = Vec::new();
        let _ = json::encode_entity_reusing(previous, None, &mut members, &mut scratch);
        let mut again = Vec::new();
        let result = json::encode_entity_reusing(data, None, &mut members, &mut again);
        assert_eq!(
            summary(&result, &again),
            reference,
            "read otherwise after a body"
        );
    }
    let entity = match (json::parse_entity(data, None), encoded) {
        (Ok(entity), Ok(encoded)) => {
            assert_eq!(
                row,
                crate::codec::property::encode(&entity),
                "encoded otherwise"
            );
            assert_eq!(encoded.size, entity.size(), "sized otherwise");
            assert_eq!(encoded.keys.partition_key(), entity.partition_key());
            assert_eq!(encoded.keys.row_key(), entity.row_key());
            entity
        }
        (Err(error), Err(theirs)) => {
            assert_eq!(error.to_string(), theirs.to_string(), "failed otherwise");
            return;
        }
        (parsed, encoded) => panic!("encoding disagrees: {parsed:?} vs {encoded:?}"),
    };
    let stored = StoredEntity {
        entity: entity.clone(),
        etag: ETag::from_timestamp(
            DateTime::parse("2024-01-01T00:00:00Z")
                .unwrap_or_else(|_| unreachable!("a valid literal instant")),
        ),
    };
    let links = Links {
        base: "http://127.0.0.1/devstoreaccount1",
        account: "devstoreaccount1",
        table: "fuzz",
    };
    for metadata in [Metadata::Minimal, Metadata::Full] {
        let mut out = String::new();
        json::write_entity(&mut out, &stored, metadata, &links, false);
        let back = json::parse_entity(out.as_bytes(), None)
            .unwrap_or_else(|error| panic!("written entity does not read back: {error}: {out}"));
        assert_eq!(back.partition_key(), entity.partition_key());
        assert_eq!(back.row_key(), entity.row_key());
        assert_eq!(sorted(&back), sorted(&entity), "{out}");
    }
}

/// A typical SDK body, read before the fuzzed one.
const SDK_BODY: &[u8] = br#"{"PartitionKey": "p0000", "PartitionKey@odata.type": "Edm.String", "RowKey": "00000001", "RowKey@odata.type": "Edm.String", "N": 1, "Group": "g1", "Group@odata.type": "Edm.String", "Payload": "xxxx", "Payload@odata.type": "Edm.String"}"#;

/// What an encoding gave: its bytes, size and keys, or its error's text.
fn summary(
    encoded: &crate::server::error::Result<json::EncodedEntity>,
    row: &[u8],
) -> Result<(Vec<u8>, usize, String, String), String> {
    match encoded {
        Ok(encoded) => Ok((
            row.to_vec(),
            encoded.size,
            encoded.keys.partition_key().as_str().to_owned(),
            encoded.keys.row_key().as_str().to_owned(),
        )),
        Err(error) => Err(error.to_string()),
    }
}

/// Properties by name (JSON objects do not keep an order).
fn sorted(entity: &Entity) -> Vec<(PropertyName, Value)> {
    let mut properties = entity.properties().to_vec();
    properties.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    properties
}
