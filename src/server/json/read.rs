//! A request body's JSON object as flat borrowed members: serde_json's parser (same syntax
//! rules, numbers and error messages) without building a `Value` tree. Strings without
//! escapes stay borrowed from the body; nested arrays and objects are skipped, remembered
//! only as such (no EDM type carries them). The common body (scalar members only) is read
//! by the hand-written [`flat`] reader first, which is several times cheaper than serde's
//! token stream and hands anything unusual over to serde_json.

mod encode;
mod flat;
mod gaps;
mod plan;

pub use encode::{EncodedEntity, encode_entity_reusing};

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

use self::plan::{BodyPlan, PlanCache};

/// A member value of the top-level object.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'de> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as serde_json reads it.
    Number(Number),
    /// A string, borrowed when it held no escape.
    Str(Cow<'de, str>),
    /// An array or an object (skipped).
    Nested,
}

/// The members of a JSON object sorted by name, the last of duplicate names kept: the order
/// and the duplicate rule of serde_json's map, which the server used before.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Members<'de>(
    Vec<(Cow<'de, str>, Scalar<'de>)>,
    PlanCache<'de>,
    gaps::Gaps<'de>,
);

/// A JSON document: an object or anything else.
#[expect(
    clippy::large_enum_variant,
    reason = "built once per body serde_json reads (the fallback) and moved once; boxing the members would add an allocation"
)]
enum Document<'de> {
    Object(Members<'de>),
    Other,
}

impl<'de> Members<'de> {
    /// The members of `body` if it is one JSON object; `Ok(None)` for valid JSON of another
    /// kind.
    ///
    /// # Errors
    /// serde_json's error for a body that is not JSON.
    pub fn parse(body: &'de [u8]) -> serde_json::Result<Option<Self>> {
        let mut members = Self::default();
        Ok(members.reparse(body)?.then_some(members))
    }

    /// [`Members::parse`] into these members' storage, replacing them: a caller reading many
    /// bodies (a batch) allocates once. `Ok(false)` for valid JSON that is not an object
    /// (the members are then empty).
    ///
    /// # Errors
    /// serde_json's error for a body that is not JSON.
    pub fn reparse(&mut self, body: &'de [u8]) -> serde_json::Result<bool> {
        if flat::read_object_into(body, &mut self.0, &mut self.2).is_some() {
            self.sort_ordered();
            return Ok(true);
        }
        self.0.clear();
        Ok(match Self::parse_with_serde(body)? {
            Some(members) => {
                *self = members;
                true
            }
            None => false,
        })
    }

    /// The members of `body` in body order (not sorted, duplicates kept) if the flat reader
    /// reads it; `false` when serde_json must decide (the members are then not usable).
    fn read_in_body_order(&mut self, body: &'de [u8]) -> bool {
        flat::read_object_into(body, &mut self.0, &mut self.2).is_some()
    }

    /// Sorts members read by [`Members::read_in_body_order`] into what
    /// [`Members::reparse`] gives.
    fn sort_body_order(&mut self) {
        self.sort_ordered();
    }

    /// The members in the order they are held (body order after
    /// [`Members::read_in_body_order`]) and their layout ([`BodyPlan`]) if it describes
    /// them: the last body's, when these members have its names.
    fn slice_and_plan(&mut self) -> (&[(Cow<'de, str>, Scalar<'de>)], Option<&BodyPlan>) {
        let plan = self.1.plan_for(&self.0);
        (&self.0, plan)
    }

