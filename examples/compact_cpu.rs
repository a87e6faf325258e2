//! CPU cost of compaction on a fixed, deterministic workload: loads N entries in random key
//! order, overwrites N random keys, then runs `Engine::compact()`, printing the process CPU
//! time, file length and allocated blocks after each phase. By default (no `--background`)
//! flushes and compactions run in the writer thread, so the run is deterministic and fit for
//! callgrind.
//!
//! ```sh
//! cargo run --release --example compact_cpu -- [--entries N] [--background] [--dir DIR]
//!     [--l0-trigger N]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use strata::engine::{Durability, Engine, Options, WriteBatch};

#[path = "support/values.rs"]
mod values;

use values::{Mix, value, value_pool};

/// Entries per write batch.
const BATCH: u64 = 100;
/// Rows per partition (the peer bench's 1M entries over 1,000 partitions).
const ROWS_PER_PARTITION: u64 = 1_000;

fn key(index: u64) -> Vec<u8> {
    let mut key = 1u32.to_be_bytes().to_vec();
    key.extend_from_slice(format!("p{:06}", index / ROWS_PER_PARTITION).as_bytes());
    key.push(0);
    key.extend_from_slice(format!("r{:012}", 2 * (index % ROWS_PER_PARTITION)).as_bytes());
    key
}

fn cpu_seconds() -> f64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `time` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &raw mut time) };
    time.tv_sec as f64 + time.tv_nsec as f64 / 1e9
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn print_levels(engine: &Engine) -> strata::engine::Result<()> {
    let stats = engine.stats()?;
    for (level, l) in stats.levels.iter().enumerate() {
        if l.files > 0 {
            println!("  L{level}: {:>4} SSTs {:>8.1} MiB", l.files, mib(l.bytes));
        }
    }
    println!(
        "  free {:.1} MiB of {:.1} MiB",
        mib(stats.free_bytes),
        mib(stats.file_bytes)
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut entries = 200_000u64;
    let mut background = false;
    let mut l0_trigger = Options::default().l0_compaction_trigger;
    let mut dir = std::env::temp_dir();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--entries" => entries = args.next().ok_or("--entries N")?.parse()?,
            "--background" => background = true,
            "--l0-trigger" => l0_trigger = args.next().ok_or("--l0-trigger N")?.parse()?,
            "--dir" => dir = PathBuf::from(args.next().ok_or("--dir DIR")?),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let path = dir.join(format!("compact_cpu_{}.db", std::process::id()));
    let options = Options {
        background_compaction: background,
        l0_compaction_trigger: l0_trigger,
        l0_slowdown_trigger: l0_trigger.max(20),
        l0_stop_trigger: l0_trigger.max(36),
        ..Options::default()
    };
    let engine = Engine::open(&path, options)?;
    let file_len = || std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    // Allocated blocks, in the 512-byte unit POSIX fixes for `st_blocks`.
    let allocated =
        || std::fs::metadata(&path).map_or(0, |m| std::os::unix::fs::MetadataExt::blocks(&m) * 512);
    let mut mix = Mix(42);
    let mut order: Vec<u64> = (0..entries).collect();
    for i in (1..order.len()).rev() {
        let j = (mix.next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let pool = value_pool(&mut mix);
    let mut buf = Vec::new();
    let phase = |name: &str, run: &mut dyn FnMut() -> strata::engine::Result<()>| {
        let (cpu, wall) = (cpu_seconds(), Instant::now());
        let result = run();
        println!(
            "{name:<10} cpu {:>7.3} s  wall {:>7.3} s  file {:>8.1} MiB  allocated {:>8.1} MiB",
            cpu_seconds() - cpu,
            wall.elapsed().as_secs_f64(),
            mib(file_len()),
            mib(allocated())
        );
        result
    };
    phase("load", &mut || {
        for chunk in order.chunks(BATCH as usize) {
            let mut batch = WriteBatch::new();
            for &index in chunk {
                value(&pool, &mut mix, 0, &mut buf);
                batch.put(&key(index), &buf);
            }
            engine.write(&batch, Durability::Buffered)?;
        }
        engine.flush()
    })?;
    print_levels(&engine)?;
    println!(
        "  write amplification after load {:.2}",
        engine.stats()?.write_amplification
    );
    phase("overwrite", &mut || {
        for round in 0..entries / BATCH {
            let mut batch = WriteBatch::new();
            for _ in 0..BATCH {
                let index = mix.next() % entries;
                value(&pool, &mut mix, round + 1, &mut buf);
                batch.put(&key(index), &buf);
            }
            engine.write(&batch, Durability::Buffered)?;
        }
        engine.flush()
    })?;
    print_levels(&engine)?;
    phase("compact", &mut || engine.compact())?;
    let stats = engine.stats()?;
    println!(
        "live {:.1} MiB  write amplification {:.2}",
        mib(stats.live_bytes),
        stats.write_amplification
    );
    drop(engine);
    std::fs::remove_file(&path)?;
    Ok(())
}
