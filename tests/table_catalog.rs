//! SPEC §2–4: the catalog of tables, and the account clock across restarts and clock steps.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod table_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use strata::model::{DateTime, TableName, Value};
use strata::{Account, IfMatch, Options, Query, TableError, TableQuery, TimeSource};
use table_support::{Fixture, entity};

#[test]
fn table_name_lookup_is_case_insensitive_and_spelling_preserved() {
    let fx = Fixture::new();
    let created = fx.account.create_table("MyTable1").unwrap();
    assert_eq!(created.as_str(), "MyTable1");
    let t = fx.account.table("MYTABLE1").unwrap();
    t.insert(&entity("p", "r", &[])).unwrap();
    assert!(
        fx.account
            .table("mytable1")
            .unwrap()
            .get("p", "r", None)
            .is_ok()
    );
    let names: Vec<String> = fx
        .account
        .list_tables()
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect();
    assert_eq!(names, ["MyTable1"]);
}

#[test]
fn create_existing_table_in_any_case_is_table_already_exists() {
    let fx = Fixture::new();
    fx.account.create_table("Orders").unwrap();
    let err = fx.account.create_table("oRDERS").unwrap_err();
    assert!(
        matches!(err, TableError::TableAlreadyExists { .. }),
        "{err}"
    );
    assert_eq!(err.azure_code(), "TableAlreadyExists");
    assert_eq!(err.http_status(), 409);
}

#[test]
fn delete_missing_table_is_table_not_found() {
    let fx = Fixture::new();
    let err = fx.account.delete_table("Ghost").unwrap_err();
    assert_eq!(err.azure_code(), "TableNotFound");
    assert_eq!(err.http_status(), 404);
}

#[test]
fn table_name_reserved_tables_is_rejected() {
    let fx = Fixture::new();
    for name in ["tables", "Tables", "TABLES"] {
        let err = fx.account.create_table(name).unwrap_err();
        assert_eq!(err.http_status(), 400, "{name}");
        assert!(matches!(err, TableError::Model(_)), "{err}");
    }
}

#[test]
fn invalid_table_names_are_rejected() {
    let fx = Fixture::new();
    let long = format!("a{}", "b".repeat(63));
    // A bad character is InvalidResourceName; a bad length OutOfRangeInput, as the service.
    for (name, code) in [
        ("", "InvalidResourceName"),
        ("ab", "OutOfRangeInput"),
        ("1abc", "InvalidResourceName"),
        ("ab-c", "InvalidResourceName"),
        ("abc_d", "InvalidResourceName"),
        (long.as_str(), "OutOfRangeInput"),
        ("ünï", "InvalidResourceName"),
    ] {
        let err = fx.account.create_table(name).unwrap_err();
        assert_eq!(err.http_status(), 400, "{name:?}");
        assert_eq!(err.azure_code(), code, "{name:?}");
        assert!(fx.account.table(name).is_err());
    }
}

#[test]
fn recreated_table_starts_empty() {
    let fx = Fixture::new();
    let t = fx.table("Events");
    for i in 0..50 {
        t.insert(&entity("p", &format!("{i:03}"), &[])).unwrap();
    }
    fx.account.delete_table("events").unwrap();
    assert!(!fx.account.table_exists("Events"));
    fx.account.create_table("EVENTS").unwrap();
    assert!(t.query(&Query::default()).unwrap().entities.is_empty());
    assert_eq!(
        t.get("p", "000", None).unwrap_err().azure_code(),
        "ResourceNotFound"
    );
    let names: Vec<String> = fx
        .account
        .list_tables()
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect();
    assert_eq!(names, ["EVENTS"]);
}

#[test]
fn handle_of_deleted_table_reports_table_not_found() {
    let fx = Fixture::new();
    let t = fx.table("Gone");
    t.insert(&entity("p", "r", &[])).unwrap();
    fx.account.delete_table("Gone").unwrap();
    assert_eq!(
        t.insert(&entity("p", "s", &[])).unwrap_err().azure_code(),
        "TableNotFound"
    );
    assert_eq!(
        t.get("p", "r", None).unwrap_err().azure_code(),
        "TableNotFound"
    );
}

#[test]
fn list_tables_is_ordered_case_insensitively() {
    let fx = Fixture::new();
    for name in ["beta", "Alpha", "gamma", "Delta"] {
        fx.account.create_table(name).unwrap();
    }
    let names: Vec<String> = fx
        .account
        .list_tables()
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect();
    assert_eq!(names, ["Alpha", "beta", "Delta", "gamma"]);
}

