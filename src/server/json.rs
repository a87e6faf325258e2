//! Entities in the service's JSON forms: reading request bodies into [`Entity`] and writing
//! [`StoredEntity`] in `nometadata`, `minimalmetadata` or `fullmetadata`.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value as Json};

use super::error::{Result, ServerError};
use crate::model::{EdmType, Entity, PartitionKey, PropertyName, RowKey, Value};
use crate::table::StoredEntity;

/// Suffix of a type annotation key: `Prop@odata.type`.
const TYPE_ANNOTATION_SUFFIX: &str = "@odata.type";
/// Prefix of the OData control keys (`odata.etag`, `odata.metadata`, ...).
const ODATA_PREFIX: &str = "odata.";

/// How much OData metadata a JSON response carries (`Accept: application/json;odata=...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metadata {
    /// Property values only.
    None,
    /// Plus `odata.metadata`, `odata.etag` and the type annotations JSON cannot infer.
    Minimal,
    /// Plus `odata.type`, `odata.id`, `odata.editLink` and every type annotation.
    Full,
}

impl Metadata {
    /// The level named by `$format` or an `Accept` header; bare `application/json`, an
    /// absent header and anything unrecognised mean minimal, as the service answers.
    #[must_use]
    pub fn from_accept(accept: Option<&str>) -> Self {
        let Some(accept) = accept else {
            return Self::Minimal;
        };
        if accept.contains("odata=nometadata") {
            Self::None
        } else if accept.contains("odata=fullmetadata") {
            Self::Full
        } else {
            Self::Minimal
        }
    }

    /// The response `Content-Type` for this level.
    #[must_use]
    pub const fn content_type(self) -> &'static str {
        match self {
            Self::None => "application/json;odata=nometadata;streaming=true;charset=utf-8",
            Self::Minimal => "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
            Self::Full => "application/json;odata=fullmetadata;streaming=true;charset=utf-8",
        }
    }
}

/// Where a response's OData links point: `http://{host}/{account}`.
#[derive(Debug, Clone)]
pub struct Links<'a> {
    /// The service root, without a trailing slash.
    pub base: &'a str,
    /// The account name (the OData namespace of entity types).
    pub account: &'a str,
    /// The table name.
    pub table: &'a str,
}

/// Parses a request body holding one entity. Keys may be supplied by the URL instead
/// (`url_keys`), which then win; annotations (`Prop@odata.type`) type the values; `odata.*`
/// keys and `Timestamp` are ignored (the account sets the Timestamp).
///
/// # Errors
/// [`ServerError::InvalidInput`] for a body that is not a JSON object, missing or non-string
/// keys, a value that does not fit its annotation; the model's errors for bad names, keys and
/// values (as the table layer maps them).
pub fn parse_entity(body: &[u8], url_keys: Option<(&str, &str)>) -> Result<Entity> {
    let json: Json = serde_json::from_slice(body)
        .map_err(|error| ServerError::invalid(format!("the body is not valid JSON: {error}")))?;
    let Json::Object(object) = json else {
        return Err(ServerError::invalid("the body is not a JSON object"));
    };
    entity_from_object(&object, url_keys)
}

/// Builds an entity from a parsed JSON object; see [`parse_entity`].
///
/// # Errors
/// As [`parse_entity`].
pub fn entity_from_object(
    object: &Map<String, Json>,
    url_keys: Option<(&str, &str)>,
) -> Result<Entity> {
    let key = |name: &str| -> Result<Option<&str>> {
        match object.get(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(ServerError::invalid(format!("{name} must be a string"))),
        }
    };
    let body_pk = key("PartitionKey")?;
    let body_rk = key("RowKey")?;
    let (pk, rk) = match (url_keys, body_pk, body_rk) {
        (Some((pk, rk)), _, _) => (pk, rk),
        (None, Some(pk), Some(rk)) => (pk, rk),
        (None, None, _) => return Err(ServerError::invalid("the entity has no PartitionKey")),
        (None, _, None) => return Err(ServerError::invalid("the entity has no RowKey")),
    };
    let mut entity = Entity::new(PartitionKey::new(pk)?, RowKey::new(rk)?);
    for (name, json) in object {
        if name.starts_with(ODATA_PREFIX)
            || name.ends_with(TYPE_ANNOTATION_SUFFIX)
            || PropertyName::is_reserved(name)
        {
            continue;
        }
        let annotation_key = format!("{name}{TYPE_ANNOTATION_SUFFIX}");
        let annotation = match object.get(&annotation_key) {
            None => None,
            Some(Json::String(s)) => Some(s.as_str()),
            Some(_) => {
                return Err(ServerError::invalid(format!(
                    "{annotation_key} must be a string"
                )));
            }
        };
        let value = property_value(name, json, annotation)?;
        let property = PropertyName::new(name.as_str())?;
        entity
            .set_or_remove(property, value)
            .map_err(|error| crate::table::TableError::from_model(error, pk, rk))?;
    }
    Ok(entity)
}

