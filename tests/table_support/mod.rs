//! Shared fixtures of the table-layer integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::PathBuf;

use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
use strata::{Account, Options, Table};

/// A fresh account in a temporary directory (kept alive by the returned guard).
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub account: Account,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with_options(Options::default())
    }

    pub fn with_options(mut options: Options) -> Self {
        // Tests do not need fsync for correctness of logic; durability has its own tests.
        options.durability = strata::engine::Durability::Buffered;
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open_with(dir.path().join("db.strata"), options).unwrap();
        Self { dir, account }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("db.strata")
    }

    pub fn table(&self, name: &str) -> Table {
        self.account.create_table(name).unwrap();
        self.account.table(name).unwrap()
    }
}

/// An entity with these keys and properties.
pub fn entity(pk: &str, rk: &str, properties: &[(&str, Value)]) -> Entity {
    let mut entity = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
    for (name, value) in properties {
        entity
            .set(PropertyName::new(*name).unwrap(), value.clone())
            .unwrap();
    }
    entity
}

pub fn s(text: &str) -> Value {
    Value::string(text).unwrap()
}
