//! The compact binary EDM property codec: the engine value of an entity row.
//!
//! ```text
//! +---------+-------+----------------------+----------------+------------+-----+
//! | version | flags | Timestamp ticks      | property count | property 1 | ... |
//! | u8 = 1  | u8    | i64 LE (if flags & 1)| varint <= 252  |            |     |
//! +---------+-------+----------------------+----------------+------------+-----+
//!
//! property = +-----------------+------------+---------+-------------------------+
//!            | name length     | name UTF-8 | EDM tag | value (form by tag)     |
//!            | varint          |            | u8 1..8 |                         |
//!            +-----------------+------------+---------+-------------------------+
//!
//! value:  Binary   varint length + bytes      Guid     16 bytes (textual order)
//!         Boolean  1 byte: 0x00 / 0x01        Int32    zigzag varint (fits 32 bits)
//!         DateTime i64 LE ticks               Int64    zigzag varint
//!         Double   u64 LE bits (bit-exact)    String   varint length + UTF-8
//! ```
//!
//! The keys are not repeated here: they live in the engine key ([`super::key`]). Every varint
//! is LEB128 in its shortest form and every field has exactly one valid encoding, so anything
//! that decodes re-encodes to the same bytes. docs/FORMAT.md, "Property values", is the
//! normative description.
//!
//! [`decode`] validates everything and builds an [`Entity`](crate::model::Entity);
//! [`PropertyReader`] walks the bytes in place so that a filter or a `$select` decodes only the
//! properties it touches.
//!
//! ```
//! use strata::codec::property::{self, PropertyReader};
//! use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
//!
//! let pk = PartitionKey::new("p").unwrap();
//! let rk = RowKey::new("r").unwrap();
//! let mut entity = Entity::new(pk.clone(), rk.clone());
//! entity.set(PropertyName::new("Age").unwrap(), Value::Int32(42)).unwrap();
//! let bytes = property::encode(&entity);
//!
//! let reader = PropertyReader::new(&bytes).unwrap();
//! assert_eq!(reader.get("Age").unwrap(), Some(Value::Int32(42)));
//! assert_eq!(property::decode(pk, rk, &bytes).unwrap(), entity);
//! ```

mod decoder;
mod encoder;
mod frame;
mod merge;
mod reader;
mod value_ref;
pub(crate) mod walk;

pub use decoder::{decode, decode_stored};
pub use encoder::{
    PropertyWriter, encode, encode_into, encode_stamped_into, encoded_len, stamp_into,
};
pub use merge::merge_stored_into;
pub use reader::{Properties, PropertyReader, RawFrame, RawFrames, RawProperty};
pub use value_ref::ValueRef;
