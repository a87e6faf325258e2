//! `strata put|get|query|delete|batch`: single entities, queries and atomic batches.

use std::io::BufRead;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use strata::model::RowKey;
use strata::{ContinuationToken, ETag, IfMatch, Query, TableError};

use super::Global;
use super::error::{CliError, Result};
use super::json::{KeyColumns, TypeOverrides, entity_from_json};
use super::output::{print_entities, print_entity};

/// How `put` writes the entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PutMode {
    /// Fails if the entity exists.
    Insert,
    /// Replaces an existing entity (all properties); fails if missing.
    Replace,
    /// Overwrites the given properties of an existing entity; fails if missing.
    Merge,
    /// Inserts or replaces.
    Upsert,
    /// Inserts or merges.
    UpsertMerge,
}

/// Arguments of `put`.
#[derive(Debug, Args)]
pub struct PutArgs {
    /// The table.
    table: String,
    /// The entity as a JSON object (`-` reads it from standard input).
    entity: String,
    /// Give a property's type, e.g. `--type Count=Edm.Int64` (repeatable).
    #[arg(long = "type", value_name = "PROP=EDM")]
    types: Vec<String>,
    /// Write mode.
    #[arg(long, value_enum, default_value_t = PutMode::Upsert)]
    mode: PutMode,
    /// If-Match ETag for replace/merge (default `*`).
    #[arg(long)]
    etag: Option<String>,
}

/// Arguments of `get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The table.
    table: String,
    /// The PartitionKey.
    partition_key: String,
    /// The RowKey.
    row_key: String,
    /// Only these properties (comma-separated).
    #[arg(long, value_delimiter = ',')]
    select: Option<Vec<String>>,
}

/// Arguments of `query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The table.
    table: String,
    /// OData `$filter`, e.g. "PartitionKey eq 'a' and Temp gt 20.0".
    #[arg(long)]
    filter: Option<String>,
    /// Only these properties (comma-separated).
    #[arg(long, value_delimiter = ',')]
    select: Option<Vec<String>>,
    /// At most N entities per page (1..=1000).
    #[arg(long)]
    top: Option<u32>,
    /// Follow continuation tokens to the end (prints every match).
    #[arg(long, conflicts_with = "continue_token")]
    all: bool,
    /// Resume after a previous page, with the token it printed.
    #[arg(long = "continue", value_name = "TOKEN")]
    continue_token: Option<String>,
}

/// Arguments of `delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The table.
    table: String,
    /// The PartitionKey.
    partition_key: String,
    /// The RowKey.
    row_key: String,
    /// If-Match ETag (default `*`).
    #[arg(long)]
    etag: Option<String>,
}

/// Arguments of `batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The table.
    table: String,
    /// JSON Lines file of operations (`-` for standard input).
    file: PathBuf,
    /// Give a property's type, e.g. `--type Count=Edm.Int64` (repeatable).
    #[arg(long = "type", value_name = "PROP=EDM")]
    types: Vec<String>,
}

fn if_match(etag: Option<&str>) -> Result<IfMatch> {
    match etag {
        None | Some("*") => Ok(IfMatch::Any),
        Some(text) => ETag::parse(text)
            .map(IfMatch::Etag)
            .map_err(|e| CliError::Usage(format!("--etag: {e}"))),
    }
}

/// Runs `put`.
pub fn put(global: &Global, args: &PutArgs) -> Result<()> {
    let text = if args.entity == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| CliError::Io(format!("cannot read standard input: {e}")))?
    } else {
        args.entity.clone()
    };
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError::Data(format!("the entity is not valid JSON: {e}")))?;
    let types = TypeOverrides::parse(&args.types)?;
    let entity = entity_from_json(&json, &types, &KeyColumns::default())?;
    let account = global.open_write()?;
    let table = account.table(&args.table)?;
    let condition = if_match(args.etag.as_deref())?;
    let etag = match args.mode {
        PutMode::Insert => table.insert(&entity)?,
        PutMode::Replace => table.replace(&entity, condition)?,
        PutMode::Merge => table.merge(&entity, condition)?,
        PutMode::Upsert => table.insert_or_replace(&entity)?,
        PutMode::UpsertMerge => table.insert_or_merge(&entity)?,
    };
    println!("{etag}");
    Ok(())
}

