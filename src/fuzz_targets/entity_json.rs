//! Fuzz target: the JSON entity reader and writer of the REST server.

use crate::model::{DateTime, Entity, PropertyName, Value};
use crate::server::json::{self, Links, Metadata};
use crate::table::{ETag, StoredEntity};

/// Reading `data` as a JSON entity never panics; an entity it accepts, written back in
/// minimal and full metadata, reads back to the same keys and typed properties.
pub fn entity_json(data: &[u8]) {
    let Ok(entity) = json::parse_entity(data, None) else {
        return;
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

/// Properties by name (JSON objects do not keep an order).
fn sorted(entity: &Entity) -> Vec<(PropertyName, Value)> {
    let mut properties = entity.properties().to_vec();
    properties.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    properties
}
