//! Peer comparison: the same workload on strata, SQLite, redb and fjall, one child process per
//! engine (own peak RSS, no shared caches), printed as a markdown table of throughputs and ratios.
//!
//! ```text
//! cargo bench --bench peers -- [--entries N] [--engines strata,sqlite,redb,fjall] [--out FILE]
//! ```
//!
//! Other flags (defaults in `Args::default`): `--partitions`, `--batch`, `--value-bytes`,
//! `--fillsync`, `--fillbatchsync`, `--threads`, `--thread-writes`, `--reads`, `--missing`,
//! `--partition-scans`, `--seeks`, `--seek-length`, `--overwrites`, `--seed`, `--cache-mib`,
//! `--strata-zstd LEVEL` (strata's level-1+ block compression; 0 = none; default: the engine's),
//! `--dir` (where the temporary databases go; must not be tmpfs, or `Sync` means nothing).

#![deny(missing_docs)]
#![deny(clippy::unwrap_used, clippy::indexing_slicing)]

#[path = "peers/fjall_store.rs"]
mod fjall_store;
#[path = "peers/keys.rs"]
mod keys;
#[path = "peers/redb_store.rs"]
mod redb_store;
#[path = "peers/report.rs"]
mod report;
#[path = "peers/sqlite_store.rs"]
mod sqlite_store;
#[path = "peers/store.rs"]
mod store;
#[path = "peers/strata_store.rs"]
mod strata_store;
#[path = "peers/workload.rs"]
mod workload;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use store::{BenchResult, StoreOptions};
use workload::{Measurement, Workload};

/// Prefix of the one stdout line on which a child reports its measurements.
const RESULT_PREFIX: &str = "RESULT ";
/// Engines run when `--engines` is not given.
const DEFAULT_ENGINES: &str = "strata,sqlite,redb,fjall";

/// Parsed command line.
#[derive(Debug, Clone)]
struct Args {
    workload: Workload,
    engines: Vec<String>,
    out: Option<PathBuf>,
    dir: PathBuf,
    cache_mib: usize,
    strata_zstd: Option<i32>,
    child: Option<String>,
    /// The arguments as given, forwarded to children.
    raw: Vec<String>,
}

impl Default for Args {
    fn default() -> Self {
        Self {
            workload: Workload {
                entries: 1_000_000,
                partitions: 1_000,
                batch: 100,
                value_bytes: 180,
                fillsync: 5_000,
                fillbatchsync: 2_000,
                threads: 8,
                thread_writes: 1_000,
                reads: 500_000,
                missing: 200_000,
                partition_scans: 2_000,
                seeks: 20_000,
                seek_length: 1_000,
                overwrites: 1_000_000,
                seed: 0x5eed,
            },
            engines: DEFAULT_ENGINES.split(',').map(str::to_owned).collect(),
            out: None,
            dir: std::env::temp_dir(),
            cache_mib: 16,
            strata_zstd: None,
            child: None,
            raw: Vec::new(),
        }
    }
}

impl Args {
    fn store_options(&self) -> StoreOptions {
        StoreOptions {
            cache_bytes: self.cache_mib << 20,
            strata_zstd: self.strata_zstd,
        }
    }

