//! Entity queries: plan the filter, scan only the planned key range of one snapshot, evaluate
//! the residual on the encoded rows, decode only the matches, page with continuation tokens.

use std::collections::VecDeque;
use std::ops::Bound;
use std::time::{Duration, Instant};

use super::continuation::ContinuationToken;
use super::entities::Table;
use super::error::{Result, TableError};
use super::limits::{BUDGET_CHECK_INTERVAL, PAGE_MAX_ENTITIES};
use super::row::{self, StoredEntity};
use crate::codec::format::{KEY_SEPARATOR, TABLE_END_MARKER};
use crate::codec::key;
use crate::codec::property::PropertyReader;
use crate::engine::{Advance, ValueTest};
use crate::query::{EncodedEntity, Field, Filter, KeyScope, Plan, Prefilter, Verdict};

/// A query of one table: `$filter`, `$select`, `$top` and where to resume.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// OData `$filter` text (already URL-decoded); `None` returns every entity.
    pub filter: Option<String>,
    /// Properties to return (`$select`), system names included. The decoded entities of
    /// [`Table::query`] keep their keys, Timestamp and ETag whatever it names; the server's
    /// writer returns only what it names, as the service does.
    pub select: Option<Vec<String>>,
    /// Most entities per page (`$top`), at most 1000.
    pub top: Option<u32>,
    /// Where to resume, from the previous page.
    pub continuation: Option<ContinuationToken>,
}

impl Query {
    /// A query with this filter and nothing else.
    #[must_use]
    pub fn filter(text: impl Into<String>) -> Self {
        Self {
            filter: Some(text.into()),
            ..Self::default()
        }
    }
}

/// One page of results, in (PartitionKey, RowKey) order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    /// The matching entities of this page.
    pub entities: Vec<StoredEntity>,
    /// Where the next page starts, if more entities may match. A page may be short or empty
    /// and still carry a token (its time budget ran out).
    pub continuation: Option<ContinuationToken>,
}

impl Table {
    /// One page of the entities matching `query`, read from one consistent snapshot.
    ///
    /// # Errors
    /// [`TableError::InvalidFilter`] for a bad `$filter`, [`TableError::OutOfRangeInput`] for
    /// `$top` of 0, [`TableError::InvalidContinuationToken`], [`TableError::TableNotFound`].
    pub fn query(&self, query: &Query) -> Result<Page> {
        let select: Option<Vec<&str>> = query
            .select
            .as_ref()
            .map(|names| names.iter().map(String::as_str).collect());
        let mut entities = Vec::new();
        let budget = self.page_time_budget();
        let continuation = self.scan_page(query, budget, |table_id, engine_key, value| {
            let (pk, rk) = row::decode_key(table_id, engine_key)?;
            entities.push(row::decode(
                table_id,
                engine_key,
                pk,
                rk,
                value,
                select.as_deref(),
            )?);
            Ok::<(), TableError>(())
        })?;
        Ok(Page {
            entities,
            continuation,
        })
    }

    /// How long one page of a query may scan before it ends short, with a continuation
    /// token ([`crate::Options::page_time_budget`]).
    #[must_use]
    pub fn page_time_budget(&self) -> Duration {
        self.account.inner.options.page_time_budget
    }