/// The value of property `name` given as `json` with an optional type annotation; `None` for
/// null (a null property is absent).
fn property_value(name: &str, json: &Json, annotation: Option<&str>) -> Result<Option<Value>> {
    let mismatch = |edm: EdmType| {
        ServerError::invalid(format!(
            "the value of property {name:?} is not a valid {edm}"
        ))
    };
    let value = match (annotation, json) {
        (_, Json::Null) => return Ok(None),
        (None, Json::String(s)) => Value::string(s.as_str())?,
        (None, Json::Bool(b)) => Value::Boolean(*b),
        (None, Json::Number(n)) => untyped_number(n),
        (None, Json::Array(_) | Json::Object(_)) => {
            return Err(ServerError::invalid(format!(
                "property {name:?} holds an array or object, which no EDM type carries"
            )));
        }
        (Some(annotation), json) => {
            let edm = EdmType::from_annotation(Some(annotation))?;
            match (edm, json) {
                (EdmType::Boolean, Json::Bool(b)) => Value::Boolean(*b),
                (EdmType::Int32 | EdmType::Int64 | EdmType::Double, Json::Number(n)) => {
                    typed_number(edm, n).ok_or_else(|| mismatch(edm))?
                }
                (_, Json::String(s)) => Value::from_wire(edm, s)?,
                _ => return Err(mismatch(edm)),
            }
        }
    };
    Ok(Some(value))
}

