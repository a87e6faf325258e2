//! What two durable writes in flight at once buy on this disk: the question WAL pipelining
//! (a commit group written while the previous one still syncs) depends on. T threads each
//! write N whole 4 KiB pages of their own region of one file with `O_DIRECT | O_DSYNC` (the
//! engine's durable WAL write), optionally beside S threads that only spin: the engine's
//! writers keep the cores busy, and on a virtual machine a core with nothing to run halts, so
//! a lone durable writer also pays the host's wake-up of its core after every request.
//!
//! ```sh
//! cargo run --release --example flush_depth -- [--threads 1,2,4,8] [--spinners 1]
//!     [--writes 2000] [--rounds 3] [--dir /var/tmp] [--disk vda]
//! ```
//!
//! Each round runs every thread count once, in order, so the depths are compared seconds
//! apart, and prints each one's rate as a multiple of the round's first. Besides writes per
//! second it prints the device's flush requests per write
//! (`/proc/diskstats`, device-wide: other processes add theirs): below 1.0 the block layer
//! merged the flushes of writes in flight together; at 1.0 every write paid its own, and a
//! deeper queue helps only if the device serves flushes side by side.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[path = "support/flags.rs"]
mod flags;

use flags::{flag_pairs, unknown_flag};

const PAGE: usize = 4096;

/// Flush requests the block device `disk` completed so far (0 where the field is absent).
fn flushes(disk: &str) -> u64 {
    std::fs::read_to_string("/proc/diskstats")
        .unwrap_or_default()
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|fields| fields.get(2) == Some(&disk))
        .and_then(|fields| fields.get(18).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// One page of `byte`, page-aligned in memory as direct I/O requires.
fn aligned_page(byte: u8) -> (Vec<u8>, usize) {
    let buf = vec![byte; 2 * PAGE];
    let start = buf.as_ptr().align_offset(PAGE);
    (buf, start)
}

/// Writes zeroes over `pages` pages and syncs them, so the timed writes overwrite allocated,
/// written blocks (as the engine's prewritten WAL does).
fn prepare(path: &PathBuf, pages: u64) -> std::io::Result<()> {
    let file = File::create(path)?;
    let zeroes = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < pages * PAGE as u64 {
        file.write_all_at(&zeroes, at)?;
        at += zeroes.len() as u64;
    }
    file.sync_data()
}

/// Runs one depth; returns (writes per second, flushes per write).
fn run(
    path: &PathBuf,
    threads: u64,
    spinners: u64,
    writes: u64,
    disk: &str,
) -> std::io::Result<(f64, f64)> {
    let per_thread = writes / threads;
    prepare(path, per_thread * threads)?;
    let file = Arc::new(
        OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT | libc::O_DSYNC)
            .open(path)?,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let spinning: Vec<_> = (0..spinners)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let flushes_before = flushes(disk);
    let started = Instant::now();
    let writers: Vec<_> = (0..threads)
        .map(|thread| {
            let file = Arc::clone(&file);
            std::thread::spawn(move || -> std::io::Result<()> {
                let (buf, start) = aligned_page(thread as u8 + 1);
                let page = buf.get(start..start + PAGE).unwrap_or_default();
                for n in 0..per_thread {
                    file.write_all_at(page, (thread * per_thread + n) * PAGE as u64)?;
                }
                Ok(())
            })
        })
        .collect();
    for writer in writers {
        writer
            .join()
            .map_err(|_| std::io::Error::other("writer panicked"))??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let flushed = flushes(disk).saturating_sub(flushes_before);
    stop.store(true, Ordering::Relaxed);
    for spinner in spinning {
        let _ = spinner.join();
    }
    let done = (per_thread * threads) as f64;
    Ok((done / elapsed, flushed as f64 / done))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut depths = vec![1u64, 2, 4, 8];
    let (mut spinners, mut writes, mut rounds) = (1u64, 2_000u64, 3u64);
    let mut dir = PathBuf::from("/var/tmp");
    let mut disk = String::from("vda");
    for (flag, value) in flag_pairs()? {
        match flag.as_str() {
            "--threads" => {
                depths = value.split(',').map(str::parse).collect::<Result<_, _>>()?;
            }
            "--spinners" => spinners = value.parse()?,
            "--writes" => writes = value.parse()?,
            "--rounds" => rounds = value.parse()?,
            "--dir" => dir = PathBuf::from(value),
            "--disk" => disk = value,
            _ => return Err(unknown_flag(&flag)),
        }
    }
    if depths.contains(&0) {
        return Err("--threads takes counts of at least 1".into());
    }
    let path = dir.join(format!("flush_depth-{}.dat", std::process::id()));
    for round in 1..=rounds {
        let mut first = None;
        for &threads in &depths {
            let (rate, flushes_per_write) = run(&path, threads, spinners, writes, &disk)?;
            let base = *first.get_or_insert(rate);
            println!(
                "round {round} threads {threads} spinners {spinners}: {rate:.0} writes/s \
                 ({:.2}x the first depth), {flushes_per_write:.2} flushes per write",
                rate / base
            );
        }
    }
    std::fs::remove_file(&path)?;
    Ok(())
}
