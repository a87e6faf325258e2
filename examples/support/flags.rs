//! The `--flag value` command lines of the examples.

/// The `--flag value` pairs of this process's arguments, in order.
///
/// # Errors
/// A last flag without its value.
pub fn flag_pairs() -> Result<Vec<(String, String)>, String> {
    let mut args = std::env::args().skip(1);
    let mut pairs = Vec::new();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        pairs.push((flag, value));
    }
    Ok(pairs)
}

/// The error of a flag the example does not take.
pub fn unknown_flag(flag: &str) -> Box<dyn std::error::Error> {
    format!("unknown flag {flag}").into()
}
