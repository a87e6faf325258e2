//! SPEC §6: queries, projections, `$top`, paging and continuation tokens, checked end to end
//! through an account against brute-force evaluation.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod table_support;

use std::time::Duration;

use proptest::prelude::*;
use strata::engine::Options as EngineOptions;
use strata::model::{Entity, RowKey, Value};
use strata::query::Filter;
use strata::table::limits;
use strata::{ContinuationToken, IfMatch, Options, Query, Table, TableError};
use table_support::{Fixture, entity, s};

fn keys(entities: &[strata::StoredEntity]) -> Vec<(String, String)> {
    entities
        .iter()
        .map(|e| {
            (
                e.entity.partition_key().as_str().to_owned(),
                e.entity.row_key().as_str().to_owned(),
            )
        })
        .collect()
}

fn filled(fx: &Fixture) -> Table {
    let t = fx.table("Items");
    for pk in ["a", "ab", "b"] {
        for rk in ["1", "2", "3", "10"] {
            let n: i32 = rk.parse().unwrap();
            t.insert(&entity(pk, rk, &[("N", Value::Int32(n)), ("Tag", s(pk))]))
                .unwrap();
        }
    }
    t
}

fn run(t: &Table, filter: &str) -> Vec<(String, String)> {
    keys(&t.query(&Query::filter(filter)).unwrap().entities)
}

#[test]
fn results_are_sorted_by_partition_key_then_row_key() {
    let fx = Fixture::new();
    let t = filled(&fx);
    let all = keys(&t.query(&Query::default()).unwrap().entities);
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted);
    assert_eq!(all.len(), 12);
    assert_eq!(all[0], ("a".into(), "1".into()));
    assert_eq!(all[3], ("a".into(), "3".into()));
    assert_eq!(all[4], ("ab".into(), "1".into()));
}

#[test]
fn point_query_returns_the_one_entity() {
    let fx = Fixture::new();
    let t = filled(&fx);
    assert_eq!(
        run(&t, "PartitionKey eq 'ab' and RowKey eq '2'"),
        [("ab".into(), "2".into())]
    );
    assert!(run(&t, "PartitionKey eq 'ab' and RowKey eq '9'").is_empty());
    assert!(run(&t, "PartitionKey eq 'ab' and RowKey eq '2' and N eq 3").is_empty());
}

#[test]
fn row_key_range_query_stays_in_its_partition() {
    let fx = Fixture::new();
    let t = filled(&fx);
    let got = run(
        &t,
        "PartitionKey eq 'a' and RowKey ge '10' and RowKey lt '3'",
    );
    assert_eq!(got, [("a".into(), "10".into()), ("a".into(), "2".into())]);
    let got = run(&t, "PartitionKey eq 'a' and RowKey gt '2'");
    assert_eq!(got, [("a".into(), "3".into())]);
}

#[test]
fn partition_scan_applies_the_residual_filter() {
    let fx = Fixture::new();
    let t = filled(&fx);
    let got = run(&t, "PartitionKey eq 'b' and N ge 3");
    assert_eq!(got, [("b".into(), "10".into()), ("b".into(), "3".into())]);
}

#[test]
fn partition_key_range_excludes_longer_keys_sharing_a_prefix() {
    let fx = Fixture::new();
    let t = filled(&fx);
    let got = run(&t, "PartitionKey le 'a'");
    assert_eq!(got.len(), 4);
    assert!(got.iter().all(|(pk, _)| pk == "a"));
    let got = run(&t, "PartitionKey gt 'a' and PartitionKey lt 'b'");
    assert_eq!(got.len(), 4);
    assert!(got.iter().all(|(pk, _)| pk == "ab"));
}

