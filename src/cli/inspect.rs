//! `strata stats|check|compact|dump|snapshot`: looking at and maintaining the file.

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value as Json, json};
use strata::codec::{key, property};
use strata::engine::{CHECK_MAX_PROBLEMS, Engine};
use strata::{Query, StoredEntity};

use super::error::{CliError, Result};
use super::json::entity_to_json;
use super::output::print_records;
use super::{Global, require_file};

/// Sorts after every key: table ids are 4 big-endian bytes, so 5 × 0xFF passes them all.
const KEYSPACE_END: [u8; 5] = [u8::MAX; 5];

/// Arguments of `snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The new file (must not exist).
    out: PathBuf,
}

/// Arguments of `dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// Only keys of this numeric table id (0 is the catalog; ids are shown by a plain dump).
    #[arg(long)]
    table_id: Option<u32>,
    /// Start at this PartitionKey (needs --table-id).
    #[arg(long, requires = "table_id")]
    from: Option<String>,
    /// At most N entries.
    #[arg(long, default_value_t = 100)]
    limit: usize,
}

/// Runs `snapshot OUT`.
pub fn snapshot(global: &Global, args: &SnapshotArgs) -> Result<()> {
    if args.out.exists() {
        return Err(CliError::Io(format!(
            "{} already exists; a snapshot is always written to a new file",
            args.out.display()
        )));
    }
    let account = global.open_read()?;
    account.engine().checkpoint(&args.out)?;
    eprintln!(
        "wrote a compacted snapshot to {}; open it with `strata --db {} --read-only ...`",
        args.out.display(),
        args.out.display()
    );
    Ok(())
}

/// Runs `stats`: engine figures, then one row per table (a full scan of each table).
pub fn stats(global: &Global) -> Result<()> {
    let account = global.open_read()?;
    let s = account.engine().stats()?;
    let mut rows: Vec<Vec<Json>> = vec![
        vec![json!("file_bytes"), json!(s.file_bytes)],
        vec![json!("live_bytes"), json!(s.live_bytes)],
        vec![json!("free_bytes"), json!(s.free_bytes)],
        vec![json!("memtable_bytes"), json!(s.memtable_bytes)],
        vec![json!("space_amplification"), json!(s.space_amplification)],
        vec![json!("write_amplification"), json!(s.write_amplification)],
        vec![json!("last_seq"), json!(s.last_seq)],
    ];
    for (level, l) in s.levels.iter().enumerate() {
        rows.push(vec![
            json!(format!("level{level}")),
            json!(format!("{} files, {} bytes", l.files, l.bytes)),
        ]);
    }
    for name in account.list_tables() {
        let table = account.table(name.as_str())?;
        let (mut entities, mut bytes) = (0_u64, 0_u64);
        for row in table.query_all(Query::default()) {
            let row: StoredEntity = row?;
            entities += 1;
            bytes += row.entity.size() as u64;
        }
        rows.push(vec![
            json!(format!("table {}", name.as_str())),
            json!(format!("{entities} entities, {bytes} bytes")),
        ]);
    }
    print_records(global.format, &["stat", "value"], &rows)
}

/// Runs `check`: exit 0 when clean, 5 with the offset of every problem (one per line).
pub fn check(global: &Global) -> Result<()> {
    require_file(&global.db)?;
    let report = Engine::check_all(&global.db)
        .map_err(|e| CliError::from(e).context(&global.db.display().to_string()))?;
    if report.is_clean() {
        let rows = vec![
            vec![json!("result"), json!("clean")],
            vec![json!("generation"), json!(report.generation)],
            vec![json!("ssts"), json!(report.ssts)],
            vec![json!("entries"), json!(report.entries)],
            vec![json!("wal_records"), json!(report.wal_records)],
            vec![json!("file_bytes"), json!(report.file_bytes)],
        ];
        return print_records(global.format, &["check", "value"], &rows);
    }
    let found = report.problems.len() as u64 + report.problems_omitted;
    let mut message = format!("{}: {found} problem(s) found", global.db.display());
    for problem in &report.problems {
        message.push_str(&format!(
            "\ncorruption at file offset {}: {}",
            problem.offset, problem.what
        ));
    }
    if report.problems_omitted > 0 {
        message.push_str(&format!(
            "\n... and {} more (only the first {CHECK_MAX_PROBLEMS} are listed)",
            report.problems_omitted
        ));
    }
    message.push_str(
        "\nhint: restore from a snapshot, or export what still reads with `strata export`",
    );
    Err(CliError::Corrupt(message))
}

/// Runs `compact`.
pub fn compact(global: &Global) -> Result<()> {
    let account = global.open_write()?;
    let before = account.engine().stats()?.file_bytes;
    account.compact()?;
    let after = account.engine().stats()?.file_bytes;
    eprintln!(
        "compacted {}: {before} -> {after} bytes",
        global.db.display()
    );
    Ok(())
}

/// Runs `dump`: raw keys in hex with their decoded table id, keys and properties.
pub fn dump(global: &Global, args: &DumpArgs) -> Result<()> {
    let account = global.open_read()?;
    let snapshot = account.engine().snapshot();
    let start: Vec<u8> = match (args.table_id, &args.from) {
        (Some(id), Some(pk)) => {
            let mut k = key::table_prefix(id).to_vec();
            k.extend_from_slice(pk.as_bytes());
            k
        }
        (Some(id), None) => key::table_prefix(id).to_vec(),
        (None, _) => Vec::new(),
    };
    let end: Vec<u8> = match args.table_id {
        Some(id) => key::table_range(id).1,
        None => KEYSPACE_END.to_vec(),
    };
    let mut rows = Vec::new();
    let mut cursor = snapshot.range(&start[..]..&end[..]);
    while rows.len() < args.limit && cursor.advance()? {
        let (raw_key, value) = (cursor.key(), cursor.value());
        let hex_key: String = raw_key.iter().map(|b| format!("{b:02x}")).collect();
        let decoded = match key::decode(raw_key) {
            Ok((key::CATALOG_TABLE_ID, _, _)) | Err(_) => {
                json!({ "value_hex": value.iter().map(|b| format!("{b:02x}")).collect::<String>() })
            }
            Ok((_, pk, rk)) => match property::decode(pk, rk, value) {
                Ok(entity) => match entity.timestamp() {
                    Some(ts) => entity_to_json(&StoredEntity {
                        entity,
                        etag: strata::ETag::from_timestamp(ts),
                    }),
                    None => json!({ "error": "no Timestamp" }),
                },
                Err(e) => json!({ "error": e.to_string() }),
            },
        };
        let table_id = key::decode_table_id(raw_key).map_or(Json::Null, |id| json!(id));
        rows.push(vec![json!(hex_key), table_id, json!(value.len()), decoded]);
    }
    print_records(
        global.format,
        &["key", "table_id", "value_bytes", "value"],
        &rows,
    )
}
