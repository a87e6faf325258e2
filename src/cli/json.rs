//! Entities as JSON objects, in the Table service's wire form: Int64, Binary, DateTime and Guid
//! values are strings annotated with `Name@odata.type`, and Double specials are `"NaN"`,
//! `"Infinity"`, `"-Infinity"`.

use serde_json::{Map, Number, Value as Json};
use strata::StoredEntity;
use strata::model::{EdmType, Entity, PartitionKey, PropertyName, RowKey, Value};

use super::error::{CliError, Result};

/// Property name suffix of an OData type annotation.
pub const TYPE_SUFFIX: &str = "@odata.type";
/// Name of the ETag member in JSON output.
pub const ETAG_MEMBER: &str = "odata.etag";
/// The system properties.
pub const PARTITION_KEY: &str = "PartitionKey";
/// RowKey's name.
pub const ROW_KEY: &str = "RowKey";
/// Timestamp's name.
pub const TIMESTAMP: &str = "Timestamp";

/// Per-property types given on the command line (`--type Prop=Edm.Int64`).
#[derive(Debug, Clone, Default)]
pub struct TypeOverrides(Vec<(String, EdmType)>);

impl TypeOverrides {
    /// Parses `Prop=Edm.Type` items.
    pub fn parse(items: &[String]) -> Result<Self> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let (name, ty) = item.split_once('=').ok_or_else(|| {
                CliError::Usage(format!(
                    "--type {item:?} is not Prop=Edm.Type (e.g. Count=Edm.Int64)"
                ))
            })?;
            let edm = EdmType::from_name(ty).ok_or_else(|| {
                CliError::Usage(format!(
                    "--type {item:?}: unknown type {ty:?}; use one of {}",
                    EdmType::ALL.map(EdmType::name).join(", ")
                ))
            })?;
            out.push((name.to_owned(), edm));
        }
        Ok(Self(out))
    }

    /// The type given for `name`, if any.
    pub fn get(&self, name: &str) -> Option<EdmType> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, t)| *t)
    }
}

/// Which members of an input object hold the keys.
#[derive(Debug, Clone)]
pub struct KeyColumns {
    /// Member holding the PartitionKey.
    pub partition_key: String,
    /// Member holding the RowKey.
    pub row_key: String,
}

impl Default for KeyColumns {
    fn default() -> Self {
        Self {
            partition_key: PARTITION_KEY.to_owned(),
            row_key: ROW_KEY.to_owned(),
        }
    }
}

/// Builds an entity from a JSON object with optional `@odata.type` annotations.
pub fn entity_from_json(json: &Json, types: &TypeOverrides, keys: &KeyColumns) -> Result<Entity> {
    let Json::Object(map) = json else {
        return Err(CliError::Data(format!(
            "expected a JSON object, found {}",
            kind(json)
        )));
    };
    let key = |member: &str| -> Result<String> {
        match map.get(member) {
            Some(Json::String(s)) => Ok(s.clone()),
            Some(Json::Number(n)) => Ok(n.to_string()),
            Some(other) => Err(CliError::Data(format!(
                "{member} must be a string, found {}",
                kind(other)
            ))),
            None => Err(CliError::Data(format!("the object has no {member} member"))),
        }
    };
    let pk = PartitionKey::new(key(&keys.partition_key)?)?;
    let rk = RowKey::new(key(&keys.row_key)?)?;
    let mut entity = Entity::new(pk, rk);
    for (name, value) in map {
        if name.ends_with(TYPE_SUFFIX)
            || name == &keys.partition_key
            || name == &keys.row_key
            || name == TIMESTAMP
            || name.starts_with("odata.")
            // `@op`, `@etag`: directives of a batch line, never property names.
            || name.starts_with('@')
        {
            continue;
        }
        let annotation = match map.get(&format!("{name}{TYPE_SUFFIX}")) {
            Some(Json::String(t)) => Some(EdmType::from_name(t).ok_or_else(|| {
                CliError::Data(format!("{name}{TYPE_SUFFIX}: unknown type {t:?}"))
            })?),
            Some(other) => {
                return Err(CliError::Data(format!(
                    "{name}{TYPE_SUFFIX} must be a string, found {}",
                    kind(other)
                )));
            }
            None => None,
        };
        let edm = types.get(name).or(annotation);
        let value = value_from_json(name, value, edm)?;
        let prop = PropertyName::new(name.clone())?;
        entity.set_or_remove(prop, value)?;
    }
    Ok(entity)
}

