//! CPU cost and group size of durable writes: T threads each commit W single-put `Sync`
//! batches (the peer bench's fillsync / fillsync-8threads) into a database preloaded with P
//! buffered entries, and the process CPU time (user, system) per write is printed. Count the
//! syncs with `perf stat -e syscalls:sys_enter_pwritev2,syscalls:sys_enter_fdatasync`.
//!
//! ```sh
//! cargo run --release --example sync_cpu -- [--threads T] [--writes W] [--preload P] [--dir D]
//!     [--settle 1]
//! ```
//!
//! The timed writes start right after the preload, while its flushes and compactions still
//! run (as the peer bench's fillsync does); `--settle 1` compacts fully first, so they run
//! alone: the pair shows what background I/O costs a durable write.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use strata::engine::{Durability, Engine, Options, WriteBatch};

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

fn key(thread: u64, n: u64) -> Vec<u8> {
    format!("p{:04}-t{thread:02}-{n:08}", n % 1000).into_bytes()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut threads, mut writes, mut preload) = (8u64, 1_000u64, 100_000u64);
    let mut settle = false;
    let mut dir = PathBuf::from("/var/tmp");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--threads" => threads = value.parse()?,
            "--writes" => writes = value.parse()?,
            "--preload" => preload = value.parse()?,
            "--dir" => dir = PathBuf::from(value),
            "--settle" => settle = value != "0",
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    let path = dir.join(format!("sync_cpu_{}.strata", std::process::id()));
    let engine = Arc::new(Engine::open(&path, Options::default())?);
    let value = vec![0x5a_u8; 180];
    for start in (0..preload).step_by(100) {
        let mut batch = WriteBatch::new();
        for n in start..(start + 100).min(preload) {
            batch.put(&key(99, n), &value);
        }
        engine.write(&batch, Durability::Buffered)?;
    }
    engine.write(&WriteBatch::new(), Durability::Sync)?;
    if settle {
        engine.compact()?;
    }
    let (user0, sys0) = cpu_seconds();
    let calls0 = write_calls();
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let engine = Arc::clone(&engine);
            let value = value.clone();
            std::thread::spawn(move || -> strata::engine::Result<()> {
                for n in 0..writes {
                    let mut batch = WriteBatch::new();
                    batch.put(&key(t, n), &value);
                    engine.write(&batch, Durability::Sync)?;
                }
                Ok(())
            })
        })
        .collect();
    for worker in workers {
        worker.join().map_err(|_| "writer panicked")??;
    }
    let wall = started.elapsed().as_secs_f64();
    let (user1, sys1) = cpu_seconds();
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
    drop(engine);
    std::fs::remove_file(&path)?;
    Ok(())
}
