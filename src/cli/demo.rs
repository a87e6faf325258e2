//! `strata demo`: builds an IoT database of 1,000,000 readings and tours every query kind,
//! an atomic batch, the log-tail pattern, an export and the O(1) drop of a big table.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use strata::model::{DateTime, Entity, Guid, PartitionKey, PropertyName, RowKey, Value};
use strata::{Account, Query, Table};

use super::error::{CliError, Result};
use super::{finish_bulk, progress};

/// Default demo database file.
const DEFAULT_DEMO_DB: &str = "./demo.strata";
/// Readings loaded by default.
const DEFAULT_ROWS: u64 = 1_000_000;
/// Devices the readings are spread over (one partition each).
const DEVICES: u64 = 1_000;
/// Entities per load batch (the batch limit).
const LOAD_BATCH: u64 = 100;
/// Ticks between two readings of one device (one second).
const TICKS_PER_READING: i64 = 10_000_000;
/// Ticks of 2026-01-01T00:00:00Z, the first reading.
const FIRST_TICKS: i64 = 639_030_240_000_000_000;
/// Width of an inverted-ticks RowKey (i64::MAX has 19 digits).
const ROW_KEY_DIGITS: usize = 19;
/// Rows per Parquet row group of the demo export.
const EXPORT_GROUP_ROWS: usize = 64 * 1024;

/// Arguments of `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Readings to load (default 1,000,000).
    #[arg(long, default_value_t = DEFAULT_ROWS)]
    rows: u64,
}

/// The RowKey of a reading: inverted ticks, so a partition lists the newest first.
fn row_key(ticks: i64) -> String {
    format!("{:0width$}", i64::MAX - ticks, width = ROW_KEY_DIGITS)
}

fn device(index: u64) -> String {
    format!("device-{index:04}")
}

/// A cheap deterministic pseudo-random stream (SplitMix64) so every run builds the same file.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The ticks of reading `seq` of a device.
fn ticks_of(seq: u64) -> Result<i64> {
    i64::try_from(seq)
        .ok()
        .and_then(|s| s.checked_mul(TICKS_PER_READING))
        .and_then(|t| t.checked_add(FIRST_TICKS))
        .ok_or_else(|| CliError::Usage(format!("reading {seq} is past the year 9999")))
}

/// Reading `seq` of device `dev`: a dozen typed properties.
fn reading(dev: u64, seq: u64) -> Result<Entity> {
    let ticks = ticks_of(seq)?;
    let r = mix(dev << 32 | seq);
    let unit = (r % 10_000) as f64 / 10_000.0;
    let mut e = Entity::new(
        PartitionKey::new(device(dev))?,
        RowKey::new(row_key(ticks))?,
    );
    let props = [
        ("Temperature", Value::Double(15.0 + 25.0 * unit)),
        (
            "Humidity",
            Value::Double(30.0 + (r >> 16 & 0xFF) as f64 / 4.0),
        ),
        ("Pressure", Value::Double(990.0 + (r >> 24 & 0x3F) as f64)),
        (
            "Battery",
            Value::Int32(i32::try_from(100 - (seq % 100)).unwrap_or(0)),
        ),
        (
            "Rssi",
            Value::Int32(-30 - i32::try_from(r >> 40 & 0x3F).unwrap_or(0)),
        ),
        ("Sequence", Value::Int64(i64::try_from(seq).unwrap_or(0))),
        ("Online", Value::Boolean(r & 0x10 != 0)),
        (
            "Firmware",
            Value::string(format!("1.{}.{}", dev % 4, seq % 3))?,
        ),
        ("Site", Value::string(format!("site-{:02}", dev % 25))?),
        ("SampledAt", Value::DateTime(DateTime::from_ticks(ticks)?)),
        (
            "ReadingId",
            Value::Guid(Guid(
                u128::from(r)
                    .wrapping_mul(u128::from(seq + 1))
                    .to_be_bytes(),
            )),
        ),
        ("Raw", Value::binary(r.to_le_bytes().to_vec())?),
    ];
    for (name, value) in props {
        e.set(PropertyName::new(name)?, value)?;
    }
    Ok(e)
}

