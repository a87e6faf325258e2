//! CSV output: a header of keys, Timestamp and the schema's columns, then one record per row
//! with each value in its wire form (empty when the row lacks the property or has it with
//! another type).

use std::path::Path;

use strata::RowRef;
use strata::codec::property::ValueRef;

use super::columns::ColumnMap;
use super::schema::{ExportSchema, Stop, corrupt_row, stored_twice};
use crate::cli::error::{CliError, Result};
use crate::cli::json::{PARTITION_KEY, ROW_KEY, TIMESTAMP};

/// Writes rows to a CSV file.
pub struct CsvFile {
    writer: csv::Writer<std::fs::File>,
    columns: ColumnMap,
    /// The text of each column in the current row...
    fields: Vec<String>,
    /// ... valid where the stamp equals the current row's number.
    stamps: Vec<u64>,
    row: u64,
    path: String,
}

impl CsvFile {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path, schema: &ExportSchema) -> Result<Self> {
        let mut writer =
            csv::Writer::from_path(path).map_err(|e| CliError::io("create", path, e))?;
        let mut header = vec![PARTITION_KEY, ROW_KEY, TIMESTAMP];
        header.extend(schema.columns.iter().map(|c| c.name.as_str()));
        writer
            .write_record(&header)
            .map_err(|e| CliError::io("write", path, e))?;
        Ok(Self {
            writer,
            columns: schema.column_map(),
            fields: vec![String::new(); schema.columns.len()],
            stamps: vec![0; schema.columns.len()],
            row: 0,
            path: path.display().to_string(),
        })
    }

    /// Writes one row.
    ///
    /// # Errors
    /// [`Stop::SchemaMiss`] for a property type the schema has no column for.
    pub fn push(&mut self, row: &RowRef<'_>) -> Result<(), Stop> {
        self.row += 1;
        for (position, property) in row.properties.frames().enumerate() {
            let property = property.map_err(|e| corrupt_row(row, e))?;
            let column = self
                .columns
                .get(position, property.name_bytes(), property.edm_type())
                .ok_or(Stop::SchemaMiss)?;
            let (Some(field), Some(stamp)) =
                (self.fields.get_mut(column), self.stamps.get_mut(column))
            else {
                continue;
            };
            if *stamp == self.row {
                return Err(stored_twice(row, property.name_bytes()).into());
            }
            *stamp = self.row;
            field.clear();
            match property.value_ref().map_err(|e| corrupt_row(row, e))? {
                ValueRef::String(text) => field.push_str(text),
                other => {
                    let value = other.to_value().map_err(|e| corrupt_row(row, e))?;
                    field.push_str(&value.to_wire());
                }
            }
        }
        let fail = |e: csv::Error| CliError::Io(format!("cannot write {}: {e}", self.path));
        self.writer.write_field(row.partition_key).map_err(fail)?;
        self.writer.write_field(row.row_key).map_err(fail)?;
        self.writer
            .write_field(row.timestamp.to_iso8601())
            .map_err(fail)?;
        for (field, stamp) in self.fields.iter().zip(&self.stamps) {
            let text = if *stamp == self.row {
                field.as_str()
            } else {
                ""
            };
            self.writer.write_field(text).map_err(fail)?;
        }
        self.writer
            .write_record(std::iter::empty::<&[u8]>())
            .map_err(fail)?;
        Ok(())
    }

    /// Flushes the file.
    pub fn finish(mut self) -> Result<()> {
        self.writer
            .flush()
            .map_err(|e| CliError::Io(format!("cannot write {}: {e}", self.path)))
    }
}
