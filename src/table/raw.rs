//! Reads that hand rows over as borrowed bytes ([`RowRef`]) instead of owned entities: the
//! server writes its JSON straight from the stored property frames, so a point read or a
//! page of a query allocates nothing per row. Same rules and errors as [`Table::get`] and
//! [`Table::query`].

use std::time::Instant;

use super::continuation::ContinuationToken;
use super::entities::Table;
use super::error::{Result, TableError};
use super::limits::{BUDGET_CHECK_INTERVAL, PAGE_MAX_ENTITIES};
use super::ops;
use super::row;
use super::rows::RowRef;
use super::scan::{Query, key_range};
use crate::codec::CodecError;
use crate::codec::format::{HEADER_FIXED_LEN, TICKS_LEN};
use crate::codec::key;
use crate::codec::property::PropertyReader;
use crate::model::{PartitionKey, RowKey};
use crate::query::{EncodedEntity, Field, Filter, KeyScope, Plan};

/// Value buffers larger than this (a rare huge entity) are freed rather than kept per thread.
const MAX_REUSED_BUFFER: usize = 64 << 10;

thread_local! {
    static ROW_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
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
        let pk = PartitionKey::new(partition_key)?;
        let rk = RowKey::new(row_key)?;
        let state = self.state()?;
        let engine_key = key::encode(state.id, &pk, &rk);
        // One value buffer per thread: the stored value is copied once, into memory that is
        // already there.
        let mut value = ROW_BUFFER.take();
        let out = match self.account.inner.engine.get_into(&engine_key, &mut value) {
            Ok(true) => row_ref(state.id, &engine_key, pk.as_str(), rk.as_str(), &value)
                .map(|row| visit(&row)),
            Ok(false) => Err(ops::not_found(self.name.as_str(), &pk, &rk)),
            Err(e) => Err(e.into()),
        };
        if value.capacity() <= MAX_REUSED_BUFFER {
            ROW_BUFFER.replace(value);
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
        mut visit: impl FnMut(&RowRef<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<ContinuationToken>, E> {
        let started = Instant::now();
        let filter = query
            .filter
            .as_deref()
            .map(Filter::parse)
            .transpose()
            .map_err(TableError::from)?;
        let limit = page_limit(query.top)?;
        let resume = query
            .continuation
            .as_ref()
            .map(ContinuationToken::keys)
            .transpose()?;
        let inner = &*self.account.inner;
        let state = self.state()?;
        let table_id = state.id;
        let plan = Plan::new(filter.as_ref());
        // These ranges hold exactly the keys of their scope, so rows need no re-check.
        let exact_range = matches!(
            plan.scope,
            KeyScope::Table | KeyScope::Partition { .. } | KeyScope::Point { .. }
        );
        let Some((mut start, end)) = key_range(table_id, &plan.scope) else {
            return Ok(None);
        };
        if let Some((pk, rk)) = &resume {
            start = start.max(key::encode(table_id, pk, rk));
        }
        if start >= end {
            return Ok(None);
        }
        let budget = inner.options.page_time_budget;
        let snapshot = inner.engine.snapshot();
        let (mut examined, mut returned) = (0u32, 0usize);
        // Keys are checked as UTF-8 only where something reads them: the scope check, a
        // residual comparing a key, a page's token, and every match.
        let keys_read = !exact_range || plan.residual.as_ref().is_some_and(reads_keys);
        let mut cursor = snapshot.range(&start[..]..&end[..]);
        while cursor.advance().map_err(TableError::from)? {
            let (engine_key, value) = (cursor.key(), cursor.value());
            let out_of_time = examined > 0
                && examined.is_multiple_of(BUDGET_CHECK_INTERVAL)
                && started.elapsed() >= budget;
            if returned >= limit || out_of_time {
                let (pk, rk) = split(table_id, engine_key)?;
                return Ok(Some(ContinuationToken {
                    next_partition_key: pk.to_owned(),
                    next_row_key: rk.to_owned(),
                }));
            }
            examined = examined.wrapping_add(1);
            let (pk, rk) = if keys_read {
                split(table_id, engine_key)?
            } else {
                ("", "")
            };
            if !exact_range && !plan.scope.contains(pk, rk) {
                continue;
            }
            if let Some(residual) = &plan.residual {
                let encoded = EncodedEntity {
                    partition_key: pk,
                    row_key: rk,
                    reader: PropertyReader::new(value)
                        .map_err(|source| row::corrupt(table_id, engine_key, source))?,
                };
                let matched = residual
                    .matches(&encoded)
                    .map_err(|source| row::corrupt(table_id, engine_key, source))?;
                if !matched {
                    continue;
                }
            }
            let (pk, rk) = split(table_id, engine_key)?;
            visit(&row_ref(table_id, engine_key, pk, rk, value)?)?;
            returned += 1;
        }
        Ok(None)
    }
}

/// Whether `filter` compares PartitionKey or RowKey.
fn reads_keys(filter: &Filter) -> bool {
    filter
        .fields()
        .iter()
        .any(|field| matches!(field, Field::PartitionKey | Field::RowKey))
}

fn bad_key() -> CodecError {
    CodecError::MissingSeparator { offset: 0 }
}

fn page_limit(top: Option<u32>) -> Result<usize> {
    match top {
        None => Ok(PAGE_MAX_ENTITIES),
        Some(0) => Err(TableError::OutOfRangeInput {
            reason: "$top must be at least 1".to_owned(),
        }),
        Some(top) => Ok(usize::try_from(top)
            .unwrap_or(PAGE_MAX_ENTITIES)
            .min(PAGE_MAX_ENTITIES)),
    }
}

/// The PartitionKey and RowKey text of a stored key of table `table_id`.
fn split(table_id: u32, engine_key: &[u8]) -> Result<(&str, &str)> {
    row::split_key(engine_key).ok_or_else(|| row::corrupt(table_id, engine_key, bad_key()))
}

/// The borrowed view of one stored row with keys `pk`, `rk`.
fn row_ref<'a>(
    table_id: u32,
    engine_key: &[u8],
    pk: &'a str,
    rk: &'a str,
    value: &'a [u8],
) -> Result<RowRef<'a>> {
    let fail = |source| row::corrupt(table_id, engine_key, source);
    let properties = PropertyReader::new(value).map_err(fail)?;
    let timestamp = properties.timestamp().ok_or_else(|| {
        fail(CodecError::Truncated {
            offset: HEADER_FIXED_LEN,
            needed: TICKS_LEN,
        })
    })?;
    Ok(RowRef {
        partition_key: pk,
        row_key: rk,
        timestamp,
        properties,
    })
}
