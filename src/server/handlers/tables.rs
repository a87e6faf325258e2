//! Create, delete, get and query tables.

use serde_json::Value as Json;

use super::{Context, preference_applied};
use crate::model::TableName;
use crate::server::acl;
use crate::server::auth::Access;
use crate::server::error::{Result, ServerError};
use crate::server::json::{Metadata, write_str};
use crate::server::limits::TABLES_PAGE_MAX;
use crate::server::reply::Reply;
use crate::table::{TableError, TableQuery};

/// Appends one table as a JSON object; `in_feed` leaves out `odata.metadata`.
fn write_table(out: &mut String, ctx: &Context<'_>, name: &str, in_feed: bool) {
    out.push('{');
    match ctx.metadata {
        Metadata::None => {}
        Metadata::Minimal if in_feed => {}
        Metadata::Minimal | Metadata::Full => {
            if !in_feed {
                out.push_str("\"odata.metadata\":");
                write_str(out, &format!("{}/$metadata#Tables/@Element", ctx.base));
                out.push(',');
            }
            if ctx.metadata == Metadata::Full {
                out.push_str("\"odata.type\":");
                write_str(out, &format!("{}.Tables", ctx.target.account));
                out.push_str(",\"odata.id\":");
                write_str(out, &format!("{}/Tables('{name}')", ctx.base));
                out.push_str(",\"odata.editLink\":");
                write_str(out, &format!("Tables('{name}')"));
                out.push(',');
            }
        }
    }
    out.push_str("\"TableName\":");
    write_str(out, name);
    out.push('}');
}

/// Query Tables: `GET /{account}/Tables` with `$filter`, `$top`, `NextTableName`.
pub fn query(ctx: &Context<'_>) -> Result<Reply> {
    ctx.principal.authorize(Access::ListTables, None, None)?;
    let top = match ctx.target.param("$top") {
        None => TABLES_PAGE_MAX,
        Some(text) => match text.parse::<usize>() {
            Ok(0) | Err(_) => {
                return Err(ServerError::invalid(format!(
                    "$top {text:?} is not a positive integer"
                )));
            }
            Ok(top) => top.min(TABLES_PAGE_MAX),
        },
    };
    let page = ctx.state.account.query_tables_page(&TableQuery {
        filter: ctx.target.filter().map(str::to_owned),
        top: Some(u32::try_from(top).unwrap_or(u32::MAX)),
        next_table_name: ctx.target.param("NextTableName").map(str::to_owned),
        hidden: vec![TableName::new(acl::ACL_TABLE)?],
    })?;
    let mut out = String::from("{");
    if ctx.metadata != Metadata::None {
        out.push_str("\"odata.metadata\":");
        write_str(&mut out, &format!("{}/$metadata#Tables", ctx.base));
        out.push(',');
    }
    out.push_str("\"value\":[");
    for (index, name) in page.names.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_table(&mut out, ctx, name.as_str(), true);
    }
    out.push_str("]}");
    let mut reply = Reply::status(200);
    if let Some(next) = &page.next_table_name {
        reply = reply.header("x-ms-continuation-NextTableName", next.as_str().to_owned());
    }
    Ok(reply.body(ctx.metadata.content_type(), out))
}

/// Create Table: `POST /{account}/Tables` with `{"TableName":"..."}`.
pub fn create(ctx: &Context<'_>, body: &[u8]) -> Result<Reply> {
    ctx.principal.authorize(Access::CreateTable, None, None)?;
    let json: Json = serde_json::from_slice(body)
        .map_err(|error| ServerError::invalid(format!("the body is not valid JSON: {error}")))?;
    let name = json
        .get("TableName")
        .and_then(Json::as_str)
        .ok_or_else(|| ServerError::invalid("the body has no string TableName"))?;
    if acl::is_reserved_table(name) {
        return Err(TableError::TableAlreadyExists {
            table: name.to_owned(),
        }
        .into());
    }
    let created = ctx.state.account.create_table(name)?;
    let prefer = ctx.prefer_content();
    let location = format!("{}/Tables('{}')", ctx.base, created.as_str());
    let reply = if prefer == Some(false) {
        Reply::status(204).header("dataserviceid", location.clone())
    } else {
        let mut out = String::new();
        write_table(&mut out, ctx, created.as_str(), false);
        Reply::status(201).body(ctx.metadata.content_type(), out)
    };
    Ok(preference_applied(
        reply.header("location", location),
        prefer,
    ))
}

/// Get Table: `GET /{account}/Tables('name')`.
pub fn get(ctx: &Context<'_>, name: &str) -> Result<Reply> {
    ctx.principal.authorize(Access::ListTables, None, None)?;
    let found = ctx
        .state
        .account
        .list_tables()
        .into_iter()
        .find(|table| table.as_str().eq_ignore_ascii_case(name))
        .ok_or_else(|| TableError::TableNotFound {
            table: name.to_owned(),
        })?;
    let mut out = String::new();
    write_table(&mut out, ctx, found.as_str(), false);
    Ok(Reply::status(200).body(ctx.metadata.content_type(), out))
}

/// Delete Table: `DELETE /{account}/Tables('name')`; its stored access policies go too.
pub fn delete(ctx: &Context<'_>, name: &str) -> Result<Reply> {
    ctx.principal.authorize(Access::DeleteTable, None, None)?;
    ctx.state
        .account
        .delete_table(name)
        .map_err(|error| match error {
            TableError::TableNotFound { table } => ServerError::TableToDeleteNotFound { table },
            other => other.into(),
        })?;
    acl::forget(&ctx.state.account, name)?;
    Ok(Reply::status(204))
}