/// A property value from JSON: `edm` when given, else inferred (string, Int32 or Int64 for
/// integers by range, Double, Boolean). Null is `None` (absent).
fn value_from_json(name: &str, json: &Json, edm: Option<EdmType>) -> Result<Option<Value>> {
    let wrap = |e: strata::model::ModelError| CliError::Data(format!("property {name}: {e}"));
    let value = match (json, edm) {
        (Json::Null, _) => return Ok(None),
        (Json::String(s), Some(t)) => Value::from_wire(t, s).map_err(wrap)?,
        (Json::String(s), None) => Value::string(s.clone()).map_err(wrap)?,
        (Json::Bool(b), None | Some(EdmType::Boolean)) => Value::Boolean(*b),
        (Json::Number(n), Some(t)) => Value::from_wire(t, &n.to_string()).map_err(wrap)?,
        (Json::Number(n), None) => infer_number(n),
        (other, _) => {
            return Err(CliError::Data(format!(
                "property {name}: {} is not a valid value{}",
                kind(other),
                edm.map(|t| format!(" of type {}", t.name()))
                    .unwrap_or_default()
            )));
        }
    };
    Ok(Some(value))
}

/// Int32 if the number is an integer in its range, Int64 if in that range, else Double.
fn infer_number(n: &Number) -> Value {
    match n.as_i64() {
        Some(i) => i32::try_from(i).map_or(Value::Int64(i), Value::Int32),
        None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
    }
}

fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// The JSON object of a stored entity: keys, Timestamp, ETag and annotated properties.
pub fn entity_to_json(stored: &StoredEntity) -> Json {
    let mut map = Map::new();
    let e = &stored.entity;
    map.insert(
        ETAG_MEMBER.to_owned(),
        Json::String(stored.etag.to_string()),
    );
    map.insert(
        PARTITION_KEY.to_owned(),
        Json::String(e.partition_key().as_str().to_owned()),
    );
    map.insert(
        ROW_KEY.to_owned(),
        Json::String(e.row_key().as_str().to_owned()),
    );
    map.insert(
        TIMESTAMP.to_owned(),
        Json::String(stored.timestamp().to_iso8601()),
    );
    map.insert(
        format!("{TIMESTAMP}{TYPE_SUFFIX}"),
        Json::String(EdmType::DateTime.name().to_owned()),
    );
    for (name, value) in e.properties() {
        let (json, annotate) = value_to_json(value);
        if annotate {
            map.insert(
                format!("{}{TYPE_SUFFIX}", name.as_str()),
                Json::String(value.edm_type().name().to_owned()),
            );
        }
        map.insert(name.as_str().to_owned(), json);
    }
    Json::Object(map)
}

/// JSON of a value and whether it needs a type annotation to be read back as the same type.
fn value_to_json(value: &Value) -> (Json, bool) {
    match value {
        Value::Boolean(b) => (Json::Bool(*b), false),
        Value::Int32(i) => (Json::Number((*i).into()), false),
        Value::String(s) => (Json::String(s.clone()), false),
        Value::Double(d) => match Number::from_f64(*d) {
            // An integral double printed as `2.0` reads back as a Double without annotation.
            Some(n) if d.fract() != 0.0 || d.abs() >= 1e16 => (Json::Number(n), false),
            _ => (Json::String(value.to_wire()), true),
        },
        other => (Json::String(other.to_wire()), true),
    }
}
