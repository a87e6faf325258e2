//! The markdown comparison table.

use std::fmt::Write as _;

use crate::store::StoreOptions;
use crate::workload::{Measurement, Workload};

/// Engine whose column is compared against the best peer.
const SUBJECT: &str = "strata";

/// Which direction of a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Higher,
    Lower,
    /// A reference figure about the machine, not the engine: no ratio.
    Neither,
}

/// One row: a measurement name, how to label it, its unit and which way is better.
struct Row {
    key: &'static str,
    label: String,
    unit: &'static str,
    better: Better,
}

/// The results of one engine, or why it has none.
#[derive(Debug)]
pub struct Column {
    /// Engine name.
    pub engine: String,
    /// Its measurements, or the error that stopped its child.
    pub result: Result<Vec<Measurement>, String>,
}

impl Column {
    fn get(&self, key: &str) -> Option<f64> {
        let measurements = self.result.as_ref().ok()?;
        if key == SPEEDUP {
            return Some(find(measurements, "fillsync_threads")? / find(measurements, "fillsync")?);
        }
        find(measurements, key)
    }
}

/// Key of the derived row: multi-thread over single-thread `Sync` write throughput.
const SPEEDUP: &str = "sync_speedup";

fn find(measurements: &[Measurement], key: &str) -> Option<f64> {
    measurements.iter().find(|m| m.name == key).map(|m| m.value)
}

fn rows(w: &Workload) -> Vec<Row> {
    let row = |key, label: String, unit, better| Row {
        key,
        label,
        unit,
        better,
    };
    use Better::{Higher, Lower, Neither};
    vec![
        row(
            "load_average",
            "machine: 1-minute load average at start (2 cores)".to_owned(),
            "load",
            Neither,
        ),
        row(
            "fsync_probe",
            "machine: 4 KiB append + fdatasync, before the run".to_owned(),
            "ops/s",
            Neither,
        ),
        row(
            "fillrandom",
            format!(
                "fillrandom ({}-entry batches, Buffered, + final sync)",
                w.batch
            ),
            "entries/s",
            Higher,
        ),
        row(
            "fillsync",
            "fillsync (single Sync writes)".to_owned(),
            "ops/s",
            Higher,
        ),
        row(
            "fillbatchsync",
            format!("fillbatchsync ({}-entry Sync batches)", w.batch),
            "entries/s",
            Higher,
        ),
        row(
            "fillsync_threads",
            format!("fillsync-{}threads (single Sync writes)", w.threads),
            "ops/s",
            Higher,
        ),
        row(
            SPEEDUP,
            format!("{}-thread / 1-thread Sync throughput", w.threads),
            "x",
            Higher,
        ),
        row(
            "readrandom",
            "readrandom (present keys, warm)".to_owned(),
            "ops/s",
            Higher,
        ),
        row(
            "readmissing",
            "readmissing (absent keys in live partitions)".to_owned(),
            "ops/s",
            Higher,
        ),
        row(
            "scanpartition",
            format!("scanpartition ({} entries each)", w.entries / w.partitions),
            "scans/s",
            Higher,
        ),
        row(
            "seekrandom",
            format!("seekrandom+readnext-{}", w.seek_length),
            "scans/s",
            Higher,
        ),
        row(
            "readseq",
            "readseq (one full scan)".to_owned(),
            "entries/s",
            Higher,
        ),
        row(
            "overwrite",
            "overwrite (random keys, single Buffered writes, + final sync)".to_owned(),
            "ops/s",
            Higher,
        ),
        row(
            "size_after_load",
            "disk space after load (allocated blocks)".to_owned(),
            "MiB",
            Lower,
        ),
        row(
            "size_after_overwrite",
            "disk space after overwrite".to_owned(),
            "MiB",
            Lower,
        ),
        row(
            "compact_seconds",
            "full compaction (strata compact / fjall major_compact / redb compact / SQLite VACUUM)"
                .to_owned(),
            "s",
            Lower,
        ),
        row(
            "size_after_compact",
            "disk space after full compaction".to_owned(),
            "MiB",
            Lower,
        ),
        row("peak_rss", "peak RSS (VmHWM)".to_owned(), "MiB", Lower),
        row(
            "run_seconds",
            "whole run (wall clock)".to_owned(),
            "s",
            Lower,
        ),
    ]
}

/// Renders the table: one row per workload, one column per engine, then strata / best peer.
pub fn render(w: &Workload, options: &StoreOptions, columns: &[Column]) -> String {
    let cache_mib = options.cache_bytes >> 20;
    let strata = match options.strata_zstd {
        None => "strata default options".to_owned(),
        Some(0) => "strata with uncompressed level-1+ blocks".to_owned(),
        Some(level) => format!("strata with zstd level {level} blocks"),
    };
    let mut out = String::new();
    let live_mib = (w.entries * (crate::keys::KEY_BYTES as u64 + w.value_bytes as u64)) as f64
        / f64::from(1u32 << 20);
    let _ = writeln!(
        out,
        "{} entries ({} partitions, {}-byte keys, {}-byte values, {live_mib:.1} MiB of key+value bytes), \
         cache {cache_mib} MiB per engine, {strata}, seed {}.\n",
        w.entries,
        w.partitions,
        crate::keys::KEY_BYTES,
        w.value_bytes,
        w.seed
    );
    let _ = write!(out, "| workload | unit |");
    for column in columns {
        let _ = write!(out, " {} |", column.engine);
    }
    let _ = writeln!(out, " {SUBJECT} / best peer |");
    let _ = writeln!(out, "|---|---|{}---:|", "---:|".repeat(columns.len()));
    for row in rows(w) {
        let _ = write!(out, "| {} | {} |", row.label, row.unit);
        for column in columns {
            match (&column.result, column.get(row.key)) {
                (Err(_), _) => out.push_str(" failed |"),
                (Ok(_), None) => out.push_str(" — |"),
                (Ok(_), Some(value)) => {
                    let _ = write!(out, " {} |", format_value(value, row.unit));
                }
            }
        }
        let _ = writeln!(out, " {} |", ratio(&row, columns));
    }
    for column in columns {
        if let Err(err) = &column.result {
            let _ = writeln!(out, "\n{}: {err}", column.engine);
        }
    }
    out
}

/// strata over the best peer, oriented so that >= 1.0 means strata is ahead.
fn ratio(row: &Row, columns: &[Column]) -> String {
    let subject = columns
        .iter()
        .find(|c| c.engine == SUBJECT)
        .and_then(|c| c.get(row.key));
    let peers = columns
        .iter()
        .filter(|c| c.engine != SUBJECT)
        .filter_map(|c| c.get(row.key));
    let best = match row.better {
        Better::Higher => peers.fold(None, |best: Option<f64>, v| {
            Some(best.map_or(v, |b| b.max(v)))
        }),
        Better::Lower => peers.fold(None, |best: Option<f64>, v| {
            Some(best.map_or(v, |b| b.min(v)))
        }),
        Better::Neither => None,
    };
    match (subject, best) {
        (Some(s), Some(b)) if s > 0.0 && b > 0.0 => {
            let r = if row.better == Better::Higher {
                s / b
            } else {
                b / s
            };
            format!("{r:.2}")
        }
        _ => "—".to_owned(),
    }
}

fn format_value(value: f64, unit: &str) -> String {
    match unit {
        "MiB" | "s" | "x" | "load" => format!("{value:.1}"),
        _ => group_thousands(value.round() as u64),
    }
}

fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
