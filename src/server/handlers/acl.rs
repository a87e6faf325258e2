//! Get and Set Table ACL: `GET|PUT /{account}/{table}?comp=acl`.

use super::Context;
use crate::model::TableName;
use crate::server::acl;
use crate::server::auth::Access;
use crate::server::error::{Result, ServerError};
use crate::server::reply::Reply;
use crate::table::TableError;

/// `Content-Type` of ACL bodies.
const XML_CONTENT_TYPE: &str = "application/xml";

/// The table must exist; a name the rules refuse is reported as such first (the service's
/// `InvalidResourceName` / `OutOfRangeInput`, which the SDKs turn into their name-rule error),
/// not as a missing table.
fn require_table(ctx: &Context<'_>, table: &str) -> Result<()> {
    TableName::new(table)?;
    if ctx.state.account.table_exists(table) {
        Ok(())
    } else {
        Err(TableError::TableNotFound {
            table: table.to_owned(),
        }
        .into())
    }
}

/// Get Table ACL.
pub fn get(ctx: &Context<'_>, table: &str) -> Result<Reply> {
    ctx.principal
        .authorize(Access::KeyOnly, Some(table), None)?;
    require_table(ctx, table)?;
    let policies = acl::load(&ctx.state.account, table)?;
    Ok(Reply::status(200).body(XML_CONTENT_TYPE, acl::to_xml(&policies)))
}

/// Set Table ACL: replaces the table's stored access policies.
pub fn set(ctx: &Context<'_>, table: &str, body: &[u8]) -> Result<Reply> {
    ctx.principal
        .authorize(Access::KeyOnly, Some(table), None)?;
    require_table(ctx, table)?;
    let text = std::str::from_utf8(body).map_err(|_| ServerError::InvalidXmlDocument {
        reason: "the body is not UTF-8".to_owned(),
    })?;
    let policies = acl::parse_xml(text)?;
    acl::store(&ctx.state.account, table, &policies)?;
    Ok(Reply::status(204))
}
