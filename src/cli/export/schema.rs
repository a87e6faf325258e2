//! The columns of an export, found by a first pass that reads only property names and type
//! tags (and the ticks of DateTime values), never decoding the other values.

use strata::codec::property::ValueRef;
use strata::model::{DateTime, EdmType};
use strata::{RowRef, TableError};

use super::columns::ColumnMap;
use crate::cli::error::{CliError, Result};

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
}

impl ExportSchema {
    /// A lookup from (property, type) to the index of its column.
    pub fn column_map(&self) -> ColumnMap {
        ColumnMap::with_columns(self.columns.iter().map(|c| (c.property.clone(), c.edm)))
    }
}

/// Accumulates the union of property types over a stream of rows.
#[derive(Debug)]
pub struct SchemaScan {
    columns: ColumnMap,
    /// Per column of `columns`: every value fits nanoseconds (always true but for DateTime).
    fits_nanos: Vec<bool>,
    timestamp_fits_nanos: bool,
    rows: u64,
}

impl Default for SchemaScan {
    fn default() -> Self {
        Self {
            columns: ColumnMap::default(),
            fits_nanos: Vec::new(),
            timestamp_fits_nanos: true,
            rows: 0,
        }
    }
}

/// Whether `t` is representable as i64 nanoseconds since the Unix epoch.
pub fn fits_nanos(t: DateTime) -> bool {
    i64::try_from(t.to_unix_nanos()).is_ok()
}

/// Why a pass over the rows ended before the last row.
#[derive(Debug)]
pub enum Stop {
    /// A row holds a property type, or a DateTime, that the schema has no column for: the
    /// schema came from a sample and the whole table must be scanned for it.
    SchemaMiss,
    /// The thread consuming the rows stopped; its own result says why.
    ConsumerGone,
    /// A real failure.
    Failed(CliError),
}

impl From<CliError> for Stop {
    fn from(err: CliError) -> Self {
        Self::Failed(err)
    }
}

impl From<TableError> for Stop {
    fn from(err: TableError) -> Self {
        Self::Failed(err.into())
    }
}

/// The error of a row whose stored properties do not decode.
pub fn corrupt_row(row: &RowRef<'_>, err: impl std::fmt::Display) -> CliError {
    CliError::Corrupt(format!(
        "entity ({:?}, {:?}): {err}\nhint: run `strata check` for a full report",
        row.partition_key, row.row_key
    ))
}

/// The error for a row that stores the property `name` twice (the codec forbids it).
pub fn stored_twice(row: &RowRef<'_>, name: &[u8]) -> CliError {
    corrupt_row(
        row,
        format!(
            "property {:?} is stored twice",
            String::from_utf8_lossy(name)
        ),
    )
}

impl SchemaScan {
    /// Rows added so far.
    pub const fn rows(&self) -> u64 {
        self.rows
    }

    /// Adds one row.
    pub fn add(&mut self, row: &RowRef<'_>) -> Result<()> {
        self.rows += 1;
        self.timestamp_fits_nanos &= fits_nanos(row.timestamp);
        for (position, frame) in row.properties.frames().enumerate() {
            let frame = frame.map_err(|e| corrupt_row(row, e))?;
            let edm = frame.edm_type();
            let column = match self.columns.get(position, frame.name_bytes(), edm) {
                Some(column) => column,
                None => {
                    // The name becomes a column name: hold it to UTF-8 and the naming rules
                    // once; later rows match it byte for byte.
                    let property = frame.property().map_err(|e| corrupt_row(row, e))?;
                    property.property_name().map_err(|e| corrupt_row(row, e))?;
                    self.fits_nanos.push(true);
                    self.columns.insert_at(position, property.name(), edm)
                }
            };
            if edm == EdmType::DateTime
                && let ValueRef::DateTime(t) = frame.value_ref().map_err(|e| corrupt_row(row, e))?
                && let Some(fits) = self.fits_nanos.get_mut(column)
            {
                *fits &= fits_nanos(t);
            }
        }
        Ok(())
    }

    /// The columns: one per property, or one per (property, type) when a property was seen
    /// with several types; in property name order, then type order.
    pub fn finish(self) -> ExportSchema {
        let mut found: Vec<(String, EdmType, bool)> = self
            .columns
            .into_keys()
            .into_iter()
            .zip(self.fits_nanos)
            .map(|((property, edm), fits)| (property, edm, fits))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut columns = Vec::with_capacity(found.len());
        for (index, (property, edm, fits_nanos)) in found.iter().enumerate() {
            let same_name = |other: Option<&(String, EdmType, bool)>| {
                other.is_some_and(|(name, _, _)| name == property)
            };
            let several = same_name(index.checked_sub(1).and_then(|i| found.get(i)))
                || same_name(found.get(index + 1));
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
                edm: *edm,
                fits_nanos: *fits_nanos,
            });
        }
        ExportSchema {
            columns,
            timestamp_fits_nanos: self.timestamp_fits_nanos,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use strata::codec::property::PropertyReader;
    use strata::model::DateTime;

    use super::*;

    /// Stored properties: no Timestamp, then `(name, Int32 0)` for each name.
    fn properties(names: &[&[u8]]) -> Vec<u8> {
        let mut bytes = vec![1, 0, u8::try_from(names.len()).unwrap()];
        for name in names {
            bytes.push(u8::try_from(name.len()).unwrap());
            bytes.extend_from_slice(name);
            bytes.extend_from_slice(&[EdmType::Int32.tag(), 0]);
        }
        bytes
    }

    fn row(bytes: &[u8]) -> RowRef<'_> {
        RowRef {
            partition_key: "p",
            row_key: "r",
            timestamp: DateTime::MIN,
            properties: PropertyReader::new(bytes).unwrap(),
        }
    }

    #[test]
    fn new_names_are_checked_once_and_known_ones_match_by_bytes() {
        let mut scan = SchemaScan::default();
        let good = properties(&[b"A", b"B"]);
        scan.add(&row(&good)).unwrap();
        let swapped = properties(&[b"B", b"A"]);
        scan.add(&row(&swapped)).unwrap();
        let names: Vec<String> = scan.finish().columns.into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["A", "B"]);
    }

    #[test]
    fn names_that_are_not_utf8_or_break_the_naming_rules_are_corrupt_rows() {
        for bad in [&b"\xFF"[..], b"A\xC0", b"1A", b"Timestamp"] {
            let mut scan = SchemaScan::default();
            scan.add(&row(&properties(&[b"A"]))).unwrap();
            let bytes = properties(&[b"A", bad]);
            let err = scan.add(&row(&bytes)).unwrap_err();
            assert!(matches!(err, CliError::Corrupt(_)), "{bad:?}: {err:?}");
        }
    }
}
