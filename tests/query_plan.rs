//! The planner: each query kind of SPEC §6, the narrowest scope for key ranges, and the
//! residual left to evaluate.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::ops::Bound::{self, Excluded, Included, Unbounded};

use strata::query::{Filter, KeyScope, Plan, QueryKind};

fn plan(text: &str) -> Plan {
    Plan::new(Some(&Filter::parse(text).unwrap()))
}

fn residual(text: &str) -> Option<String> {
    plan(text).residual.map(|f| f.to_string())
}

fn s(b: Bound<&str>) -> Bound<String> {
    b.map(str::to_owned)
}

#[test]
fn no_filter_is_a_table_scan() {
    let plan = Plan::new(None);
    assert_eq!(plan.scope, KeyScope::Table);
    assert_eq!(plan.kind(), QueryKind::TableScan);
    assert!(plan.residual.is_none());
}

#[test]
fn point_query_from_both_keys() {
    let p = plan("PartitionKey eq 'p' and RowKey eq 'r'");
    assert_eq!(
        p.scope,
        KeyScope::Point {
            pk: "p".into(),
            rk: "r".into()
        }
    );
    assert_eq!(p.kind(), QueryKind::Point);
    assert!(p.residual.is_none());
    let p = plan("RowKey eq 'r' and Age gt 3 and PartitionKey eq 'p'");
    assert_eq!(p.kind(), QueryKind::Point);
    assert_eq!(
        residual("RowKey eq 'r' and Age gt 3 and PartitionKey eq 'p'").unwrap(),
        "Age gt 3"
    );
    assert_eq!(
        plan("'p' eq PartitionKey and ('r' eq RowKey)").kind(),
        QueryKind::Point
    );
}

#[test]
fn row_range_within_a_partition() {
    let p = plan("PartitionKey eq 'p' and RowKey ge 'a' and RowKey lt 'b'");
    assert_eq!(
        p.scope,
        KeyScope::RowRange {
            pk: "p".into(),
            start: s(Included("a")),
            end: s(Excluded("b"))
        }
    );
    assert_eq!(p.kind(), QueryKind::Range);
    assert!(p.residual.is_none());
    for (op, start, end) in [
        ("gt", Excluded("m"), Unbounded),
        ("ge", Included("m"), Unbounded),
        ("lt", Unbounded, Excluded("m")),
        ("le", Unbounded, Included("m")),
    ] {
        let p = plan(&format!("PartitionKey eq 'p' and RowKey {op} 'm'"));
        assert_eq!(
            p.scope,
            KeyScope::RowRange {
                pk: "p".into(),
                start: s(start),
                end: s(end)
            },
            "{op}"
        );
    }
}

#[test]
fn row_prefix_range_intersects_bounds() {
    // The "starts with 'ord'" idiom, with redundant bounds that the intersection drops.
    let p = plan(
        "PartitionKey eq 'p' and RowKey ge 'ord' and RowKey lt 'ore' and RowKey gt 'a' and RowKey le 'z'",
    );
    assert_eq!(
        p.scope,
        KeyScope::RowRange {
            pk: "p".into(),
            start: s(Included("ord")),
            end: s(Excluded("ore"))
        }
    );
    assert!(p.residual.is_none());
    // Equal bounds, one exclusive: the tighter wins.
    let p = plan("PartitionKey eq 'p' and RowKey ge 'a' and RowKey gt 'a'");
    assert_eq!(
        p.scope,
        KeyScope::RowRange {
            pk: "p".into(),
            start: s(Excluded("a")),
            end: Unbounded
        }
    );
}

#[test]
fn partition_scan_with_residual() {
    let p = plan("PartitionKey eq 'p' and Age gt 30");
    assert_eq!(p.scope, KeyScope::Partition { pk: "p".into() });
    assert_eq!(p.kind(), QueryKind::PartitionScan);
    assert_eq!(
        residual("PartitionKey eq 'p' and Age gt 30").unwrap(),
        "Age gt 30"
    );
    assert_eq!(plan("PartitionKey eq 'p'").kind(), QueryKind::PartitionScan);
    assert!(plan("PartitionKey eq 'p'").residual.is_none());
    // RowKey ne cannot narrow a range: partition scan, the ne stays in the residual.
    let p = plan("PartitionKey eq 'p' and RowKey ne 'r'");
    assert_eq!(p.kind(), QueryKind::PartitionScan);
    assert_eq!(
        residual("PartitionKey eq 'p' and RowKey ne 'r'").unwrap(),
        "RowKey ne 'r'"
    );
}

#[test]
fn partition_key_range_is_a_ranged_table_scan() {
    let p = plan("PartitionKey ge 'a' and PartitionKey lt 'c' and RowKey eq 'r'");
    assert_eq!(
        p.scope,
        KeyScope::PartitionRange {
            start: s(Included("a")),
            end: s(Excluded("c"))
        }
    );
    assert_eq!(p.kind(), QueryKind::TableScan);
    // The RowKey condition cannot be expressed across partitions: it stays.
    assert_eq!(
        residual("PartitionKey ge 'a' and PartitionKey lt 'c' and RowKey eq 'r'").unwrap(),
        "RowKey eq 'r'"
    );
}

