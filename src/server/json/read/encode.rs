//! An entity body read straight into its stored form: the property bytes a table write
//! stores, without building an [`Entity`] of owned values first (what a batch insert needs:
//! the bytes to store, and the same bytes to answer with).

use super::super::{EDM_STRING, entity_keys, property_annotation, property_value};
use super::{BodyPlan, Members, Scalar};
use crate::codec::property::PropertyWriter;
use crate::model::limits::{
    ENTITY_MAX_BYTES, MAX_CUSTOM_PROPERTIES, PROPERTY_SIZE_OVERHEAD, STRING_MAX_BYTES,
    UTF16_UNIT_BYTES, VARIABLE_VALUE_OVERHEAD,
};
use crate::model::{Entity, ModelError, PartitionKey, PropertyName, RowKey};
use crate::server::error::{Result, ServerError};
use crate::table::TableError;

/// An entity body encoded by [`encode_entity_reusing`].
#[derive(Debug)]
pub struct EncodedEntity {
    /// The entity's keys (an entity without properties).
    pub keys: Entity,
    /// The entity's size (SPEC §2), as [`Entity::size`] counts it.
    pub size: usize,
}

/// [`super::super::parse_entity`] encoding the entity's properties into `out` (appended: property bytes
/// without a Timestamp, the properties in the order `parse_entity` gives them) instead of
/// building the entity: the same checks in the same order, so the same errors, and bytes
/// equal to encoding the entity `parse_entity` returns. The body's members are read into
/// `members`, whose allocation a caller parsing many bodies (a batch) keeps. On error `out`
/// holds part of the properties.
///
/// # Errors
/// As [`super::super::parse_entity`].
pub fn encode_entity_reusing<'b>(
    body: &'b [u8],
    url_keys: Option<(&str, &str)>,
    members: &mut Members<'b>,
    out: &mut Vec<u8>,
) -> Result<EncodedEntity> {
    if members.read_in_body_order(body) {
        let mark = out.len();
        let (read, plan) = members.slice_and_plan();
        if let Some(encoded) = plan.and_then(|plan| encode_in_body_order(read, plan, url_keys, out))
        {
            return Ok(encoded);
        }
        out.truncate(mark);
        members.sort_body_order();
        return encode_members(members, url_keys, out);
    }
    let object = members
        .reparse(body)
        .map_err(|error| ServerError::invalid(format!("the body is not valid JSON: {error}")))?;
    if !object {
        return Err(ServerError::invalid("the body is not a JSON object"));
    }
    encode_members(members, url_keys, out)
}

/// [`encode_members`] of members in body order laid out by `plan` (see [`BodyPlan`]), for
/// the common body: nothing to refuse. `None` for any error: the sorted reading then
/// decides, so the bytes and errors are those of [`encode_members`].
fn encode_in_body_order(
    members: &[(std::borrow::Cow<'_, str>, Scalar<'_>)],
    plan: &BodyPlan,
    url_keys: Option<(&str, &str)>,
    out: &mut Vec<u8>,
) -> Option<EncodedEntity> {
    // A key member that is not a string fails even when the URL names the keys.
    let key = |index: Option<usize>| match index.map(|index| members.get(index)) {
        None | Some(Some((_, Scalar::Null))) => Some(None),
        Some(Some((_, Scalar::Str(text)))) => Some(Some(text.as_ref())),
        Some(_) => None,
    };
    let (body_pk, body_rk) = (key(plan.partition_key)?, key(plan.row_key)?);
    let (pk, rk) = match (url_keys, body_pk, body_rk) {
        (Some(keys), _, _) => keys,
        (None, Some(pk), Some(rk)) => (pk, rk),
        _ => return None,
    };
    let keys = Entity::new(
        PartitionKey::from_borrowed(pk).ok()?,
        RowKey::from_borrowed(rk).ok()?,
    );
    let mut size = keys.size();
    let mut writer = PropertyWriter::begin(out, None);
    let mut written = 0_usize;
    for property in plan.properties() {
        let (name, json) = members.get(property.member)?;
        let name = name.as_ref();
        let annotation = match property.annotation.and_then(|index| members.get(index)) {
            None => None,
            Some((_, Scalar::Str(text))) => Some(text.as_ref()),
            Some(_) => return None,
        };
        // The plan checked the name; it is written from the body's text (no owned copy).
        let value = match (annotation, json) {
            (None | Some(EDM_STRING), Scalar::Str(text)) => {
                Encoded::Str(text.as_ref(), checked_string_size(text).ok()?)
            }
            _ => {
                let value = property_value(name, json, annotation).ok()?;
                let Some(value) = value else {
                    continue;
                };
                let size = value.size();
                Encoded::Value(value, size)
            }
        };
        written += 1;
        let value_size = match &value {
            Encoded::Str(_, size) | Encoded::Value(_, size) => *size,
        };
        size += PROPERTY_SIZE_OVERHEAD + property.name_bytes + value_size;
        if written > MAX_CUSTOM_PROPERTIES || size > ENTITY_MAX_BYTES {
            return None;
        }
        match &value {
            Encoded::Str(text, _) => writer.push_str(name, text),
            Encoded::Value(value, _) => writer.push(name, value),
        }
    }
    writer.finish();
    Some(EncodedEntity { keys, size })
}

