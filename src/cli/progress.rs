//! Progress bars on standard error (hidden automatically when it is not a terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// Template of a bar with a known total.
const BAR_TEMPLATE: &str = "{msg:>10} [{bar:40}] {human_pos}/{human_len} ({per_sec}, eta {eta})";
/// Template of a counter with no known total.
const SPINNER_TEMPLATE: &str = "{spinner} {msg} {human_pos} ({per_sec})";

/// A bar counting to `total`.
pub fn bar(total: u64, message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(total).with_message(message);
    if let Ok(style) = ProgressStyle::with_template(BAR_TEMPLATE) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// A counter for streams of unknown length.
pub fn counter(message: &'static str) -> ProgressBar {
    let bar = ProgressBar::no_length().with_message(message);
    if let Ok(style) = ProgressStyle::with_template(SPINNER_TEMPLATE) {
        bar.set_style(style);
    }
    bar
}