/// Runs `get`.
pub fn get(global: &Global, args: &GetArgs) -> Result<()> {
    let account = global.open_read()?;
    let table = account.table(&args.table)?;
    let select: Option<Vec<&str>> = args
        .select
        .as_ref()
        .map(|s| s.iter().map(String::as_str).collect());
    let stored = table.get(&args.partition_key, &args.row_key, select.as_deref())?;
    print_entity(global.format, &stored)
}

/// Runs `query`.
pub fn query(global: &Global, args: &QueryArgs) -> Result<()> {
    let account = global.open_read()?;
    let table = account.table(&args.table)?;
    let continuation = args
        .continue_token
        .as_deref()
        .map(ContinuationToken::parse)
        .transpose()
        .map_err(|e| CliError::Usage(format!("--continue: {e}")))?;
    let query = Query {
        filter: args.filter.clone(),
        select: args.select.clone(),
        top: args.top,
        continuation,
    };
    if args.all {
        let mut all = Vec::new();
        for item in table.query_all(query) {
            all.push(item?);
        }
        return print_entities(global.format, &all, None);
    }
    let page = table.query(&query)?;
    let token = page.continuation.as_ref().map(ToString::to_string);
    print_entities(global.format, &page.entities, token.as_deref())
}

/// Runs `delete`.
pub fn delete(global: &Global, args: &DeleteArgs) -> Result<()> {
    let account = global.open_write()?;
    let table = account.table(&args.table)?;
    table.delete(
        &args.partition_key,
        &args.row_key,
        if_match(args.etag.as_deref())?,
    )?;
    eprintln!("deleted ({}, {})", args.partition_key, args.row_key);
    Ok(())
}

/// Member of a batch line naming its operation.
const OP_MEMBER: &str = "@op";
/// Member of a batch line carrying its If-Match ETag.
const ETAG_MEMBER: &str = "@etag";

/// Runs `batch`: every line of the file becomes one operation of one atomic batch.
pub fn batch(global: &Global, args: &BatchArgs) -> Result<()> {
    let types = TypeOverrides::parse(&args.types)?;
    let reader = super::import::open_input(&args.file)?;
    let mut ops = Vec::new();
    for (index, line) in reader.lines().enumerate() {
        let where_ = format!("{} line {}", args.file.display(), index + 1);
        let line = line.map_err(|e| CliError::Io(format!("cannot read {where_}: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let json: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| CliError::Data(format!("{where_}: not valid JSON: {e}")))?;
        let op = json
            .get(OP_MEMBER)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("insert")
            .to_owned();
        let etag = json
            .get(ETAG_MEMBER)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        let entity = entity_from_json(&json, &types, &KeyColumns::default())
            .map_err(|e| e.context(&where_))?;
        ops.push((where_, op, if_match(etag.as_deref())?, entity));
    }
    let Some((_, _, _, first)) = ops.first() else {
        return Err(CliError::Data(format!(
            "{} holds no operations",
            args.file.display()
        )));
    };
    let pk = first.partition_key().as_str().to_owned();
    let account = global.open_write()?;
    let table = account.table(&args.table)?;
    let mut batch = table.batch(&pk)?;
    let count = ops.len();
    let lines: Vec<String> = ops.iter().map(|(w, ..)| w.clone()).collect();
    for (where_, op, condition, entity) in ops {
        match op.as_str() {
            "insert" => batch.insert(entity),
            "replace" => batch.replace(entity, condition),
            "merge" => batch.merge(entity, condition),
            "upsert" => batch.insert_or_replace(entity),
            "upsert-merge" => batch.insert_or_merge(entity),
            "delete" => batch.delete(RowKey::new(entity.row_key().as_str())?, condition),
            other => {
                return Err(CliError::Data(format!(
                    "{where_}: unknown {OP_MEMBER} {other:?}; use insert, replace, merge, upsert, upsert-merge or delete"
                )));
            }
        };
    }
    batch.submit().map_err(|err| match &err {
        TableError::BatchOperationFailed { index, source } => {
            let at = lines.get(*index).cloned().unwrap_or_default();
            CliError::Data(format!(
                "operation {index} ({at}) failed, nothing was applied: {source} [{}]",
                source.azure_code()
            ))
        }
        _ => CliError::from(err),
    })?;
    eprintln!("applied {count} operations atomically to partition {pk:?}");
    Ok(())
}
