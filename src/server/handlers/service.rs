//! Get and Set Table Service Properties (`GET|PUT /{account}/?restype=service&comp=properties`)
//! and Get Table Service Stats (`GET /{account}-secondary/?restype=service&comp=stats`).

use super::Context;
use crate::server::auth::Access;
use crate::server::error::{Result, ServerError};
use crate::server::reply::Reply;
use crate::server::service_properties;

/// Serializes Set Table Service Properties (a read-modify-write of the stored sections).
static SET_LOCK: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

/// `Content-Type` of service properties bodies.
const XML_CONTENT_TYPE: &str = "application/xml";

/// Get Table Service Properties.
pub fn get_properties(ctx: &Context<'_>) -> Result<Reply> {
    ctx.principal.authorize(Access::ServiceRead, None, None)?;
    let properties = service_properties::load(&ctx.state.account)?;
    Ok(Reply::status(200).body(XML_CONTENT_TYPE, service_properties::to_xml(&properties)))
}

/// Set Table Service Properties: the sections the body has replace the stored ones.
pub fn set_properties(ctx: &Context<'_>, body: &[u8]) -> Result<Reply> {
    ctx.principal.authorize(Access::ServiceWrite, None, None)?;
    let text = std::str::from_utf8(body).map_err(|_| ServerError::InvalidXmlDocument {
        reason: "the body is not UTF-8".to_owned(),
    })?;
    let account = &ctx.state.account;
    // One writer at a time: two concurrent sets must not each keep a section the other set.
    let _guard = SET_LOCK.lock();
    let next = service_properties::apply_xml(&service_properties::load(account)?, text)?;
    service_properties::store(account, &next)?;
    Ok(Reply::status(202))
}

/// Get Table Service Stats: the secondary location is this same file, so replication is live
/// and every write acknowledged so far is on it.
pub fn get_stats(ctx: &Context<'_>) -> Result<Reply> {
    ctx.principal.authorize(Access::ServiceRead, None, None)?;
    let now = httpdate::fmt_http_date(std::time::SystemTime::now());
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats><GeoReplication>\
         <Status>live</Status><LastSyncTime>{now}</LastSyncTime></GeoReplication>\
         </StorageServiceStats>"
    );
    Ok(Reply::status(200).body(XML_CONTENT_TYPE, xml))
}