    /// The page loop of every entity query: plans `query`'s filter, scans the planned key range
    /// of one snapshot from where the query resumes, evaluates the residual on the encoded row
    /// and calls `visit(table_id, engine_key, value)` for each match, until `top` rows or
    /// `budget` has passed; returns where the next page starts, if anywhere.
    pub(super) fn scan_page<E: From<TableError>>(
        &self,
        query: &Query,
        budget: Duration,
        mut visit: impl FnMut(u32, &[u8], &[u8]) -> std::result::Result<(), E>,
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
        let table_id = self.state()?.id;
        let plan = Plan::new(filter.as_ref());
        // Rows the residual cannot match are mostly told by their bytes alone.
        let prefilter = plan
            .residual
            .as_ref()
            .map(Prefilter::new)
            .filter(|prefilter| !prefilter.is_empty());
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
        let snapshot = inner.engine.snapshot();
        let mut returned = 0usize;
        // Keys are checked as UTF-8 only where something reads them: the scope check, a
        // residual comparing a key, a page's token, and every match (by `visit`).
        let keys_read = !exact_range || plan.residual.as_ref().is_some_and(reads_keys);
        // Rows are passed inside the engine only when their value alone rules them out.
        let rows_rejected = !keys_read && prefilter.is_some();
        // A lending cursor: the filter reads the value where it lies in the block cache.
        let mut cursor = snapshot.range(&start[..]..&end[..]);
        // The clock is looked at once every `BUDGET_CHECK_INTERVAL` entries the engine
        // visits, rows and the tombstones and old versions it passes alike: a run of deleted
        // rows pauses the cursor on one of them, whose key a token may then name.
        let mut check_after = u64::from(BUDGET_CHECK_INTERVAL);
        cursor.pause_after(check_after);
        loop {
            // Each live row is offered to this test by the engine, which passes the rows it
            // rejects without stepping its merge per row where it can (one SST leading a
            // whole block). Rows are taken to end the page when it is full, or when the
            // prefilter does not rule them out by their value alone; with keys to read,
            // every row is taken and tested below in the order scope, prefilter, residual.
            let full = returned >= limit;
            let mut offer = RowOffer {
                take_all: full || keys_read,
                prefilter: prefilter.as_ref(),
                verdict: Verdict::Maybe,
            };
            // Without a prefilter every row is taken (`offer` accepts it): the plain step
            // costs less.
            let step = if rows_rejected {
                cursor
                    .advance_where_or_pause(&mut offer)
                    .map_err(TableError::from)?
            } else {
                let step = cursor.advance_or_pause().map_err(TableError::from)?;
                if step == Advance::Entry {
                    offer.wanted(cursor.value());
                }
                step
            };
            let mut verdict = offer.verdict;
            if step == Advance::End {
                break;
            }
            // The entry stepped onto is not examined yet when the page ends at it: its key is
            // where the next page starts.
            let out_of_time = cursor.visited() > check_after && started.elapsed() >= budget;
            // A full page goes on through a pause: only a live row past it needs a token.
            if (full && step == Advance::Entry) || out_of_time {
                let at = match step {
                    Advance::Paused => cursor.paused_key(),
                    _ => cursor.key(),
                };
                return token(table_id, at).map(Some).map_err(E::from);
            }
            if cursor.visited() > check_after {
                check_after = cursor.visited() + u64::from(BUDGET_CHECK_INTERVAL) - 1;
                cursor.pause_after(check_after);
            }
            if step == Advance::Paused {
                continue;
            }
            let value = cursor.value();
            let (pk, rk) = if keys_read {
                split(table_id, cursor.key())?
            } else {
                ("", "")
            };
            if keys_read {
                if !exact_range && !plan.scope.contains(pk, rk) {
                    continue;
                }
                verdict = prefilter
                    .as_ref()
                    .map_or(Verdict::Maybe, |prefilter| prefilter.verdict(value));
                if verdict == Verdict::No {
                    continue;
                }
            }
            // A `Yes` row is read in full by `visit`, which checks it.
            if verdict == Verdict::Maybe
                && let Some(residual) = &plan.residual
            {
                let engine_key = cursor.key();
                let row = EncodedEntity {
                    partition_key: pk,
                    row_key: rk,
                    reader: PropertyReader::new(value)
                        .map_err(|source| row::corrupt(table_id, engine_key, source))?,
                };
                let matched = residual
                    .matches(&row)
                    .map_err(|source| row::corrupt(table_id, engine_key, source))?;
                if !matched {
                    continue;
                }
            }
            visit(table_id, cursor.key(), value)?;
            returned += 1;
        }
        Ok(None)
    }

    /// Every entity matching `query`, following continuation tokens page by page. `top`
    /// sets the page size; iteration ends when a page carries no token.
    #[must_use]
    pub fn query_all(&self, query: Query) -> QueryIter {
        QueryIter {
            table: self.clone(),
            query,
            buffer: VecDeque::new(),
            done: false,
        }
    }
}

/// The test a page's scan offers each live row to: take it (to end a full page, or to have
/// the filter read it), or pass it when the prefilter rules it out by its value alone.
struct RowOffer<'a> {
    /// Every row is taken: the page is full, or the row's key must be read first.
    take_all: bool,
    prefilter: Option<&'a Prefilter>,
    /// The prefilter's answer for the row taken (`Maybe` until one is).
    verdict: Verdict,
}

impl ValueTest for RowOffer<'_> {
    /// Whether the row whose value is `value` is taken. Inlined into the engine's run loop,
    /// which calls it for every row it passes (a call per row was ~20 instructions).
    #[inline(always)]
    fn wanted(&mut self, value: &[u8]) -> bool {
        if self.take_all {
            return true;
        }
        let verdict = match self.prefilter {
            Some(prefilter) => prefilter.verdict(value),
            None => Verdict::Maybe,
        };
        // Kept for the row taken only: the page reads it for that row alone, and a store
        // per refused row was a memory write in the engine's loop.
        if verdict == Verdict::No {
            return false;
        }
        self.verdict = verdict;
        true
    }
}

/// Iterator over all pages of a query ([`Table::query_all`]).
#[derive(Debug)]
pub struct QueryIter {
    table: Table,
    query: Query,
    buffer: VecDeque<StoredEntity>,
    done: bool,
}

