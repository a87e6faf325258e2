//! What a filter reads: the keys, Timestamp and properties of one row, however it is held.

use crate::codec::CodecError;
use crate::codec::property::{PropertyReader, ValueRef};
use crate::model::{DateTime, Entity};

/// One row a [`Filter`](super::Filter) can be evaluated against.
///
/// Properties are returned as borrowed [`ValueRef`]s so that evaluation never allocates, and
/// through a `Result` so that a source decoding stored bytes on demand
/// ([`EncodedEntity`]) reports a corrupt value as an error instead of a silent non-match.
pub trait EntitySource {
    /// The `PartitionKey`.
    fn partition_key(&self) -> &str;
    /// The `RowKey`.
    fn row_key(&self) -> &str;
    /// The `Timestamp`, if the row has one.
    fn timestamp(&self) -> Option<DateTime>;
    /// The custom property `name` (case-sensitive), if present.
    ///
    /// # Errors
    /// A [`CodecError`] when the stored bytes of the row are corrupt.
    fn property(&self, name: &str) -> Result<Option<ValueRef<'_>>, CodecError>;
    /// Whether the row has the two keys; a table-name row ([`TableRow`]) has not, and a
    /// comparison on `PartitionKey` or `RowKey` then matches nothing.
    fn has_keys(&self) -> bool {
        true
    }
}

impl EntitySource for Entity {
    fn partition_key(&self) -> &str {
        Self::partition_key(self).as_str()
    }

    fn row_key(&self) -> &str {
        Self::row_key(self).as_str()
    }

    fn timestamp(&self) -> Option<DateTime> {
        Self::timestamp(self)
    }

    fn property(&self, name: &str) -> Result<Option<ValueRef<'_>>, CodecError> {
        Ok(self.get(name).map(ValueRef::from))
    }
}

/// A stored entity row still in its encoded form: keys from the engine key, properties read in
/// place, so a filter decodes only the properties it compares.
///
/// ```
/// use strata::codec::property::{self, PropertyReader};
/// use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
/// use strata::query::{EncodedEntity, Filter};
///
/// let mut entity = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?);
/// entity.set(PropertyName::new("Age")?, Value::Int32(42))?;
/// let bytes = property::encode(&entity);
/// let row = EncodedEntity {
///     partition_key: "p",
///     row_key: "r",
///     reader: PropertyReader::new(&bytes)?,
/// };
/// assert!(Filter::parse("Age ge 18 and PartitionKey eq 'p'")?.matches(&row)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct EncodedEntity<'a> {
    /// The `PartitionKey`, from the engine key.
    pub partition_key: &'a str,
    /// The `RowKey`, from the engine key.
    pub row_key: &'a str,
    /// The encoded properties (and Timestamp) of the engine value.
    pub reader: PropertyReader<'a>,
}

impl EntitySource for EncodedEntity<'_> {
    fn partition_key(&self) -> &str {
        self.partition_key
    }

    fn row_key(&self) -> &str {
        self.row_key
    }

    fn timestamp(&self) -> Option<DateTime> {
        self.reader.timestamp()
    }

    #[inline]
    fn property(&self, name: &str) -> Result<Option<ValueRef<'_>>, CodecError> {
        self.reader.get_ref(name)
    }
}

/// A row of the table list, as `query_tables` filters it: one `Edm.String` property
/// `TableName` (the name as created), and no keys or Timestamp.
///
/// ```
/// use strata::query::{Filter, TableRow};
/// let filter = Filter::parse("TableName ge 'c' and TableName lt 'd'")?;
/// assert!(filter.matches(&TableRow("customers"))?);
/// assert!(!filter.matches(&TableRow("orders"))?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TableRow<'a>(pub &'a str);

/// The property name under which a [`TableRow`] exposes the table name.
pub const TABLE_NAME_PROPERTY: &str = "TableName";

impl EntitySource for TableRow<'_> {
    fn partition_key(&self) -> &str {
        ""
    }

    fn row_key(&self) -> &str {
        ""
    }

    fn timestamp(&self) -> Option<DateTime> {
        None
    }

    fn property(&self, name: &str) -> Result<Option<ValueRef<'_>>, CodecError> {
        Ok((name == TABLE_NAME_PROPERTY).then_some(ValueRef::String(self.0)))
    }

    fn has_keys(&self) -> bool {
        false
    }
}
