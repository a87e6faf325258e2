//! Bulk reading of a table's rows without decoding them: what `export` and other full-table
//! consumers use instead of paging through owned entities.

use super::entities::Table;
use super::error::{Result, TableError};
use super::row;
use super::scan::key_range;
use crate::codec::CodecError;
use crate::codec::format::{HEADER_FIXED_LEN, TICKS_LEN};
use crate::codec::property::PropertyReader;
use crate::model::DateTime;
use crate::query::{EncodedEntity, Filter, Plan};

/// One stored row, borrowed from the scan: keys, Timestamp and the still-encoded properties.
/// Keys are checked as UTF-8 only, properties as far as the caller walks them (the row was
/// checksummed on its way from the file).
#[derive(Debug, Clone, Copy)]
pub struct RowRef<'a> {
    /// The `PartitionKey`.
    pub partition_key: &'a str,
    /// The `RowKey`.
    pub row_key: &'a str,
    /// The Timestamp of the row's last write.
    pub timestamp: DateTime,
    /// The encoded custom properties.
    pub properties: PropertyReader<'a>,
}

impl Table {
    /// Calls `visit` on every row matching `filter` (OData `$filter`, all rows when `None`),
    /// in (PartitionKey, RowKey) order, from one consistent snapshot; returns how many rows
    /// were visited. Nothing is decoded beyond what the filter and `visit` read, so this is the
    /// cheap way to walk a whole table. `visit` may stop the scan by returning an error.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// use strata::Account;
    /// use strata::model::{Entity, PartitionKey, RowKey};
    /// let account = Account::open(dir.path().join("db"))?;
    /// account.create_table("Items")?;
    /// let table = account.table("Items")?;
    /// table.insert(&Entity::new(PartitionKey::new("p")?, RowKey::new("r")?))?;
    /// let mut keys = Vec::new();
    /// let seen = table.scan_rows(None, |row| {
    ///     keys.push(row.row_key.to_owned());
    ///     Ok::<_, strata::TableError>(())
    /// })?;
    /// assert_eq!((seen, keys), (1, vec!["r".to_owned()]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`TableError::InvalidFilter`], [`TableError::TableNotFound`], a corrupt row or engine
    /// read ([`TableError::CorruptRow`], ...) converted into `E`, or `visit`'s own error.
    pub fn scan_rows<E: From<TableError>>(
        &self,
        filter: Option<&str>,
        mut visit: impl FnMut(&RowRef<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<u64, E> {
        let filter = filter
            .map(Filter::parse)
            .transpose()
            .map_err(TableError::from)?;
        let state = self.state()?;
        let table_id = state.id;
        // The planner's key range is a superset of the matches; the whole filter is then
        // evaluated on every row of it.
        let Some((start, end)) = key_range(table_id, &Plan::new(filter.as_ref()).scope) else {
            return Ok(0);
        };
        let snapshot = self.account.inner.engine.snapshot();
        let mut visited = 0u64;
        // The owned iterator today; a borrowed cursor slots in here without changing callers.
        for item in snapshot.range(&start[..]..&end[..]) {
            let (engine_key, value) = item.map_err(TableError::from)?;
            let row = row_ref(table_id, &engine_key, &value)?;
            if let Some(filter) = &filter {
                let encoded = EncodedEntity {
                    partition_key: row.partition_key,
                    row_key: row.row_key,
                    reader: row.properties,
                };
                let matched = filter
                    .matches(&encoded)
                    .map_err(|source| row::corrupt(table_id, &engine_key, source))?;
                if !matched {
                    continue;
                }
            }
            visit(&row)?;
            visited += 1;
        }
        Ok(visited)
    }
}

/// The borrowed view of one stored row of table `table_id`.
fn row_ref<'a>(table_id: u32, engine_key: &'a [u8], value: &'a [u8]) -> Result<RowRef<'a>> {
    let fail = |source| row::corrupt(table_id, engine_key, source);
    let (partition_key, row_key) = row::split_key(engine_key)
        .ok_or_else(|| fail(CodecError::MissingSeparator { offset: 0 }))?;
    let properties = PropertyReader::new(value).map_err(fail)?;
    let timestamp = properties.timestamp().ok_or_else(|| {
        fail(CodecError::Truncated {
            offset: HEADER_FIXED_LEN,
            needed: TICKS_LEN,
        })
    })?;
    Ok(RowRef {
        partition_key,
        row_key,
        timestamp,
        properties,
    })
}