#[test]
fn non_key_filter_is_a_full_table_scan() {
    for text in [
        "Age gt 3",
        "RowKey eq 'r'",
        "PartitionKey ne 'p'",
        "Timestamp gt datetime'2024-01-01T00:00:00.0000000Z'",
    ] {
        let p = plan(text);
        assert_eq!(p.scope, KeyScope::Table, "{text}");
        assert_eq!(p.residual.unwrap().to_string(), text);
    }
}

#[test]
fn contradiction_is_empty() {
    for text in [
        "PartitionKey eq 'a' and PartitionKey eq 'b'",
        "PartitionKey eq 'p' and RowKey gt 'b' and RowKey lt 'a'",
        "PartitionKey eq 'p' and RowKey gt 'a' and RowKey lt 'a'",
        "RowKey lt ''",
        "PartitionKey eq 5",
        "not (PartitionKey ge 'a') and PartitionKey ge 'b'",
    ] {
        let p = plan(text);
        assert_eq!(p.scope, KeyScope::Empty, "{text}");
        assert_eq!(p.kind(), QueryKind::Point);
        assert!(p.residual.is_none());
    }
}

#[test]
fn or_of_points_in_one_partition_widens_to_their_hull() {
    let text = "PartitionKey eq 'p' and (RowKey eq 'a' or RowKey eq 'c')";
    let p = plan(text);
    assert_eq!(
        p.scope,
        KeyScope::RowRange {
            pk: "p".into(),
            start: s(Included("a")),
            end: s(Included("c"))
        }
    );
    assert_eq!(
        p.residual.unwrap().to_string(),
        "RowKey eq 'a' or RowKey eq 'c'"
    );
    let text = "(PartitionKey eq 'p' and RowKey eq 'a') or (PartitionKey eq 'p' and RowKey eq 'b')";
    assert_eq!(plan(text).kind(), QueryKind::Range);
}

#[test]
fn or_across_partitions_widens_to_a_partition_range() {
    let p = plan("PartitionKey eq 'a' or PartitionKey eq 'c'");
    assert_eq!(
        p.scope,
        KeyScope::PartitionRange {
            start: s(Included("a")),
            end: s(Included("c"))
        }
    );
    assert!(p.residual.is_some());
    assert_eq!(
        plan("PartitionKey eq 'a' or Age eq 1").scope,
        KeyScope::Table
    );
}

#[test]
fn not_flips_key_comparisons() {
    let p = plan("not (PartitionKey ne 'p') and not (RowKey lt 'm')");
    assert_eq!(
        p.scope,
        KeyScope::RowRange {
            pk: "p".into(),
            start: s(Included("m")),
            end: Unbounded
        }
    );
    let p = plan("not (PartitionKey lt 'a' or PartitionKey gt 'c')");
    assert_eq!(
        p.scope,
        KeyScope::PartitionRange {
            start: s(Included("a")),
            end: s(Included("c"))
        }
    );
    assert_eq!(plan("not (Age eq 1)").scope, KeyScope::Table);
    assert_eq!(plan("not (PartitionKey eq 5)").scope, KeyScope::Table);
}

#[test]
fn scope_contains_agrees_with_bounds() {
    let scope = plan("PartitionKey eq 'p' and RowKey gt 'a' and RowKey le 'c'").scope;
    assert!(!scope.contains("p", "a"));
    assert!(scope.contains("p", "b"));
    assert!(scope.contains("p", "c"));
    assert!(!scope.contains("p", "ca"));
    assert!(!scope.contains("q", "b"));
    assert!(KeyScope::Table.contains("x", "y"));
    assert!(!KeyScope::Empty.contains("", ""));
}

#[test]
fn key_conditions_inside_parentheses_leave_the_residual() {
    let text = "(PartitionKey eq 'p' and (RowKey gt 'a')) and Age gt 1";
    assert_eq!(plan(text).kind(), QueryKind::Range);
    assert_eq!(residual(text).unwrap(), "Age gt 1");
}

#[test]
fn false_constant_plans_an_empty_scope() {
    for text in [
        "false",
        "not true",
        "PartitionKey eq 'p' and false",
        "false and Age gt 1",
        "(false or false) and RowKey eq 'r'",
        "not (true or Age gt 1)",
    ] {
        let p = plan(text);
        assert_eq!(p.scope, KeyScope::Empty, "{text}");
        assert!(p.residual.is_none(), "{text}");
        assert_eq!(p.kind(), QueryKind::Point, "{text}");
    }
}

#[test]
fn true_constant_plans_the_whole_table_without_residual() {
    for text in [
        "true",
        "not false",
        "Age gt 1 or true",
        "true and (false or true)",
    ] {
        let p = plan(text);
        assert_eq!(p.scope, KeyScope::Table, "{text}");
        assert!(p.residual.is_none(), "{text}");
    }
}

#[test]
fn constant_operands_drop_out_of_scope_and_residual() {
    let p = plan("PartitionKey eq 'p' and true and RowKey eq 'r'");
    assert_eq!(
        p.scope,
        KeyScope::Point {
            pk: "p".into(),
            rk: "r".into()
        }
    );
    assert!(p.residual.is_none());
    assert_eq!(
        plan("false or PartitionKey eq 'p'").scope,
        KeyScope::Partition { pk: "p".into() }
    );
    assert_eq!(
        residual("PartitionKey eq 'p' and (Age gt 1 or false)").as_deref(),
        Some("Age gt 1")
    );
    assert_eq!(
        residual("not (false or Age gt 1)").as_deref(),
        Some("not (Age gt 1)")
    );
}
