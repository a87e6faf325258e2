//! Operation handlers: each turns a parsed request into table-layer calls and a [`Reply`].
//! They run on blocking worker threads (the table layer does synchronous I/O).

mod acl;
mod below_table;
mod entities;
mod query;
mod service;
mod tables;

use hyper::HeaderMap;
use hyper::header::{AsHeaderName, HeaderName, IF_MATCH};

use super::auth::Principal;
use super::error::{Result, ServerError};
use super::json::Metadata;
use super::reply::Reply;
use super::route::{Resource, Target};
use super::service::State;
use crate::model::DateTime;
use crate::table::{ETag, GroupWrite, IfMatch};
pub use query::{PausedQuery, QueryStep};

/// `Prefer`, looked up by a prebuilt name (a `&str` lookup parses the name each time).
const PREFER: HeaderName = HeaderName::from_static("prefer");

/// Everything a handler needs about one request.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The server's shared state.
    pub state: &'a State,
    /// The HTTP verb.
    pub method: &'a str,
    /// The parsed target.
    pub target: &'a Target,
    /// Request headers.
    pub headers: &'a HeaderMap,
    /// Who the request acts as.
    pub principal: &'a Principal,
    /// `http://{host}/{account}`, the root of OData links.
    pub base: &'a str,
    /// The JSON metadata level asked for.
    pub metadata: Metadata,
    /// This request's `x-ms-request-id`, for error bodies written inside a batch.
    pub request_id: &'a str,
}

impl Context<'_> {
    /// The value of header `name`, if present and text.
    #[must_use]
    pub fn header(&self, name: impl AsHeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// The `Prefer` header's choice: `Some(true)` for return-content, `Some(false)` for
    /// return-no-content.
    #[must_use]
    pub fn prefer_content(&self) -> Option<bool> {
        prefer_content(self.header(PREFER))
    }

    /// The `If-Match` condition, if the header is present.
    ///
    /// # Errors
    /// [`ServerError::Table`] with `InvalidInput` for a malformed or strong ETag.
    pub fn if_match(&self) -> Result<Option<IfMatch>> {
        parse_if_match(self.header(IF_MATCH))
    }
}

/// Reads a `Prefer` header: `Some(true)` = return-content, `Some(false)` = return-no-content.
#[must_use]
pub fn prefer_content(prefer: Option<&str>) -> Option<bool> {
    let prefer = prefer?;
    if prefer.contains("return-no-content") {
        Some(false)
    } else if prefer.contains("return-content") {
        Some(true)
    } else {
        None
    }
}

/// The condition a weak tag of another form stands for: the ETag of the earliest instant, which
/// no stored entity carries (its Timestamp is the time of a write), so an update meets 412 where
/// the entity exists and 404 where it does not, as the service answers. The table layer's
/// `IfMatch` stays the public API's two cases.
const NO_ENTITY_CARRIES: IfMatch = IfMatch::Etag(ETag::from_timestamp(DateTime::MIN));

/// Reads an `If-Match` header value: `*` or a weak ETag.
///
/// A weak tag of another form than the service's own (`W/"wrong"`, also with a lower-case
/// `w/`) is well-formed HTTP: the service accepts it and answers 412 (Azurite issue 1229,
/// checked against the service), so it becomes [`NO_ENTITY_CARRIES`].
///
/// # Errors
/// `InvalidInput` for anything else: a strong or unquoted tag.
pub fn parse_if_match(value: Option<&str>) -> Result<Option<IfMatch>> {
    match value.map(str::trim) {
        None => Ok(None),
        Some("*") => Ok(Some(IfMatch::Any)),
        Some(tag) => match ETag::parse(tag) {
            Ok(etag) => Ok(Some(IfMatch::Etag(etag))),
            Err(_) if is_weak_tag(tag) => Ok(Some(NO_ENTITY_CARRIES)),
            Err(error) => Err(error.into()),
        },
    }
}

/// Whether `tag` is an HTTP weak entity tag: `W/` (either case) and a quoted string.
fn is_weak_tag(tag: &str) -> bool {
    let Some(quoted) = tag.strip_prefix("W/").or_else(|| tag.strip_prefix("w/")) else {
        return false;
    };
    quoted.len() >= 2
        && quoted.starts_with('"')
        && quoted.ends_with('"')
        && !quoted[1..quoted.len() - 1].contains('"')
}

/// Adds `Preference-Applied` when the client stated a preference.
fn preference_applied(reply: Reply, prefer: Option<bool>) -> Reply {
    match prefer {
        Some(true) => reply.header("preference-applied", "return-content"),
        Some(false) => reply.header("preference-applied", "return-no-content"),
        None => reply,
    }
}

/// For an Update or Merge Entity request, the write it names, parsed and authorised, for a
/// group commit (see `combine`); `None` for every other request.
pub fn prepare_write(ctx: &Context<'_>, body: &[u8]) -> Option<Result<GroupWrite>> {
    let Resource::Entity {
        table,
        partition_key,
        row_key,
    } = &ctx.target.resource
    else {
        return None;
    };
    let merge = match ctx.method {
        "PUT" => false,
        "MERGE" | "PATCH" => true,
        _ => return None,
    };
    if super::acl::is_reserved_table(table) {
        return Some(Err(ServerError::invalid(format!(
            "table name {table:?} is reserved by the server"
        ))));
    }
    let key = (partition_key.as_str(), row_key.as_str());
    Some(entities::prepare_update(ctx, table, key, body, merge))
}

