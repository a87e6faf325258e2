//! Reads that hand rows over as borrowed bytes ([`RowRef`]) instead of owned entities: the
//! server writes its JSON straight from the stored property frames, so a point read or a
//! page of a query allocates nothing per row. Same rules and errors as [`Table::get`] and
//! [`Table::query`].

use std::time::Duration;

use super::continuation::ContinuationToken;
use super::entities::Table;
use super::error::{Result, TableError};
use super::ops;
use super::rows::{RowRef, row_ref};
use super::scan::Query;
use crate::codec::key;
use crate::model::{PartitionKey, RowKey};

/// Value buffers larger than this (a rare huge entity) are freed rather than kept per thread.
const MAX_REUSED_BUFFER: usize = 64 << 10;

thread_local! {
    static ROW_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// The engine key of the row being read, reused as [`ROW_BUFFER`] is.
    static KEY_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Table {
    /// Calls `visit` with the stored row `(partition_key, row_key)`, borrowed, and returns
    /// what it returns: [`Self::get`] without decoding the entity.
    ///
    /// # Errors
    /// As [`Self::get`]; a row whose header is corrupt is [`TableError::CorruptRow`].
    pub fn get_row<R>(
        &self,
        partition_key: &str,
        row_key: &str,
        visit: impl FnOnce(&RowRef<'_>) -> R,
    ) -> Result<R> {
        // Borrowed: a short key is validated and kept inline, with no allocation.
        let pk = PartitionKey::from_borrowed(partition_key)?;
        let rk = RowKey::from_borrowed(row_key)?;
        let state = self.state()?;
        let mut engine_key = KEY_BUFFER.take();
        engine_key.clear();
        key::encode_into(state.id, &pk, &rk, &mut engine_key);
        // One value buffer per thread: the stored value is copied once, into memory that is
        // already there.
        let mut value = ROW_BUFFER.take();
        let out = match self.account.inner.engine.get_into(&engine_key, &mut value) {
            Ok(true) => row_ref(state.id, &engine_key, &value).map(|row| visit(&row)),
            Ok(false) => Err(ops::not_found(self.name.as_str(), &pk, &rk)),
            Err(e) => Err(e.into()),
        };
        if value.capacity() <= MAX_REUSED_BUFFER {
            ROW_BUFFER.replace(value);
        }
        if engine_key.capacity() <= MAX_REUSED_BUFFER {
            KEY_BUFFER.replace(engine_key);
        }
        out
    }

    /// One page of the rows matching `query`, each handed to `visit` borrowed, in
    /// (PartitionKey, RowKey) order from one snapshot: [`Self::query`] without decoding. The
    /// query's `select` is left to `visit` (every property is in the row). Returns where the
    /// next page starts, if anywhere.
    ///
    /// # Errors
    /// As [`Self::query`], converted into `E`, or `visit`'s own error.
    pub fn query_rows<E: From<TableError>>(
        &self,
        query: &Query,
        visit: impl FnMut(&RowRef<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<ContinuationToken>, E> {
        self.query_rows_within(query, self.page_time_budget(), visit)
    }

    /// [`Self::query_rows`] with `budget` in place of the page time budget: a page still short
    /// of `top` rows when it has scanned for `budget` ends there, with a token naming the next
    /// row to examine, so the same query resumed from that token with `top` less the rows
    /// handed over yields the rest of the page.
    ///
    /// # Errors
    /// As [`Self::query_rows`].
    pub fn query_rows_within<E: From<TableError>>(
        &self,
        query: &Query,
        budget: Duration,
        mut visit: impl FnMut(&RowRef<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<ContinuationToken>, E> {
        self.scan_page(query, budget, |table_id, engine_key, value| {
            visit(&row_ref(table_id, engine_key, value)?)
        })
    }
}
