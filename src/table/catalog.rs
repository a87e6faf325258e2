//! The catalog of tables, stored under the reserved table id as ordinary entity rows.
//!
//! ```text
//! key (codec::key, table id 0)         value (property codec)
//! ("tables", <name in lower case>)  -> TableName: String (as created), TableId: Int64,
//!                                      Acl: Binary (empty), Timestamp = creation time
//! ("meta",   "nextTableId")         -> NextId: Int64         (ids are never reused)
//! ("meta",   "clock")               -> ReservedTicks: Int64  (Timestamp high-water mark)
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::RwLock;

use super::error::{Result, TableError};
use super::limits::{
    CATALOG_ACL_PROPERTY, CATALOG_CLOCK_PROPERTY, CATALOG_CLOCK_ROW, CATALOG_ID_PROPERTY,
    CATALOG_META_PARTITION, CATALOG_NAME_PROPERTY, CATALOG_NEXT_ID_PROPERTY, CATALOG_NEXT_ID_ROW,
    CATALOG_TABLES_PARTITION, FIRST_TABLE_ID,
};
use crate::codec::CodecError;
use crate::codec::key::{self, CATALOG_TABLE_ID};
use crate::codec::property::{self, PropertyReader};
use crate::engine::Engine;
use crate::model::{
    DateTime, Entity, ModelError, PartitionKey, PropertyName, RowKey, TableName, Value,
};

/// A live user table.
#[derive(Debug)]
pub(crate) struct TableState {
    /// Its id: the first 4 bytes of every engine key of its entities.
    pub(crate) id: u32,
    /// Its name as created.
    pub(crate) name: TableName,
    /// Held shared by every write to the table and exclusively by its deletion, so no write
    /// lands in the key range of a table after its range delete. `true` once deleted.
    pub(crate) dropped: RwLock<bool>,
    /// Mirrors `dropped` without a lock, so a handle can check that the state it cached is
    /// still live at the cost of one load (reads need no gate: a read racing a drop is ordered
    /// before it).
    gone: AtomicBool,
}

impl TableState {
    /// The state of a live table.
    pub(crate) fn new(id: u32, name: TableName) -> Self {
        Self {
            id,
            name,
            dropped: RwLock::new(false),
            gone: AtomicBool::new(false),
        }
    }

    /// Whether the table has been deleted.
    pub(crate) fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }

    /// Marks the table deleted; called with `dropped` held exclusively.
    pub(crate) fn mark_gone(&self) {
        self.gone.store(true, Ordering::Release);
    }
}

/// What a catalog scan finds on open.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub(crate) tables: HashMap<TableName, Arc<TableState>>,
    pub(crate) next_id: u32,
    pub(crate) clock_reserved: i64,
}

/// Reads the whole catalog.
pub(crate) fn load(engine: &Engine) -> Result<Loaded> {
    let mut tables = HashMap::new();
    let mut next_id = FIRST_TABLE_ID;
    let (start, end) =
        key::partition_range(CATALOG_TABLE_ID, &partition(CATALOG_TABLES_PARTITION)?);
    let mut cursor = engine.range(&start[..]..&end[..])?;
    while cursor.advance()? {
        let state = decode_table_row(cursor.key(), cursor.value())?;
        next_id = next_id.max(state.id.saturating_add(1));
        tables.insert(state.name.clone(), Arc::new(state));
    }
    let next_id_key = meta_key(CATALOG_NEXT_ID_ROW)?;
    if let Some(value) = engine.get(&next_id_key)? {
        let stored = read_int64(&next_id_key, &value, CATALOG_NEXT_ID_PROPERTY)?;
        let stored = u32::try_from(stored)
            .map_err(|_| corrupt_value(&next_id_key, "table id counter out of range"))?;
        next_id = next_id.max(stored);
    }
    let clock_key = meta_key(CATALOG_CLOCK_ROW)?;
    let clock_reserved = match engine.get(&clock_key)? {
        Some(value) => read_int64(&clock_key, &value, CATALOG_CLOCK_PROPERTY)?,
        None => 0,
    };
    Ok(Loaded {
        tables,
        next_id,
        clock_reserved,
    })
}

/// The engine key of the catalog row of `name`.
pub(crate) fn table_key(name: &TableName) -> Result<Vec<u8>> {
    let folded = RowKey::new(name.to_folded())?;
    Ok(key::encode(
        CATALOG_TABLE_ID,
        &partition(CATALOG_TABLES_PARTITION)?,
        &folded,
    ))
}