/// Loads `rows` readings into `table`, partition by partition, in batches of 100.
fn load(table: &Table, rows: u64, label: &'static str) -> Result<()> {
    let per_device = rows.div_ceil(DEVICES).max(1);
    let bar = progress::bar(rows, label);
    let mut written = 0;
    'devices: for dev in 0..DEVICES {
        let mut seq = 0;
        while seq < per_device {
            if written >= rows {
                break 'devices;
            }
            let n = LOAD_BATCH.min(per_device - seq).min(rows - written);
            let mut batch = table.batch(&device(dev))?;
            for s in seq..seq + n {
                batch.insert_or_replace(reading(dev, s)?);
            }
            batch.submit()?;
            seq += n;
            written += n;
            bar.inc(n);
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// Prints one step's line with its timing.
fn step(title: &str, started: Instant, detail: &str) {
    let ms = started.elapsed().as_secs_f64() * 1e3;
    println!("{title:<44} {ms:>10.2} ms  {detail}");
}

/// Runs `demo`.
pub fn run(db: Option<PathBuf>, args: &DemoArgs) -> Result<()> {
    let path = db.unwrap_or_else(|| PathBuf::from(DEFAULT_DEMO_DB));
    if args.rows < DEVICES {
        return Err(CliError::Usage(format!(
            "--rows must be at least {DEVICES} (one reading per device)"
        )));
    }
    if path.exists() {
        std::fs::remove_file(&path).map_err(|e| CliError::io("replace", &path, e))?;
        println!("replaced the previous demo file {}", path.display());
    }
    let total = Instant::now();
    let options = strata::Options {
        durability: strata::engine::Durability::Buffered,
        ..strata::Options::default()
    };
    let account = Account::open_with(&path, options)
        .map_err(|e| CliError::from(e).context(&path.display().to_string()))?;
    println!(
        "strata demo: {} IoT readings from {DEVICES} devices into {}\n",
        args.rows,
        path.display()
    );

    let t = Instant::now();
    account.create_table("Readings")?;
    let readings = account.table("Readings")?;
    load(&readings, args.rows, "loading")?;
    finish_bulk(&account)?;
    step(
        "load (batches of 100, then flush)",
        t,
        &format!(
            "{} entities, {:.0} entities/s",
            args.rows,
            args.rows as f64 / t.elapsed().as_secs_f64()
        ),
    );
    tour(&account, &readings, args.rows.div_ceil(DEVICES))?;
    export(&readings, &path)?;
    drop_table(&account, args.rows)?;

    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "\ndone in {:.1} s; {} ({bytes} bytes) is yours to explore, e.g.\n  strata --db {} query Readings --filter \"PartitionKey eq 'device-0042'\" --top 5 --format table",
        total.elapsed().as_secs_f64(),
        path.display(),
        path.display()
    );
    Ok(())
}

/// Point query, RowKey range, partition scan, paged table scan, batch and log tail.
fn tour(account: &Account, readings: &Table, per_device: u64) -> Result<()> {
    let pk = device(42);
    let oldest = row_key(FIRST_TICKS);
    let t = Instant::now();
    let hit = readings.get(&pk, &oldest, None)?;
    step(
        "point query (PK + RK)",
        t,
        &format!(
            "Temperature {:?}",
            hit.entity
                .get("Temperature")
                .map(Value::to_wire)
                .unwrap_or_default()
        ),
    );

    // Up to 100 consecutive readings from the middle of the partition; inverted ticks make
    // the newest of them the low end of the RowKey range.
    let n = per_device.min(100);
    let first_seq = (per_device - n) / 2;
    let (lo, hi) = (
        row_key(ticks_of(first_seq + n - 1)?),
        row_key(ticks_of(first_seq)?),
    );
    let t = Instant::now();
    let range = readings.query(&Query {
        filter: Some(format!(
            "PartitionKey eq '{pk}' and RowKey ge '{lo}' and RowKey le '{hi}'"
        )),
        ..Query::default()
    })?;
    step(
        "RowKey range (consecutive readings)",
        t,
        &format!("{} entities", range.entities.len()),
    );

    let t = Instant::now();
    let scan = readings.query(&Query {
        filter: Some(format!(
            "PartitionKey eq '{}' and Temperature gt 35.0",
            device(7)
        )),
        ..Query::default()
    })?;
    step(
        "partition scan + filter (Temperature > 35)",
        t,
        &format!("{} entities", scan.entities.len()),
    );

    let t = Instant::now();
    let (mut pages, mut matches) = (0, 0);
    let mut query = Query {
        filter: Some("Temperature gt 39.9 and Online eq false".to_owned()),
        ..Query::default()
    };
    loop {
        let page = readings.query(&query)?;
        pages += 1;
        matches += page.entities.len();
        match page.continuation {
            Some(token) => query.continuation = Some(token),
            None => break,
        }
    }
    step(
        "table scan + filter, paged",
        t,
        &format!("{matches} entities in {pages} pages"),
    );

    let t = Instant::now();
    let next = reading(42, per_device)?;
    let mut latest = Entity::new(PartitionKey::new(pk.clone())?, RowKey::new("latest")?);
    latest.set(
        PropertyName::new("Reading")?,
        Value::string(next.row_key().as_str())?,
    )?;
    let mut batch = readings.batch(&pk)?;
    batch.insert_or_replace(next).insert_or_replace(latest);
    batch.submit()?;
    step(
        "atomic batch (reading + 'latest' index)",
        t,
        "2 operations, one commit",
    );

    let t = Instant::now();
    let tail = readings.query(&Query {
        filter: Some(format!("PartitionKey eq '{pk}'")),
        top: Some(10),
        ..Query::default()
    })?;
    let first = tail
        .entities
        .first()
        .map(|e| e.entity.row_key().as_str().to_owned());
    step(
        "log tail: top 10 newest",
        t,
        &format!(
            "{} entities, newest RowKey {}",
            tail.entities.len(),
            first.unwrap_or_default()
        ),
    );
    account.engine().flush()?;
    Ok(())
}

/// Exports a tenth of the devices to Parquet next to the database.
fn export(readings: &Table, db: &Path) -> Result<()> {
    let out = db.with_extension("parquet");
    let filter = Some(format!("PartitionKey lt '{}'", device(DEVICES / 10)));
    let t = Instant::now();
    let rows = super::export::export_parquet(readings, filter.as_deref(), &out, EXPORT_GROUP_ROWS)?;
    step(
        "export 100 devices to Parquet",
        t,
        &format!("{rows} entities -> {}", out.display()),
    );
    Ok(())
}

/// Loads a second table of the same size and drops it: O(1), whatever its size.
fn drop_table(account: &Account, rows: u64) -> Result<()> {
    account.create_table("ReadingsArchive")?;
    let archive = account.table("ReadingsArchive")?;
    let t = Instant::now();
    load(&archive, rows, "archiving")?;
    finish_bulk(account)?;
    step("load ReadingsArchive", t, &format!("{rows} entities"));
    let t = Instant::now();
    account.delete_table("ReadingsArchive")?;
    step(
        "drop ReadingsArchive",
        t,
        &format!("{rows} entities gone; space reclaimed by compaction"),
    );
    Ok(())
}
