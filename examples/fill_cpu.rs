//! Where a bulk load's time goes, on the peer bench's fillrandom workload: N entries in
//! 100-entry same-partition batches (sorted keys within a batch), batches in random order,
//! `Buffered`, then `Engine::flush()`. Prints wall and CPU time of the writes and of the final
//! flush apart, the writer thread's own CPU, the write controller's delays and stops, and the
//! levels. With `--inline` flushes and compactions run in the writer thread (deterministic,
//! fit for callgrind).
//!
//! ```sh
//! cargo run --release --example fill_cpu -- [--entries N] [--inline] [--dir DIR]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use strata::engine::{Durability, Engine, Options, WriteBatch};

#[path = "support/values.rs"]
mod values;

use values::{Mix, value, value_pool};

/// Entries per write batch (the peer bench's default).
const BATCH: u64 = 100;
/// Partitions the entries spread over (the peer bench's default).
const PARTITIONS: u64 = 1_000;

/// The peer bench's key layout: table id, 6-digit PartitionKey, 0x00, 10-digit RowKey.
fn key(index: u64, rows_per_partition: u64) -> Vec<u8> {
    let mut key = 1u32.to_be_bytes().to_vec();
    key.extend_from_slice(format!("{:06}", index / rows_per_partition).as_bytes());
    key.push(0);
    key.extend_from_slice(format!("{:010}", 2 * (index % rows_per_partition)).as_bytes());
    key
}

fn cpu_seconds(clock: libc::clockid_t) -> f64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `time` is a valid, writable timespec.
    unsafe { libc::clock_gettime(clock, &raw mut time) };
    time.tv_sec as f64 + time.tv_nsec as f64 / 1e9
}

/// Minor page faults taken by the calling thread so far.
fn thread_faults() -> i64 {
    // SAFETY: an all-zero `rusage` is valid, and `getrusage` only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &raw mut usage) };
    usage.ru_minflt
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut entries = 1_000_000u64;
    let mut inline = false;
    let mut dir = PathBuf::from("/var/tmp");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--entries" => entries = args.next().ok_or("--entries N")?.parse()?,
            "--inline" => inline = true,
            "--dir" => dir = PathBuf::from(args.next().ok_or("--dir DIR")?),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let rows_per_partition = (entries / PARTITIONS).max(1);
    let path = dir.join(format!("fill_cpu_{}.db", std::process::id()));
    let options = Options {
        background_compaction: !inline,
        ..Options::default()
    };
    let engine = Engine::open(&path, options)?;
    let mut mix = Mix(42);
    let mut order: Vec<u64> = (0..entries / BATCH).collect();
    for i in (1..order.len()).rev() {
        let j = (mix.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let pool = value_pool(&mut mix);
    let mut buf = Vec::new();
    // Keys and values are built before the clock starts, as the engine's work is measured.
    let batches: Vec<WriteBatch> = order
        .iter()
        .map(|&first| {
            let mut batch = WriteBatch::new();
            for index in first * BATCH..(first + 1) * BATCH {
                value(&pool, &mut mix, index, &mut buf);
                batch.put(&key(index, rows_per_partition), &buf);
            }
            batch
        })
        .collect();
    let (process, thread) = (
        libc::CLOCK_PROCESS_CPUTIME_ID,
        libc::CLOCK_THREAD_CPUTIME_ID,
    );
    let faults0 = thread_faults();
    let (cpu0, thread0, wall0) = (cpu_seconds(process), cpu_seconds(thread), Instant::now());
    for batch in &batches {
        engine.write(batch, Durability::Buffered)?;
    }
    let (cpu1, thread1, wall1) = (cpu_seconds(process), cpu_seconds(thread), Instant::now());
    let faults1 = thread_faults();
    engine.flush()?;
    let (cpu2, thread2, wall2) = (cpu_seconds(process), cpu_seconds(thread), Instant::now());
    let stats = engine.stats()?;
    println!(
        "writes  wall {:.3} s  cpu {:.3} s  writer thread {:.3} s, {} page faults",
        (wall1 - wall0).as_secs_f64(),
        cpu1 - cpu0,
        thread1 - thread0,
        faults1 - faults0
    );
    println!(
        "flush   wall {:.3} s  cpu {:.3} s  writer thread {:.3} s",
        (wall2 - wall1).as_secs_f64(),
        cpu2 - cpu1,
        thread2 - thread1
    );
    println!(
        "total   wall {:.3} s  cpu {:.3} s  = {:.0} entries/s",
        (wall2 - wall0).as_secs_f64(),
        cpu2 - cpu0,
        entries as f64 / (wall2 - wall0).as_secs_f64()
    );
    println!(
        "stalls  delayed {} ({:.3} s)  stopped {} ({:.3} s)",
        stats.delayed_writes,
        stats.delayed_micros as f64 / 1e6,
        stats.stopped_waits,
        stats.stopped_micros as f64 / 1e6
    );
    for (level, l) in stats.levels.iter().enumerate() {
        if l.files > 0 {
            println!("  L{level}: {:>4} SSTs {:>8.1} MiB", l.files, mib(l.bytes));
        }
    }
    println!(
        "write amplification {:.2}  file {:.1} MiB",
        stats.write_amplification,
        mib(stats.file_bytes)
    );
    drop(engine);
    std::fs::remove_file(&path)?;
    Ok(())
}