impl Iterator for QueryIter {
    type Item = Result<StoredEntity>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entity) = self.buffer.pop_front() {
                return Some(Ok(entity));
            }
            if self.done {
                return None;
            }
            match self.table.query(&self.query) {
                Ok(page) => {
                    self.buffer.extend(page.entities);
                    self.done = page.continuation.is_none();
                    self.query.continuation = page.continuation;
                }
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
    }
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

/// The engine key range `[start, end)` holding every key of `scope` in table `table_id`, or
/// `None` when no key can match. Always a superset: rows are re-checked against the scope, so
/// a bound that cannot be mapped exactly (one holding U+0000) is simply dropped.
pub(super) fn key_range(table_id: u32, scope: &KeyScope) -> Option<(Vec<u8>, Vec<u8>)> {
    let table = key::table_prefix(table_id);
    let with = |parts: &[&[u8]]| -> Vec<u8> {
        let mut out = table.to_vec();
        for part in parts {
            out.extend_from_slice(part);
        }
        out
    };
    let table_end = with(&[&[TABLE_END_MARKER]]);
    let (start, end) = match scope {
        KeyScope::Empty => return None,
        KeyScope::Table => (table.to_vec(), table_end),
        KeyScope::Point { pk, rk } => {
            let pk = valid_partition(pk)?;
            let exact = with(&[pk, &[KEY_SEPARATOR], rk.as_bytes()]);
            let next = key::successor(&exact);
            (exact, next)
        }
        KeyScope::Partition { pk } => {
            let pk = valid_partition(pk)?;
            (
                with(&[pk, &[KEY_SEPARATOR]]),
                with(&[pk, &[KEY_SEPARATOR + 1]]),
            )
        }
        KeyScope::RowRange { pk, start, end } => {
            let pk = valid_partition(pk)?;
            let start = match mappable(start) {
                Bound::Included(rk) => with(&[pk, &[KEY_SEPARATOR], rk]),
                Bound::Excluded(rk) => with(&[pk, &[KEY_SEPARATOR], rk, &[KEY_SEPARATOR]]),
                Bound::Unbounded => with(&[pk, &[KEY_SEPARATOR]]),
            };
            let end = match mappable(end) {
                Bound::Included(rk) => with(&[pk, &[KEY_SEPARATOR], rk, &[KEY_SEPARATOR]]),
                Bound::Excluded(rk) => with(&[pk, &[KEY_SEPARATOR], rk]),
                Bound::Unbounded => with(&[pk, &[KEY_SEPARATOR + 1]]),
            };
            (start, end)
        }
        KeyScope::PartitionRange { start, end } => {
            let start = match mappable(start) {
                Bound::Included(pk) => with(&[pk]),
                Bound::Excluded(pk) => with(&[pk, &[KEY_SEPARATOR + 1]]),
                Bound::Unbounded => table.to_vec(),
            };
            let end = match mappable(end) {
                Bound::Included(pk) => with(&[pk, &[KEY_SEPARATOR + 1]]),
                Bound::Excluded(pk) => with(&[pk]),
                Bound::Unbounded => table_end.clone(),
            };
            (start, end.min(table_end))
        }
    };
    (start < end).then_some((start, end))
}

/// The token of a page that ends at `engine_key`, the next key to examine.
fn token(table_id: u32, engine_key: &[u8]) -> Result<ContinuationToken> {
    let (pk, rk) = split(table_id, engine_key)?;
    Ok(ContinuationToken {
        next_partition_key: pk.to_owned(),
        next_row_key: rk.to_owned(),
    })
}

/// The PartitionKey and RowKey text of a stored key of table `table_id`.
fn split(table_id: u32, engine_key: &[u8]) -> Result<(&str, &str)> {
    row::split_key(engine_key).ok_or_else(|| {
        row::corrupt(
            table_id,
            engine_key,
            crate::codec::CodecError::MissingSeparator { offset: 0 },
        )
    })
}

/// Whether `filter` compares PartitionKey or RowKey.
fn reads_keys(filter: &Filter) -> bool {
    filter
        .fields()
        .iter()
        .any(|field| matches!(field, Field::PartitionKey | Field::RowKey))
}

/// The PartitionKey of an equality, if a stored key can have it (else nothing matches).
fn valid_partition(pk: &str) -> Option<&[u8]> {
    crate::model::PartitionKey::new(pk).ok()?;
    Some(pk.as_bytes())
}

/// A key bound as bytes, or unbounded when it holds the separator byte and so cannot be
/// placed exactly among encoded keys.
fn mappable(bound: &Bound<String>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(text) if !text.contains('\0') => Bound::Included(text.as_bytes()),
        Bound::Excluded(text) if !text.contains('\0') => Bound::Excluded(text.as_bytes()),
        _ => Bound::Unbounded,
    }
}