/// An unannotated number: an integer within Int32 is Int32, a larger integer Int64 (kept
/// exact rather than rounded to a Double), anything else Double.
fn untyped_number(n: &Number) -> Value {
    if let Some(i) = n.as_i64() {
        i32::try_from(i).map_or(Value::Int64(i), Value::Int32)
    } else {
        Value::Double(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// A number annotated as `edm`; `None` if it does not fit.
fn typed_number(edm: EdmType, n: &Number) -> Option<Value> {
    match edm {
        EdmType::Int32 => n
            .as_i64()
            .and_then(|i| i32::try_from(i).ok())
            .map(Value::Int32),
        EdmType::Int64 => n.as_i64().map(Value::Int64),
        EdmType::Double => n.as_f64().map(Value::Double),
        _ => None,
    }
}

/// Appends `text` as a JSON string literal.
pub fn write_str(out: &mut String, text: &str) {
    out.push('"');
    // Copies runs that need no escape in one go: entity payloads are long and rarely escaped.
    // Every byte that ends a run is ASCII, so each run ends on a character boundary.
    let mut run = 0;
    for (at, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(text.get(run..at).unwrap_or_default());
        run = at + 1;
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
    }
    out.push_str(text.get(run..).unwrap_or_default());
    out.push('"');
}

/// Appends the JSON string of the weak ETag of an entity written at `timestamp` (its ISO 8601
/// form): `W/"datetime'<timestamp, ':' as %3A>'"`, as [`crate::table::ETag`] displays it,
/// without formatting the timestamp a second time.
fn write_etag(out: &mut String, timestamp: &str) {
    out.push_str("\"W/\\\"datetime'");
    for (index, part) in timestamp.split(':').enumerate() {
        if index > 0 {
            out.push_str("%3A");
        }
        out.push_str(part);
    }
    out.push_str("'\\\"\"");
}

/// Appends `"key":` to an object being written, with the separating comma if needed.
fn write_key(out: &mut String, first: &mut bool, key: &str) {
    if !*first {
        out.push(',');
    }
    *first = false;
    write_str(out, key);
    out.push(':');
}

/// The key-predicate form of an entity's address: `PartitionKey='a',RowKey='b'` with quotes
/// doubled and the result percent-encoded as the service writes `odata.id`.
pub fn key_predicate(partition_key: &str, row_key: &str) -> String {
    let quote = |key: &str| {
        let doubled = key.replace('\'', "''");
        percent_encoding::utf8_percent_encode(&doubled, super::route::KEY_ENCODE_SET).to_string()
    };
    format!(
        "PartitionKey='{}',RowKey='{}'",
        quote(partition_key),
        quote(row_key)
    )
}

/// Appends `stored` as one JSON object at `metadata`. `in_feed` leaves out `odata.metadata`
/// (a query's feed carries it once, at the top).
pub fn write_entity(
    out: &mut String,
    stored: &StoredEntity,
    metadata: Metadata,
    links: &Links<'_>,
    in_feed: bool,
) {
    let entity = &stored.entity;
    let timestamp = stored.timestamp().to_iso8601();
    let mut first = true;
    out.push('{');
    if metadata != Metadata::None {
        if !in_feed {
            write_key(out, &mut first, "odata.metadata");
            write_str(
                out,
                &format!("{}/$metadata#{}/@Element", links.base, links.table),
            );
        }
        if metadata == Metadata::Full {
            let address = format!(
                "{}({})",
                links.table,
                key_predicate(entity.partition_key().as_str(), entity.row_key().as_str())
            );
            write_key(out, &mut first, "odata.type");
            write_str(out, &format!("{}.{}", links.account, links.table));
            write_key(out, &mut first, "odata.id");
            write_str(out, &format!("{}/{address}", links.base));
            write_key(out, &mut first, "odata.etag");
            write_etag(out, &timestamp);
            write_key(out, &mut first, "odata.editLink");
            write_str(out, &address);
        } else {
            write_key(out, &mut first, "odata.etag");
            write_etag(out, &timestamp);
        }
    }
    write_key(out, &mut first, "PartitionKey");
    write_str(out, entity.partition_key().as_str());
    write_key(out, &mut first, "RowKey");
    write_str(out, entity.row_key().as_str());
    if metadata == Metadata::Full {
        write_key(out, &mut first, "Timestamp@odata.type");
        write_str(out, EdmType::DateTime.name());
    }
    write_key(out, &mut first, "Timestamp");
    write_str(out, &timestamp);
    for (name, value) in entity.properties() {
        if metadata != Metadata::None && needs_annotation(value, metadata) {
            write_key(
                out,
                &mut first,
                &format!("{}{TYPE_ANNOTATION_SUFFIX}", name.as_str()),
            );
            write_str(out, value.edm_type().name());
        }
        write_key(out, &mut first, name.as_str());
        write_value(out, value);
    }
    out.push('}');
}

/// Whether `value` carries a type annotation at `metadata`: JSON infers String, Boolean,
/// Int32 and finite Double by itself; full metadata annotates all but those three natives.
fn needs_annotation(value: &Value, metadata: Metadata) -> bool {
    match value {
        Value::Binary(_) | Value::DateTime(_) | Value::Guid(_) | Value::Int64(_) => true,
        Value::Double(d) => metadata == Metadata::Full || !d.is_finite(),
        Value::Int32(_) | Value::Boolean(_) | Value::String(_) => false,
    }
}

/// Appends the JSON form of `value`: numbers for Int32, Boolean and finite Doubles (always
/// with a fraction or exponent, so a reader does not take `5.0` for an integer), strings for
/// the rest.
fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Int32(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Boolean(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Double(d) if d.is_finite() => {
            // Debug is the shortest round-trip form and always has a `.` or an exponent.
            let _ = write!(out, "{d:?}");
        }
        Value::String(s) => write_str(out, s),
        other => write_str(out, &other.to_wire()),
    }
}

#[cfg(test)]
mod tests {
    use super::{write_etag, write_str};
    use crate::model::DateTime;
    use crate::table::ETag;

    #[test]
    fn write_str_escapes_as_serde_json_does() {
        let samples = [
            "",
            "plain",
            "quote\" back\\slash",
            "\n\r\t\u{0}\u{1f}\u{7f}",
            "héllo \u{1F600} ünïcode\"end",
            "\"",
            "x\u{8}y",
        ];
        for text in samples {
            let mut ours = String::new();
            write_str(&mut ours, text);
            let back: String = serde_json::from_str(&ours).expect("valid JSON");
            assert_eq!(back, text, "{ours}");
            if !text.contains(['\u{8}', '\u{0}', '\u{1f}']) {
                assert_eq!(ours, serde_json::to_string(text).expect("serialisable"));
            }
        }
    }

    #[test]
    fn write_etag_matches_the_etag_display() {
        let fixed = [630_000_000_000_000_000, 638_000_000_000_000_123]
            .map(|ticks| DateTime::from_ticks(ticks).expect("in range"));
        for timestamp in fixed.into_iter().chain([DateTime::now()]) {
            let mut ours = String::new();
            write_etag(&mut ours, &timestamp.to_iso8601());
            let mut expected = String::new();
            write_str(&mut expected, &ETag::from_timestamp(timestamp).to_string());
            assert_eq!(ours, expected);
        }
    }
}
