//! How long one query page holds its thread when it meets a run of deleted rows: loads
//! `--rows` rows of one partition, deletes all of them, adds a few live rows after them, then
//! times a page of a whole-table query given the server's inline budget
//! (`INLINE_QUERY_BUDGET`, the most a lone page may hold the HTTP I/O thread) and a page
//! given the service's 5 s budget, with the rows in the memtable and again after a flush.
//!
//! ```sh
//! cargo run --release --example deleted_run_page -- [--rows 200000] [--rounds 5] [--dir /var/tmp]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use strata::engine::Durability;
use strata::model::{Entity, PartitionKey, RowKey};
use strata::server::limits::INLINE_QUERY_BUDGET;
use strata::{Account, IfMatch, Options, Query, Table, TableError};

#[path = "support/flags.rs"]
mod flags;

use flags::{flag_pairs, unknown_flag};

/// Operations per batch (the service's most).
const BATCH: usize = 100;
/// Live rows after the deleted run.
const LIVE_ROWS: usize = 5;

/// CPU time of the calling thread, in milliseconds: on a loaded machine the wall clock also
/// counts the time the thread waited for a core.
fn thread_cpu_ms() -> f64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `time` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut time) };
    time.tv_sec as f64 * 1e3 + time.tv_nsec as f64 / 1e6
}

/// How long one page of a whole-table query given `budget` took (wall and thread CPU
/// milliseconds), and how many rows it returned.
fn page(table: &Table, budget: Duration) -> Result<(f64, f64, usize), TableError> {
    let mut rows = 0;
    let (started, cpu) = (Instant::now(), thread_cpu_ms());
    table.query_rows_within(&Query::default(), budget, |_| {
        rows += 1;
        Ok::<(), TableError>(())
    })?;
    let wall = started.elapsed().as_secs_f64() * 1e3;
    Ok((wall, thread_cpu_ms() - cpu, rows))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut rows, mut rounds) = (200_000usize, 5usize);
    let mut dir = PathBuf::from("/var/tmp");
    for (flag, value) in flag_pairs()? {
        match flag.as_str() {
            "--rows" => rows = value.parse()?,
            "--rounds" => rounds = value.parse()?,
            "--dir" => dir = PathBuf::from(value),
            _ => return Err(unknown_flag(&flag)),
        }
    }
    let path = dir.join(format!("deleted_run_page-{}.strata", std::process::id()));
    let mut options = Options {
        durability: Durability::Buffered,
        ..Options::default()
    };
    // Every row and tombstone stays in the memtable until the explicit flush, and no
    // compaction drops the tombstones.
    options.engine.memtable_bytes = 512 << 20;
    options.engine.background_compaction = false;
    let account = Account::open_with(&path, options)?;
    account.create_table("Sparse")?;
    let table = account.table("Sparse")?;
    let row = |n: usize| RowKey::new(format!("d{n:08}"));
    for from in (0..rows).step_by(BATCH) {
        let mut batch = table.batch("p")?;
        for n in from..(from + BATCH).min(rows) {
            batch.insert(Entity::new(PartitionKey::new("p")?, row(n)?));
        }
        batch.submit()?;
    }
    for from in (0..rows).step_by(BATCH) {
        let mut batch = table.batch("p")?;
        for n in from..(from + BATCH).min(rows) {
            batch.delete(row(n)?, IfMatch::Any);
        }
        batch.submit()?;
    }
    for n in 0..LIVE_ROWS {
        table.insert(&Entity::new(
            PartitionKey::new("p")?,
            RowKey::new(format!("z{n}"))?,
        ))?;
    }
    for place in ["memtable", "one SST"] {
        if place == "one SST" {
            account.engine().flush()?;
        }
        for round in 1..=rounds {
            let (wall, cpu, returned) = page(&table, INLINE_QUERY_BUDGET)?;
            let (whole_wall, whole_cpu, whole_returned) = page(&table, Duration::from_secs(5))?;
            println!(
                "{place} round {round}: {rows} deleted rows; inline budget {INLINE_QUERY_BUDGET:?}: \
                 {wall:.2} ms wall, {cpu:.2} ms CPU, {returned} rows; 5 s budget: \
                 {whole_wall:.2} ms wall, {whole_cpu:.2} ms CPU, {whole_returned} rows"
            );
        }
    }
    drop(table);
    drop(account);
    std::fs::remove_file(&path)?;
    Ok(())
}
