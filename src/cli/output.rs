//! Printing entities and tables of values as `table`, `json`, `jsonl` or `csv`.

use std::collections::BTreeSet;
use std::io::Write;

use serde_json::Value as Json;
use strata::StoredEntity;

use super::error::{CliError, Result};
use super::json::{PARTITION_KEY, ROW_KEY, TIMESTAMP, entity_to_json};

/// Output format of the everyday commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for people.
    Table,
    /// One JSON document (pretty-printed).
    Json,
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
}

/// Maps a write failure on stdout (e.g. a closed pipe) to an I/O error.
pub fn stdout_err(err: impl std::fmt::Display) -> CliError {
    CliError::Io(format!("cannot write to standard output: {err}"))
}

/// Prints rows of `(column, value)` records, e.g. the table list or stats.
pub fn print_records(format: Format, columns: &[&str], rows: &[Vec<Json>]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json | Format::Jsonl => {
            let objects: Vec<Json> = rows
                .iter()
                .map(|row| {
                    Json::Object(
                        columns
                            .iter()
                            .zip(row)
                            .map(|(c, v)| ((*c).to_owned(), v.clone()))
                            .collect(),
                    )
                })
                .collect();
            if format == Format::Json {
                serde_json::to_writer_pretty(&mut out, &objects).map_err(stdout_err)?;
                writeln!(out).map_err(stdout_err)?;
            } else {
                for o in objects {
                    serde_json::to_writer(&mut out, &o).map_err(stdout_err)?;
                    writeln!(out).map_err(stdout_err)?;
                }
            }
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(columns).map_err(stdout_err)?;
            for row in rows {
                w.write_record(row.iter().map(cell)).map_err(stdout_err)?;
            }
            w.flush().map_err(stdout_err)?;
        }
        Format::Table => {
            let cells: Vec<Vec<String>> =
                rows.iter().map(|r| r.iter().map(cell).collect()).collect();
            print_aligned(&mut out, columns, &cells)?;
        }
    }
    Ok(())
}

/// The text of a JSON value in a cell: strings unquoted, null empty.
fn cell(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        other => other.to_string(),
    }
}

fn print_aligned(out: &mut impl Write, columns: &[&str], rows: &[Vec<String>]) -> Result<()> {
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |out: &mut dyn Write, cells: &mut dyn Iterator<Item = &str>| -> Result<()> {
        let mut first = true;
        for (cell, width) in cells.zip(&widths) {
            if !first {
                write!(out, "  ").map_err(stdout_err)?;
            }
            first = false;
            write!(out, "{cell:<width$}").map_err(stdout_err)?;
        }
        writeln!(out).map_err(stdout_err)
    };
    line(out, &mut columns.iter().copied())?;
    for row in rows {
        line(out, &mut row.iter().map(String::as_str))?;
    }
    Ok(())
}

/// Prints entities; `continuation` (if any) goes into the JSON document, or to stderr.
pub fn print_entities(
    format: Format,
    entities: &[StoredEntity],
    continuation: Option<&str>,
) -> Result<()> {
    let objects: Vec<Json> = entities.iter().map(entity_to_json).collect();
    if format == Format::Json {
        let mut doc = serde_json::Map::new();
        doc.insert("value".to_owned(), Json::Array(objects));
        if let Some(token) = continuation {
            doc.insert("continuation".to_owned(), Json::String(token.to_owned()));
        }
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &Json::Object(doc)).map_err(stdout_err)?;
        writeln!(out).map_err(stdout_err)?;
        return Ok(());
    }
    let mut names: BTreeSet<String> = BTreeSet::new();
    for e in entities {
        names.extend(
            e.entity
                .properties()
                .iter()
                .map(|(n, _)| n.as_str().to_owned()),
        );
    }
    let mut columns = vec![PARTITION_KEY, ROW_KEY, TIMESTAMP];
    columns.extend(names.iter().map(String::as_str));
    let rows: Vec<Vec<Json>> = objects
        .iter()
        .map(|o| {
            columns
                .iter()
                .map(|c| o.get(*c).cloned().unwrap_or(Json::Null))
                .collect()
        })
        .collect();
    if format == Format::Jsonl {
        let mut out = std::io::stdout().lock();
        for o in &objects {
            serde_json::to_writer(&mut out, o).map_err(stdout_err)?;
            writeln!(out).map_err(stdout_err)?;
        }
    } else {
        print_records(format, &columns, &rows)?;
    }
    if let Some(token) = continuation {
        eprintln!("more results: continue with --continue {token}");
    }
    Ok(())
}

/// Prints one entity (for `get`).
pub fn print_entity(format: Format, entity: &StoredEntity) -> Result<()> {
    if format == Format::Json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &entity_to_json(entity)).map_err(stdout_err)?;
        writeln!(out).map_err(stdout_err)?;
        return Ok(());
    }
    print_entities(format, std::slice::from_ref(entity), None)
}
