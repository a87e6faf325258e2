//! The columns of an export, found by a first pass over the rows.

use std::collections::BTreeMap;

use strata::StoredEntity;
use strata::model::{DateTime, EdmType, Value};

/// Separator between a property name and its type in the column of a property stored with
/// several types (`Reading#Int64`); `#` cannot occur in a property name, so no clash.
pub const TYPE_SEPARATOR: char = '#';

/// One output column: a property with one EDM type.
#[derive(Debug, Clone)]
pub struct Column {
    /// The column name: the property name, or `Name#Type` when the property has several types.
    pub name: String,
    /// The property it reads.
    pub property: String,
    /// The EDM type it holds.
    pub edm: EdmType,
    /// For DateTime: every value fits a 64-bit nanosecond timestamp (1677..2262).
    pub fits_nanos: bool,
}

/// What the first pass learned.
#[derive(Debug, Default)]
pub struct ExportSchema {
    /// Property columns in name order, then type order.
    pub columns: Vec<Column>,
    /// Every Timestamp fits a nanosecond timestamp.
    pub timestamp_fits_nanos: bool,
    /// Rows seen.
    pub rows: u64,
}

/// Accumulates the union of property types over a stream of entities.
#[derive(Debug)]
pub struct SchemaScan {
    types: BTreeMap<String, BTreeMap<EdmType, bool>>,
    timestamp_fits_nanos: bool,
    rows: u64,
}

impl Default for SchemaScan {
    fn default() -> Self {
        Self {
            types: BTreeMap::new(),
            timestamp_fits_nanos: true,
            rows: 0,
        }
    }
}

/// Whether `t` is representable as i64 nanoseconds since the Unix epoch.
pub fn fits_nanos(t: DateTime) -> bool {
    i64::try_from(t.to_unix_nanos()).is_ok()
}

impl SchemaScan {
    /// Adds one entity.
    pub fn add(&mut self, stored: &StoredEntity) {
        self.rows += 1;
        self.timestamp_fits_nanos &= fits_nanos(stored.timestamp());
        for (name, value) in stored.entity.properties() {
            let fits = match value {
                Value::DateTime(t) => fits_nanos(*t),
                _ => true,
            };
            if let Some(by_type) = self.types.get_mut(name.as_str()) {
                let entry = by_type.entry(value.edm_type()).or_insert(true);
                *entry &= fits;
            } else {
                self.types.insert(
                    name.as_str().to_owned(),
                    BTreeMap::from([(value.edm_type(), fits)]),
                );
            }
        }
    }

    /// The columns: one per property, or one per (property, type) when a property was seen
    /// with several types.
    pub fn finish(self) -> ExportSchema {
        let mut columns = Vec::new();
        for (property, by_type) in self.types {
            let several = by_type.len() > 1;
            for (edm, fits_nanos) in by_type {
                let name = if several {
                    format!(
                        "{property}{TYPE_SEPARATOR}{}",
                        edm.name().trim_start_matches("Edm.")
                    )
                } else {
                    property.clone()
                };
                columns.push(Column {
                    name,
                    property: property.clone(),
                    edm,
                    fits_nanos,
                });
            }
        }
        ExportSchema {
            columns,
            timestamp_fits_nanos: self.timestamp_fits_nanos,
            rows: self.rows,
        }
    }
}