#[test]
fn table_scan_evaluates_typed_comparisons() {
    let fx = Fixture::new();
    let t = filled(&fx);
    assert_eq!(run(&t, "N eq 10").len(), 3);
    assert!(
        run(&t, "N eq 10L").is_empty(),
        "Int64 literal never matches Int32"
    );
    assert!(
        run(&t, "N eq '10'").is_empty(),
        "type mismatch never matches"
    );
    assert!(
        run(&t, "Missing ne 1").is_empty(),
        "missing property never matches"
    );
    assert_eq!(run(&t, "Tag eq 'ab' or N eq 1").len(), 6);
    assert_eq!(run(&t, "not (Tag eq 'ab')").len(), 8);
}

#[test]
fn contradiction_returns_nothing() {
    let fx = Fixture::new();
    let t = filled(&fx);
    assert!(run(&t, "PartitionKey eq 'a' and PartitionKey eq 'b'").is_empty());
}

#[test]
fn invalid_filter_is_invalid_input_with_position() {
    let fx = Fixture::new();
    let t = filled(&fx);
    let err = t.query(&Query::filter("N eq 'open")).unwrap_err();
    assert_eq!(err.azure_code(), "InvalidInput");
    assert_eq!(err.http_status(), 400);
    let TableError::InvalidFilter(inner) = err else {
        panic!("{err}")
    };
    assert_eq!(inner.position, 5);
}

#[test]
fn select_projects_properties_and_keeps_keys_and_timestamp() {
    let fx = Fixture::new();
    let t = filled(&fx);
    let query = Query {
        select: Some(vec!["Tag".into()]),
        ..Query::filter("PartitionKey eq 'a'")
    };
    let page = t.query(&query).unwrap();
    assert_eq!(page.entities.len(), 4);
    for e in &page.entities {
        assert_eq!(e.entity.properties().len(), 1);
        assert_eq!(e.entity.get("Tag"), Some(&s("a")));
        assert_eq!(e.entity.timestamp(), Some(e.etag.timestamp()));
    }
}

#[test]
fn top_limits_the_page_and_returns_a_token() {
    let fx = Fixture::new();
    let t = filled(&fx);
    let query = Query {
        top: Some(5),
        ..Query::default()
    };
    let page = t.query(&query).unwrap();
    assert_eq!(page.entities.len(), 5);
    let token = page.continuation.unwrap();
    assert_eq!(
        (
            token.next_partition_key.as_str(),
            token.next_row_key.as_str()
        ),
        ("ab", "10")
    );
    let zero = Query {
        top: Some(0),
        ..Query::default()
    };
    assert_eq!(t.query(&zero).unwrap_err().azure_code(), "OutOfRangeInput");
}

#[test]
fn page_holds_at_most_1000_entities() {
    let fx = Fixture::new();
    let t = fx.table("Many");
    for chunk in 0..12 {
        let mut batch = t.batch("p").unwrap();
        for i in 0..100 {
            batch.insert(entity("p", &format!("{:05}", chunk * 100 + i), &[]));
        }
        batch.submit().unwrap();
    }
    let page = t.query(&Query::default()).unwrap();
    assert_eq!(page.entities.len(), 1000);
    let next = Query {
        continuation: page.continuation,
        ..Query::default()
    };
    let page = t.query(&next).unwrap();
    assert_eq!(page.entities.len(), 200);
    assert!(page.continuation.is_none());
    let huge = Query {
        top: Some(5000),
        ..Query::default()
    };
    assert_eq!(t.query(&huge).unwrap().entities.len(), 1000);
    assert_eq!(t.query_all(Query::default()).count(), 1200);
}

#[test]
fn exhausted_time_budget_ends_the_page_early_and_paging_still_returns_everything() {
    let fx = Fixture::with_options(Options {
        page_time_budget: Duration::ZERO,
        ..Options::default()
    });
    let t = fx.table("Slow");
    for chunk in 0..10 {
        let mut batch = t.batch("p").unwrap();
        for i in 0..100 {
            let n = chunk * 100 + i;
            batch.insert(entity("p", &format!("{n:04}"), &[("N", Value::Int32(n))]));
        }
        batch.submit().unwrap();
    }
    let page = t.query(&Query::filter("N eq 999")).unwrap();
    assert!(page.entities.is_empty());
    assert!(
        page.continuation.is_some(),
        "an empty page with a token is legal"
    );
    let all: Vec<_> = t.query_all(Query::filter("N eq 999 or N eq 3")).collect();
    assert_eq!(all.len(), 2);
}