#[test]
fn query_tables_filters_on_table_name() {
    let fx = Fixture::new();
    for name in ["apples", "Bananas", "cherries", "apricots"] {
        fx.account.create_table(name).unwrap();
    }
    let names = |filter: &str| -> Vec<String> {
        fx.account
            .query_tables(Some(filter))
            .unwrap()
            .iter()
            .map(|n| n.as_str().to_owned())
            .collect()
    };
    assert_eq!(names("TableName eq 'cherries'"), ["cherries"]);
    assert_eq!(
        names("TableName ge 'ap' and TableName lt 'aq'"),
        ["apples", "apricots"]
    );
    assert_eq!(names("TableName eq 'bananas'"), Vec::<String>::new());
    assert_eq!(fx.account.query_tables(None).unwrap().len(), 4);
    let err = fx.account.query_tables(Some("TableName eq")).unwrap_err();
    assert_eq!(err.azure_code(), "InvalidInput");
}

#[test]
fn catalog_survives_reopen_and_ids_are_not_reused() {
    let fx = Fixture::new();
    let path = fx.path();
    let Fixture { dir, account } = fx;
    account.create_table("Keep").unwrap();
    account.create_table("Drop").unwrap();
    account
        .table("Keep")
        .unwrap()
        .insert(&entity("p", "r", &[]))
        .unwrap();
    account
        .table("Drop")
        .unwrap()
        .insert(&entity("p", "old", &[]))
        .unwrap();
    account.delete_table("Drop").unwrap();
    drop(account);
    let account = Account::open(&path).unwrap();
    let names: Vec<String> = account
        .list_tables()
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect();
    assert_eq!(names, ["Keep"]);
    assert!(account.table("keep").unwrap().get("p", "r", None).is_ok());
    account.create_table("Drop").unwrap();
    let page = account
        .table("Drop")
        .unwrap()
        .query(&Query::default())
        .unwrap();
    assert!(page.entities.is_empty());
    drop(dir);
}

#[test]
fn read_only_account_reads_but_refuses_writes() {
    let fx = Fixture::new();
    let path = fx.path();
    let Fixture { dir, account } = fx;
    account.create_table("ReadOnly").unwrap();
    account
        .table("ReadOnly")
        .unwrap()
        .insert(&entity("p", "r", &[]))
        .unwrap();
    drop(account);
    let account = Account::open_read_only(&path).unwrap();
    let t = account.table("ReadOnly").unwrap();
    assert!(t.get("p", "r", None).is_ok());
    let err = t.insert(&entity("p", "s", &[])).unwrap_err();
    assert!(matches!(err, TableError::Engine(_)), "{err}");
    drop(dir);
}

/// A wall clock the test moves by hand.
#[derive(Debug)]
struct ManualClock(AtomicI64);

impl TimeSource for ManualClock {
    fn now(&self) -> DateTime {
        DateTime::from_ticks(self.0.load(Ordering::SeqCst)).unwrap()
    }
}

fn options_with(clock: &Arc<ManualClock>) -> Options {
    Options {
        time_source: Arc::clone(clock) as Arc<dyn TimeSource>,
        ..Options::default()
    }
}

#[test]
fn timestamp_advances_when_wall_clock_steps_backwards() {
    let start = DateTime::parse("2024-05-01T12:00:00Z").unwrap().ticks();
    let clock = Arc::new(ManualClock(AtomicI64::new(start)));
    let fx = Fixture::with_options(options_with(&clock));
    let t = fx.table("Clock");
    let first = t.insert(&entity("p", "r", &[])).unwrap();
    clock.0.store(start - 36_000_000_000, Ordering::SeqCst); // one hour back
    let mut last = first;
    for i in 0..10 {
        let next = t
            .replace(&entity("p", "r", &[("N", Value::Int32(i))]), IfMatch::Any)
            .unwrap();
        assert!(next.timestamp() > last.timestamp());
        last = next;
    }
}

#[test]
fn timestamp_advances_across_restart_with_clock_set_back() {
    let start = DateTime::parse("2024-05-01T12:00:00Z").unwrap().ticks();
    let clock = Arc::new(ManualClock(AtomicI64::new(start)));
    let fx = Fixture::with_options(options_with(&clock));
    let path = fx.path();
    let Fixture { dir, account } = fx;
    account.create_table("Clock").unwrap();
    let before = account
        .table("Clock")
        .unwrap()
        .insert(&entity("p", "r", &[]))
        .unwrap();
    drop(account);
    clock.0.store(start - 36_000_000_000, Ordering::SeqCst);
    let account = Account::open_with(&path, options_with(&clock)).unwrap();
    let after = account
        .table("Clock")
        .unwrap()
        .replace(&entity("p", "r", &[]), IfMatch::Any)
        .unwrap();
    assert!(after.timestamp() > before.timestamp());
    drop(dir);
}

