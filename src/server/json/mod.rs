//! Entities in the service's JSON forms: reading request bodies into [`Entity`] and writing
//! [`StoredEntity`] in `nometadata`, `minimalmetadata` or `fullmetadata`.

mod read;
mod stamp;
mod write;

pub use read::{EncodedEntity, Members, Scalar, encode_entity_reusing};
pub(crate) use stamp::ETAG_TEXT_LEN;
pub use write::{
    EntityWriter, key_predicate, write_entity, write_etag_text, write_key_predicate, write_row,
    write_str, write_str_parts,
};

use serde_json::Number;

use super::error::{Result, ServerError};
use crate::model::{EdmType, Entity, PartitionKey, PropertyName, RowKey, Value};

/// Suffix of a type annotation key: `Prop@odata.type`.
const TYPE_ANNOTATION_SUFFIX: &str = "@odata.type";
/// The annotation of an `Edm.String` value.
const EDM_STRING: &str = "Edm.String";
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
        match accept {
            // The values the SDKs send, answered without the two substring searches below
            // (~200 instructions per request).
            "application/json;odata=minimalmetadata" | "application/json" => Self::Minimal,
            "application/json;odata=nometadata" => Self::None,
            "application/json;odata=fullmetadata" => Self::Full,
            _ if accept.contains("odata=nometadata") => Self::None,
            _ if accept.contains("odata=fullmetadata") => Self::Full,
            _ => Self::Minimal,
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
    parse_entity_reusing(body, url_keys, &mut Members::default())
}

/// [`parse_entity`] reading the body's members into `members`, whose allocation a caller
/// parsing many bodies (a batch) keeps from one body to the next.
///
/// # Errors
/// As [`parse_entity`].
pub fn parse_entity_reusing<'b>(
    body: &'b [u8],
    url_keys: Option<(&str, &str)>,
    members: &mut Members<'b>,
) -> Result<Entity> {
    let object = members
        .reparse(body)
        .map_err(|error| ServerError::invalid(format!("the body is not valid JSON: {error}")))?;
    if !object {
        return Err(ServerError::invalid("the body is not a JSON object"));
    }
    entity_from_members(members, url_keys)
}

/// Builds an entity from a parsed JSON object; see [`parse_entity`].
///
/// # Errors
/// As [`parse_entity`].
pub fn entity_from_members(
    members: &Members<'_>,
    url_keys: Option<(&str, &str)>,
) -> Result<Entity> {
    let (pk, rk) = entity_keys(members, url_keys)?;
    let mut entity = Entity::new(PartitionKey::from_borrowed(pk)?, RowKey::from_borrowed(rk)?);
    // Members count the keys and annotations too: enough room, never a regrowth.
    entity.reserve_properties(members.len());
    for (index, (name, json)) in members.iter().enumerate() {
        let Some(annotation) = property_annotation(members, index, name)? else {
            continue;
        };
        let value = property_value(name, json, annotation)?;
        let property = PropertyName::from_borrowed(name)?;
        // Member names are unique (the last duplicate kept), so a property is only ever
        // added, and a null one (absent) is simply not.
        if let Some(value) = value {
            entity
                .push_unique(property, value)
                .map_err(|error| crate::table::TableError::from_model(error, pk, rk))?;
        }
    }
    Ok(entity)
}

/// The keys of an entity body: the URL's (`url_keys`) when given, else the body's.
///
/// # Errors
/// [`ServerError::InvalidInput`] for a key member that is not a string, or a missing key.
/// For the member at `index` named `name`: `None` if it is not a property (an OData
/// annotation, a type annotation, a system property), else its `@odata.type` annotation.
fn property_annotation<'m>(
    members: &'m Members<'_>,
    index: usize,
    name: &str,
) -> Result<Option<Option<&'m str>>> {
    if name.starts_with(ODATA_PREFIX)
        || name.ends_with(TYPE_ANNOTATION_SUFFIX)
        || PropertyName::is_reserved(name)
    {
        return Ok(None);
    }
    match members.get_suffixed_after(index, name, TYPE_ANNOTATION_SUFFIX) {
        None => Ok(Some(None)),
        Some(Scalar::Str(s)) => Ok(Some(Some(s.as_ref()))),
        Some(_) => Err(ServerError::invalid(format!(
            "{name}{TYPE_ANNOTATION_SUFFIX} must be a string"
        ))),
    }
}