    fn parse(raw: Vec<String>) -> BenchResult<Self> {
        let mut args = Self {
            raw: raw.clone(),
            ..Self::default()
        };
        let mut overwrites_given = false;
        let mut iter = raw.into_iter();
        while let Some(flag) = iter.next() {
            // cargo bench passes `--bench`; libtest-style filters are not used here.
            if flag == "--bench" {
                continue;
            }
            let value = iter
                .next()
                .ok_or_else(|| format!("flag {flag} needs a value"))?;
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|err| format!("{flag} {value:?}: {err}"))
            };
            let w = &mut args.workload;
            match flag.as_str() {
                "--entries" => w.entries = number()?,
                "--partitions" => w.partitions = number()?,
                "--batch" => w.batch = number()?,
                "--value-bytes" => w.value_bytes = usize::try_from(number()?)?,
                "--fillsync" => w.fillsync = number()?,
                "--fillbatchsync" => w.fillbatchsync = number()?,
                "--threads" => w.threads = number()?,
                "--thread-writes" => w.thread_writes = number()?,
                "--reads" => w.reads = number()?,
                "--missing" => w.missing = number()?,
                "--partition-scans" => w.partition_scans = number()?,
                "--seeks" => w.seeks = number()?,
                "--seek-length" => w.seek_length = number()?,
                "--overwrites" => {
                    w.overwrites = number()?;
                    overwrites_given = true;
                }
                "--seed" => w.seed = number()?,
                "--cache-mib" => args.cache_mib = usize::try_from(number()?)?,
                "--strata-zstd" => args.strata_zstd = Some(i32::try_from(number()?)?),
                "--engines" => args.engines = value.split(',').map(str::to_owned).collect(),
                "--out" => args.out = Some(PathBuf::from(value)),
                "--dir" => args.dir = PathBuf::from(value),
                "--child" => args.child = Some(value),
                other => return Err(format!("unknown flag {other:?}").into()),
            }
        }
        if !overwrites_given {
            // The overwrite phase rewrites as many keys as were loaded unless told otherwise.
            args.workload.overwrites = args.workload.entries;
        }
        args.workload.validate()?;
        Ok(args)
    }
}

fn main() -> BenchResult<()> {
    let args = Args::parse(std::env::args().skip(1).collect())?;
    match &args.child {
        Some(engine) => run_child(engine, &args),
        None => run_parent(&args),
    }
}

/// Runs the workload on `engine` in a fresh directory and prints one result line.
fn run_child(engine: &str, args: &Args) -> BenchResult<()> {
    let dir = tempfile::Builder::new()
        .prefix(&format!("peers-{engine}-"))
        .tempdir_in(&args.dir)?;
    let options = args.store_options();
    let measurements = {
        let mut store = store::open(engine, dir.path(), options)?;
        workload::run(store.as_mut(), dir.path(), &args.workload)?
    };
    let fields: Vec<String> = measurements
        .iter()
        .map(|m| format!("{}={}", m.name, m.value))
        .collect();
    println!("{RESULT_PREFIX}{}", fields.join(";"));
    Ok(())
}

/// Re-executes this binary once per engine and prints the comparison table.
fn run_parent(args: &Args) -> BenchResult<()> {
    let exe = std::env::current_exe()?;
    let mut columns = Vec::new();
    for engine in &args.engines {
        eprintln!("== {engine}");
        let started = Instant::now();
        let output = Command::new(&exe)
            .args(&args.raw)
            .args(["--child", engine])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .output()?;
        let seconds = started.elapsed().as_secs_f64();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let result = match stdout
            .lines()
            .find_map(|line| line.strip_prefix(RESULT_PREFIX))
        {
            Some(line) if output.status.success() => parse_result(line).map(|mut measurements| {
                measurements.push(Measurement {
                    name: "run_seconds".to_owned(),
                    value: seconds,
                });
                measurements
            }),
            _ => Err(format!("{engine} child failed ({})", output.status).into()),
        };
        if let Err(err) = &result {
            eprintln!("   {engine}: {err}");
        }
        columns.push(report::Column {
            engine: engine.clone(),
            result: result.map_err(|e| e.to_string()),
        });
    }
    let table = report::render(&args.workload, &args.store_options(), &columns);
    println!("{table}");
    if let Some(path) = &args.out {
        std::fs::write(path, &table)?;
    }
    Ok(())
}

fn parse_result(line: &str) -> BenchResult<Vec<Measurement>> {
    line.split(';')
        .map(|field| {
            let (name, value) = field
                .split_once('=')
                .ok_or_else(|| format!("bad result field {field:?}"))?;
            Ok(Measurement {
                name: name.to_owned(),
                value: value.parse()?,
            })
        })
        .collect()
}
