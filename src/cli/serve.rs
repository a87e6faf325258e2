//! `strata serve`: the slot the REST server (src/server/, branch `server`) fills in.

use super::CliError;

/// Runs `strata serve ARGS`; this build has no server module.
pub fn run(_args: &[String]) -> Result<(), CliError> {
    Err(CliError::Usage(
        "this build of strata has no REST server; build from main once the server is merged"
            .to_owned(),
    ))
}