fn entity_keys<'a>(
    members: &'a Members<'_>,
    url_keys: Option<(&'a str, &'a str)>,
) -> Result<(&'a str, &'a str)> {
    let key = |name: &str| -> Result<Option<&'a str>> {
        match members.get(name) {
            None | Some(Scalar::Null) => Ok(None),
            Some(Scalar::Str(s)) => Ok(Some(s.as_ref())),
            Some(_) => Err(ServerError::invalid(format!("{name} must be a string"))),
        }
    };
    // Keys are strings: the service refuses an insert whose body keys are annotated with
    // another type (a DateTime or Guid PartitionKey); where the URL names the keys (update,
    // merge, upsert) the body's keys and their annotations are not read.
    let body_key_annotations = [
        ("PartitionKey", "PartitionKey@odata.type"),
        ("RowKey", "RowKey@odata.type"),
    ];
    for (name, annotation) in body_key_annotations.iter().filter(|_| url_keys.is_none()) {
        match members.get(annotation) {
            None | Some(Scalar::Null) => {}
            Some(Scalar::Str(s)) if s.as_ref() == EDM_STRING => {}
            Some(_) => {
                return Err(ServerError::invalid(format!(
                    "{name} must be an {EDM_STRING}, not annotated otherwise"
                )));
            }
        }
    }
    let body_pk = key("PartitionKey")?;
    let body_rk = key("RowKey")?;
    match (url_keys, body_pk, body_rk) {
        (Some((pk, rk)), _, _) => Ok((pk, rk)),
        (None, Some(pk), Some(rk)) => Ok((pk, rk)),
        (None, None, _) => Err(ServerError::PropertiesNeedValue {
            key: "PartitionKey",
        }),
        (None, _, None) => Err(ServerError::PropertiesNeedValue { key: "RowKey" }),
    }
}