/// The reply to a write committed by a group: as [`dispatch`] answers Update / Merge Entity.
pub fn written(etag: ETag) -> Reply {
    entities::updated(etag)
}

/// For a Query Entities request, its page scanned for at most the inline budget (the
/// caller's thread is the I/O thread: see `query`); `None` for every other request.
pub fn query_inline(ctx: &Context<'_>) -> Option<Result<QueryStep>> {
    let Resource::Entities(table) = &ctx.target.resource else {
        return None;
    };
    if ctx.method != "GET" || ctx.target.param("comp").is_some() {
        return None;
    }
    if super::acl::is_reserved_table(table) {
        return Some(Err(ServerError::invalid(format!(
            "table name {table:?} is reserved by the server"
        ))));
    }
    Some(query::query_inline(ctx, table))
}

/// Finishes the Query Entities page [`query_inline`] paused.
///
/// # Errors
/// As the query.
pub fn resume_query(ctx: &Context<'_>, paused: PausedQuery) -> Result<Reply> {
    match &ctx.target.resource {
        Resource::Entities(table) => query::resume(ctx, table, paused),
        _ => Err(ServerError::Internal {
            reason: "a paused query resumed for another request".to_owned(),
        }),
    }
}

/// Whether the request names the service properties (`?restype=service&comp=properties`).
fn is_service_properties(ctx: &Context<'_>) -> bool {
    ctx.target.param("restype") == Some("service") && ctx.target.param("comp") == Some("properties")
}

/// Whether the request names the service stats (`?restype=service&comp=stats`).
fn is_service_stats(ctx: &Context<'_>) -> bool {
    ctx.target.param("restype") == Some("service") && ctx.target.param("comp") == Some("stats")
}

/// Runs the operation a request names.
///
/// # Errors
/// Whatever the operation fails with.
pub fn dispatch(ctx: &Context<'_>, body: &[u8]) -> Result<Reply> {
    let comp = ctx.target.param("comp");
    if let Some(table) = ctx.target.resource.table()
        && super::acl::is_reserved_table(table)
    {
        return Err(ServerError::invalid(format!(
            "table name {table:?} is reserved by the server"
        )));
    }
    // The service's answer to a service operation sent below the account (an account URL
    // that ends with a table name): the SDK adds its "check your account URL" hint to it.
    if let Some(restype @ "service") = ctx.target.param("restype")
        && ctx.target.resource != Resource::Service
    {
        return Err(ServerError::InvalidQueryParameterValue {
            name: "restype".to_owned(),
            value: restype.to_owned(),
        });
    }
    let unsupported = || ServerError::UnsupportedHttpVerb {
        method: ctx.method.to_owned(),
    };
    match (&ctx.target.resource, ctx.method) {
        (Resource::Tables, "GET") => tables::query(ctx),
        (Resource::Tables, "POST") => tables::create(ctx, body),
        (Resource::Table(name), "GET") => tables::get(ctx, name),
        (Resource::Table(name), "DELETE") => tables::delete(ctx, name),
        (Resource::Entities(table), "GET" | "HEAD") if comp == Some("acl") => acl::get(ctx, table),
        (Resource::Entities(table), "PUT") if comp == Some("acl") => acl::set(ctx, table, body),
        (Resource::Entities(table), "GET") => query::query(ctx, table),
        (Resource::Entities(table), "POST") => entities::insert(ctx, table, body),
        (
            Resource::Entity {
                table,
                partition_key,
                row_key,
            },
            method,
        ) => {
            let key = (partition_key.as_str(), row_key.as_str());
            match method {
                "GET" => entities::get(ctx, table, key),
                "PUT" => entities::update(ctx, table, key, body, false),
                "MERGE" | "PATCH" => entities::update(ctx, table, key, body, true),
                "DELETE" => entities::delete(ctx, table, key),
                _ => Err(unsupported()),
            }
        }
        (Resource::Batch, "POST") => super::batch::execute(ctx, body),
        (Resource::BelowTable { table, rest }, _) => below_table::dispatch(ctx, table, rest, body),
        (Resource::Service, "GET") if is_service_properties(ctx) => service::get_properties(ctx),
        (Resource::Service, "GET") if is_service_stats(ctx) => service::get_stats(ctx),
        (Resource::Service, "PUT") if is_service_properties(ctx) => {
            service::set_properties(ctx, body)
        }
        (Resource::Service, _) => Err(ServerError::InvalidUri {
            path: format!("/{}", ctx.target.account),
        }),
        _ => Err(unsupported()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn if_match_a_weak_tag_of_another_form_never_matches_and_a_strong_one_is_refused() {
        for tag in ["W/\"wrong\"", "w/\"wrong\"", "W/\"\""] {
            assert_eq!(
                parse_if_match(Some(tag)).unwrap(),
                Some(NO_ENTITY_CARRIES),
                "{tag}"
            );
        }
        let ours = "w/\"datetime'2015-01-01T23%3A14%3A33.4980000Z'\"";
        assert_eq!(parse_if_match(Some(ours)).unwrap(), Some(NO_ENTITY_CARRIES));
        for tag in [
            "\"wrong\"",
            "wrong",
            "\"",
            "W/wrong",
            "W/\"a\"b\"",
            "datetime'x'",
        ] {
            assert!(parse_if_match(Some(tag)).is_err(), "{tag}");
        }
        assert_eq!(parse_if_match(Some(" * ")).unwrap(), Some(IfMatch::Any));
    }
}
