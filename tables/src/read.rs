//! A dataset written by `analyze --out` read back as one `DataFrame` per
//! table: every part of the table (Parquet, CSV or JSON lines, as found),
//! concatenated diagonally (parameter columns differ between sweeps).

use crate::dataset::{part_key, DONE_DIR};
use anyhow::Context;
use polars::functions::concat_df_diagonal;
use polars::prelude::{
    CsvReadOptions, DataFrame, DataType, JsonFormat, JsonReader, ParquetReader, SerReader,
};
use std::path::{Path, PathBuf};

/// Whether `dir` looks like a dataset written by `analyze --out` (it has
/// the completion records and a `files` table).
pub fn is_dataset(dir: &Path) -> bool {
    dir.join(DONE_DIR).is_dir() && dir.join("files").is_dir()
}

/// The part files of `table` (`part-<key>.<ext>`), in name order; hidden
/// unfinished parts and stray files are not parts.
pub fn parts(root: &Path, table: &str) -> anyhow::Result<Vec<PathBuf>> {
    let dir = root.join(table);
    let entries = std::fs::read_dir(&dir)
        .with_context(|| format!("{}: no `{table}` table here", dir.display()))?;
    let mut parts: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| part_key(p).is_some() && p.is_file())
        .collect();
    parts.sort();
    Ok(parts)
}

fn read_part(path: &Path) -> anyhow::Result<DataFrame> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let df = match ext {
        "parquet" => ParquetReader::new(std::fs::File::open(path)?).finish()?,
        "csv" => CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(None)
            .try_into_reader_with_file_path(Some(path.to_owned()))?
            .finish()?,
        "jsonl" => JsonReader::new(std::fs::File::open(path)?)
            .with_json_format(JsonFormat::JsonLines)
            .infer_schema_len(None)
            .finish()?,
        other => anyhow::bail!("unknown part file type `{other}`"),
    };
    Ok(df)
}

/// The whole table; `None` when it has no parts at all.
pub fn read_table(root: &Path, table: &str) -> anyhow::Result<Option<DataFrame>> {
    read_table_of(root, table, None)
}

/// The table's parts of the inputs with these keys
/// ([`crate::dataset::key`]) only, or all of them.
pub fn read_table_of(
    root: &Path,
    table: &str,
    keys: Option<&std::collections::HashSet<String>>,
) -> anyhow::Result<Option<DataFrame>> {
    let mut frames = Vec::new();
    for part in parts(root, table)? {
        let key = part_key(&part).unwrap_or("");
        if keys.is_some_and(|k| !k.contains(key)) {
            continue;
        }
        let df = read_part(&part).with_context(|| format!("reading {}", part.display()))?;
        frames.push(df);
    }
    if frames.is_empty() {
        return Ok(None);
    }
    unify_types(&mut frames)?;
    let df = concat_df_diagonal(&frames).with_context(|| {
        format!(
            "{}: the parts of `{table}` do not fit together",
            root.display()
        )
    })?;
    Ok(Some(df))
}

/// A column whose values are all null may come back with another type than
/// in parts that hold values (a time zone lost, a CSV column read as text):
/// each column takes the type of the part with the most values in it.
fn unify_types(frames: &mut [DataFrame]) -> anyhow::Result<()> {
    let mut best: std::collections::HashMap<String, (usize, DataType)> =
        std::collections::HashMap::new();
    for df in frames.iter() {
        for c in df.columns() {
            let values = c.len() - c.null_count();
            let entry = best
                .entry(c.name().to_string())
                .or_insert((values, c.dtype().clone()));
            if values > entry.0 {
                *entry = (values, c.dtype().clone());
            }
        }
    }
    // Two parts holding values of different types (a parameter `fast` in
    // one sweep, `100` in another): both become text, nothing is nulled.
    let mut conflicting: std::collections::HashSet<String> = std::collections::HashSet::new();
    for df in frames.iter() {
        for c in df.columns() {
            if let Some((_, ty)) = best.get(c.name().as_str()) {
                if c.dtype() != ty && c.len() > c.null_count() {
                    conflicting.insert(c.name().to_string());
                }
            }
        }
    }
    for name in &conflicting {
        if let Some(entry) = best.get_mut(name) {
            entry.1 = DataType::String;
        }
    }
    for df in frames.iter_mut() {
        let mismatched: Vec<(String, DataType)> = df
            .columns()
            .iter()
            .filter_map(|c| {
                let (_, ty) = best.get(c.name().as_str())?;
                (c.dtype() != ty).then(|| (c.name().to_string(), ty.clone()))
            })
            .collect();
        for (name, ty) in mismatched {
            let cast = df.column(&name)?.cast(&ty)?;
            df.with_column(cast)?;
        }
    }
    Ok(())
}
