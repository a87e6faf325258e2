//! Entities: keys, Timestamp and ordered custom properties.

use std::collections::HashSet;

use super::limits::{
    ENTITY_MAX_BYTES, ENTITY_SIZE_OVERHEAD, MAX_CUSTOM_PROPERTIES, PROPERTY_SIZE_OVERHEAD,
};
use super::names::utf16_bytes;
use super::{DateTime, ModelError, PartitionKey, PropertyName, Result, RowKey, Value};

/// An entity: its keys, the server-managed Timestamp and up to 252 custom properties in the
/// order they were given. Invariants (property count, 1 MiB total, no duplicate names, String
/// and Binary limits of each value) are enforced by its checked constructors and mutators; a
/// failed mutation leaves the entity unchanged.
///
/// Its size is the service's documented estimate (see [`Entity::size`]).
///
/// ```
/// use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
/// let mut e = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?);
/// e.set(PropertyName::new("Age")?, Value::Int32(41))?;
/// e.set(PropertyName::new("Age")?, Value::Int32(42))?;
/// assert_eq!(e.get("Age"), Some(&Value::Int32(42)));
/// e.set_or_remove(PropertyName::new("Age")?, None)?; // null removes
/// assert!(e.properties().is_empty());
/// # Ok::<(), strata::model::ModelError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    partition_key: PartitionKey,
    row_key: RowKey,
    timestamp: Option<DateTime>,
    properties: Vec<(PropertyName, Value)>,
    /// Cached [`Entity::size`], kept in step by every mutator.
    size: usize,
}

/// Bytes one property counts toward the entity size: 8 + name in UTF-16 × 2 + value size.
fn property_size(name: &PropertyName, value: &Value) -> usize {
    PROPERTY_SIZE_OVERHEAD + utf16_bytes(name.as_str()) + value.size()
}

impl Entity {
    /// An entity with these keys, no Timestamp and no custom properties.
    #[must_use]
    pub fn new(partition_key: PartitionKey, row_key: RowKey) -> Self {
        let size = ENTITY_SIZE_OVERHEAD
            + utf16_bytes(partition_key.as_str())
            + utf16_bytes(row_key.as_str());
        Self {
            partition_key,
            row_key,
            timestamp: None,
            properties: Vec::new(),
            size,
        }
    }

    /// An entity with these keys and properties, kept in the given order.
    ///
    /// # Errors
    /// [`ModelError::DuplicateProperty`] if a name repeats, and every error of [`Entity::set`].
    pub fn with_properties(
        partition_key: PartitionKey,
        row_key: RowKey,
        properties: impl IntoIterator<Item = (PropertyName, Value)>,
    ) -> Result<Self> {
        let mut entity = Self::new(partition_key, row_key);
        let properties = properties.into_iter();
        entity
            .properties
            .reserve(properties.size_hint().0.min(MAX_CUSTOM_PROPERTIES));
        // Checked in one pass (not through `set`, whose lookup would make this quadratic).
        let mut seen = HashSet::with_capacity(entity.properties.capacity());
        for (name, value) in properties {
            let count = entity.properties.len() + 1;
            if count > MAX_CUSTOM_PROPERTIES {
                return Err(ModelError::TooManyProperties { count });
            }
            value.validate()?;
            if !seen.insert(name.clone()) {
                return Err(ModelError::DuplicateProperty {
                    name: name.into_string(),
                });
            }
            entity.size += property_size(&name, &value);
            check_size(entity.size)?;
            entity.properties.push((name, value));
        }
        Ok(entity)
    }

    /// The PartitionKey.
    #[must_use]
    pub const fn partition_key(&self) -> &PartitionKey {
        &self.partition_key
    }

    /// The RowKey.
    #[must_use]
    pub const fn row_key(&self) -> &RowKey {
        &self.row_key
    }

    /// The Timestamp of the last write, if the entity has been stored.
    #[must_use]
    pub const fn timestamp(&self) -> Option<DateTime> {
        self.timestamp
    }

    /// Sets the Timestamp (the engine does this on every write; it does not count toward the
    /// size or property limits, like the keys it is a system property).
    pub const fn set_timestamp(&mut self, timestamp: DateTime) {
        self.timestamp = Some(timestamp);
    }

    /// The custom properties, in insertion order.
    #[must_use]
    pub fn properties(&self) -> &[(PropertyName, Value)] {
        &self.properties
    }

