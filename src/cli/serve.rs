//! `strata serve`: the Azure Table REST API on one database file.

use std::net::SocketAddr;

use strata::server::limits::{DEFAULT_ACCOUNT, DEFAULT_ADDR, DEFAULT_KEY};
use strata::server::{Auth, DEFAULT_IO_THREADS, run_until_signal};
use strata::{Account, Options as AccountOptions};

use super::CliError;

/// Default database file.
const DEFAULT_DB: &str = "./strata.db";

/// Largest `--cache-mib` / `--memtable-mib` accepted: beyond this a typo is likelier than intent.
const MAX_MIB: usize = 64 * 1024;

/// Block cache of a server unless `--cache-mib` says otherwise: half the engine's default,
/// which keeps peak RSS under 50 MiB at 100k entities with eight busy clients (54.8 MiB with
/// 16 MiB); the hot blocks of such a table still fit.
const DEFAULT_CACHE_MIB: usize = 8;

/// Most `--io-threads`.
const MAX_IO_THREADS: usize = 256;

/// The text of `strata serve --help`.
const HELP: &str = "\
Serve the Azure Table REST API on one database file.

Usage: strata serve [OPTIONS]

Options:
  --db FILE            database file (created if absent) [default: ./strata.db]
  --addr HOST:PORT     listening address [default: 127.0.0.1:10002]
  --account NAME       account name; requires --key [default: devstoreaccount1]
  --key BASE64         account key; requires --account [default: the emulator's key]
  --cache-mib N        block cache size in MiB [default: 8]
  --memtable-mib N     memtable size in MiB; up to three exist at once [default: the engine's, 4]
  --io-threads N       threads parsing and answering HTTP; table operations run on a separate
                       pool [default: 1]
  -h, --help           print this help

Peak memory is about the cache plus three memtables plus the pages being answered: with the
defaults, under 50 MiB at 100k entities and eight busy clients; lower both for a smaller server.

Example: strata serve --db ./strata.db --addr 127.0.0.1:10002";

/// Runs `strata serve [OPTIONS]` (see [`HELP`]).
pub fn run(args: &[String]) -> Result<(), CliError> {
    let mut db = DEFAULT_DB.to_owned();
    let mut addr = DEFAULT_ADDR.to_owned();
    let mut account = None;
    let mut key = None;
    let mut options = AccountOptions::default();
    options.engine.block_cache_bytes = DEFAULT_CACHE_MIB << 20;
    let mut io_threads = DEFAULT_IO_THREADS;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let mut value = || {
            rest.next()
                .cloned()
                .ok_or_else(|| CliError::Usage(format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "-h" | "--help" => {
                println!("{HELP}");
                return Ok(());
            }
            "--db" => db = value()?,
            "--addr" => addr = value()?,
            "--account" => account = Some(value()?),
            "--key" => key = Some(value()?),
            "--cache-mib" => {
                options.engine.block_cache_bytes = number(flag, &value()?, 0, MAX_MIB)? << 20;
            }
            "--memtable-mib" => {
                options.engine.memtable_bytes = number(flag, &value()?, 1, MAX_MIB)? << 20;
            }
            "--io-threads" => io_threads = number(flag, &value()?, 1, MAX_IO_THREADS)?,
            other => {
                return Err(CliError::Usage(format!(
                    "unknown serve option '{other}' (see strata serve --help)"
                )));
            }
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
    let account = Account::open_with(&db, options)
        .map_err(|error| CliError::Data(format!("cannot open {db}: {error}")))?;
    run_until_signal(account, auth, addr, io_threads)
        .map_err(|error| CliError::Data(format!("cannot serve on {addr}: {error}")))
}

/// The value of numeric option `flag`, within `min..=max`.
fn number(flag: &str, text: &str, min: usize, max: usize) -> Result<usize, CliError> {
    text.parse::<usize>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{flag} {text:?} is not a whole number from {min} to {max}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::{CliError, number, run};

    #[test]
    fn serve_numeric_flags_outside_their_range_are_usage_errors() {
        assert_eq!(number("--io-threads", "4", 1, 256).ok(), Some(4));
        for text in ["0", "257", "-1", "four", ""] {
            assert!(matches!(
                number("--io-threads", text, 1, 256),
                Err(CliError::Usage(message)) if message.contains("--io-threads")
            ));
        }
    }

    #[test]
    fn serve_unknown_or_valueless_flags_are_usage_errors() {
        for args in [
            &["--bogus"][..],
            &["--cache-mib"][..],
            &["--account", "a"][..],
        ] {
            let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
            assert!(matches!(run(&args), Err(CliError::Usage(_))), "{args:?}");
        }
    }
}
