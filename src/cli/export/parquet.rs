//! Parquet output: EDM types mapped to Arrow types (docs/FORMAT.md, "Parquet export mapping").
//! Rows are turned into Arrow record batches here, straight from the borrowed stored values;
//! [`super::writer`] encodes and writes them on a second thread.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Float64Builder, GenericByteBuilder, Int32Builder,
    Int64Builder, StringBuilder, TimestampMicrosecondBuilder, TimestampNanosecondBuilder,
};
use arrow_array::types::ByteArrayType;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use strata::RowRef;
use strata::codec::property::ValueRef;
use strata::model::{DateTime, EdmType, Guid};

use super::columns::ColumnMap;
use super::schema::{ExportSchema, Stop, corrupt_row, stored_twice};
use crate::cli::error::{CliError, Result};
use crate::cli::json::{PARTITION_KEY, ROW_KEY, TIMESTAMP};

/// Time zone of every timestamp column.
const UTC: &str = "UTC";
/// Nanoseconds in a microsecond.
const NANOS_PER_MICRO: i128 = 1_000;

/// A builder of one column.
enum Builder {
    String(StringBuilder),
    Binary(BinaryBuilder),
    Boolean(BooleanBuilder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Double(Float64Builder),
    Nanos(TimestampNanosecondBuilder),
    Micros(TimestampMicrosecondBuilder),
}

impl Builder {
    fn new(edm: EdmType, fits_nanos: bool, rows: usize) -> Self {
        match edm {
            EdmType::String | EdmType::Guid => Self::String(StringBuilder::with_capacity(rows, 0)),
            EdmType::Binary => Self::Binary(BinaryBuilder::with_capacity(rows, 0)),
            EdmType::Boolean => Self::Boolean(BooleanBuilder::with_capacity(rows)),
            EdmType::Int32 => Self::Int32(Int32Builder::with_capacity(rows)),
            EdmType::Int64 => Self::Int64(Int64Builder::with_capacity(rows)),
            EdmType::Double => Self::Double(Float64Builder::with_capacity(rows)),
            EdmType::DateTime if fits_nanos => {
                Self::Nanos(TimestampNanosecondBuilder::with_capacity(rows).with_timezone(UTC))
            }
            EdmType::DateTime => {
                Self::Micros(TimestampMicrosecondBuilder::with_capacity(rows).with_timezone(UTC))
            }
        }
    }

    fn data_type(edm: EdmType, fits_nanos: bool) -> DataType {
        match edm {
            EdmType::String | EdmType::Guid => DataType::Utf8,
            EdmType::Binary => DataType::Binary,
            EdmType::Boolean => DataType::Boolean,
            EdmType::Int32 => DataType::Int32,
            EdmType::Int64 => DataType::Int64,
            EdmType::Double => DataType::Float64,
            EdmType::DateTime => DataType::Timestamp(
                if fits_nanos {
                    TimeUnit::Nanosecond
                } else {
                    TimeUnit::Microsecond
                },
                Some(UTC.into()),
            ),
        }
    }

    /// Values appended so far, by a jump rather than a `dyn ArrayBuilder` call: it runs for
    /// every stored property.
    #[inline]
    fn len(&self) -> usize {
        match self {
            Self::String(b) => b.len(),
            Self::Binary(b) => b.len(),
            Self::Boolean(b) => b.len(),
            Self::Int32(b) => b.len(),
            Self::Int64(b) => b.len(),
            Self::Double(b) => b.len(),
            Self::Nanos(b) => b.len(),
            Self::Micros(b) => b.len(),
        }
    }

    /// Appends `t`; false (and a null) when the column's unit cannot hold it, which only a
    /// schema taken from a sample of the rows lets happen.
    #[must_use]
    fn append_time(&mut self, t: DateTime) -> bool {
        let nanos = t.to_unix_nanos();
        let value = match self {
            Self::Nanos(_) => i64::try_from(nanos).ok(),
            // Microseconds cover 1601..=9999; the 100 ns digit is dropped (floor).
            Self::Micros(_) => i64::try_from(nanos.div_euclid(NANOS_PER_MICRO)).ok(),
            _ => None,
        };
        match self {
            Self::Nanos(b) => b.append_option(value),
            Self::Micros(b) => b.append_option(value),
            _ => self.append_nulls(1),
        }
        value.is_some()
    }

