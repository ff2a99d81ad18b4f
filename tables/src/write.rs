//! Rows → polars `DataFrame` → one part file, written in batches to a
//! hidden temporary name and renamed into place only when complete.

use crate::rows::Rows;
use crate::schema;
use anyhow::Context;
use polars::prelude::{
    AnyValue, Column, CsvWriter, DataFrame, DataType, ParquetCompression, ParquetWriter,
    PlSmallStr, PolarsResult, Scalar, SerWriter,
};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Output format of the tables (`--table-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Apache Parquet (the default), its pages compressed with the codec.
    Parquet(ParquetCodec),
    /// Comma-separated text with a header line; a null is an empty field.
    Csv,
    /// Newline-delimited JSON, one object per row.
    JsonLines,
}

/// How Parquet pages are compressed (`--parquet-compression`).
///
/// Snappy is the default: every Parquet reader has it, and the batches
/// are small (about 2 400 rows a table) to keep memory flat, so a part has
/// many small pages; polars compresses each zstd page with a new zstd
/// context, which made `--out` 15–20 % slower on captures of many short
/// associations for files a quarter smaller (docs/performance.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParquetCodec {
    /// Snappy (the default).
    Snappy,
    /// Zstandard at polars' default level.
    Zstd,
    /// LZ4 (Parquet's `LZ4_RAW`).
    Lz4,
    /// No compression (`none`).
    Uncompressed,
}

impl ParquetCodec {
    /// The codec of a name as the command line spells it (snappy, zstd,
    /// lz4, none).
    pub fn from_name(name: &str) -> Option<ParquetCodec> {
        match name {
            "snappy" => Some(ParquetCodec::Snappy),
            "zstd" => Some(ParquetCodec::Zstd),
            "lz4" => Some(ParquetCodec::Lz4),
            "none" => Some(ParquetCodec::Uncompressed),
            _ => None,
        }
    }

    fn polars(self) -> ParquetCompression {
        match self {
            ParquetCodec::Snappy => ParquetCompression::Snappy,
            ParquetCodec::Zstd => ParquetCompression::Zstd(None),
            ParquetCodec::Lz4 => ParquetCompression::Lz4Raw,
            ParquetCodec::Uncompressed => ParquetCompression::Uncompressed,
        }
    }
}

impl TableFormat {
    /// Parquet with the default codec.
    pub const PARQUET: TableFormat = TableFormat::Parquet(ParquetCodec::Snappy);

    /// The part files' extension (`parquet`, `csv`, `jsonl`).
    pub fn extension(self) -> &'static str {
        match self {
            TableFormat::Parquet(_) => "parquet",
            TableFormat::Csv => "csv",
            TableFormat::JsonLines => "jsonl",
        }
    }
}

/// A parameter value of a harness sweep.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// A value that parses as a number (`hb_interval=1000`).
    Number(f64),
    /// Any other value, as written in the run directory's name.
    Text(String),
}

/// The constant columns every row of one input carries (schema::PROVENANCE,
/// then one column per swept parameter of the run).
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// The `source` column: the input's path as found.
    pub source: String,
    /// The harness scenario of the run the capture belongs to; None
    /// outside a harness run.
    pub scenario: Option<String>,
    /// The harness repetition (run directory `rNN`).
    pub repetition: Option<u64>,
    /// `mn` or `cn` for a harness capture named mn.pcap / cn.pcap.
    pub capture_side: Option<String>,
    /// Whether the harness run's scripted actions took effect.
    pub run_valid: Option<bool>,
    /// Why the run is invalid, one reason per action that did not take
    /// effect (`; `-separated), or why it could not be checked.
    pub run_invalid_reason: Option<String>,
    /// (column name without prefix, value or null), in the run's column
    /// order, with each column's type fixed for the whole run.
    pub params: Vec<(String, ParamType, Option<ParamValue>)>,
}

/// A parameter column's type, the same for every part of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// Float64: every value of the run is a number.
    Number,
    /// String: some value is not a number.
    Text,
}

/// A column of `height` copies of one value (a provenance column): polars
/// keeps the value once and repeats it only when it writes.
fn constant(
    name: impl Into<PlSmallStr>,
    dtype: DataType,
    value: AnyValue<'static>,
    height: usize,
) -> Column {
    Column::new_scalar(name.into(), Scalar::new(dtype, value), height)
}

fn constant_str(name: &str, v: Option<&str>, height: usize) -> Column {
    let value = v.map_or(AnyValue::Null, |s| AnyValue::StringOwned(s.into()));
    constant(name, DataType::String, value, height)
}

/// The data frame of a batch of rows, provenance columns first; the rows
/// start again empty (their buffers become the frame's).
pub fn take_frame(rows: &mut Rows, p: &Provenance) -> PolarsResult<DataFrame> {
    let height = rows.len();
    let mut columns =
        Vec::with_capacity(rows.columns.len() + schema::PROVENANCE.len() + p.params.len());
    columns.push(constant_str("source", Some(&p.source), height));
    columns.push(constant_str("scenario", p.scenario.as_deref(), height));
    columns.push(constant(
        "repetition",
        DataType::UInt64,
        p.repetition.map_or(AnyValue::Null, AnyValue::UInt64),
        height,
    ));
    columns.push(constant_str(
        "capture_side",
        p.capture_side.as_deref(),
        height,
    ));
    columns.push(constant(
        "run_valid",
        DataType::Boolean,
        p.run_valid.map_or(AnyValue::Null, AnyValue::Boolean),
        height,
    ));
    columns.push(constant_str(
        "run_invalid_reason",
        p.run_invalid_reason.as_deref(),
        height,
    ));
    for (name, ty, value) in &p.params {
        let col_name = format!("{}{name}", schema::PARAM_PREFIX);
        columns.push(match ty {
            ParamType::Number => {
                let v = match value {
                    Some(ParamValue::Number(x)) => AnyValue::Float64(*x),
                    _ => AnyValue::Null,
                };
                constant(col_name, DataType::Float64, v, height)
            }
            ParamType::Text => {
                let v = match value {
                    Some(ParamValue::Number(x)) => Some(x.to_string()),
                    Some(ParamValue::Text(s)) => Some(s.clone()),
                    None => None,
                };
                constant_str(&col_name, v.as_deref(), height)
            }
        });
    }
    columns.extend(rows.take_columns());
    DataFrame::new(height, columns)
}

/// The part's file, buffered, shared with the polars writer so that the
/// last buffer is flushed — and its error seen — after the writer is done
/// (a `BufWriter` dropped inside the writer would swallow that error).
#[derive(Clone)]
struct SharedFile(Arc<Mutex<Buffered>>);

struct Buffered {
    file: File,
    buffer: Vec<u8>,
}

const WRITE_BUFFER: usize = 64 << 10;

impl SharedFile {
    fn new(file: File) -> Self {
        SharedFile(Arc::new(Mutex::new(Buffered {
            file,
            buffer: Vec::with_capacity(WRITE_BUFFER),
        })))
    }
}

impl Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut b = self
            .0
            .lock()
            .map_err(|_| std::io::Error::other("part writer poisoned"))?;
        if b.buffer.len() + buf.len() > WRITE_BUFFER {
            let Buffered { file, buffer } = &mut *b;
            file.write_all(buffer)?;
            buffer.clear();
        }
        if buf.len() >= WRITE_BUFFER {
            b.file.write_all(buf)?;
        } else {
            b.buffer.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let mut b = self
            .0
            .lock()
            .map_err(|_| std::io::Error::other("part writer poisoned"))?;
        let Buffered { file, buffer } = &mut *b;
        file.write_all(buffer)?;
        buffer.clear();
        file.flush()
    }
}

enum Sink {
    Parquet(Box<polars::io::parquet::write::BatchedWriter<SharedFile>>),
    Csv(polars::io::csv::write::BatchedWriter<SharedFile>),
    Json(polars::io::json::BatchedWriter<SharedFile>),
}

/// Batches (Parquet row groups) per part file: a Parquet writer keeps the
/// metadata of every row group it wrote until the file's footer (about
/// 2 KB per column and row group in polars), so an input with more goes on
/// in another file, `part-<key>.1.<ext>`, and so on: memory stays bounded
/// however many rows an input has.
pub const BATCHES_PER_FILE: usize = 4;

/// One table's part for one input, written in batches: `part-<key>.<ext>`,
/// continued in `part-<key>.<n>.<ext>` after [`BATCHES_PER_FILE`] batches.
pub struct PartWriter {
    /// The current file: its hidden temporary and its final name.
    temp: PathBuf,
    path: PathBuf,
    /// The first file's final name (the others are numbered after it).
    first: PathBuf,
    /// Files completed, still under their temporary name: (temporary,
    /// final), renamed into place together by `finish`.
    completed: Vec<(PathBuf, PathBuf)>,
    format: TableFormat,
    sink: Option<Sink>,
    file: Option<SharedFile>,
    batches: usize,
    rows_written: u64,
}

/// The hidden sibling a part file is written to (readers skip names
/// starting with '.') until it is complete.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// `part-<key>.<ext>` → `part-<key>.<n>.<ext>`.
fn numbered(first: &Path, n: usize) -> PathBuf {
    let stem = first
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = first
        .extension()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    first.with_file_name(format!("{stem}.{n}.{ext}"))
}

impl PartWriter {
    /// `path` is the final name of the first file; files are written to a
    /// hidden sibling and renamed by `finish`.
    pub fn new(path: PathBuf, format: TableFormat) -> Self {
        PartWriter {
            temp: temporary(&path),
            first: path.clone(),
            path,
            completed: Vec::new(),
            format,
            sink: None,
            file: None,
            batches: 0,
            rows_written: 0,
        }
    }

    /// Completes the current file (its footer) under its temporary name;
    /// the next batch starts the next file.
    fn complete_file(&mut self) -> anyhow::Result<()> {
        match self.sink.take() {
            Some(Sink::Parquet(w)) => {
                w.finish()?;
            }
            Some(Sink::Csv(mut w)) => w.finish()?,
            Some(Sink::Json(_)) | None => {}
        }
        // No fsync: the rename makes a killed run safe (the page cache
        // outlives the process), and a sync per part costs more than the
        // analysis (docs/tables.md, "The dataset").
        if let Some(mut file) = self.file.take() {
            file.flush()
                .with_context(|| format!("cannot write {}", self.temp.display()))?;
        }
        self.completed.push((self.temp.clone(), self.path.clone()));
        self.batches = 0;
        self.path = numbered(&self.first, self.completed.len());
        self.temp = temporary(&self.path);
        Ok(())
    }

    /// Writes `rows`, which are empty afterwards even when writing fails
    /// (the caller then discards the whole part).
    pub fn write(&mut self, rows: &mut Rows, provenance: &Provenance) -> anyhow::Result<()> {
        if self.sink.is_some() && self.batches >= BATCHES_PER_FILE && !rows.is_empty() {
            self.complete_file()?;
        }
        let df = take_frame(rows, provenance).context("building a table batch")?;
        if self.sink.is_none() {
            if let Some(dir) = self.temp.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            let file = File::create(&self.temp)
                .with_context(|| format!("cannot create {}", self.temp.display()))?;
            let shared = SharedFile::new(file);
            self.file = Some(shared.clone());
            let out = shared;
            let schema = df.schema();
            self.sink = Some(match self.format {
                TableFormat::Parquet(codec) => Sink::Parquet(Box::new(
                    ParquetWriter::new(out)
                        .with_compression(codec.polars())
                        // A batch is a few thousand rows, and the batch
                        // runs one input a core: encoding its columns on
                        // polars' thread pool cost more than it gained
                        // (docs/performance.md, fifth round).
                        .set_parallel(false)
                        .batched(schema)?,
                )),
                TableFormat::Csv => Sink::Csv(
                    CsvWriter::new(out)
                        .include_header(true)
                        .with_datetime_format(Some("%Y-%m-%dT%H:%M:%S%.9fZ".into()))
                        .batched(schema)?,
                ),
                TableFormat::JsonLines => Sink::Json(polars::io::json::BatchedWriter::new(out)),
            });
        }
        match self.sink.as_mut() {
            Some(Sink::Parquet(w)) => w.write_batch(&df)?,
            Some(Sink::Csv(w)) => w.write_batch(&df)?,
            Some(Sink::Json(w)) => w.write_batch(&df)?,
            None => {}
        }
        self.rows_written += df.height() as u64;
        self.batches += 1;
        Ok(())
    }

    /// Completes the file and renames it into place. A part with no rows
    /// is still written, so that every table of every input exists.
    pub fn finish(mut self, rows: &mut Rows, provenance: &Provenance) -> anyhow::Result<u64> {
        if self.sink.is_none() || !rows.is_empty() {
            self.write(rows, provenance)?;
        }
        self.complete_file()?;
        let files = self.completed.len();
        for (temp, path) in std::mem::take(&mut self.completed) {
            std::fs::rename(&temp, &path).with_context(|| {
                format!("cannot rename {} to {}", temp.display(), path.display())
            })?;
        }
        // Files an earlier run wrote beyond these are not this part's.
        let mut n = files;
        loop {
            let stale = numbered(&self.first, n);
            if std::fs::remove_file(&stale).is_err() {
                break;
            }
            n += 1;
        }
        Ok(self.rows_written)
    }
}

impl Drop for PartWriter {
    fn drop(&mut self) {
        // An abandoned part (error, panic) leaves no temporary behind.
        if self.sink.is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
        for (temp, _) in &self.completed {
            let _ = std::fs::remove_file(temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{self, Ty};

    /// `n` rows of the events table whose first column counts from `first`.
    fn events(n: u64, first: u64) -> Rows {
        let mut rows = Rows::new(&schema::EVENTS);
        for i in 0..n {
            for (c, col) in schema::EVENTS.columns.iter().enumerate() {
                match col.ty {
                    Ty::U64 if c == 0 => rows.u64(first + i),
                    Ty::U64 => rows.u64(None),
                    Ty::F64 => rows.f64(None),
                    Ty::Str => rows.str(None::<String>),
                    Ty::Bool => rows.bool(None),
                    Ty::Time => rows.time(None),
                    Ty::I64 => panic!("the events table has no Int64 column"),
                };
            }
            rows.end();
        }
        rows
    }

    fn write_part(path: &Path, batches: u64) -> u64 {
        let provenance = Provenance {
            source: "x.pcap".into(),
            scenario: None,
            repetition: None,
            capture_side: None,
            run_valid: None,
            run_invalid_reason: None,
            params: Vec::new(),
        };
        let mut writer = PartWriter::new(path.to_owned(), TableFormat::PARQUET);
        for b in 0..batches {
            writer
                .write(&mut events(3, 3 * b), &provenance)
                .expect("write a batch");
        }
        writer
            .finish(&mut events(0, 0), &provenance)
            .expect("finish the part")
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list the table")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_long_part_goes_on_in_numbered_files_and_a_shorter_rerun_removes_the_extra_ones() {
        let root = std::env::temp_dir().join(format!("sctpho-part-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let table = root.join("events");
        std::fs::create_dir_all(&table).expect("create the table directory");
        let path = table.join("part-k.parquet");

        let batches = 2 * BATCHES_PER_FILE as u64 + 3;
        assert_eq!(write_part(&path, batches), 3 * batches);
        assert_eq!(
            files(&table),
            ["part-k.1.parquet", "part-k.2.parquet", "part-k.parquet"]
        );
        let df = crate::read::read_table(&root, "events")
            .expect("read the table back")
            .expect("rows");
        assert_eq!(df.height() as u64, 3 * batches);
        let mut first: Vec<Option<u64>> = df
            .column("association")
            .expect("the association column")
            .u64()
            .expect("the association column is UInt64")
            .iter()
            .collect();
        first.sort_unstable();
        let expected: Vec<Option<u64>> = (0..3 * batches).map(Some).collect();
        assert_eq!(first, expected);

        assert_eq!(write_part(&path, 2), 6);
        assert_eq!(files(&table), ["part-k.parquet"]);
        let df = crate::read::read_table(&root, "events")
            .expect("read the table back")
            .expect("rows");
        assert_eq!(df.height(), 6);
        std::fs::remove_dir_all(&root).expect("clean up");
    }
}
