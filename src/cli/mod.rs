//! Argument parsing and dispatch of the `strata` subcommands.

mod demo;
mod serve;

/// A failure of a subcommand, with the exit status it maps to.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line itself was wrong.
    #[error("{0}\n\n{USAGE}")]
    Usage(String),
    /// Data was invalid or failed to encode/decode.
    #[error("{0}")]
    Data(String),
}

impl CliError {
    /// Exit status: 2 for usage errors, 3 for data errors.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => 2,
            Self::Data(_) => 3,
        }
    }
}

const USAGE: &str = "usage: strata <command>

commands:
  demo     build an example entity, encode it with the key and property codecs, decode it and print it
  serve    serve the Azure Table REST API on a database file:
           strata serve [--db FILE] [--addr 127.0.0.1:10002] [--account NAME --key BASE64]
           (defaults: ./strata.db, the emulator account devstoreaccount1 and its key)
  help     print this help

example:
  strata demo";

/// Runs the subcommand named by `args[0]`.
pub fn run(args: &[String]) -> Result<(), CliError> {
    match args.first().map(String::as_str) {
        Some("demo") => demo::run(args.get(1..).unwrap_or_default()),
        Some("serve") => serve::run(args.get(1..).unwrap_or_default()),
        Some("help" | "--help" | "-h") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(CliError::Usage(format!("unknown command '{other}'"))),
        None => Err(CliError::Usage("no command given".to_owned())),
    }
}
