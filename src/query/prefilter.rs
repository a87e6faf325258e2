//! A byte test that rules rows out before their filter is evaluated: a row can satisfy
//! `Name eq <literal>` only if its encoded properties hold that property's encoding, which the
//! encoder writes in one canonical form, so a row without those bytes is skipped unread. A
//! filtered scan examines many rows per match; this test costs a fraction of walking the
//! row's property frames.

use memchr::memmem::Finder;

use super::ast::{CompareOp, Comparison, Expr, Field, Literal};
use super::filter::Filter;
use crate::codec::property::{self, PropertyReader};
use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};

/// Byte strings that every row matching a filter holds in its encoded properties: one per
/// `Property eq literal` the filter requires (a top-level comparison or a conjunct of a
/// top-level `and`). Empty when the filter requires none, and then every row may match.
#[derive(Debug, Clone, Default)]
pub struct Prefilter {
    needles: Vec<Finder<'static>>,
}

impl Prefilter {
    /// The byte strings `filter` requires.
    #[must_use]
    pub fn new(filter: &Filter) -> Self {
        let required: &[Expr] = match filter.expr() {
            Expr::And(operands) => operands,
            other => std::slice::from_ref(other),
        };
        let needles = required
            .iter()
            .filter_map(|expr| match expr {
                Expr::Compare(comparison) => needle(comparison),
                _ => None,
            })
            .map(|bytes| Finder::new(&bytes).into_owned())
            .collect();
        Self { needles }
    }

    /// Whether a row whose encoded properties are `encoded` may match; false only when it
    /// cannot.
    #[inline]
    #[must_use]
    pub fn may_match(&self, encoded: &[u8]) -> bool {
        self.needles
            .iter()
            .all(|needle| needle.find(encoded).is_some())
    }

    /// Whether the test rules anything out.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }
}

/// The encoding of the property `comparison` requires (from its name to the end of its
/// value), when it requires one exact encoding: `eq` on a custom property with a literal of
/// any type but Double (`-0.0 eq 0.0` holds between different bit patterns).
fn needle(comparison: &Comparison) -> Option<Vec<u8>> {
    let Field::Property(name) = &comparison.field else {
        return None;
    };
    if comparison.op != CompareOp::Eq {
        return None;
    }
    let value = match &comparison.literal {
        Literal::String(text) => Value::string(text.as_ref()).ok()?,
        Literal::Int32(n) => Value::Int32(*n),
        Literal::Int64(n) => Value::Int64(*n),
        Literal::Boolean(b) => Value::Boolean(*b),
        Literal::DateTime(instant) => Value::DateTime(*instant),
        Literal::Guid(guid) => Value::Guid(*guid),
        Literal::Binary(bytes) => Value::binary(bytes.to_vec()).ok()?,
        Literal::Double(_) => return None,
    };
    // The codec's own encoder writes the property, so the bytes are those a stored row holds.
    let mut entity = Entity::new(PartitionKey::new("p").ok()?, RowKey::new("r").ok()?);
    entity
        .set(PropertyName::new(name.as_ref()).ok()?, value)
        .ok()?;
    let encoded = property::encode(&entity);
    let start = PropertyReader::new(&encoded)
        .ok()?
        .iter()
        .next()?
        .ok()?
        .offset();
    encoded.get(start..).map(<[u8]>::to_vec)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::Prefilter;
    use crate::codec::property;
    use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
    use crate::query::{EncodedEntity, Filter};

    fn row(properties: &[(&str, Value)]) -> Vec<u8> {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        for (name, value) in properties {
            entity
                .set(PropertyName::new(*name).unwrap(), value.clone())
                .unwrap();
        }
        property::encode(&entity)
    }

    #[test]
    fn the_prefilter_never_rules_out_a_matching_row() {
        let rows = [
            row(&[("Group", Value::string("g1").unwrap())]),
            row(&[
                ("N", Value::Int32(7)),
                ("Group", Value::string("g1").unwrap()),
                ("Payload", Value::string("Group g1").unwrap()),
            ]),
            row(&[("Group", Value::string("g10").unwrap())]),
            row(&[("Group", Value::Int32(1))]),
            row(&[("group", Value::string("g1").unwrap())]),
            row(&[("Other", Value::string("g1").unwrap())]),
            row(&[("N", Value::Int64(7)), ("B", Value::Boolean(true))]),
            row(&[("N", Value::Int32(7)), ("D", Value::Double(-0.0))]),
        ];
        let filters = [
            "Group eq 'g1'",
            "Group eq 'g1' and N eq 7",
            "N eq 7L and B",
            "N eq 7 or Group eq 'g1'",
            "D eq 0.0",
            "Group ne 'g1'",
            "not (Group eq 'g2')",
        ];
        let mut ruled_out = 0;
        for text in filters {
            let filter = Filter::parse(text).unwrap();
            let prefilter = Prefilter::new(&filter);
            for bytes in &rows {
                let encoded = EncodedEntity {
                    partition_key: "p",
                    row_key: "r",
                    reader: property::PropertyReader::new(bytes).unwrap(),
                };
                let matches = filter.matches(&encoded).unwrap();
                let may = prefilter.may_match(bytes);
                assert!(may || !matches, "{text} ruled out a matching row");
                ruled_out += usize::from(!may);
            }
        }
        // The test is not vacuous: most rows fail `Group eq 'g1'` on their bytes alone.
        assert!(ruled_out >= 10, "{ruled_out}");
    }

    #[test]
    fn only_required_equalities_make_needles() {
        for (text, needles) in [
            ("Group eq 'g1'", 1),
            ("Group eq 'g1' and N eq 7 and M gt 3", 2),
            ("Group eq 'g1' or N eq 7", 0),
            ("D eq 1.5", 0),
            ("PartitionKey eq 'p'", 0),
            ("not (Group eq 'g1')", 0),
        ] {
            let prefilter = Prefilter::new(&Filter::parse(text).unwrap());
            assert_eq!(prefilter.needles.len(), needles, "{text}");
        }
    }
}
