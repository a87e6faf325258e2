//! Paged queries of the table list (Query Tables), paged like entity queries.

use super::account::Account;
use super::error::{Result, TableError};
use super::limits::{PAGE_MAX_ENTITIES, TOKEN_MAX_TEXT_LEN};
use crate::model::TableName;
use crate::query::{Filter, TableRow};

/// A query of the table list: `$filter` on `TableName`, `$top` and where to resume.
///
/// ```
/// use strata::{Account, TableQuery};
/// let dir = tempfile::tempdir()?;
/// let account = Account::open(dir.path().join("db.strata"))?;
/// for name in ["Alpha", "beta", "Gamma"] {
///     account.create_table(name)?;
/// }
/// let first = account.query_tables_page(&TableQuery { top: Some(2), ..TableQuery::default() })?;
/// assert_eq!(first.names.len(), 2);
/// let next = first.next_table_name.expect("a third table follows");
/// assert_eq!(next.as_str(), "Gamma");
/// let rest = account.query_tables_page(&TableQuery {
///     next_table_name: Some(next.as_str().to_owned()),
///     ..TableQuery::default()
/// })?;
/// assert_eq!(rest.names.len(), 1);
/// assert!(rest.next_table_name.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableQuery {
    /// OData `$filter` text on the property `TableName`; `None` lists every table.
    pub filter: Option<String>,
    /// Most names per page (`$top`), at most 1000.
    pub top: Option<u32>,
    /// The `NextTableName` of the previous page: the page starts at this table (compared
    /// case-insensitively, as tables are ordered).
    pub next_table_name: Option<String>,
    /// Tables left out of the listing as if absent (compared case-insensitively), such as a
    /// server's reserved tables; they are never counted in a page nor named as its token.
    pub hidden: Vec<TableName>,
}

/// One page of table names, ordered case-insensitively.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TablePage {
    /// The matching tables of this page.
    pub names: Vec<TableName>,
    /// The first matching table of the next page, if any (the service's `NextTableName`).
    pub next_table_name: Option<TableName>,
}

impl Account {
    /// One page (at most 1000, or `$top`) of the tables matching `query`, resuming at its
    /// `next_table_name`. [`Account::query_tables`] returns every match at once.
    ///
    /// # Errors
    /// [`TableError::InvalidFilter`] for a bad filter, [`TableError::OutOfRangeInput`] for a
    /// `$top` of 0, [`TableError::InvalidContinuationToken`] for a `next_table_name` that is
    /// not a table name.
    pub fn query_tables_page(&self, query: &TableQuery) -> Result<TablePage> {
        let limit = match query.top {
            Some(0) => {
                return Err(TableError::OutOfRangeInput {
                    reason: "$top must be at least 1".to_owned(),
                });
            }
            Some(top) => {
                usize::try_from(top).map_or(PAGE_MAX_ENTITIES, |top| top.min(PAGE_MAX_ENTITIES))
            }
            None => PAGE_MAX_ENTITIES,
        };
        let resume = query
            .next_table_name
            .as_deref()
            .map(|text| {
                TableName::new(text).map_err(|_| TableError::InvalidContinuationToken {
                    token: text.chars().take(TOKEN_MAX_TEXT_LEN).collect(),
                    reason: "NextTableName is not a table name",
                })
            })
            .transpose()?;
        let filter = query.filter.as_deref().map(Filter::parse).transpose()?;
        let mut matching = self
            .list_tables()
            .into_iter()
            .filter(|name| resume.as_ref().is_none_or(|resume| name >= resume))
            .filter(|name| !query.hidden.contains(name))
            // A table-name row holds no stored bytes, so evaluating it cannot fail.
            .filter(|name| {
                filter
                    .as_ref()
                    .is_none_or(|filter| filter.matches(&TableRow(name.as_str())).unwrap_or(false))
            });
        let names: Vec<TableName> = matching.by_ref().take(limit).collect();
        Ok(TablePage {
            names,
            next_table_name: matching.next(),
        })
    }
}
