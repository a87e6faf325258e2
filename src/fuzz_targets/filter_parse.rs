//! Fuzz target: the `$filter` parser, printer, planner and evaluator.

use crate::model::{DateTime, Entity, PartitionKey, PropertyName, RowKey, Value};
use crate::query::{Filter, Plan, TableRow};

/// Parsing `data` (as UTF-8 text) never panics and an error's position lies within the text;
/// a filter that parses prints to text that parses back to an equal filter, and planning
/// and evaluating it never panic, with the plan agreeing with a direct evaluation.
pub fn filter_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let filter = match Filter::parse(text) {
        Ok(filter) => filter,
        Err(error) => {
            assert!(
                error.position <= text.len(),
                "error position {} past the end ({})",
                error.position,
                text.len()
            );
            let _ = error.to_string();
            return;
        }
    };
    let printed = filter.to_string();
    let reparsed = Filter::parse(&printed);
    assert_eq!(
        reparsed.as_ref(),
        Ok(&filter),
        "printed filter does not parse back"
    );
    let plan = Plan::new(Some(&filter));
    let entity = sample_entity();
    let direct = filter.matches(&entity).unwrap_or(false);
    let planned = plan.scope.contains("p", "r")
        && plan
            .residual
            .as_ref()
            .is_none_or(|residual| residual.matches(&entity).unwrap_or(false));
    assert_eq!(direct, planned, "plan disagrees with the filter");
    let _ = filter.matches(&TableRow("Customers"));
}

fn sample_entity() -> Entity {
    let mut entity = Entity::new(PartitionKey::default(), RowKey::default());
    if let (Ok(pk), Ok(rk)) = (PartitionKey::new("p"), RowKey::new("r")) {
        entity = Entity::new(pk, rk);
    }
    if let Ok(stamp) = DateTime::parse("2024-05-01T12:00:00Z") {
        entity.set_timestamp(stamp);
    }
    for (name, value) in [
        ("Age", Value::Int32(42)),
        ("Big", Value::Int64(1 << 40)),
        ("Price", Value::Double(1.5)),
        ("Name", Value::String("O'Brien".to_owned())),
        ("Flag", Value::Boolean(true)),
        ("Bin", Value::Binary(vec![0x0A, 0x1B])),
    ] {
        if let Ok(name) = PropertyName::new(name) {
            let _ = entity.set(name, value);
        }
    }
    entity
}
