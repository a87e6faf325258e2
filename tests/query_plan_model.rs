//! Model test of the planner: random filters (generated ASTs printed to text and parsed back)
//! over random heterogeneous entities. For every entity, "in the plan's scope and satisfies
//! the residual" must equal a brute-force evaluation of the whole filter, and the printed
//! text must parse back to a filter that agrees with the generated one.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use proptest::prelude::*;
use strata::codec::property::{self, PropertyReader};
use strata::model::{DateTime, Entity, Guid, PartitionKey, PropertyName, RowKey, Value};
use strata::query::{CompareOp, Comparison, EncodedEntity, Expr, Field, Filter, Literal, Plan};

/// Small alphabets so that random comparisons often hit equal, adjacent and prefix keys.
const PKS: &[&str] = &["", "a", "ab", "b", "c", "é"];
const RKS: &[&str] = &["", "0", "1", "10", "2", "x"];
const NAMES: &[&str] = &["A", "B", "C"];

fn datetime(i: i64) -> DateTime {
    DateTime::from_ticks(DateTime::parse("2024-01-01T00:00:00Z").unwrap().ticks() + i).unwrap()
}

fn guid(i: u8) -> Guid {
    let mut bytes = [0; 16];
    bytes[15] = i;
    bytes[0] = i / 2;
    Guid(bytes)
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-2..3_i32).prop_map(Value::Int32),
        (-2..3_i64).prop_map(Value::Int64),
        prop::sample::select(vec![-1.0, -0.0, 0.0, 1.5, f64::NAN, f64::INFINITY])
            .prop_map(Value::Double),
        any::<bool>().prop_map(Value::Boolean),
        prop::sample::select(vec!["", "a", "a'b", "b"]).prop_map(|s| Value::string(s).unwrap()),
        (0..3_i64).prop_map(|i| Value::DateTime(datetime(i))),
        (0..3_u8).prop_map(|i| Value::Guid(guid(i))),
        prop::sample::select(vec![vec![], vec![0], vec![0, 1], vec![1]])
            .prop_map(|b| Value::binary(b).unwrap()),
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        value().prop_map(|v| match v {
            Value::Int32(n) => Literal::Int32(n),
            Value::Int64(n) => Literal::Int64(n),
            Value::Double(d) => Literal::Double(d),
            Value::Boolean(b) => Literal::Boolean(b),
            Value::String(s) => Literal::String(s.into()),
            Value::DateTime(d) => Literal::DateTime(d),
            Value::Guid(g) => Literal::Guid(g),
            Value::Binary(b) => Literal::Binary(b.into()),
        }),
        prop::sample::select(PKS).prop_map(|s| Literal::String(s.into())),
        prop::sample::select(RKS).prop_map(|s| Literal::String(s.into())),
    ]
}

fn field() -> impl Strategy<Value = Field> {
    prop_oneof![
        3 => Just(Field::PartitionKey),
        3 => Just(Field::RowKey),
        1 => Just(Field::Timestamp),
        3 => prop::sample::select(vec!["A", "B", "C", "Missing"]).prop_map(Field::from_name),
    ]
}

fn key_literal(field: &Field) -> BoxedStrategy<Literal> {
    let keys = match field {
        Field::PartitionKey => PKS,
        Field::RowKey => RKS,
        _ => return literal().boxed(),
    };
    prop_oneof![
        4 => prop::sample::select(keys).prop_map(|s| Literal::String(s.into())),
        1 => literal(),
    ]
    .boxed()
}

fn comparison() -> impl Strategy<Value = Expr> {
    (field(), prop::sample::select(CompareOp::ALL.to_vec())).prop_flat_map(|(field, op)| {
        key_literal(&field).prop_map(move |literal| {
            Expr::Compare(Comparison {
                field: field.clone(),
                op,
                literal,
            })
        })
    })
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        12 => comparison(),
        1 => any::<bool>().prop_map(Expr::Const),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::And),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::Or),
            inner.prop_map(|e| Expr::Not(Box::new(e))),
        ]
    })
}

fn entity() -> impl Strategy<Value = Entity> {
    (
        prop::sample::select(PKS),
        prop::sample::select(RKS),
        prop::option::of(0..3_i64),
        prop::collection::vec(prop::option::of(value()), NAMES.len()),
    )
        .prop_map(|(pk, rk, stamp, values)| {
            let mut entity = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
            if let Some(i) = stamp {
                entity.set_timestamp(datetime(i));
            }
            for (name, value) in NAMES.iter().zip(values) {
                if let Some(value) = value {
                    entity
                        .set(PropertyName::new(*name).unwrap(), value)
                        .unwrap();
                }
            }
            entity
        })
}

/// The planner's answer for one entity: in scope and (if any) the residual holds, evaluated
/// in place on the encoded row as the engine will.
fn planned(plan: &Plan, entity: &Entity, bytes: &[u8]) -> bool {
    let row = EncodedEntity {
        partition_key: entity.partition_key().as_str(),
        row_key: entity.row_key().as_str(),
        reader: PropertyReader::new(bytes).unwrap(),
    };
    plan.scope.contains(row.partition_key, row.row_key)
        && plan
            .residual
            .as_ref()
            .is_none_or(|residual| residual.matches(&row).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn planner_scope_and_residual_equal_brute_force(
        expr in expr(),
        entities in prop::collection::vec(entity(), 1..40),
    ) {
        let generated = Filter::from_expr(expr);
        let text = generated.to_string();
        let parsed = Filter::parse(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(Filter::parse(&parsed.to_string()).unwrap(), parsed.clone(), "print/parse fixpoint");
        let plan = Plan::new(Some(&parsed));
        for entity in &entities {
            let expected = generated.matches(entity).unwrap();
            prop_assert_eq!(parsed.matches(entity).unwrap(), expected, "parsed {}", text);
            let bytes = property::encode(entity);
            prop_assert_eq!(
                planned(&plan, entity, &bytes),
                expected,
                "filter {} plan {:?} entity {:?}", text, plan, entity
            );
        }
    }
}