    /// Appends `value`, of this column's type by construction of the column map; false when
    /// a DateTime does not fit the column's unit.
    #[must_use]
    fn append(&mut self, value: ValueRef<'_>) -> bool {
        match (self, value) {
            (Self::String(b), ValueRef::String(s)) => b.append_value(s),
            (Self::String(b), ValueRef::Guid(g)) => b.append_value(guid_text(&g).as_str()),
            (Self::Binary(b), ValueRef::Binary(v)) => b.append_value(v),
            (Self::Boolean(b), ValueRef::Boolean(v)) => b.append_value(v),
            (Self::Int32(b), ValueRef::Int32(v)) => b.append_value(v),
            (Self::Int64(b), ValueRef::Int64(v)) => b.append_value(v),
            (Self::Double(b), ValueRef::Double(v)) => b.append_value(v),
            (this @ (Self::Nanos(_) | Self::Micros(_)), ValueRef::DateTime(t)) => {
                return this.append_time(t);
            }
            (this, _) => this.append_nulls(1),
        }
        true
    }

    fn append_nulls(&mut self, n: usize) {
        match self {
            Self::String(b) => b.append_nulls(n),
            Self::Binary(b) => b.append_nulls(n),
            Self::Boolean(b) => b.append_nulls(n),
            Self::Int32(b) => b.append_nulls(n),
            Self::Int64(b) => b.append_nulls(n),
            Self::Double(b) => b.append_nulls(n),
            Self::Nanos(b) => b.append_nulls(n),
            Self::Micros(b) => b.append_nulls(n),
        }
    }

