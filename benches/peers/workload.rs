//! The workload every engine runs, phase by phase, in one child process per engine.

use std::cell::Cell;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Instant;

use crate::keys::{KeySpace, MAX_PARTITIONS, SplitMix64, table_start};
use crate::store::{BenchResult, Durability, KvStore};

/// Table of the bulk-loaded entries, read by every read phase and overwritten at the end.
const LOADED: u32 = 1;
/// Table of the `fillsync` entries.
const FILLSYNC: u32 = 2;
/// Table of the `fillbatchsync` entries.
const FILLBATCHSYNC: u32 = 3;
/// Table of the `fillsync-8threads` entries.
const FILLSYNC_THREADS: u32 = 4;

/// Unit of `st_blocks`, fixed by POSIX regardless of the file system's block size.
const BLOCK_UNIT: u64 = 512;

/// Appends of the fsync probe.
const PROBE_SYNCS: u64 = 200;
/// Bytes of each probe append.
const PROBE_WRITE_BYTES: usize = 4096;

/// Sizes of every phase; the same for every engine.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Entries bulk-loaded into table 1.
    pub entries: u64,
    /// Partitions they are spread over.
    pub partitions: u64,
    /// Entries per write batch (load and `fillbatchsync`).
    pub batch: u64,
    /// Bytes of each value.
    pub value_bytes: usize,
    /// Single `Sync` writes of `fillsync`.
    pub fillsync: u64,
    /// `Sync` batches of `fillbatchsync`.
    pub fillbatchsync: u64,
    /// Writer threads of `fillsync-8threads`.
    pub threads: u64,
    /// Single `Sync` writes per writer thread.
    pub thread_writes: u64,
    /// Random gets of present keys.
    pub reads: u64,
    /// Random gets of absent keys.
    pub missing: u64,
    /// Whole-partition scans.
    pub partition_scans: u64,
    /// Scans from random start keys.
    pub seeks: u64,
    /// Entries read by each of those scans.
    pub seek_length: u64,
    /// Single `Buffered` overwrites of random loaded keys.
    pub overwrites: u64,
    /// Seed of every random choice.
    pub seed: u64,
}

impl Workload {
    /// Checks the sizes fit the key layout; names the offending flag.
    pub fn validate(&self) -> BenchResult<()> {
        if self.partitions == 0 || self.partitions > MAX_PARTITIONS {
            return Err(format!(
                "--partitions {} must be in 1..={MAX_PARTITIONS}",
                self.partitions
            )
            .into());
        }
        if self.entries == 0 || !self.entries.is_multiple_of(self.partitions) {
            return Err(format!(
                "--entries {} must be a positive multiple of --partitions {}",
                self.entries, self.partitions
            )
            .into());
        }
        let rows = self.entries / self.partitions;
        if self.batch == 0 || !rows.is_multiple_of(self.batch) {
            return Err(format!(
                "--batch {} must divide the {rows} rows of a partition",
                self.batch
            )
            .into());
        }
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        Ok(())
    }

    /// Entries every engine holds after all fill phases.
    const fn total_entries(&self) -> u64 {
        self.entries
            + self.fillsync
            + self.fillbatchsync * self.batch
            + self.threads * self.thread_writes
    }
}

/// One measured figure of one engine.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Row name (db_bench vocabulary where it matches).
    pub name: String,
    /// The figure, in the row's unit.
    pub value: f64,
}