#[test]
fn continuation_token_is_valid_after_restart() {
    let fx = Fixture::new();
    let t = filled(&fx);
    let page = t
        .query(&Query {
            top: Some(7),
            ..Query::default()
        })
        .unwrap();
    let text = page.continuation.unwrap().to_string();
    let path = fx.path();
    drop(t);
    let Fixture { dir, account } = fx;
    drop(account);
    let account = strata::Account::open(&path).unwrap();
    let rest = account
        .table("Items")
        .unwrap()
        .query(&Query {
            continuation: Some(text.parse().unwrap()),
            ..Query::default()
        })
        .unwrap();
    assert_eq!(rest.entities.len(), 5);
    assert_eq!(keys(&rest.entities)[0], ("ab".into(), "3".into()));
    drop(dir);
}

#[test]
fn continuation_token_text_is_url_safe_and_rejects_garbage() {
    let token = ContinuationToken {
        next_partition_key: "ü/?".replace(['/', '?'], "x"),
        next_row_key: "row 1".into(),
    };
    let text = token.to_string();
    assert!(
        text.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "{text}"
    );
    for bad in ["", "!!", "AA", "AgAA", &"A".repeat(5000)] {
        let err = bad.parse::<ContinuationToken>().unwrap_err();
        assert_eq!(err.azure_code(), "InvalidInput", "{bad}");
    }
}

#[test]
fn continuation_token_with_invalid_keys_is_invalid_input() {
    let fx = Fixture::new();
    let t = filled(&fx);
    for (pk, rk) in [("a/b", "r"), ("p", "bad#"), (&*"k".repeat(600), "r")] {
        let token = ContinuationToken {
            next_partition_key: pk.to_owned(),
            next_row_key: rk.to_owned(),
        };
        let query = Query {
            continuation: Some(token.clone()),
            ..Query::default()
        };
        let err = t.query(&query).unwrap_err();
        assert!(
            matches!(err, TableError::InvalidContinuationToken { .. }),
            "{err}"
        );
        assert_eq!(err.azure_code(), "InvalidInput");
        assert!(token.to_string().parse::<ContinuationToken>().is_err());
    }
}

// ---- properties checked against brute force -------------------------------------------

const PKS: [&str; 4] = ["", "a", "ab", "b"];
const RKS: [&str; 5] = ["", "0", "1", "10", "x"];
const NAMES: [&str; 3] = ["A", "B", "C"];

fn value_strategy() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3_i32..3).prop_map(Value::Int32),
        (-3_i64..3).prop_map(Value::Int64),
        (-2_i32..2).prop_map(|n| Value::Double(f64::from(n) / 2.0)),
        any::<bool>().prop_map(Value::Boolean),
        prop::sample::select(vec!["", "a", "b", "ab"]).prop_map(|t| Value::string(t).unwrap()),
    ]
}

fn entity_strategy() -> impl Strategy<Value = Entity> {
    (
        prop::sample::select(PKS.to_vec()),
        prop::sample::select(RKS.to_vec()),
        prop::collection::vec(prop::option::of(value_strategy()), NAMES.len()),
    )
        .prop_map(|(pk, rk, values)| {
            let props: Vec<(&str, Value)> = NAMES
                .iter()
                .zip(values)
                .filter_map(|(name, value)| value.map(|v| (*name, v)))
                .collect();
            entity(pk, rk, &props)
        })
}

fn literal(value: &Value) -> String {
    match value {
        Value::Int32(n) => n.to_string(),
        Value::Int64(n) => format!("{n}L"),
        Value::Double(d) => format!("{d:.1}"),
        Value::Boolean(b) => b.to_string(),
        Value::String(t) => format!("'{t}'"),
        other => panic!("no literal for {other:?}"),
    }
}

