//! CPU cost, latency and group size of durable writes: T threads each commit W single-put
//! `Sync` batches (the peer bench's fillsync / fillsync-8threads) into a database preloaded
//! with P buffered entries, and the process CPU time (user, system) per write is printed. Count
//! the syncs with `perf stat -e syscalls:sys_enter_pwritev2,syscalls:sys_enter_fdatasync`.
//!
//! ```sh
//! cargo run --release --example sync_cpu -- [--threads T] [--writes W] [--preload P] [--dir D]
//!     [--settle 1] [--random 1] [--disk vda] [--fifo 1]
//! ```
//!
//! The timed writes start right after the preload, while its flushes and compactions still
//! run (as the peer bench's fillsync does); `--settle 1` compacts fully first, so they run
//! alone: the pair shows what background I/O costs a durable write. `--random 1` preloads as
//! the peer bench's fillrandom does (100-entry same-partition batches in random partition
//! order, bench-like values, then `Engine::flush`), which leaves the compaction backlog the
//! bench's fillsync row runs beside. Besides throughput it prints write latency percentiles,
//! the writers' scheduler run delay (time runnable but waiting for a core, from
//! `/proc/thread-self/schedstat`) and the device's write and flush requests in the timed phase.
//! `--fifo 1` runs the writers `SCHED_FIFO` (needs `CAP_SYS_NICE`): a waking writer then takes
//! a core at once, from this process's merges and from anything else on a loaded machine, so
//! what remains of its latency is its own CPU and the device.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use strata::engine::{Durability, Engine, Options, WriteBatch};

#[path = "support/flags.rs"]
mod flags;
#[path = "support/values.rs"]
mod values;

use flags::{flag_pairs, unknown_flag};
use values::{Mix, VALUE_BYTES, value_pool};

/// Entries per preload batch (the peer bench's default).
const BATCH: u64 = 100;
/// Partitions the random preload spreads over (the peer bench's default).
const PARTITIONS: u64 = 1_000;

fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF covers every thread of the process.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &raw mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// Write system calls of the process so far (`syscw` of `/proc/self/io`; 0 where absent): each
/// durable group is one, so writes per call is the mean group size (prewrite chunks and
/// background flushes add a few).
fn write_calls() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|line| line.strip_prefix("syscw: "))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Nanoseconds this thread has run on a core and waited runnable for one (zeroes where
/// schedstat is absent).
fn schedstat_ns() -> [u64; 2] {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let mut fields = stat.split_whitespace().map(|n| n.parse().unwrap_or(0));
    [fields.next().unwrap_or(0), fields.next().unwrap_or(0)]
}

/// Completed write requests, sectors written, flush requests and discard requests of block
/// device `disk`.
fn disk_counters(disk: &str) -> [u64; 4] {
    let stats = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    let fields: Vec<u64> = stats
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.get(2) == Some(&disk))
        .map(|f| f.iter().skip(3).filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    let at = |i: usize| fields.get(i).copied().unwrap_or(0);
    [at(4), at(6), at(15), at(11)]
}

fn key(thread: u64, n: u64) -> Vec<u8> {
    format!("p{:04}-t{thread:02}-{n:08}", n % 1000).into_bytes()
}

/// Key of preloaded entry `n` of `total`: partition-major, as the peer bench's keys.
fn preload_key(n: u64, total: u64) -> Vec<u8> {
    let rows = total.div_ceil(PARTITIONS).max(1);
    format!("p{:04}\0r{:08}", n / rows, 2 * (n % rows)).into_bytes()
}

/// A bench-like value: a header, then a slice of `pool` (runs of 16 bytes repeated once).
fn preload_value(pool: &[u8], n: u64) -> Vec<u8> {
    let mut mix = Mix(n);
    let mut out = n.to_le_bytes().to_vec();
    let body = VALUE_BYTES - out.len();
    let at = (mix.next() % (pool.len() - body) as u64) as usize;
    out.extend_from_slice(pool.get(at..at + body).unwrap_or_default());
    out
}

fn preload(engine: &Engine, count: u64, random: bool) -> strata::engine::Result<()> {
    let mut mix = Mix(42);
    let pool = value_pool(&mut mix);
    let mut batches: Vec<u64> = (0..count.div_ceil(BATCH)).collect();
    if random {
        for i in (1..batches.len()).rev() {
            batches.swap(i, (mix.next() % (i as u64 + 1)) as usize);
        }
    }
    let plain = vec![0x5a_u8; VALUE_BYTES];
    for start in batches.into_iter().map(|b| b * BATCH) {
        let mut batch = WriteBatch::new();
        for n in start..(start + BATCH).min(count) {
            if random {
                batch.put(&preload_key(n, count), &preload_value(&pool, n));
            } else {
                batch.put(&key(99, n), &plain);
            }
        }
        engine.write(&batch, Durability::Buffered)?;
    }
    if random {
        engine.flush()
    } else {
        engine
            .write(&WriteBatch::new(), Durability::Sync)
            .map(|_| ())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut threads, mut writes, mut preload_count) = (8u64, 1_000u64, 100_000u64);
    let (mut settle, mut random, mut fifo) = (false, false, false);
    let mut dir = PathBuf::from("/var/tmp");
    let mut disk = String::from("vda");
    for (flag, value) in flag_pairs()? {
        match flag.as_str() {
            "--threads" => threads = value.parse()?,
            "--writes" => writes = value.parse()?,
            "--preload" => preload_count = value.parse()?,
            "--dir" => dir = PathBuf::from(value),
            "--settle" => settle = value != "0",
            "--random" => random = value != "0",
            "--fifo" => fifo = value != "0",
            "--disk" => disk = value,
            _ => return Err(unknown_flag(&flag)),
        }
    }
    let path = dir.join(format!("sync_cpu_{}.strata", std::process::id()));
    let engine = Arc::new(Engine::open(&path, Options::default())?);
    let value = vec![0x5a_u8; VALUE_BYTES];
    preload(&engine, preload_count, random)?;
    if settle {
        engine.compact()?;
    }
    let stats0 = engine.stats()?;
    let (user0, sys0) = cpu_seconds();
    let calls0 = write_calls();
    let disk0 = disk_counters(&disk);
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let engine = Arc::clone(&engine);
            let value = value.clone();
            std::thread::spawn(
                move || -> strata::engine::Result<(Vec<Duration>, [u64; 2])> {
                    if fifo {
                        let param = libc::sched_param { sched_priority: 1 };
                        // SAFETY: a plain syscall about the calling thread.
                        let rc = unsafe {
                            libc::sched_setscheduler(0, libc::SCHED_FIFO, &raw const param)
                        };
                        assert_eq!(
                            rc,
                            0,
                            "SCHED_FIFO refused: {}",
                            std::io::Error::last_os_error()
                        );
                    }
                    let [run0, delay0] = schedstat_ns();
                    let mut latencies = Vec::with_capacity(writes as usize);
                    for n in 0..writes {
                        let mut batch = WriteBatch::new();
                        batch.put(&key(t, n), &value);
                        let at = Instant::now();
                        engine.write(&batch, Durability::Sync)?;
                        latencies.push(at.elapsed());
                    }
                    let [run1, delay1] = schedstat_ns();
                    Ok((latencies, [run1 - run0, delay1 - delay0]))
                },
            )
        })
        .collect();
    let mut latencies = Vec::new();
    let (mut run, mut run_delay) = (0u64, 0u64);
    for worker in workers {
        let (mine, [ran, delay]) = worker.join().map_err(|_| "writer panicked")??;
        latencies.extend(mine);
        run += ran;
        run_delay += delay;
    }
    let wall = started.elapsed().as_secs_f64();
    let (user1, sys1) = cpu_seconds();
    let disk1 = disk_counters(&disk);
    let calls = write_calls().saturating_sub(calls0).max(1);
    let total = (threads * writes) as f64;
    println!(
        "threads {threads} writes {total} wall {:.0} ops/s, per write: user {:.1} us, sys {:.1} us; \
         {calls} write calls ({:.1} writes per call)",
        total / wall,
        (user1 - user0) / total * 1e6,
        (sys1 - sys0) / total * 1e6,
        total / calls as f64
    );
    let waited: f64 = latencies.iter().map(Duration::as_secs_f64).sum::<f64>() * 1e9;
    let blocked = (waited - run as f64 - run_delay as f64).max(0.0);
    latencies.sort_unstable();
    let pct = |p: usize| {
        let at = (latencies.len() * p / 100).min(latencies.len().saturating_sub(1));
        latencies.get(at).map_or(0.0, |d| d.as_secs_f64() * 1e6)
    };
    // The tail: writes over 1 ms, and their share of the writers' total time.
    let slow: Vec<f64> = latencies
        .iter()
        .map(Duration::as_secs_f64)
        .filter(|&l| l > 1e-3)
        .collect();
    println!(
        "latency us: p50 {:.0} p90 {:.0} p99 {:.0} max {:.0}; {} writes > 1 ms take {:.0}% of \
         the time; writers per write: on CPU {:.1} us, run delay {:.1} us, blocked {:.1} us",
        pct(50),
        pct(90),
        pct(99),
        pct(100),
        slow.len(),
        slow.iter().sum::<f64>() * 1e9 / waited.max(1.0) * 100.0,
        run as f64 / 1e3 / total,
        run_delay as f64 / 1e3 / total,
        blocked / 1e3 / total
    );
    let [w0, s0, f0, d0] = disk0;
    let [w1, s1, f1, d1] = disk1;
    println!(
        "{disk}: {} write requests, {:.1} MiB written, {} flushes, {} discards",
        w1.saturating_sub(w0),
        s1.saturating_sub(s0) as f64 * 512.0 / (1 << 20) as f64,
        f1.saturating_sub(f0),
        d1.saturating_sub(d0)
    );
    let stats = engine.stats()?;
    println!(
        "controller: {} stops ({:.1} ms), {} delays ({:.1} ms), merges paced {:.1} ms; \
         levels {:?} -> {:?}",
        stats.stopped_waits - stats0.stopped_waits,
        (stats.stopped_micros - stats0.stopped_micros) as f64 / 1e3,
        stats.delayed_writes - stats0.delayed_writes,
        (stats.delayed_micros - stats0.delayed_micros) as f64 / 1e3,
        (stats.paced_merge_micros - stats0.paced_merge_micros) as f64 / 1e3,
        stats0.levels.iter().map(|l| l.files).collect::<Vec<_>>(),
        stats.levels.iter().map(|l| l.files).collect::<Vec<_>>()
    );
    drop(engine);
    std::fs::remove_file(&path)?;
    Ok(())
}