/// Runs every phase of `workload` on `store`, whose files live in `dir`.
pub fn run(
    store: &mut dyn KvStore,
    dir: &Path,
    workload: &Workload,
) -> BenchResult<Vec<Measurement>> {
    let keys = KeySpace::new(
        workload.entries / workload.partitions,
        workload.value_bytes,
        workload.seed,
    );
    let mut rng = SplitMix64::new(workload.seed);
    let mut out = Vec::new();
    let trace_memory = std::env::var_os(TRACE_MEMORY_ENV).is_some();
    let mut record = |name: &str, value: f64| {
        eprintln!("  {name:<28} {value:>14.1}");
        if trace_memory {
            eprintln!("    memory after {name}: {}", memory_status());
        }
        out.push(Measurement {
            name: name.to_owned(),
            value,
        });
    };

    record("load_average", load_average()?);
    record("fsync_probe", fsync_probe(dir)?);

    let started = Instant::now();
    fill_random(store, &keys, workload, &mut rng)?;
    store.sync()?;
    record("fillrandom", rate(workload.entries, started));
    record("size_after_load", mib(dir_bytes(dir)?));

    let started = Instant::now();
    for index in 0..workload.fillsync {
        write_entries(store, &keys, FILLSYNC, index, 1, Durability::Sync)?;
    }
    record("fillsync", rate(workload.fillsync, started));

    let started = Instant::now();
    for batch in 0..workload.fillbatchsync {
        write_entries(
            store,
            &keys,
            FILLBATCHSYNC,
            batch * workload.batch,
            workload.batch,
            Durability::Sync,
        )?;
    }
    record(
        "fillbatchsync",
        rate(workload.fillbatchsync * workload.batch, started),
    );

    let started = Instant::now();
    fill_sync_threads(store, &keys, workload)?;
    record(
        "fillsync_threads",
        rate(workload.threads * workload.thread_writes, started),
    );

    read_phases(store, &keys, workload, &mut rng, &mut record)?;

    let started = Instant::now();
    let mut value = Vec::with_capacity(keys.value_bytes());
    for _ in 0..workload.overwrites {
        let index = rng.below(workload.entries);
        keys.value(LOADED, index, 1, &mut value);
        store.write(&[(&keys.key(LOADED, index), &value)], Durability::Buffered)?;
    }
    store.sync()?;
    record("overwrite", rate(workload.overwrites, started));
    record("size_after_overwrite", mib(dir_bytes(dir)?));

    let started = Instant::now();
    store.compact()?;
    record("compact_seconds", started.elapsed().as_secs_f64());
    record("size_after_compact", mib(dir_bytes(dir)?));
    record("peak_rss", mib(peak_rss_bytes()?));
    Ok(out)
}

/// Loads the entries in same-partition batches, in random batch order, `Buffered`.
fn fill_random(
    store: &dyn KvStore,
    keys: &KeySpace,
    workload: &Workload,
    rng: &mut SplitMix64,
) -> BenchResult<()> {
    let mut batches: Vec<u64> = (0..workload.entries / workload.batch).collect();
    rng.shuffle(&mut batches);
    for batch in batches {
        write_entries(
            store,
            keys,
            LOADED,
            batch * workload.batch,
            workload.batch,
            Durability::Buffered,
        )?;
    }
    Ok(())
}

/// Writes entries `first..first + count` of `table` (version 0) as one batch.
fn write_entries(
    store: &dyn KvStore,
    keys: &KeySpace,
    table: u32,
    first: u64,
    count: u64,
    durability: Durability,
) -> BenchResult<()> {
    let owned: Vec<_> = (first..first + count)
        .map(|index| {
            let mut value = Vec::with_capacity(keys.value_bytes());
            keys.value(table, index, 0, &mut value);
            (keys.key(table, index), value)
        })
        .collect();
    let entries: Vec<(&[u8], &[u8])> = owned
        .iter()
        .map(|(key, value)| (&key[..], &value[..]))
        .collect();
    store.write(&entries, durability)
}

/// `threads` writers, each doing `thread_writes` single `Sync` writes of its own keys.
fn fill_sync_threads(store: &dyn KvStore, keys: &KeySpace, workload: &Workload) -> BenchResult<()> {
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..workload.threads)
            .map(|thread| {
                scope.spawn(move || -> BenchResult<()> {
                    let first = thread * workload.thread_writes;
                    for index in first..first + workload.thread_writes {
                        write_entries(store, keys, FILLSYNC_THREADS, index, 1, Durability::Sync)?;
                    }
                    Ok(())
                })
            })
            .collect();
        writers
            .into_iter()
            .try_for_each(|writer| writer.join().map_err(|_| "a writer thread panicked")?)
    })
}