    /// [`Members::parse`] by serde_json alone.
    ///
    /// # Errors
    /// serde_json's error for a body that is not JSON.
    pub fn parse_with_serde(body: &'de [u8]) -> serde_json::Result<Option<Self>> {
        Ok(match serde_json::from_slice::<Document<'de>>(body)? {
            Document::Object(members) => Some(members),
            Document::Other => None,
        })
    }

    /// The members read in body order, sorted by name with the last of each duplicate kept.
    fn from_ordered(members: Vec<(Cow<'de, str>, Scalar<'de>)>) -> Self {
        let mut members = Self(members, PlanCache::default(), gaps::Gaps::default());
        members.sort_ordered();
        members
    }

    /// Sorts members read in body order by name, keeping the last of each duplicate.
    fn sort_ordered(&mut self) {
        let members = &mut self.0;
        // A stable sort keeps duplicates in input order, so the last of each run wins.
        members.sort_by(|a, b| name_order(&a.0, &b.0));
        members.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                std::mem::swap(later, earlier);
                true
            } else {
                false
            }
        });
    }

    /// The value of member `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Scalar<'de>> {
        self.find(|key| key.cmp(name))
    }

    /// The value of member `name` followed by `suffix`, without building that name.
    #[must_use]
    pub fn get_suffixed(&self, name: &str, suffix: &str) -> Option<&Scalar<'de>> {
        self.find(|key| cmp_suffixed(key.as_bytes(), name.as_bytes(), suffix.as_bytes()))
    }

    /// [`Members::get_suffixed`] for the member at `index` of [`Members::iter`], named `name`:
    /// its annotation usually sorts right after it, which is checked before searching.
    #[must_use]
    pub fn get_suffixed_after(
        &self,
        index: usize,
        name: &str,
        suffix: &str,
    ) -> Option<&Scalar<'de>> {
        match self.0.get(index + 1) {
            Some((next, value))
                if cmp_suffixed(next.as_bytes(), name.as_bytes(), suffix.as_bytes())
                    == std::cmp::Ordering::Equal =>
            {
                Some(value)
            }
            _ => self.get_suffixed(name, suffix),
        }
    }

    fn find(&self, order: impl Fn(&str) -> std::cmp::Ordering) -> Option<&Scalar<'de>> {
        let at = self.0.binary_search_by(|(key, _)| order(key)).ok()?;
        self.0.get(at).map(|(_, value)| value)
    }

    /// How many members there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the object has no member.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The members in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Scalar<'de>)> {
        self.0.iter().map(|(key, value)| (key.as_ref(), value))
    }
}

/// Byte order of two member names, told by their first bytes when those differ (most pairs
/// of a body's names): a whole comparison is a `memcmp` call, which cost more than the rest
/// of sorting a body's members.
#[inline]
fn name_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

/// `key` against `name` followed by `suffix`, in byte order, by two slice comparisons (a
/// chained byte iterator cost more than the rest of reading a property).
fn cmp_suffixed(key: &[u8], name: &[u8], suffix: &[u8]) -> std::cmp::Ordering {
    let split = key.len().min(name.len());
    let head = key.get(..split).unwrap_or_default();
    match head.cmp(name.get(..split).unwrap_or_default()) {
        std::cmp::Ordering::Equal if key.len() < name.len() => std::cmp::Ordering::Less,
        std::cmp::Ordering::Equal => key.get(name.len()..).unwrap_or_default().cmp(suffix),
        unequal => unequal,
    }
}

/// A string that borrows from the input when it can.
struct Text<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// Reads any JSON value as a [`Scalar`] (`members` false) or a whole document (`members`
/// true: an object's members are collected).
struct AnyVisitor {
    members: bool,
}

/// What [`AnyVisitor`] produced.
#[expect(
    clippy::large_enum_variant,
    reason = "built once per value serde_json reads (the fallback) and moved once; boxing the members would add an allocation"
)]
enum Any<'de> {
    Scalar(Scalar<'de>),
    Members(Members<'de>),
}

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = Any<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Any<'de>, E> {
        Ok(Any::Scalar(Scalar::Null))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Any<'de>, E> {
        Ok(Any::Scalar(Scalar::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Any<'de>, E> {
        Ok(Any::Scalar(Scalar::Number(v.into())))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Any<'de>, E> {
        Ok(Any::Scalar(Scalar::Number(v.into())))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Any<'de>, E> {
        // serde_json's Value turns a non-finite float into null; JSON text cannot hold one.
        Ok(Any::Scalar(
            Number::from_f64(v).map_or(Scalar::Null, Scalar::Number),
        ))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Any<'de>, E> {
        Ok(Any::Scalar(Scalar::Str(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Any<'de>, E> {
        Ok(Any::Scalar(Scalar::Str(Cow::Owned(v.to_owned()))))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Any<'de>, E> {
        Ok(Any::Scalar(Scalar::Str(Cow::Owned(v))))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Any<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Any::Scalar(Scalar::Nested))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Any<'de>, A::Error> {
        if !self.members {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Any::Scalar(Scalar::Nested));
        }
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let value = map.next_value::<MemberValue<'de>>()?.0;
            members.push((key, value));
        }
        Ok(Any::Members(Members::from_ordered(members)))
    }
}

/// A member's value: any JSON value, nested ones skipped.
struct MemberValue<'de>(Scalar<'de>);