/// [`super::super::entity_from_members`] encoding into `out`; see [`encode_entity_reusing`].
fn encode_members(
    members: &Members<'_>,
    url_keys: Option<(&str, &str)>,
    out: &mut Vec<u8>,
) -> Result<EncodedEntity> {
    let (pk, rk) = entity_keys(members, url_keys)?;
    let keys = Entity::new(PartitionKey::from_borrowed(pk)?, RowKey::from_borrowed(rk)?);
    let mut size = keys.size();
    let mut count = 0_usize;
    let mut writer = PropertyWriter::begin(out, None);
    for (index, (name, json)) in members.iter().enumerate() {
        let Some(annotation) = property_annotation(members, index, name)? else {
            continue;
        };
        // Strings (plain, or annotated as SDKs annotate every one) are checked and copied
        // as borrowed text; any other value is built as `parse_entity` builds it.
        let value = match (annotation, json) {
            (None | Some(EDM_STRING), Scalar::Str(text)) => {
                Some(Encoded::Str(text.as_ref(), checked_string_size(text)?))
            }
            _ => property_value(name, json, annotation)?.map(|value| {
                let size = value.size();
                Encoded::Value(value, size)
            }),
        };
        // Checked even for a null, as `parse_entity` does.
        PropertyName::check(name)?;
        let Some(value) = value else {
            continue;
        };
        count += 1;
        let model_error = |error| TableError::from_model(error, pk, rk);
        if count > MAX_CUSTOM_PROPERTIES {
            return Err(model_error(ModelError::TooManyProperties { count }).into());
        }
        let value_size = match &value {
            Encoded::Str(_, size) | Encoded::Value(_, size) => *size,
        };
        size += PROPERTY_SIZE_OVERHEAD + utf16_bytes(name) + value_size;
        if size > ENTITY_MAX_BYTES {
            return Err(model_error(ModelError::EntityTooLarge { size }).into());
        }
        match &value {
            Encoded::Str(text, _) => writer.push_str(name, text),
            Encoded::Value(value, _) => writer.push(name, value),
        }
    }
    writer.finish();
    Ok(EncodedEntity { keys, size })
}

/// A property value on its way into the bytes, with its size (SPEC §2).
enum Encoded<'a> {
    Str(&'a str, usize),
    Value(crate::model::Value, usize),
}

/// The size of String value `text` after checking its limit, as `Value::string` checks it.
fn checked_string_size(text: &str) -> Result<usize> {
    let len_bytes = utf16_bytes(text);
    if len_bytes > STRING_MAX_BYTES {
        return Err(ModelError::StringTooLarge { len_bytes }.into());
    }
    Ok(len_bytes + VARIABLE_VALUE_OVERHEAD)
}

/// Length of `text` in UTF-16 code units, in bytes (how the service sizes text).
pub(super) fn utf16_bytes(text: &str) -> usize {
    if is_ascii(text.as_bytes()) {
        return text.len() * UTF16_UNIT_BYTES;
    }
    text.encode_utf16().count() * UTF16_UNIT_BYTES
}