#[test]
fn query_tables_page_pages_by_1000_with_next_table_name() {
    let fx = Fixture::new();
    let names: Vec<String> = (0..1005).map(|i| format!("T{i:05}")).collect();
    for name in &names {
        fx.account.create_table(name).unwrap();
    }
    let first = fx
        .account
        .query_tables_page(&TableQuery::default())
        .unwrap();
    assert_eq!(first.names.len(), 1000);
    assert_eq!(first.names[999].as_str(), "T00999");
    let next = first.next_table_name.unwrap();
    assert_eq!(next.as_str(), "T01000");
    // The token resumes case-insensitively, at the named table itself.
    let rest = fx
        .account
        .query_tables_page(&TableQuery {
            next_table_name: Some("t01000".to_owned()),
            ..TableQuery::default()
        })
        .unwrap();
    let rest: Vec<&str> = rest.names.iter().map(|n| n.as_str()).collect();
    assert_eq!(rest, &names[1000..]);
}

#[test]
fn query_tables_page_top_and_filter_apply_before_the_token() {
    let fx = Fixture::new();
    for name in ["apples", "Bananas", "cherries", "apricots", "avocados"] {
        fx.account.create_table(name).unwrap();
    }
    let mut query = TableQuery {
        filter: Some("TableName ge 'a' and TableName lt 'b'".to_owned()),
        top: Some(2),
        next_table_name: None,
        hidden: Vec::new(),
    };
    let page = fx.account.query_tables_page(&query).unwrap();
    let got: Vec<&str> = page.names.iter().map(|n| n.as_str()).collect();
    assert_eq!(got, ["apples", "apricots"]);
    query.next_table_name = page.next_table_name.map(|n| n.as_str().to_owned());
    assert_eq!(query.next_table_name.as_deref(), Some("avocados"));
    let page = fx.account.query_tables_page(&query).unwrap();
    assert_eq!(page.names.len(), 1);
    assert!(page.next_table_name.is_none());
}

#[test]
fn query_tables_page_rejects_zero_top_and_bad_token() {
    let fx = Fixture::new();
    let zero = TableQuery {
        top: Some(0),
        ..TableQuery::default()
    };
    let err = fx.account.query_tables_page(&zero).unwrap_err();
    assert_eq!(err.azure_code(), "OutOfRangeInput");
    let bad = TableQuery {
        next_table_name: Some("no spaces".to_owned()),
        ..TableQuery::default()
    };
    let err = fx.account.query_tables_page(&bad).unwrap_err();
    assert!(
        matches!(err, TableError::InvalidContinuationToken { .. }),
        "{err}"
    );
}

#[test]
fn query_tables_page_hidden_tables_are_never_counted_nor_named_as_token() {
    let fx = Fixture::new();
    for name in ["alpha", "Secret", "zulu"] {
        fx.account.create_table(name).unwrap();
    }
    let mut query = TableQuery {
        top: Some(1),
        hidden: vec![TableName::new("SECRET").unwrap()],
        ..TableQuery::default()
    };
    let page = fx.account.query_tables_page(&query).unwrap();
    let got: Vec<&str> = page.names.iter().map(|n| n.as_str()).collect();
    assert_eq!(got, ["alpha"]);
    // The hidden table sorts between the two: the token skips it.
    assert_eq!(
        page.next_table_name.as_ref().map(|n| n.as_str()),
        Some("zulu")
    );
    // Resuming at the hidden table itself still leaves it out.
    query.next_table_name = Some("secret".to_owned());
    let page = fx.account.query_tables_page(&query).unwrap();
    let got: Vec<&str> = page.names.iter().map(|n| n.as_str()).collect();
    assert_eq!(got, ["zulu"]);
    assert!(page.next_table_name.is_none());
    query.hidden.clear();
    let page = fx.account.query_tables_page(&query).unwrap();
    let got: Vec<&str> = page.names.iter().map(|n| n.as_str()).collect();
    assert_eq!(got, ["Secret"]);
}

#[test]
fn query_tables_page_false_filter_lists_nothing_and_true_lists_all() {
    let fx = Fixture::new();
    for name in ["alpha", "beta"] {
        fx.account.create_table(name).unwrap();
    }
    let page = |filter: &str| {
        fx.account
            .query_tables_page(&TableQuery {
                filter: Some(filter.to_owned()),
                ..TableQuery::default()
            })
            .unwrap()
            .names
            .len()
    };
    assert_eq!(page("false"), 0);
    assert_eq!(page("true"), 2);
    assert_eq!(page("TableName eq 'beta' or false"), 1);
}