impl<'de> Deserialize<'de> for MemberValue<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(AnyVisitor { members: false })? {
            Any::Scalar(scalar) => Ok(Self(scalar)),
            Any::Members(_) => Ok(Self(Scalar::Nested)),
        }
    }
}

impl<'de> Deserialize<'de> for Document<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_any(AnyVisitor { members: true })? {
            Any::Members(members) => Ok(Self::Object(members)),
            Any::Scalar(_) => Ok(Self::Other),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{Members, Scalar};

    #[test]
    fn members_are_sorted_and_the_last_duplicate_wins_as_in_serde_json_maps() {
        let body = br#"{"b":1,"a":"x","b":true,"c":[1,{"d":2}],"e":null,"f":"q\"uote"}"#;
        let members = Members::parse(body).unwrap().unwrap();
        let names: Vec<&str> = members.iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["a", "b", "c", "e", "f"]);
        assert_eq!(members.get("b"), Some(&Scalar::Bool(true)));
        assert_eq!(members.get("c"), Some(&Scalar::Nested));
        assert_eq!(members.get("e"), Some(&Scalar::Null));
        assert_eq!(members.get("f"), Some(&Scalar::Str("q\"uote".into())));
        let value: serde_json::Value = serde_json::from_slice(body).unwrap();
        let serde_names: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(names, serde_names);
    }

    #[test]
    fn suffixed_lookup_finds_annotations_without_building_the_name() {
        let members = Members::parse(br#"{"N":"5","N@odata.type":"Edm.Int64","M":1}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            members.get_suffixed("N", "@odata.type"),
            Some(&Scalar::Str("Edm.Int64".into()))
        );
        assert_eq!(members.get_suffixed("M", "@odata.type"), None);
        for (index, (name, _)) in members.iter().enumerate() {
            assert_eq!(
                members.get_suffixed_after(index, name, "@odata.type"),
                members.get_suffixed(name, "@odata.type"),
            );
        }
        let apart = Members::parse(br#"{"N":"5","N1":2,"N@odata.type":"Edm.Int64"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            apart.get_suffixed_after(0, "N", "@odata.type"),
            Some(&Scalar::Str("Edm.Int64".into()))
        );
    }

    #[test]
    fn suffixed_comparison_orders_as_the_concatenated_name() {
        let words = [
            "",
            "a",
            "ab",
            "abc",
            "b",
            "a@",
            "ab@x",
            "abc@x",
            "a@odata.type",
        ];
        for key in words {
            for name in words {
                for suffix in ["", "@", "@x", "@odata.type"] {
                    let whole = format!("{name}{suffix}");
                    assert_eq!(
                        super::cmp_suffixed(key.as_bytes(), name.as_bytes(), suffix.as_bytes()),
                        key.cmp(whole.as_str()),
                        "{key:?} vs {name:?}+{suffix:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn reparsed_members_equal_freshly_parsed_ones() {
        let bodies: [&[u8]; 5] = [
            br#"{"b":1,"a":"x","b":true}"#,
            br#"{"n":[1,{"d":2}],"s":"q\"uote"}"#,
            b"[1,2]",
            br#"{"z":null}"#,
            b"{}",
        ];
        let mut reused = Members::default();
        for body in bodies {
            let object = reused.reparse(body).unwrap();
            match Members::parse(body).unwrap() {
                Some(fresh) => assert_eq!((object, &reused), (true, &fresh)),
                None => assert!(!object && reused.is_empty()),
            }
        }
        assert!(reused.reparse(b"{\"a\":1,}").is_err());
    }

    #[test]
    fn member_name_order_is_byte_order() {
        let words = [
            "",
            "a",
            "ab",
            "b",
            "B",
            "a@odata.type",
            "é",
            "\u{0}",
            "PartitionKey",
        ];
        for a in words {
            for b in words {
                assert_eq!(super::name_order(a, b), a.cmp(b), "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn non_objects_and_bad_json_are_told_apart() {
        assert!(Members::parse(b"[1,2]").unwrap().is_none());
        assert!(Members::parse(b"\"s\"").unwrap().is_none());
        let ours = Members::parse(b"{\"a\":1,}").unwrap_err().to_string();
        let theirs = serde_json::from_slice::<serde_json::Value>(b"{\"a\":1,}")
            .unwrap_err()
            .to_string();
        assert_eq!(ours, theirs);
    }
}
