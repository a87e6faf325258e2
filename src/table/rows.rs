//! Bulk reading of a table's rows without decoding them: what `export` and other full-table
//! consumers use instead of paging through owned entities.

use super::entities::Table;
use super::error::{Result, TableError};
use super::row;
use super::scan::key_range;
use crate::codec::CodecError;
use crate::codec::format::{HEADER_FIXED_LEN, KEY_SEPARATOR, TABLE_ID_LEN, TICKS_LEN};
use crate::codec::property::PropertyReader;
use crate::model::DateTime;
use crate::query::{EncodedEntity, Filter, Plan, Prefilter};

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
        self.scan_raw(filter, true, |engine_key, value, row| match row {
            Some(row) => visit(row),
            None => visit(&row_ref(self.state()?.id, engine_key, value)?),
        })
    }

    /// Like [`Self::scan_rows`], but hands the matching rows over in owned chunks of up to
    /// `chunk_rows` rows (their stored bytes copied once), so that another thread can read
    /// them while this one scans on.
    ///
    /// # Errors
    /// As [`Self::scan_rows`].
    pub fn scan_row_chunks<E: From<TableError>>(
        &self,
        filter: Option<&str>,
        chunk_rows: usize,
        mut visit: impl FnMut(RowChunk) -> std::result::Result<(), E>,
    ) -> std::result::Result<u64, E> {
        let table_id = self.state()?.id;
        let chunk_rows = chunk_rows.max(1);
        let mut chunk = RowChunk::new(table_id, chunk_rows);
        let visited = self.scan_raw(filter, false, |engine_key, value, _| {
            chunk.push(engine_key, value);
            if chunk.len() >= chunk_rows {
                let full = std::mem::replace(&mut chunk, RowChunk::new(table_id, chunk_rows));
                visit(full)?;
            }
            Ok::<(), E>(())
        })?;
        if !chunk.is_empty() {
            visit(chunk)?;
        }
        Ok(visited)
    }

    /// The scan behind [`Self::scan_rows`]: `visit` gets each matching row's engine key and
    /// value, with its parsed view when `parse` is set or the filter needed it (a chunked scan
    /// leaves parsing to the thread that reads the chunk).
    fn scan_raw<E: From<TableError>>(
        &self,
        filter: Option<&str>,
        parse: bool,
        mut visit: impl FnMut(&[u8], &[u8], Option<&RowRef<'_>>) -> std::result::Result<(), E>,
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
        // Rows the filter cannot match are mostly told by their bytes alone.
        let prefilter = filter.as_ref().map(Prefilter::new);
        let snapshot = self.account.inner.engine.snapshot();
        let mut visited = 0u64;
        // The lending cursor: each row is borrowed from its block or memtable chunk, so a
        // scan allocates nothing per row.
        let mut cursor = snapshot.range(&start[..]..&end[..]);
        while cursor.advance().map_err(TableError::from)? {
            let (engine_key, value) = (cursor.key(), cursor.value());
            if prefilter
                .as_ref()
                .is_some_and(|prefilter| !prefilter.may_match(value))
            {
                continue;
            }
            let row = if parse || filter.is_some() {
                Some(row_ref(table_id, engine_key, value)?)
            } else {
                None
            };
            if let (Some(filter), Some(row)) = (&filter, &row) {
                let encoded = EncodedEntity {
                    partition_key: row.partition_key,
                    row_key: row.row_key,
                    reader: row.properties,
                };
                let matched = filter
                    .matches(&encoded)
                    .map_err(|source| row::corrupt(table_id, engine_key, source))?;
                if !matched {
                    continue;
                }
            }
            visit(engine_key, value, row.as_ref())?;
            visited += 1;
        }
        Ok(visited)
    }
}

/// Rows of one table copied out of a scan ([`Table::scan_row_chunks`]): the stored keys and
/// values back to back in one buffer.
#[derive(Debug, Clone)]
pub struct RowChunk {
    table_id: u32,
    bytes: Vec<u8>,
    /// Per row: where its key ends and where its value ends in `bytes`.
    ends: Vec<(usize, usize)>,
}

/// Bytes reserved per row of a new chunk (a typical key and value; the buffer grows as needed).
const CHUNK_ROW_BYTES: usize = 256;

impl RowChunk {
    fn new(table_id: u32, rows: usize) -> Self {
        Self {
            table_id,
            bytes: Vec::with_capacity(rows.saturating_mul(CHUNK_ROW_BYTES)),
            ends: Vec::with_capacity(rows),
        }
    }