/// readrandom, readmissing, scanpartition, seekrandom+readnext, readseq; every read is checked.
fn read_phases(
    store: &dyn KvStore,
    keys: &KeySpace,
    workload: &Workload,
    rng: &mut SplitMix64,
    record: &mut dyn FnMut(&str, f64),
) -> BenchResult<()> {
    let mut reader = store.reader()?;
    let mut expected = Vec::with_capacity(keys.value_bytes());

    let started = Instant::now();
    for _ in 0..workload.reads {
        let index = rng.below(workload.entries);
        keys.value(LOADED, index, 0, &mut expected);
        let mut matches = false;
        let found = reader.get(&keys.key(LOADED, index), &mut |value| {
            matches = value == expected
        })?;
        if !found || !matches {
            return Err(
                format!("readrandom: entry {index} found={found} value_matches={matches}").into(),
            );
        }
    }
    record("readrandom", rate(workload.reads, started));

    let started = Instant::now();
    for _ in 0..workload.missing {
        let index = rng.below(workload.entries);
        if reader.get(&keys.absent_key(LOADED, index), &mut |_| {})? {
            return Err(format!("readmissing: absent key next to entry {index} was found").into());
        }
    }
    record("readmissing", rate(workload.missing, started));

    let value_bytes = keys.value_bytes();
    let wrong_values = Cell::new(0u64);
    let mut check = |_: &[u8], value: &[u8]| {
        if value.len() != value_bytes {
            wrong_values.set(wrong_values.get() + 1);
        }
    };
    let started = Instant::now();
    for _ in 0..workload.partition_scans {
        let partition = rng.below(workload.partitions);
        let (start, end) = keys.partition_range(LOADED, partition);
        let seen = reader.scan(&start, &end, usize::MAX, &mut check)?;
        expect_count("scanpartition", partition, seen, keys.rows_per_partition())?;
    }
    record("scanpartition", rate(workload.partition_scans, started));

    let limit = usize::try_from(workload.seek_length)?;
    let table_end = table_start(LOADED + 1);
    let started = Instant::now();
    for _ in 0..workload.seeks {
        let index = rng.below(workload.entries);
        let seen = reader.scan(&keys.key(LOADED, index), &table_end, limit, &mut check)?;
        expect_count(
            "seekrandom",
            index,
            seen,
            workload.seek_length.min(workload.entries - index),
        )?;
    }
    record("seekrandom", rate(workload.seeks, started));

    let started = Instant::now();
    let seen = reader.scan(
        &table_start(0),
        &table_start(u32::MAX),
        usize::MAX,
        &mut check,
    )?;
    expect_count("readseq", 0, seen, workload.total_entries())?;
    record("readseq", rate(workload.total_entries(), started));
    match wrong_values.get() {
        0 => Ok(()),
        wrong => Err(format!("scans returned {wrong} values of the wrong length").into()),
    }
}

fn expect_count(phase: &str, at: u64, seen: usize, expected: u64) -> BenchResult<()> {
    if seen as u64 == expected {
        Ok(())
    } else {
        Err(format!("{phase}: scan at {at} saw {seen} entries, expected {expected}").into())
    }
}

fn rate(operations: u64, started: Instant) -> f64 {
    operations as f64 / started.elapsed().as_secs_f64()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// Rate of 4 KiB append + `fdatasync` on the bench's file system: the ceiling of any engine's
/// single-thread `Sync` writes on this machine at this moment (the disk is shared).
fn fsync_probe(dir: &Path) -> BenchResult<f64> {
    use std::io::Write as _;
    let path = dir.join("fsync-probe");
    let mut file = std::fs::File::create(&path)?;
    let page = [0u8; PROBE_WRITE_BYTES];
    let started = Instant::now();
    for _ in 0..PROBE_SYNCS {
        file.write_all(&page)?;
        file.sync_data()?;
    }
    let rate = rate(PROBE_SYNCS, started);
    drop(file);
    std::fs::remove_file(&path)?;
    Ok(rate)
}

/// The one-minute load average: how busy the shared machine was when this engine's run began.
fn load_average() -> BenchResult<f64> {
    let loadavg = std::fs::read_to_string("/proc/loadavg")?;
    let first = loadavg
        .split_whitespace()
        .next()
        .ok_or("empty /proc/loadavg")?;
    Ok(first.parse()?)
}

/// Disk space taken by the files under `dir` (an engine may keep several: WAL, journal, SSTs),
/// counted in allocated blocks like `du`, so sparse preallocation is not charged until written.
fn dir_bytes(dir: &Path) -> BenchResult<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() {
            dir_bytes(&entry.path())?
        } else {
            meta.blocks() * BLOCK_UNIT
        };
    }
    Ok(total)
}

/// Set (to anything) to print the process's memory figures after every row, on stderr: shows
/// in which phase the peak resident set is reached.
const TRACE_MEMORY_ENV: &str = "STRATA_BENCH_TRACE_MEMORY";

/// VmHWM, VmRSS, RssAnon and RssFile of this process, as one line (empty if unreadable).
fn memory_status() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .filter(|line| {
            ["VmHWM:", "VmRSS:", "RssAnon:", "RssFile:"]
                .iter()
                .any(|field| line.starts_with(field))
        })
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The process's peak resident set (VmHWM), in bytes.
fn peak_rss_bytes() -> BenchResult<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .ok_or("no VmHWM in /proc/self/status")?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()?;
    Ok(kib * 1024)
}
