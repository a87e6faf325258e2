//! Parquet output: EDM types mapped to Arrow types (docs/FORMAT.md, "Parquet export mapping"),
//! written in row groups so memory stays bounded by one group.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder, TimestampNanosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use strata::StoredEntity;
use strata::model::{DateTime, EdmType, Value};

use super::schema::{Column, ExportSchema};
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
    fn new(edm: EdmType, fits_nanos: bool) -> Self {
        match edm {
            EdmType::String | EdmType::Guid => Self::String(StringBuilder::new()),
            EdmType::Binary => Self::Binary(BinaryBuilder::new()),
            EdmType::Boolean => Self::Boolean(BooleanBuilder::new()),
            EdmType::Int32 => Self::Int32(Int32Builder::new()),
            EdmType::Int64 => Self::Int64(Int64Builder::new()),
            EdmType::Double => Self::Double(Float64Builder::new()),
            EdmType::DateTime if fits_nanos => {
                Self::Nanos(TimestampNanosecondBuilder::new().with_timezone(UTC))
            }
            EdmType::DateTime => {
                Self::Micros(TimestampMicrosecondBuilder::new().with_timezone(UTC))
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

    fn append_time(&mut self, t: DateTime) {
        let nanos = t.to_unix_nanos();
        match self {
            // The schema pass chose nanoseconds only when every value fits.
            Self::Nanos(b) => b.append_option(i64::try_from(nanos).ok()),
            // Microseconds cover 1601..=9999; the 100 ns digit is dropped (floor).
            Self::Micros(b) => {
                b.append_option(i64::try_from(nanos.div_euclid(NANOS_PER_MICRO)).ok());
            }
            _ => {}
        }
    }

    /// Appends `value` (already known to be of this column's type) or a null.
    fn append(&mut self, value: Option<&Value>) {
        match (self, value) {
            (Self::String(b), Some(Value::String(s))) => b.append_value(s),
            (Self::String(b), Some(Value::Guid(g))) => b.append_value(g.to_string()),
            (Self::Binary(b), Some(Value::Binary(v))) => b.append_value(v),
            (Self::Boolean(b), Some(Value::Boolean(v))) => b.append_value(*v),
            (Self::Int32(b), Some(Value::Int32(v))) => b.append_value(*v),
            (Self::Int64(b), Some(Value::Int64(v))) => b.append_value(*v),
            (Self::Double(b), Some(Value::Double(v))) => b.append_value(*v),
            (this @ (Self::Nanos(_) | Self::Micros(_)), Some(Value::DateTime(t))) => {
                this.append_time(*t);
            }
            (this, _) => this.append_null(),
        }
    }

    fn append_null(&mut self) {
        match self {
            Self::String(b) => b.append_null(),
            Self::Binary(b) => b.append_null(),
            Self::Boolean(b) => b.append_null(),
            Self::Int32(b) => b.append_null(),
            Self::Int64(b) => b.append_null(),
            Self::Double(b) => b.append_null(),
            Self::Nanos(b) => b.append_null(),
            Self::Micros(b) => b.append_null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Self::String(b) => Arc::new(b.finish()),
            Self::Binary(b) => Arc::new(b.finish()),
            Self::Boolean(b) => Arc::new(b.finish()),
            Self::Int32(b) => Arc::new(b.finish()),
            Self::Int64(b) => Arc::new(b.finish()),
            Self::Double(b) => Arc::new(b.finish()),
            Self::Nanos(b) => Arc::new(b.finish()),
            Self::Micros(b) => Arc::new(b.finish()),
        }
    }
}

/// Streams entities into a Parquet file, one row group per `group_rows` rows.
pub struct ParquetSink {
    writer: ArrowWriter<File>,
    schema: SchemaRef,
    columns: Vec<Column>,
    pk: StringBuilder,
    rk: StringBuilder,
    timestamp: Builder,
    builders: Vec<Builder>,
    buffered: usize,
    group_rows: usize,
    path: String,
}

impl ParquetSink {
    /// Creates `path` with the columns of `schema`.
    pub fn create(path: &Path, schema: &ExportSchema, group_rows: usize) -> Result<Self> {
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
        let arrow_schema = Arc::new(Schema::new(fields));
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_size(group_rows)
            .build();
        let file = File::create(path).map_err(|e| CliError::io("create", path, e))?;
        let writer = ArrowWriter::try_new(file, arrow_schema.clone(), Some(props))
            .map_err(|e| CliError::io("write Parquet to", path, e))?;
        Ok(Self {
            writer,
            schema: arrow_schema,
            columns: schema.columns.clone(),
            pk: StringBuilder::new(),
            rk: StringBuilder::new(),
            timestamp: Builder::new(EdmType::DateTime, schema.timestamp_fits_nanos),
            builders: schema
                .columns
                .iter()
                .map(|c| Builder::new(c.edm, c.fits_nanos))
                .collect(),
            buffered: 0,
            group_rows,
            path: path.display().to_string(),
        })
    }

    /// Adds one row; writes a row group when enough are buffered.
    pub fn push(&mut self, stored: &StoredEntity) -> Result<()> {
        let e = &stored.entity;
        self.pk.append_value(e.partition_key().as_str());
        self.rk.append_value(e.row_key().as_str());
        self.timestamp.append_time(stored.timestamp());
        for (column, builder) in self.columns.iter().zip(&mut self.builders) {
            let value = e
                .get(&column.property)
                .filter(|v| v.edm_type() == column.edm);
            builder.append(value);
        }
        self.buffered += 1;
        if self.buffered >= self.group_rows {
            self.write_group()?;
        }
        Ok(())
    }

    fn write_group(&mut self) -> Result<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(self.pk.finish()),
            Arc::new(self.rk.finish()),
            self.timestamp.finish(),
        ];
        arrays.extend(self.builders.iter_mut().map(Builder::finish));
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| CliError::Data(format!("cannot build a Parquet row group: {e}")))?;
        self.writer
            .write(&batch)
            .map_err(|e| CliError::Io(format!("cannot write {}: {e}", self.path)))?;
        // Flush so the encoded group leaves memory now, not at close.
        self.writer
            .flush()
            .map_err(|e| CliError::Io(format!("cannot write {}: {e}", self.path)))?;
        self.buffered = 0;
        Ok(())
    }

    /// Writes the last row group and the footer.
    pub fn finish(mut self) -> Result<()> {
        self.write_group()?;
        self.writer
            .close()
            .map_err(|e| CliError::Io(format!("cannot finish {}: {e}", self.path)))?;
        Ok(())
    }
}
