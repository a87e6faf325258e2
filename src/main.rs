//! The `strata` command line.

use std::process::ExitCode;

use clap::Parser;

mod cli;

fn main() -> ExitCode {
    let parsed = match cli::Cli::try_parse() {
        Ok(parsed) => parsed,
        Err(err) => {
            // clap exits 2 for usage errors and 0 for --help/--version, as documented.
            err.exit();
        }
    };
    match cli::run(parsed) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("strata: error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