fn comparison_strategy() -> impl Strategy<Value = String> {
    let op = prop::sample::select(vec!["eq", "ne", "gt", "ge", "lt", "le"]);
    let key = (
        prop::sample::select(vec!["PartitionKey", "RowKey"]),
        op.clone(),
        prop::sample::select(vec!["", "a", "ab", "b", "0", "1", "10", "x", "z"]),
    )
        .prop_map(|(field, op, text)| format!("{field} {op} '{text}'"));
    let property = (prop::sample::select(NAMES.to_vec()), op, value_strategy())
        .prop_map(|(name, op, value)| format!("{name} {op} {}", literal(&value)));
    prop_oneof![key, property]
}

fn filter_strategy() -> impl Strategy<Value = String> {
    comparison_strategy().prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) and ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) or ({b})")),
            inner.prop_map(|a| format!("not ({a})")),
        ]
    })
}

fn load(entities: &[Entity]) -> (Fixture, Table) {
    let fx = Fixture::new();
    let t = fx.table("Prop");
    for e in entities {
        t.insert_or_replace(e).unwrap();
    }
    (fx, t)
}

#[test]
fn residual_on_keys_inside_a_partition_reads_the_stored_keys() {
    let fx = Fixture::new();
    let t = filled(&fx);
    // The `or` keeps the key comparisons in the residual over an exact partition range.
    assert_eq!(
        run(&t, "PartitionKey eq 'ab' and (RowKey eq '2' or N eq 10)"),
        [
            ("ab".to_owned(), "10".to_owned()),
            ("ab".to_owned(), "2".to_owned())
        ]
    );
    assert_eq!(
        run(&t, "N ge 3 and (PartitionKey eq 'b' or RowKey eq '3')"),
        [
            ("a".to_owned(), "3".to_owned()),
            ("ab".to_owned(), "3".to_owned()),
            ("b".to_owned(), "10".to_owned()),
            ("b".to_owned(), "3".to_owned()),
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn planned_query_equals_brute_force_over_a_full_scan(
        entities in prop::collection::vec(entity_strategy(), 0..30),
        filters in prop::collection::vec(filter_strategy(), 1..8),
    ) {
        let (_fx, t) = load(&entities);
        let everything = t.query(&Query::default()).unwrap().entities;
        for text in filters {
            let filter = Filter::parse(&text).unwrap();
            let expected: Vec<_> = everything
                .iter()
                .filter(|e| filter.matches(&e.entity).unwrap())
                .cloned()
                .collect();
            let got = t.query(&Query::filter(text.clone())).unwrap();
            prop_assert!(got.continuation.is_none());
            prop_assert_eq!(got.entities, expected, "filter {}", text);
        }
    }

    #[test]
    fn paging_with_token_round_trips_returns_every_match_once_in_order(
        entities in prop::collection::vec(entity_strategy(), 0..30),
        filter in prop::option::of(filter_strategy()),
        top in 1_u32..6,
    ) {
        let (_fx, t) = load(&entities);
        let base = Query { filter: filter.clone(), ..Query::default() };
        let expected = t.query(&base).unwrap().entities;
        let mut got = Vec::new();
        let mut query = Query { top: Some(top), ..base };
        loop {
            let page = t.query(&query).unwrap();
            prop_assert!(page.entities.len() <= top as usize);
            got.extend(page.entities);
            match page.continuation {
                Some(token) => {
                    let text = token.to_string();
                    query.continuation = Some(text.parse().unwrap());
                }
                None => break,
            }
        }
        prop_assert_eq!(got, expected);
    }
}

#[test]
fn bare_boolean_property_filters_as_eq_true_through_the_planner() {
    let fx = Fixture::new();
    let t = fx.table("Flags");
    for (pk, rk, active) in [
        ("p", "1", Some(true)),
        ("p", "2", Some(false)),
        ("p", "3", None),
    ] {
        let mut properties = vec![("Count", Value::Int32(rk.parse().unwrap()))];
        if let Some(flag) = active {
            properties.push(("IsActive", Value::Boolean(flag)));
        }
        t.insert(&entity(pk, rk, &properties)).unwrap();
    }
    t.insert(&entity("q", "1", &[("IsActive", Value::Boolean(true))]))
        .unwrap();
    let pair = |pk: &str, rk: &str| (pk.to_owned(), rk.to_owned());
    assert_eq!(run(&t, "IsActive"), [pair("p", "1"), pair("q", "1")]);
    assert_eq!(run(&t, "not IsActive"), [pair("p", "2"), pair("p", "3")]);
    assert_eq!(
        run(&t, "PartitionKey eq 'q' and IsActive"),
        [pair("q", "1")]
    );
    assert_eq!(run(&t, "IsActive and Count gt 0"), [pair("p", "1")]);
    assert!(run(&t, "IsActive and Count gt 5").is_empty());
}

/// Rows `d000000..d099999` of one partition, all deleted but every 25,000th, then five live
/// rows after them: the page loop must look at its clock inside the run of tombstones.
fn mostly_deleted(fx: &Fixture) -> (Table, Vec<(String, String)>) {
    const DELETED_RUN: usize = 100_000;
    let t = fx.table("Sparse");
    let row = |n: usize| format!("d{n:06}");
    let kept = |n: usize| n % 25_000 == 12_345;
    for chunk in 0..DELETED_RUN / 100 {
        let mut batch = t.batch("p").unwrap();
        for n in chunk * 100..(chunk + 1) * 100 {
            let number = i32::try_from(n).unwrap();
            batch.insert(entity("p", &row(n), &[("N", Value::Int32(number))]));
        }
        batch.submit().unwrap();
    }
    for chunk in 0..DELETED_RUN / 100 {
        let mut batch = t.batch("p").unwrap();
        for n in (chunk * 100..(chunk + 1) * 100).filter(|&n| !kept(n)) {
            batch.delete(RowKey::new(row(n)).unwrap(), IfMatch::Any);
        }
        batch.submit().unwrap();
    }
    let mut live: Vec<_> = (0..DELETED_RUN)
        .filter(|&n| kept(n))
        .map(|n| ("p".to_owned(), row(n)))
        .collect();
    for n in 0..5 {
        t.insert(&entity("p", &format!("z{n}"), &[("N", Value::Int32(n))]))
            .unwrap();
        live.push(("p".to_owned(), format!("z{n}")));
    }
    (t, live)
}

/// With a zero time budget a page ends at its first look at the clock, which must come
/// within one check interval of visited entries, deleted ones included; following the
/// tokens then returns every live row exactly once.
fn check_deleted_run_pauses(t: &Table, live: &[(String, String)]) {
    for query in [Query::default(), Query::filter("N ge 0")] {
        let page = t.query(&query).unwrap();
        assert!(
            page.entities.is_empty(),
            "{query:?}: {:?}",
            keys(&page.entities)
        );
        let token = page
            .continuation
            .expect("a page cut inside the deleted run");
        let visited: usize = token.next_row_key[1..].parse().unwrap();
        let interval = usize::try_from(limits::BUDGET_CHECK_INTERVAL).unwrap();
        assert!(
            visited <= interval,
            "{query:?}: the page ended {visited} rows into the deleted run"
        );
        let all: Vec<_> = t.query_all(query.clone()).map(Result::unwrap).collect();
        assert_eq!(keys(&all), live, "{query:?}");
    }
}

#[test]
fn a_page_over_a_run_of_deleted_rows_ends_within_one_budget_check_interval() {
    let fx = Fixture::with_options(Options {
        page_time_budget: Duration::ZERO,
        engine: EngineOptions {
            // Tombstones and the rows they delete stay in the memtable, then in one SST.
            memtable_bytes: 256 << 20,
            background_compaction: false,
            ..EngineOptions::default()
        },
        ..Options::default()
    });
    let (t, live) = mostly_deleted(&fx);
    check_deleted_run_pauses(&t, &live);
    fx.account.engine().flush().unwrap();
    check_deleted_run_pauses(&t, &live);
}