/// The value of property `name` given as `json` with an optional type annotation; `None` for
/// null (a null property is absent).
fn property_value(
    name: &str,
    json: &Scalar<'_>,
    annotation: Option<&str>,
) -> Result<Option<Value>> {
    let mismatch = |edm: EdmType| {
        ServerError::invalid(format!(
            "the value of property {name:?} is not a valid {edm}"
        ))
    };
    let value = match (annotation, json) {
        (_, Scalar::Null) => return Ok(None),
        (None, Scalar::Str(s)) => Value::string(s.as_ref())?,
        (None, Scalar::Bool(b)) => Value::Boolean(*b),
        (None, Scalar::Number(n)) => untyped_number(n),
        (None, Scalar::Nested) => {
            return Err(ServerError::invalid(format!(
                "property {name:?} holds an array or object, which no EDM type carries"
            )));
        }
        // What SDKs annotate every string with: `from_wire` of a String, without looking
        // the type name up.
        (Some(EDM_STRING), Scalar::Str(s)) => Value::string(s.as_ref())?,
        (Some(annotation), json) => {
            let edm = EdmType::from_annotation(Some(annotation))?;
            match (edm, json) {
                (EdmType::Boolean, Scalar::Bool(b)) => Value::Boolean(*b),
                (EdmType::Int32 | EdmType::Int64 | EdmType::Double, Scalar::Number(n)) => {
                    typed_number(edm, n).ok_or_else(|| mismatch(edm))?
                }
                (_, Scalar::Str(s)) => Value::from_wire(edm, s)?,
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

#[cfg(test)]
mod metadata_tests {
    use super::Metadata;

    /// The level by the two substring searches alone.
    fn level_by_search(accept: &str) -> Metadata {
        if accept.contains("odata=nometadata") {
            Metadata::None
        } else if accept.contains("odata=fullmetadata") {
            Metadata::Full
        } else {
            Metadata::Minimal
        }
    }

    #[test]
    fn metadata_level_of_the_sdks_values_and_any_other_is_the_level_a_substring_search_finds() {
        let levels = [
            "nometadata",
            "fullmetadata",
            "minimalmetadata",
            "",
            "nometa",
            "full",
        ];
        let mut accepts = vec![
            String::new(),
            "=".to_owned(),
            "odata=".to_owned(),
            "application/json".to_owned(),
            "application/json;odata=minimalmetadata".to_owned(),
            "application/json;odata=nometadata;streaming=true".to_owned(),
            "application/json;odata=nometadata".to_owned(),
            "application/json;odata=fullmetadata".to_owned(),
            "application/json;odata=minimalmetadata ".to_owned(),
            "application/json;xodata==nometadata".to_owned(),
            "application/json;odata = nometadata".to_owned(),
            "odata=odata=nometadata".to_owned(),
            "application/atom+xml,application/json;odata=fullmetadata".to_owned(),
        ];
        for first in levels {
            for second in levels {
                accepts.push(format!(
                    "application/json;odata={first},application/json;odata={second}"
                ));
                accepts.push(format!("odata={first};q=0.9;odata={second}"));
            }
        }
        for accept in accepts {
            assert_eq!(
                Metadata::from_accept(Some(&accept)),
                level_by_search(&accept),
                "{accept:?}"
            );
        }
        assert_eq!(Metadata::from_accept(None), Metadata::Minimal);
    }
}

#[cfg(test)]
mod tests {
    use super::stamp::StampText;
    use super::write::write_str;
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
    fn entity_body_properties_are_sorted_unique_typed_and_nulls_absent() {
        use crate::model::Value;
        let body = br#"{"PartitionKey":"p","RowKey":"r","b":1,"a":"x","a@odata.type":"Edm.String",
            "b":"7","b@odata.type":"Edm.Int64","n":null,"g":"AQID","g@odata.type":"Edm.Binary"}"#;
        let entity = super::parse_entity(body, None).expect("valid body");
        let names: Vec<&str> = entity
            .properties()
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(names, ["a", "b", "g"]);
        assert_eq!(entity.get("a"), Some(&Value::String("x".to_owned())));
        assert_eq!(entity.get("b"), Some(&Value::Int64(7)));
        assert_eq!(entity.get("g"), Some(&Value::Binary(vec![1, 2, 3])));
        let bad = br#"{"PartitionKey":"p","RowKey":"r","a":5,"a@odata.type":"Edm.String"}"#;
        assert!(super::parse_entity(bad, None).is_err());
        let reserved = br#"{"PartitionKey":"p","RowKey":"r","bad-name":1}"#;
        assert!(super::parse_entity(reserved, None).is_err());
    }

    #[test]
    fn body_keys_annotated_other_than_string_refuse_an_insert_only() {
        let body =
            br#"{"PartitionKey":"2022-04-01T09:30:45Z","PartitionKey@odata.type":"Edm.DateTime",
            "RowKey":"r","RowKey@odata.type":"Edm.String"}"#;
        assert!(super::parse_entity(body, None).is_err());
        // An update names its keys in the URL: the body's keys are not read.
        assert!(super::parse_entity(body, Some(("p", "r"))).is_ok());
        let strings =
            br#"{"PartitionKey":"p","PartitionKey@odata.type":"Edm.String","RowKey":"r"}"#;
        assert!(super::parse_entity(strings, None).is_ok());
    }

    #[test]
    fn stamp_etag_texts_match_the_etag_display() {
        let fixed = [630_000_000_000_000_000, 638_000_000_000_000_123]
            .map(|ticks| DateTime::from_ticks(ticks).expect("in range"));
        for timestamp in fixed.into_iter().chain([DateTime::now()]) {
            let mut stamp = StampText::new();
            stamp.set(timestamp, true);
            let display = ETag::from_timestamp(timestamp).to_string();
            let mut expected = String::new();
            write_str(&mut expected, &display);
            assert_eq!(stamp.etag_json(), expected);
            assert_eq!(stamp.etag_text(), display);
        }
    }
}
