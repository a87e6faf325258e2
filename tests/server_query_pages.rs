//! Query pages over HTTP when a page's scan outlasts the budget it may run on the I/O thread:
//! the page is finished on a worker from where it stopped, so the client gets the rows of
//! both parts in one page, the `$top` of the whole page, and one continuation token.
//!
//! The account's page time budget is zero, so every scan stops at its first budget check
//! (every 256 rows examined): the inline part, then the worker's part, each scan one check
//! interval. A page holding more rows than one interval holds proves the worker went on.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod server_support;

use std::time::{Duration, SystemTime};

use serde_json::Value as Json;
use server_support::{ACCOUNT, TestServer};
use strata::Options;
use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
const ROWS: i32 = 1000;
/// Rows a scan examines between two checks of its time budget (the table layer's
/// `BUDGET_CHECK_INTERVAL`).
const CHECK_INTERVAL: usize = 256;

struct Fixture {
    served: TestServer,
}

impl Fixture {
    /// A server over table `Items` of [`ROWS`] entities `N` = 0.., `Group` = `g{N % 10}`, in
    /// an account whose pages have no time budget.
    fn new() -> Self {
        let options = Options {
            page_time_budget: Duration::ZERO,
            durability: strata::engine::Durability::Buffered,
            ..Options::default()
        };
        let served = TestServer::start(options, |account| {
            account.create_table("Items").unwrap();
            let table = account.table("Items").unwrap();
            for chunk in 0..ROWS / 100 {
                let mut batch = table.batch("p").unwrap();
                for n in chunk * 100..chunk * 100 + 100 {
                    let mut entity = Entity::new(
                        PartitionKey::new("p").unwrap(),
                        RowKey::new(format!("{n:04}")).unwrap(),
                    );
                    entity
                        .set(PropertyName::new("N").unwrap(), Value::Int32(n))
                        .unwrap();
                    entity
                        .set(
                            PropertyName::new("Group").unwrap(),
                            Value::string(format!("g{}", n % 10)).unwrap(),
                        )
                        .unwrap();
                    batch.insert(entity);
                }
                batch.submit().unwrap();
            }
        });
        Self { served }
    }

    /// One signed `GET /Items()?{query}`: the `N` of each entity and the continuation
    /// (NextPartitionKey, NextRowKey) if any.
    fn page(&self, query: &str) -> (Vec<i64>, Option<(String, String)>) {
        let url = self.served.url(&format!("/Items()?{query}"));
        let date = httpdate::fmt_http_date(SystemTime::now());
        let message = format!("GET\n\n\n{date}\n/{ACCOUNT}/{ACCOUNT}/Items()");
        let response = ureq::get(&url)
            .set("x-ms-date", &date)
            .set("Authorization", &self.served.authorization(&message))
            .set("Accept", "application/json;odata=minimalmetadata")
            .call()
            .unwrap();
        let token = response
            .header("x-ms-continuation-NextPartitionKey")
            .map(str::to_owned)
            .zip(
                response
                    .header("x-ms-continuation-NextRowKey")
                    .map(str::to_owned),
            );
        let body: Json = serde_json::from_str(&response.into_string().unwrap()).unwrap();
        let rows = body["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entity| entity["N"].as_i64().unwrap())
            .collect();
        (rows, token)
    }

    /// Every page of `query`, following the tokens.
    fn pages(&self, query: &str) -> Vec<Vec<i64>> {
        let mut pages = Vec::new();
        let mut next: Option<(String, String)> = None;
        loop {
            let mut text = query.to_owned();
            if let Some((pk, rk)) = &next {
                text.push_str(&format!("&NextPartitionKey={pk}&NextRowKey={rk}"));
            }
            let (rows, token) = self.page(&text);
            pages.push(rows);
            match token {
                Some(token) => next = Some(token),
                None => return pages,
            }
        }
    }
}

#[test]
fn a_page_cut_by_the_inline_budget_holds_the_rows_the_worker_scanned_on() {
    let f = Fixture::new();
    let pages = f.pages("$filter=N%20ge%200");
    assert!(
        pages[0].len() > CHECK_INTERVAL,
        "the first page holds only the inline part: {} rows",
        pages[0].len()
    );
    let all: Vec<i64> = pages.concat();
    assert_eq!(all, (0..i64::from(ROWS)).collect::<Vec<_>>());
}

#[test]
fn a_resumed_page_stops_at_the_top_of_the_whole_page() {
    let f = Fixture::new();
    // 26 of the first 256 rows are in g0: the inline part pauses short of `$top`, and the
    // worker's part must add only the 4 rows left.
    let query = "$filter=Group%20eq%20%27g0%27&$top=30";
    let (first, token) = f.page(query);
    assert_eq!(first, (0..30).map(|n| n * 10).collect::<Vec<_>>());
    assert!(token.is_some());
    let all: Vec<i64> = f.pages(query).concat();
    assert_eq!(
        all,
        (0..i64::from(ROWS) / 10)
            .map(|n| n * 10)
            .collect::<Vec<_>>()
    );
}