/// Whether `bytes` are all ASCII, eight at a time with no early exit: `str::is_ascii` went
/// byte by byte here, ~1 instruction a byte of every string value.
fn is_ascii(bytes: &[u8]) -> bool {
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder().iter().fold(0, |acc, &byte| acc | byte);
    let words = chunks.fold(0, |acc, chunk| {
        acc | u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or([0; 8]))
    });
    words & HIGHS == 0 && tail < 0x80
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use proptest::prelude::*;

    use super::super::Members;
    use super::encode_entity_reusing;
    use crate::codec::property;
    use crate::server::json::parse_entity;

    /// Whether encoding `body` gives what encoding the parsed entity gives: the same bytes,
    /// keys and size, or the same error.
    fn encodes_as_parsed(body: &[u8], url_keys: Option<(&str, &str)>) -> bool {
        let mut members = Members::default();
        let mut out = vec![9];
        let ours = encode_entity_reusing(body, url_keys, &mut members, &mut out);
        match (ours, parse_entity(body, url_keys)) {
            (Ok(encoded), Ok(entity)) => {
                let mut expected = vec![9];
                property::encode_into(&entity, &mut expected);
                out == expected
                    && encoded.size == entity.size()
                    && encoded.keys.partition_key() == entity.partition_key()
                    && encoded.keys.row_key() == entity.row_key()
                    && encoded.keys.properties().is_empty()
            }
            (Err(ours), Err(theirs)) => ours.to_string() == theirs.to_string(),
            _ => false,
        }
    }

    #[test]
    fn encoded_bodies_are_the_parsed_entities_encoded() {
        let long = "é".repeat(33_000);
        let many: String = (0..253).map(|i| format!(r#","P{i}":{i}"#)).collect();
        let large: String = (0..20)
            .map(|i| format!(r#","S{i}":"{}""#, "x".repeat(30_000)))
            .collect();
        let bodies = [
            r#"{"PartitionKey":"p","RowKey":"r"}"#.to_owned(),
            r#"{"PartitionKey": "p0001", "PartitionKey@odata.type": "Edm.String", "RowKey": "00000000", "RowKey@odata.type": "Edm.String", "N": 0, "Group": "g0", "Group@odata.type": "Edm.String", "Payload": "xxxx", "Payload@odata.type": "Edm.String"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","b":1,"a":"x","b":"7","b@odata.type":"Edm.Int64","n":null,"g":"AQID","g@odata.type":"Edm.Binary","d":1.5,"t":true,"big":3000000000,"odata.etag":"x","Timestamp":"y"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","dt":"2020-01-01T00:00:00Z","dt@odata.type":"Edm.DateTime","id":"c9da6455-213d-42c9-9a79-3e9149a57833","id@odata.type":"Edm.Guid"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a":5,"a@odata.type":"Edm.String"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a":"5","a@odata.type":7}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","bad-name":1}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","bad-name":null}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","n":[1]}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a":"x","a@odata.type":"Edm.Nope"}"#.to_owned(),
            r#"{"PartitionKey":"p/","RowKey":"r"}"#.to_owned(),
            r#"{"PartitionKey":1,"RowKey":"r"}"#.to_owned(),
            r#"{"RowKey":"r"}"#.to_owned(),
            r#"{"PartitionKey":"p"}"#.to_owned(),
            format!(r#"{{"PartitionKey":"p","RowKey":"r","s":"{long}"}}"#),
            format!(r#"{{"PartitionKey":"p","RowKey":"r","s":"{}"}}"#, "é".repeat(30_000)),
            format!(r#"{{"PartitionKey":"p","RowKey":"r"{many}}}"#),
            format!(r#"{{"PartitionKey":"p","RowKey":"r"{large}}}"#),
            "[1]".to_owned(),
            "{".to_owned(),
            r#"{"PartitionKey":5,"RowKey":"r","a":1}"#.to_owned(),
            r#"{"PartitionKey":null,"RowKey":"r","a":1}"#.to_owned(),
            r#"{"PartitionKey":"p","PartitionKey":"q","RowKey":"r"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a":1,"a":"x"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a":"1","a@odata.type":"Edm.Int64","a@odata.type":"Edm.Int32"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a@odata.type":"Edm.Int64","a":"1"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a":"1","b":2,"a@odata.type":"Edm.Int64"}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","z@odata.type":"Edm.Int64","PartitionKey@odata.type":5}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a":null,"a@odata.type":5}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a-b":null}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","Timestamp":1,"Timestamp":2,"odata.x":1,"odata.x":2}"#.to_owned(),
            r#"{"PartitionKey":"p","RowKey":"r","a\u0062":"x","ab@odata.type":"Edm.String"}"#.to_owned(),
            format!(r#"{{"PartitionKey":"p","RowKey":"r"{}}}"#, (0..17).map(|i| format!(r#","P{i}":{i}"#)).collect::<String>()),
        ];
        for body in &bodies {
            assert!(encodes_as_parsed(body.as_bytes(), None), "{:.200}", body);
            assert!(
                encodes_as_parsed(body.as_bytes(), Some(("u", "v"))),
                "{:.200}",
                body
            );
        }
    }

    #[test]
    fn the_word_wise_ascii_test_is_is_ascii() {
        let text: Vec<u8> = (0..40_u8).map(|byte| b'a' + byte % 26).collect();
        for len in 0..=text.len() {
            assert!(super::is_ascii(&text[..len]));
            for at in 0..len {
                let mut other = text[..len].to_vec();
                other[at] |= 0x80;
                assert!(!super::is_ascii(&other), "{len} {at}");
            }
        }
    }

    #[test]
    fn sdk_bodies_are_encoded_in_body_order() {
        let body = br#"{"PartitionKey": "p0001", "PartitionKey@odata.type": "Edm.String", "RowKey": "00000000", "RowKey@odata.type": "Edm.String", "N": 0, "Group": "g0", "Group@odata.type": "Edm.String", "Payload": "xxxx", "Payload@odata.type": "Edm.String"}"#;
        let mut members = Members::default();
        assert!(members.read_in_body_order(body));
        let mut out = Vec::new();
        let (read, plan) = members.slice_and_plan();
        assert!(super::encode_in_body_order(read, plan.unwrap(), None, &mut out).is_some());
        assert!(encodes_as_parsed(body, None));
    }

    /// An encoding as (bytes, size, keys) or the error's text.
    type Encoding = Result<(Vec<u8>, usize, String, String), String>;

    fn encoding<'b>(body: &'b [u8], members: &mut Members<'b>) -> Encoding {
        let mut out = Vec::new();
        encode_entity_reusing(body, None, members, &mut out)
            .map(|encoded| {
                let keys = &encoded.keys;
                let (pk, rk) = (keys.partition_key().as_str(), keys.row_key().as_str());
                (out, encoded.size, pk.to_owned(), rk.to_owned())
            })
            .map_err(|error| error.to_string())
    }

    /// Whether encoding `bodies` in turn with one member buffer (whose layout is reused
    /// while the names repeat) encodes each as a fresh buffer does.
    fn encode_alike_in_turn(bodies: &[Vec<u8>]) -> bool {
        let mut members = Members::default();
        bodies
            .iter()
            .all(|body| encoding(body, &mut members) == encoding(body, &mut Members::default()))
    }

    #[test]
    fn bodies_with_the_last_body_s_names_encode_as_fresh_ones() {
        let sdk = |pk: &str, rk: &str, n: &str, group: &str| {
            format!(
                r#"{{"PartitionKey": "{pk}", "PartitionKey@odata.type": "Edm.String", "RowKey": "{rk}", "RowKey@odata.type": "Edm.String", "N": {n}, "Group": {group}, "Group@odata.type": "Edm.String", "Payload": "xx", "Payload@odata.type": "Edm.String"}}"#
            )
            .into_bytes()
        };
        let bodies = vec![
            sdk("p", "0", "0", r#""g0""#),
            sdk("p", "1", "1", r#""g1""#),
            sdk("p", "2", "3000000000", r#""g2""#),
            sdk("p/", "3", "3", r#""g3""#),
            sdk("p", "4", "4", "5"),
            sdk("p", "5", "1.5", "null"),
            sdk("p", "6", "6", r#""é""#),
            sdk("p", "7", "null", r#""g""#),
            br#"{"PartitionKey": "p", "RowKey": "8", "Gr\u006fup": "g"}"#.to_vec(),
            br#"{"PartitionKey": "p", "RowKey": "9", "Gr\u006fup": "g"}"#.to_vec(),
            br#"{"PartitionKey": "p", "RowKey": "9", "Group": "g", "Group": "h"}"#.to_vec(),
            br#"{"PartitionKey": "p", "RowKey": "9", "Group": "g", "Group": "h"}"#.to_vec(),
            br#"{"PartitionKey": "p", "RowKey": "9", "bad-name": "g"}"#.to_vec(),
            br#"{"PartitionKey": "p", "RowKey": "9", "bad-name": "g"}"#.to_vec(),
            br#"{}"#.to_vec(),
            sdk("p", "10", "10", r#""g""#),
            sdk("p", "11", "11", r#""g""#),
        ];
        assert!(encode_alike_in_turn(&bodies));
        let mut reversed = bodies;
        reversed.reverse();
        assert!(encode_alike_in_turn(&reversed));
    }

    fn annotated_member() -> impl Strategy<Value = String> {
        let value = prop_oneof![
            "\"[a-z0-9 é]{0,6}\"",
            any::<i64>().prop_map(|n| n.to_string()),
            Just("1.5".to_owned()),
            Just("true".to_owned()),
            Just("null".to_owned()),
            Just("\"AQID\"".to_owned()),
            Just("\"12\"".to_owned()),
        ];
        let annotation = prop::option::of(prop_oneof![
            Just("\"Edm.String\"".to_owned()),
            Just("\"Edm.Int64\"".to_owned()),
            Just("\"Edm.Int32\"".to_owned()),
            Just("\"Edm.Double\"".to_owned()),
            Just("\"Edm.Boolean\"".to_owned()),
            Just("\"Edm.Binary\"".to_owned()),
            Just("5".to_owned()),
        ]);
        (
            "[a-dA-D_]{1,3}|PartitionKey|RowKey|Timestamp",
            value,
            annotation,
        )
            .prop_map(|(name, value, annotation)| match annotation {
                Some(annotation) => {
                    format!("\"{name}\":{value},\"{name}@odata.type\":{annotation}")
                }
                None => format!("\"{name}\":{value}"),
            })
    }

    fn member() -> impl Strategy<Value = String> {
        let name = prop_oneof![
            Just("PartitionKey".to_owned()),
            Just("RowKey".to_owned()),
            "[a-cA-C_]{1,3}",
            "[a-c]{1,2}@odata.type",
            Just("odata.etag".to_owned()),
            Just("a-b".to_owned()),
        ];
        let value = prop_oneof![
            "\"[a-z0-9 é]{0,6}\"",
            any::<i64>().prop_map(|n| n.to_string()),
            any::<i32>().prop_map(|n| n.to_string()),
            Just("1.5".to_owned()),
            Just("true".to_owned()),
            Just("null".to_owned()),
            Just("[1]".to_owned()),
            Just("\"Edm.String\"".to_owned()),
            Just("\"Edm.Int64\"".to_owned()),
            Just("\"Edm.Int32\"".to_owned()),
            Just("\"Edm.Double\"".to_owned()),
            Just("\"Edm.Boolean\"".to_owned()),
            Just("\"Edm.Binary\"".to_owned()),
            Just("\"AQID\"".to_owned()),
            Just("\"12\"".to_owned()),
        ];
        (name, value).prop_map(|(name, value)| format!("\"{name}\":{value}"))
    }

    proptest! {
        #[test]
        fn bodies_sharing_names_encode_in_turn_as_fresh_ones(
            names in prop::collection::vec(
                "[a-b]{1,2}|PartitionKey|RowKey|Timestamp|odata.etag|[a-b]@odata.type|a-b",
                0..7,
            ),
            values in prop::collection::vec(
                prop::collection::vec(
                    prop_oneof![
                        "\"[a-z/é]{0,3}\"",
                        any::<i32>().prop_map(|n| n.to_string()),
                        Just("null".to_owned()),
                        Just("1.5".to_owned()),
                        Just("\"Edm.String\"".to_owned()),
                        Just("\"Edm.Int64\"".to_owned()),
                        Just("\"12\"".to_owned()),
                    ],
                    7,
                ),
                1..5,
            ),
        ) {
            let bodies: Vec<Vec<u8>> = values
                .iter()
                .map(|values| {
                    let members: Vec<String> = names
                        .iter()
                        .zip(values)
                        .map(|(name, value)| format!("\"{name}\": {value}"))
                        .collect();
                    format!("{{{}}}", members.join(", ")).into_bytes()
                })
                .collect();
            prop_assert!(encode_alike_in_turn(&bodies));
        }

        #[test]
        fn annotated_bodies_encode_as_parsed(
            members in prop::collection::vec(annotated_member(), 0..8),
        ) {
            let body = format!(
                "{{\"PartitionKey\":\"p\",\"RowKey\":\"r\",{}}}",
                members.join(",")
            );
            let body = body.replace(",}", "}");
            prop_assert!(encodes_as_parsed(body.as_bytes(), None), "{}", body);
            prop_assert!(encodes_as_parsed(body.as_bytes(), Some(("u", "v"))), "{}", body);
        }

        #[test]
        fn generated_bodies_encode_as_parsed(members in prop::collection::vec(member(), 0..10)) {
            let body = format!("{{{}}}", members.join(","));
            prop_assert!(encodes_as_parsed(body.as_bytes(), None), "{}", body);
            prop_assert!(encodes_as_parsed(body.as_bytes(), Some(("u", "v"))), "{}", body);
        }
    }
}