    /// The values appended since the last call, as an array; the builder starts over with
    /// room for `rows` rows (and as many bytes as this batch took), so that the next batch
    /// does not grow its buffers by reallocation.
    fn finish(&mut self, rows: usize) -> ArrayRef {
        match self {
            Self::String(b) => finish_bytes(b, rows),
            Self::Binary(b) => finish_bytes(b, rows),
            Self::Boolean(b) => {
                let array = Arc::new(b.finish());
                *b = BooleanBuilder::with_capacity(rows);
                array
            }
            Self::Int32(b) => {
                let array = Arc::new(b.finish());
                *b = Int32Builder::with_capacity(rows);
                array
            }
            Self::Int64(b) => {
                let array = Arc::new(b.finish());
                *b = Int64Builder::with_capacity(rows);
                array
            }
            Self::Double(b) => {
                let array = Arc::new(b.finish());
                *b = Float64Builder::with_capacity(rows);
                array
            }
            Self::Nanos(b) => {
                let array = Arc::new(b.finish());
                *b = TimestampNanosecondBuilder::with_capacity(rows).with_timezone(UTC);
                array
            }
            Self::Micros(b) => {
                let array = Arc::new(b.finish());
                *b = TimestampMicrosecondBuilder::with_capacity(rows).with_timezone(UTC);
                array
            }
        }
    }
}

/// [`Builder::finish`] for strings and binaries.
fn finish_bytes<T: ByteArrayType>(builder: &mut GenericByteBuilder<T>, rows: usize) -> ArrayRef {
    let bytes = builder.values_slice().len();
    let array = Arc::new(builder.finish());
    *builder = GenericByteBuilder::with_capacity(rows, bytes);
    array
}

/// The Arrow schema of an export: keys, Timestamp, then one nullable column per property type.
pub fn arrow_schema(schema: &ExportSchema) -> SchemaRef {
    let mut fields = vec![
        Field::new(PARTITION_KEY, DataType::Utf8, false),
        Field::new(ROW_KEY, DataType::Utf8, false),
        Field::new(
            TIMESTAMP,
            Builder::data_type(EdmType::DateTime, schema.timestamp_fits_nanos),
            false,
        ),
    ];
    for c in &schema.columns {
        fields.push(Field::new(
            &c.name,
            Builder::data_type(c.edm, c.fits_nanos),
            true,
        ));
    }
    Arc::new(Schema::new(fields))
}

/// The columns whose values are mostly distinct, written without a dictionary: RowKey (unique
/// within a partition, usually an id or a time) and every Guid and Binary column.
pub fn plain_columns(schema: &ExportSchema) -> Vec<String> {
    std::iter::once(ROW_KEY.to_owned())
        .chain(
            schema
                .columns
                .iter()
                .filter(|c| matches!(c.edm, EdmType::Guid | EdmType::Binary))
                .map(|c| c.name.clone()),
        )
        .collect()
}

/// The columns whose values have no useful order, written without statistics (a min and max
/// of random ids or blobs prune nothing, and computing them was a sixth of the encoding):
/// every Guid and Binary column.
pub fn unordered_columns(schema: &ExportSchema) -> Vec<String> {
    schema
        .columns
        .iter()
        .filter(|c| matches!(c.edm, EdmType::Guid | EdmType::Binary))
        .map(|c| c.name.clone())
        .collect()
}

/// Length of a Guid's text form (`8-4-4-4-12` hex digits).
const GUID_TEXT_LEN: usize = 36;

/// The lowercase `8-4-4-4-12` text of a Guid, as `Guid`'s `Display` writes it, without the
/// formatting machinery (which cost more than the rest of a row).
fn guid_text(guid: &Guid) -> GuidText {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [b'-'; GUID_TEXT_LEN];
    let mut at = 0;
    for (index, byte) in guid.0.iter().enumerate() {
        if matches!(index, 4 | 6 | 8 | 10) {
            at += 1;
        }
        for nibble in [byte >> 4, byte & 0x0F] {
            if let (Some(slot), Some(digit)) = (out.get_mut(at), HEX.get(usize::from(nibble))) {
                *slot = *digit;
            }
            at += 1;
        }
    }
    GuidText(out)
}

/// The text form of a Guid, on the stack.
struct GuidText([u8; GUID_TEXT_LEN]);

impl GuidText {
    fn as_str(&self) -> &str {
        // Only ASCII hex digits and hyphens are ever written.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Builds record batches from borrowed rows.
pub struct BatchBuilder {
    schema: SchemaRef,
    columns: ColumnMap,
    pk: StringBuilder,
    rk: StringBuilder,
    timestamp: Builder,
    builders: Vec<Builder>,
    rows: usize,
    /// Rows the builders make room for.
    group_rows: usize,
}

impl BatchBuilder {
    /// A builder for the columns of `schema`, sized for batches of `group_rows` rows.
    pub fn new(schema: &ExportSchema, group_rows: usize) -> Self {
        Self {
            schema: arrow_schema(schema),
            columns: schema.column_map(),
            pk: StringBuilder::with_capacity(group_rows, 0),
            rk: StringBuilder::with_capacity(group_rows, 0),
            timestamp: Builder::new(EdmType::DateTime, schema.timestamp_fits_nanos, group_rows),
            builders: schema
                .columns
                .iter()
                .map(|c| Builder::new(c.edm, c.fits_nanos, group_rows))
                .collect(),
            rows: 0,
            group_rows,
        }
    }

    /// Adds one row.
    ///
    /// # Errors
    /// [`Stop::SchemaMiss`] for a property or DateTime the schema has no column for.
    pub fn push(&mut self, row: &RowRef<'_>) -> Result<(), Stop> {
        self.pk.append_value(row.partition_key);
        self.rk.append_value(row.row_key);
        if !self.timestamp.append_time(row.timestamp) {
            return Err(Stop::SchemaMiss);
        }
        for (position, property) in row.properties.frames().enumerate() {
            let property = property.map_err(|e| corrupt_row(row, e))?;
            let Some(builder) = self
                .columns
                .get(position, property.name_bytes(), property.edm_type())
                .and_then(|column| self.builders.get_mut(column))
            else {
                return Err(Stop::SchemaMiss);
            };
            // Columns a row lacks are filled with nulls lazily, just before its next value.
            let filled = builder.len();
            if filled > self.rows {
                return Err(stored_twice(row, property.name_bytes()).into());
            }
            if filled < self.rows {
                builder.append_nulls(self.rows - filled);
            }
            let value = property.value_ref().map_err(|e| corrupt_row(row, e))?;
            if !builder.append(value) {
                return Err(Stop::SchemaMiss);
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// The rows added since the last batch as one batch, if any.
    pub fn take_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.rows == 0 {
            return Ok(None);
        }
        self.finish_batch().map(Some)
    }

    fn finish_batch(&mut self) -> Result<RecordBatch> {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.builders.len() + 3);
        arrays.push(finish_bytes(&mut self.pk, self.group_rows));
        arrays.push(finish_bytes(&mut self.rk, self.group_rows));
        arrays.push(self.timestamp.finish(self.group_rows));
        for builder in &mut self.builders {
            let filled = builder.len();
            builder.append_nulls(self.rows.saturating_sub(filled));
            arrays.push(builder.finish(self.group_rows));
        }
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| CliError::Data(format!("cannot build a Parquet row group: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_text_matches_the_display_form() {
        for bytes in [
            [0u8; 16],
            [0xFF; 16],
            *b"\x01\x23\x45\x67\x89\xab\xcd\xef\xfe\xdc\xba\x98\x76\x54\x32\x10",
        ] {
            let guid = Guid(bytes);
            assert_eq!(guid_text(&guid).as_str(), guid.to_string());
        }
    }
}
