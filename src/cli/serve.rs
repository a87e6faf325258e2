//! `strata serve`: the Azure Table REST API on one database file.

use std::net::SocketAddr;

use strata::Account;
use strata::server::limits::{DEFAULT_ACCOUNT, DEFAULT_ADDR, DEFAULT_KEY};
use strata::server::{Auth, run_until_signal};

use super::CliError;

/// Default database file.
const DEFAULT_DB: &str = "./strata.db";

/// Runs `strata serve [--db FILE] [--addr HOST:PORT] [--account NAME --key BASE64]`.
pub fn run(args: &[String]) -> Result<(), CliError> {
    let mut db = DEFAULT_DB.to_owned();
    let mut addr = DEFAULT_ADDR.to_owned();
    let mut account = None;
    let mut key = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let mut value = || {
            rest.next()
                .cloned()
                .ok_or_else(|| CliError::Usage(format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--db" => db = value()?,
            "--addr" => addr = value()?,
            "--account" => account = Some(value()?),
            "--key" => key = Some(value()?),
            other => return Err(CliError::Usage(format!("unknown serve option '{other}'"))),
        }
    }
    let auth = match (account, key) {
        (None, None) => Auth::new(DEFAULT_ACCOUNT, DEFAULT_KEY),
        (Some(account), Some(key)) => Auth::new(&account, &key),
        _ => {
            return Err(CliError::Usage(
                "--account and --key must be given together".to_owned(),
            ));
        }
    }
    .map_err(|error| CliError::Usage(error.to_string()))?;
    let addr: SocketAddr = addr
        .parse()
        .map_err(|_| CliError::Usage(format!("--addr {addr:?} is not HOST:PORT")))?;
    let account =
        Account::open(&db).map_err(|error| CliError::Data(format!("cannot open {db}: {error}")))?;
    run_until_signal(account, auth, addr)
        .map_err(|error| CliError::Data(format!("cannot serve on {addr}: {error}")))
}
