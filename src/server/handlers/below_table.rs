//! Paths below a table's (`/{account}/{table}/...`): what a client whose account URL wrongly
//! ends with a table name sends (`.../{table}/Tables`, `.../{table}/Tables('t')`,
//! `.../{table}/$batch`). The service reads the first segment as a table and answers in its
//! terms, and the Python SDK recognises those answers and adds "Please check your account
//! URL." to them; so does strata, in the same order: the name rule, the table's existence,
//! then the operation.

use hyper::header::CONTENT_TYPE;

use super::Context;
use crate::model::TableName;
use crate::server::auth::Access;
use crate::server::error::{Result, ServerError};
use crate::server::json::parse_entity;
use crate::server::reply::Reply;
use crate::server::route::PATH_EXCERPT_CHARS;
use crate::table::TableError;

/// The segment after a table's that a batch posted below it ends with.
const BATCH_SEGMENT: &str = "$batch";

/// Answers a request to `/{account}/{table}/{rest}`.
///
/// # Errors
/// The name rule's error for a bad `table`, [`TableError::TableNotFound`] when it does not
/// exist; then a POST is read as an insert into it (a create-table body lacks the keys), a
/// POST of a batch is [`ServerError::MediaTypeNotSupported`], and anything else, an insert
/// whose body has its keys included, [`ServerError::KeyCountMismatch`].
pub fn dispatch(ctx: &Context<'_>, table: &str, rest: &str, body: &[u8]) -> Result<Reply> {
    TableName::new(table)?;
    let insert = ctx.method == "POST" && rest != BATCH_SEGMENT;
    let access = if insert { Access::Add } else { Access::Read };
    ctx.principal.authorize(access, Some(table), None)?;
    if !ctx.state.account.table_exists(table) {
        return Err(TableError::TableNotFound {
            table: table.to_owned(),
        }
        .into());
    }
    if insert {
        // The body is read as an insert's for its error (a create-table body lacks the keys);
        // one that would insert is still refused: nothing shows the service commits an entity
        // sent below a table, and a misconfigured client's rows would land in another table.
        parse_entity(body, None)?;
    } else if ctx.method == "POST" {
        return Err(ServerError::MediaTypeNotSupported {
            content_type: ctx.header(CONTENT_TYPE).unwrap_or_default().to_owned(),
        });
    }
    Err(ServerError::KeyCountMismatch {
        table: table.to_owned(),
        path: format!("/{}/{table}/{rest}", ctx.target.account)
            .chars()
            .take(PATH_EXCERPT_CHARS)
            .collect(),
    })
}