    fn push(&mut self, engine_key: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(engine_key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ends.push((key_end, self.bytes.len()));
    }

    /// Number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the chunk holds no row.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The rows, in scan order.
    pub fn rows(&self) -> impl Iterator<Item = Result<RowRef<'_>>> {
        let mut start = 0;
        self.ends.iter().map(move |&(key_end, value_end)| {
            let engine_key = self.bytes.get(start..key_end).unwrap_or_default();
            let value = self.bytes.get(key_end..value_end).unwrap_or_default();
            start = value_end;
            row_ref(self.table_id, engine_key, value)
        })
    }
}

/// The PartitionKey and RowKey text of an engine key: [`row::split_key`] with both keys
/// checked as UTF-8 in one pass (the separator is ASCII, so the text splits at it), which
/// halves the cost of the check that every returned row pays.
pub(super) fn key_text(engine_key: &[u8]) -> Option<(&str, &str)> {
    let rest = engine_key.get(TABLE_ID_LEN..)?;
    let separator = rest.iter().position(|&byte| byte == KEY_SEPARATOR)?;
    // Keys are mostly ASCII, where std's validator costs more in setup than the check.
    let text = if rest.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        unsafe { std::str::from_utf8_unchecked(rest) }
    } else {
        std::str::from_utf8(rest).ok()?
    };
    Some((text.get(..separator)?, text.get(separator + 1..)?))
}

/// The borrowed view of one stored row of table `table_id`.
pub(super) fn row_ref<'a>(
    table_id: u32,
    engine_key: &'a [u8],
    value: &'a [u8],
) -> Result<RowRef<'a>> {
    let fail = |source| row::corrupt(table_id, engine_key, source);
    let (partition_key, row_key) =
        key_text(engine_key).ok_or_else(|| fail(CodecError::MissingSeparator { offset: 0 }))?;
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
    use crate::{Account, TableError};

    fn table_of_five() -> (tempfile::TempDir, crate::Table) {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open(dir.path().join("db")).unwrap();
        account.create_table("Items").unwrap();
        let table = account.table("Items").unwrap();
        for i in 0..5 {
            let mut entity = Entity::new(
                PartitionKey::new("p").unwrap(),
                RowKey::new(i.to_string()).unwrap(),
            );
            entity
                .set(PropertyName::new("N").unwrap(), Value::Int32(i))
                .unwrap();
            table.insert(&entity).unwrap();
        }
        (dir, table)
    }

    #[test]
    fn key_text_splits_as_split_key_does() {
        let keys: [&[u8]; 7] = [
            b"\0\0\0\x01p\0r",
            b"\0\0\0\x01\0r",
            b"\0\0\0\x01p\0",
            b"\0\0\0\x01p\0r\0s",
            b"\0\0\0\x01pr",
            b"\0\0\0",
            b"\0\0\0\x01p\xff\0r",
        ];
        for key in keys {
            assert_eq!(super::key_text(key), crate::table::row::split_key(key));
        }
        let valid = "\u{e9}t\u{e9}\0\u{1F600}".as_bytes();
        let key = [&[0, 0, 0, 1][..], valid].concat();
        assert_eq!(super::key_text(&key), Some(("\u{e9}t\u{e9}", "\u{1F600}")));
    }

    #[test]
    fn chunks_hold_every_matching_row_in_order() {
        let (_dir, table) = table_of_five();
        let mut chunks = Vec::new();
        let seen = table
            .scan_row_chunks(Some("N ge 1"), 2, |chunk| {
                let keys: Vec<String> = chunk
                    .rows()
                    .map(|row| row.unwrap().row_key.to_owned())
                    .collect();
                chunks.push(keys);
                Ok::<_, TableError>(())
            })
            .unwrap();
        assert_eq!(seen, 4);
        assert_eq!(chunks, [vec!["1", "2"], vec!["3", "4"]]);
    }

    #[test]
    fn rows_expose_keys_timestamp_and_properties() {
        let (_dir, table) = table_of_five();
        let mut values = Vec::new();
        let seen = table
            .scan_rows(Some("RowKey lt '2'"), |row| {
                assert_eq!(row.partition_key, "p");
                assert!(row.timestamp.ticks() > 0);
                values.push(row.properties.get("N").unwrap());
                Ok::<_, TableError>(())
            })
            .unwrap();
        assert_eq!(seen, 2);
        assert_eq!(values, [Some(Value::Int32(0)), Some(Value::Int32(1))]);
    }
}