    /// The value of the custom property `name`, if present.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.position(name)
            .and_then(|i| self.properties.get(i))
            .map(|(_, v)| v)
    }

    /// Sets property `name` to `value`: replaces a same-named property in place, else appends.
    ///
    /// # Errors
    /// [`ModelError::StringTooLarge`] / [`ModelError::BinaryTooLarge`] for an oversized value,
    /// [`ModelError::TooManyProperties`] past 252 properties,
    /// [`ModelError::EntityTooLarge`] past 1 MiB. The entity is unchanged on error.
    pub fn set(&mut self, name: PropertyName, value: Value) -> Result<()> {
        value.validate()?;
        let added = property_size(&name, &value);
        let position = self.position(name.as_str());
        if let Some(slot) = position.and_then(|i| self.properties.get_mut(i)) {
            let size = self.size - property_size(&slot.0, &slot.1) + added;
            check_size(size)?;
            slot.1 = value;
            self.size = size;
            return Ok(());
        }
        let count = self.properties.len() + 1;
        if count > MAX_CUSTOM_PROPERTIES {
            return Err(ModelError::TooManyProperties { count });
        }
        let size = self.size + added;
        check_size(size)?;
        self.properties.push((name, value));
        self.size = size;
        Ok(())
    }

    /// Room for `additional` more properties, so that a decoder that knows the count does not
    /// regrow the vector. The caller bounds `additional` by what its input can hold.
    pub(crate) fn reserve_properties(&mut self, additional: usize) {
        let room = MAX_CUSTOM_PROPERTIES.saturating_sub(self.properties.len());
        let additional = additional.min(room);
        if self.properties.capacity() == 0 {
            // A fresh entity: one direct allocation, cheaper than growing an empty vector.
            self.properties = Vec::with_capacity(additional);
        } else {
            self.properties.reserve(additional);
        }
    }

    /// Appends a property the caller has already checked: `name` is not present yet (for a
    /// stored row: was unique when written, which a checksum keeps) and
    /// `value` was built by a checked constructor (its String/Binary limits hold). Count and
    /// size limits are still checked here; the entity is unchanged on error.
    ///
    /// # Errors
    /// [`ModelError::TooManyProperties`] or [`ModelError::EntityTooLarge`].
    pub(crate) fn push_unique(&mut self, name: PropertyName, value: Value) -> Result<()> {
        let count = self.properties.len() + 1;
        if count > MAX_CUSTOM_PROPERTIES {
            return Err(ModelError::TooManyProperties { count });
        }
        let size = self.size + property_size(&name, &value);
        check_size(size)?;
        self.properties.push((name, value));
        self.size = size;
        Ok(())
    }

    /// Sets property `name` to `value`, or removes it when `value` is `None`: a null is never
    /// stored, it means the property is absent.
    ///
    /// # Errors
    /// Those of [`Entity::set`].
    pub fn set_or_remove(&mut self, name: PropertyName, value: Option<Value>) -> Result<()> {
        match value {
            Some(value) => self.set(name, value),
            None => {
                self.remove(name.as_str());
                Ok(())
            }
        }
    }

    /// Removes property `name`, returning its value; the order of the others is kept.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let i = self.position(name)?;
        let (name, value) = self.properties.remove(i);
        self.size -= property_size(&name, &value);
        Some(value)
    }

    /// The entity's size as the service estimates it, which must stay ≤ 1 MiB:
    /// `4 + (PartitionKey + RowKey in UTF-16) × 2`, plus for each custom property
    /// `8 + name in UTF-16 × 2 +` [`Value::size`]. The Timestamp is not counted.
    #[must_use]
    pub const fn size(&self) -> usize {
        self.size
    }

    /// Splits the entity into keys, Timestamp and properties.
    #[must_use]
    pub fn into_parts(
        self,
    ) -> (
        PartitionKey,
        RowKey,
        Option<DateTime>,
        Vec<(PropertyName, Value)>,
    ) {
        (
            self.partition_key,
            self.row_key,
            self.timestamp,
            self.properties,
        )
    }

    /// Index of property `name`.
    fn position(&self, name: &str) -> Option<usize> {
        self.properties.iter().position(|(n, _)| n.as_str() == name)
    }
}

/// Checks an entity size against the 1 MiB limit.
const fn check_size(size: usize) -> Result<()> {
    if size > ENTITY_MAX_BYTES {
        return Err(ModelError::EntityTooLarge { size });
    }
    Ok(())
}