/// The catalog row of a new table: key and value.
pub(crate) fn table_record(
    name: &TableName,
    id: u32,
    created: DateTime,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut entity = Entity::new(
        partition(CATALOG_TABLES_PARTITION)?,
        RowKey::new(name.to_folded())?,
    );
    entity.set(
        PropertyName::new(CATALOG_NAME_PROPERTY)?,
        Value::string(name.as_str())?,
    )?;
    entity.set(
        PropertyName::new(CATALOG_ID_PROPERTY)?,
        Value::Int64(i64::from(id)),
    )?;
    entity.set(
        PropertyName::new(CATALOG_ACL_PROPERTY)?,
        Value::Binary(Vec::new()),
    )?;
    entity.set_timestamp(created);
    Ok((table_key(name)?, property::encode(&entity)))
}

/// The id counter row: key and value.
pub(crate) fn next_id_record(next_id: u32) -> Result<(Vec<u8>, Vec<u8>)> {
    meta_record(
        CATALOG_NEXT_ID_ROW,
        CATALOG_NEXT_ID_PROPERTY,
        i64::from(next_id),
    )
}

/// The clock record: key and value.
pub(crate) fn clock_record(reserved_ticks: i64) -> Result<(Vec<u8>, Vec<u8>)> {
    meta_record(CATALOG_CLOCK_ROW, CATALOG_CLOCK_PROPERTY, reserved_ticks)
}

fn meta_record(row: &str, property_name: &str, value: i64) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut entity = Entity::new(partition(CATALOG_META_PARTITION)?, RowKey::new(row)?);
    entity.set(PropertyName::new(property_name)?, Value::Int64(value))?;
    Ok((meta_key(row)?, property::encode(&entity)))
}

fn decode_table_row(engine_key: &[u8], value: &[u8]) -> Result<TableState> {
    let reader = PropertyReader::new(value).map_err(|source| corrupt(engine_key, source))?;
    let name = match reader
        .get(CATALOG_NAME_PROPERTY)
        .map_err(|source| corrupt(engine_key, source))?
    {
        Some(Value::String(name)) => {
            TableName::new(name).map_err(|source| corrupt_model(engine_key, source))?
        }
        _ => {
            return Err(corrupt_value(
                engine_key,
                "catalog row without a TableName string",
            ));
        }
    };
    let id = read_int64(engine_key, value, CATALOG_ID_PROPERTY)?;
    let id = u32::try_from(id)
        .ok()
        .filter(|id| *id >= FIRST_TABLE_ID)
        .ok_or_else(|| corrupt_value(engine_key, "table id out of range"))?;
    if reader.timestamp().is_none() {
        return Err(corrupt_value(engine_key, "catalog row without a Timestamp"));
    }
    Ok(TableState::new(id, name))
}

fn read_int64(engine_key: &[u8], value: &[u8], property_name: &str) -> Result<i64> {
    let reader = PropertyReader::new(value).map_err(|source| corrupt(engine_key, source))?;
    match reader
        .get(property_name)
        .map_err(|source| corrupt(engine_key, source))?
    {
        Some(Value::Int64(number)) => Ok(number),
        _ => Err(corrupt_value(
            engine_key,
            "catalog row without its Int64 property",
        )),
    }
}

fn partition(name: &str) -> Result<PartitionKey> {
    Ok(PartitionKey::new(name)?)
}

fn meta_key(row: &str) -> Result<Vec<u8>> {
    Ok(key::encode(
        CATALOG_TABLE_ID,
        &partition(CATALOG_META_PARTITION)?,
        &RowKey::new(row)?,
    ))
}

fn corrupt(engine_key: &[u8], source: CodecError) -> TableError {
    TableError::CorruptRow {
        table_id: CATALOG_TABLE_ID,
        key: String::from_utf8_lossy(engine_key).into_owned(),
        source,
    }
}

fn corrupt_model(engine_key: &[u8], source: ModelError) -> TableError {
    corrupt(engine_key, CodecError::Model { offset: 0, source })
}

fn corrupt_value(engine_key: &[u8], what: &'static str) -> TableError {
    TableError::CorruptCatalog {
        key: String::from_utf8_lossy(engine_key).into_owned(),
        what,
    }
}
