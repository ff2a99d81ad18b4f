//! `sctp_handover._native`: the Python bindings. Everything here is a thin
//! layer over `sctp-handover-tables` — the same inputs, analysis, rows and
//! part writers as `sctp-handover analyze --out` — so a capture analysed by
//! a Ray, Dask or Spark task gives the same rows and the same part files as
//! the command line. Tables cross to Python as Arrow C streams (the
//! PyCapsule interface, `__arrow_c_stream__`): pyarrow, polars, DuckDB take
//! them without a copy.

#![warn(missing_docs)]

use polars::prelude::{CompatLevel, DataFrame};
use polars_arrow::array::{Array, StructArray};
use polars_arrow::datatypes::{ArrowDataType, Field};
use polars_arrow::ffi;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyCapsule, PyDict, PyList};
use sctp_handover::analysis::{AssociationPart, AssociationReport, ReportSink};
use sctp_handover::capture::sniff_reader;
use sctp_handover::handover::CapturePoint;
use sctp_handover_live::filter::BpfFilter;
use sctp_handover_tables::batch::{self, BatchConfig, Outcome};
use sctp_handover_tables::dataset::{self, Dataset};
use sctp_handover_tables::inputs::{self, Input, InputKind, InputStream};
use sctp_handover_tables::records::{file_row, AssociationTables, FileOutcome};
use sctp_handover_tables::rows::Rows;
use sctp_handover_tables::schema;
use sctp_handover_tables::write::{self, ParamType, ParquetCodec, TableFormat};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

mod options;

/// Stack of the thread an analysis runs on: the batch's workers have the
/// same (polars' frames are large in unoptimised builds), a Python
/// thread's default may be smaller.
const STACK: usize = 16 << 20;

/// Bytes asked of a Python stream at a time: the capture reader's buffer
/// asks for less, and each call takes the GIL (and, for an object store,
/// may be a request of its own).
const STREAM_CHUNK: usize = 1 << 20;

/// A Python readable object (`read(n) -> bytes`: a pyarrow input stream
/// of an object in S3, an fsspec file, `io.BytesIO`) as a Rust reader:
/// the analysis reads the capture as it arrives, through the same
/// streaming reader as `analyze -` reads standard input. An exception of
/// `read` is an I/O error of the input, with the exception's text: the
/// input is `failed` (`CaptureError::ReadFailed`), not `truncated`.
struct PyStream {
    file: Py<PyAny>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for PyStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.chunk.len() {
            let chunk = Python::attach(|py| -> PyResult<Vec<u8>> {
                let data = self
                    .file
                    .bind(py)
                    .call_method1("read", (buf.len().max(STREAM_CHUNK),))?;
                Ok(data.extract::<PyBackedBytes>()?.to_vec())
            })
            .map_err(|e| std::io::Error::other(e.to_string()))?;
            self.chunk = chunk;
            self.at = 0;
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The input at `path` (or, given `stream`, read from it: `path` then
/// only finds the harness files mirrored beside it), with the `source`,
/// size and modification time the listing gave.
fn input_from(
    path: &Path,
    kind: InputKind,
    source: Option<String>,
    stream: Option<Py<PyAny>>,
    size: Option<u64>,
    modified_ns: Option<i128>,
) -> Input {
    let mut input = inputs::input(path, kind);
    if let Some(source) = source {
        input.source = source;
    }
    if let Some(file) = stream {
        input.stream = Some(InputStream::new(
            input.source.clone(),
            PyStream {
                file,
                chunk: Vec::new(),
                at: 0,
            },
        ));
        // The local path names no file: what the listing said.
        input.size = size;
        input.modified_ns = modified_ns;
    } else {
        input.size = size.or(input.size);
        input.modified_ns = modified_ns.or(input.modified_ns);
    }
    input
}

/// One table: a polars frame, exported to Arrow on request.
#[pyclass(module = "sctp_handover._native", name = "ArrowTable", frozen)]
struct ArrowTable {
    df: DataFrame,
}

#[pymethods]
impl ArrowTable {
    /// The Arrow PyCapsule interface: an `ArrowArrayStream` of struct
    /// arrays, one per chunk, sharing the frame's buffers (no copy).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is the tables' own; a requested one is a hint only.
        let _ = requested_schema;
        let compat = CompatLevel::newest();
        let fields: Vec<Field> = self
            .df
            .columns()
            .iter()
            .map(|c| c.field().to_arrow(compat))
            .collect();
        let dtype = ArrowDataType::Struct(fields);
        let mut batches: Vec<polars::prelude::PolarsResult<Box<dyn Array>>> = Vec::new();
        for batch in self.df.iter_chunks(compat, false) {
            let height = batch.height();
            let (_, arrays) = batch.into_schema_and_arrays();
            batches.push(Ok(
                StructArray::new(dtype.clone(), height, arrays, None).boxed()
            ));
        }
        let stream = ffi::export_iterator(
            Box::new(batches.into_iter()),
            Field::new("".into(), dtype, false),
        );
        // The consumer moves the stream out (its release set to null);
        // one never consumed is released when the capsule is dropped.
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    fn __len__(&self) -> usize {
        self.df.height()
    }

    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.df
            .get_column_names()
            .iter()
            .map(|n| n.to_string())
            .collect()
    }
}

fn table(mut df: DataFrame) -> ArrowTable {
    df.rechunk_mut();
    ArrowTable { df }
}

fn format_from(name: &str, parquet_compression: &str) -> PyResult<TableFormat> {
    let codec = ParquetCodec::from_name(parquet_compression).ok_or_else(|| {
        PyValueError::new_err(format!(
            "parquet_compression {parquet_compression:?}: expected snappy, zstd, lz4 or none"
        ))
    })?;
    match name {
        "parquet" => Ok(TableFormat::Parquet(codec)),
        "csv" => Ok(TableFormat::Csv),
        "jsonl" => Ok(TableFormat::JsonLines),
        _ => Err(PyValueError::new_err(format!(
            "table_format {name:?}: expected parquet, csv or jsonl"
        ))),
    }
}

fn config_from(
    out: PathBuf,
    format: TableFormat,
    force: bool,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<BatchConfig> {
    let request = options::request_from(options)?;
    let mut options = request
        .settings
        .options()
        .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    if let Some(expression) = &request.filter {
        let filter =
            BpfFilter::new(expression).map_err(|e| PyValueError::new_err(e.to_string()))?;
        options.frame_filter = Some(Arc::new(filter));
    }
    let harness_files = request.harness_files;
    Ok(BatchConfig {
        out,
        format,
        jobs: 1,
        force,
        shard: None,
        options,
        harness_files,
    })
}

/// Runs `f` on a thread of its own with a large stack, without the GIL.
fn off_gil<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    py.detach(|| {
        std::thread::Builder::new()
            .name("sctp-handover".into())
            .stack_size(STACK)
            .spawn(f)
            .map_err(|e| format!("cannot start a thread: {e}"))?
            .join()
            .map_err(|_| "the analysis thread stopped".to_string())
    })
    .map_err(PyRuntimeError::new_err)
}

/// Collects every table of one capture in memory.
struct Collect {
    tables: AssociationTables,
    capture_point: CapturePoint,
}

impl ReportSink for Collect {
    fn part(&mut self, part: AssociationPart) {
        self.tables.add_part(&part, self.capture_point);
    }

    fn association(&mut self, report: AssociationReport) {
        self.tables.add(&report, self.capture_point);
    }
}

fn param_type(name: &str) -> PyResult<ParamType> {
    match name {
        "number" => Ok(ParamType::Number),
        "text" => Ok(ParamType::Text),
        _ => Err(PyValueError::new_err(format!(
            "parameter type {name:?}: expected number or text"
        ))),
    }
}

fn param_type_name(t: ParamType) -> &'static str {
    match t {
        ParamType::Number => "number",
        ParamType::Text => "text",
    }
}

/// analyze_capture(path, *, source=None, stream=None, size=None,
/// modified_ns=None, **options) -> dict[str, ArrowTable]
///
/// The six tables of one capture (files first), as `analyze --out` would
/// write them. A capture that cannot be analysed gives its `files` row
/// with status `failed` and the error, and empty tables; only a bad
/// option raises. With `stream` (a readable object), the capture is read
/// from it as it arrives and `path` only finds the harness files beside
/// it; `source` (default `path`) names it.
#[pyfunction]
#[pyo3(signature = (path, *, source=None, stream=None, size=None, modified_ns=None, **options))]
fn analyze_capture<'py>(
    py: Python<'py>,
    path: PathBuf,
    source: Option<String>,
    stream: Option<Py<PyAny>>,
    size: Option<u64>,
    modified_ns: Option<i128>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let config = config_from(PathBuf::new(), TableFormat::PARQUET, false, options)?;
    let input = input_from(&path, InputKind::Capture, source, stream, size, modified_ns);
    let frames = off_gil(
        py,
        move || -> anyhow::Result<Vec<(&'static str, DataFrame)>> {
            let started = Instant::now();
            let (planned, params) = batch::plan(vec![input], None);
            let input = &planned[0];
            let provenance = batch::provenance(input, &params);
            let mut sink = Collect {
                tables: AssociationTables::new(),
                capture_point: config.options.handover.capture_point,
            };
            let analysed =
                batch::analyze_input(input, &config, &mut sink, |s, p| s.capture_point = p);
            if analysed.status == "failed" {
                sink.tables = AssociationTables::new();
            }
            let mut files = Rows::new(&schema::FILES);
            file_row(
                &mut files,
                &FileOutcome {
                    status: analysed.status,
                    error: analysed.error,
                    size_bytes: input.size,
                    report: analysed.report.as_ref(),
                    seconds: started.elapsed().as_secs_f64(),
                },
            );
            let mut out = vec![("files", write::take_frame(&mut files, &provenance)?)];
            for (name, rows) in sink.tables.by_name() {
                out.push((name, write::take_frame(rows, &provenance)?));
            }
            Ok(out)
        },
    )?
    .map_err(|e| PyRuntimeError::new_err(format!("{e:#}")))?;
    let dict = PyDict::new(py);
    for (name, df) in frames {
        dict.set_item(name, Bound::new(py, table(df))?)?;
    }
    Ok(dict)
}

/// analyze_points(points, **options) -> dict[str, ArrowTable]
///
/// Two capture points of the same traffic, `{name: path}` in order (the
/// first point's clock is the reference), as `analyze --point NAME=PATH
/// --point NAME=PATH --out` pairs them (the tables crate's `points`
/// module, the same code): the `points`, `owd` and `handovers_two_sided`
/// tables (docs/points.md). Other than two points, or one name twice,
/// raise ValueError; a capture that cannot be read, RuntimeError.
#[pyfunction]
#[pyo3(signature = (points, **options))]
fn analyze_points<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyDict>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut named: Vec<(String, PathBuf)> = Vec::with_capacity(2);
    for (name, path) in points.iter() {
        named.push((name.extract()?, path.extract()?));
    }
    if named.len() != 2 {
        return Err(PyValueError::new_err(format!(
            "points: exactly two capture points are supported, {} given",
            named.len()
        )));
    }
    if named[0].0 == named[1].0 {
        return Err(PyValueError::new_err(format!(
            "points: the two points need different names, both are {:?}",
            named[0].0
        )));
    }
    let config = config_from(PathBuf::new(), TableFormat::PARQUET, false, options)?;
    let names = [named[0].0.clone(), named[1].0.clone()];
    let captures: Vec<Input> = named
        .iter()
        .map(|(_, path)| inputs::input(path, InputKind::Capture))
        .collect();
    let frames = off_gil(
        py,
        move || -> anyhow::Result<Vec<(&'static str, DataFrame)>> {
            // `plan` keeps the inputs' order: that of the points.
            let (planned, params) = batch::plan(captures, None);
            let mut provenance = batch::provenance(&planned[0], &params);
            // Rows of a pair of points belong to neither capture side.
            provenance.capture_side = None;
            sctp_handover_tables::points::pair_frames(&planned, &names, &config, &provenance)
        },
    )?
    .map_err(|e| PyRuntimeError::new_err(format!("{e:#}")))?;
    let dict = PyDict::new(py);
    for (name, df) in frames {
        dict.set_item(name, Bound::new(py, table(df))?)?;
    }
    Ok(dict)
}

fn manifest_row<'py>(
    py: Python<'py>,
    outcome: &Outcome,
    key: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let row = PyDict::new(py);
    row.set_item("source", &outcome.source)?;
    row.set_item("key", key)?;
    row.set_item("status", &outcome.status)?;
    row.set_item("error", &outcome.error)?;
    row.set_item("associations", outcome.associations)?;
    row.set_item("handovers", outcome.handovers)?;
    row.set_item("bytes", outcome.bytes)?;
    row.set_item("reused", outcome.reused)?;
    row.set_item("seconds", outcome.seconds)?;
    Ok(row)
}

fn input_kind(kind: &str, reason: Option<String>) -> InputKind {
    let reason = reason.unwrap_or_default();
    match kind {
        "not_capture" => InputKind::NotCapture(reason),
        "unreadable" => InputKind::Unreadable(reason),
        _ => InputKind::Capture,
    }
}

/// write_capture(path, out_root, *, source=None, kind="capture",
/// reason=None, params=None, table_format="parquet",
/// parquet_compression="snappy", force=False, stream=None, size=None,
/// modified_ns=None, **options) -> dict
///
/// Analyses one input and writes its part files into the dataset at
/// `out_root` (`<table>/part-<key>.<ext>`, then `_inputs/<key>.json`), the
/// same files `analyze --out` writes; an input already complete there with
/// the same options is not analysed again (`reused`). The temporaries of
/// killed runs are not looked for (`open_dataset` does, once per run). `source` is the
/// path as the run found it (the `source` column and the part key; default
/// `path`), `kind`/`reason` what the listing said of it, `params` the
/// run's parameter columns as (name, "number" | "text") pairs (from
/// `list_inputs`). With `stream` (a readable object), the capture is read
/// from it as it arrives, `path` only finds the harness files mirrored
/// beside it, and `size`/`modified_ns` (what the listing said) decide
/// whether the dataset's record of it is current. Returns the input's
/// manifest row; never raises for a bad input or a failed write: the row
/// says `failed` and why. A read of the file or stream that fails (an
/// exception of `stream.read`, an EIO) makes the input `failed` with the
/// cause and writes no record: the next call reads it again.
#[pyfunction]
#[pyo3(signature = (path, out_root, *, source=None, kind="capture", reason=None, params=None, table_format="parquet", parquet_compression="snappy", force=false, stream=None, size=None, modified_ns=None, **options))]
#[allow(clippy::too_many_arguments)]
fn write_capture<'py>(
    py: Python<'py>,
    path: PathBuf,
    out_root: PathBuf,
    source: Option<String>,
    kind: &str,
    reason: Option<String>,
    params: Option<Vec<(String, String)>>,
    table_format: &str,
    parquet_compression: &str,
    force: bool,
    stream: Option<Py<PyAny>>,
    size: Option<u64>,
    modified_ns: Option<i128>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let input = input_from(
        &path,
        input_kind(kind, reason),
        source,
        stream,
        size,
        modified_ns,
    );
    let key = dataset::key(&input.source);
    let fail = |py: Python<'py>, input: &Input, error: String| {
        manifest_row(
            py,
            &Outcome {
                source: input.source.clone(),
                status: "failed".into(),
                error: Some(error),
                associations: 0,
                handovers: 0,
                bytes: input.size.unwrap_or(0),
                reused: false,
                seconds: 0.0,
            },
            &key,
        )
    };
    let prepared = (|| -> PyResult<(BatchConfig, Vec<(String, ParamType)>)> {
        let format = format_from(table_format, parquet_compression)?;
        let config = config_from(out_root.clone(), format, force, options)?;
        let params = match params {
            Some(p) => p
                .into_iter()
                .map(|(n, t)| Ok((n, param_type(&t)?)))
                .collect::<PyResult<_>>()?,
            // One input alone: its own parameters.
            None => batch::plan(vec![input.clone()], None).1,
        };
        Ok((config, params))
    })();
    let (config, params) = match prepared {
        Ok(p) => p,
        Err(e) => return fail(py, &input, e.to_string()),
    };
    let task_input = input.clone();
    let outcome = off_gil(py, move || -> anyhow::Result<Outcome> {
        let dataset = Dataset::attach(&config.out, config.format)?;
        let fingerprint = batch::fingerprint(&config);
        Ok(batch::run_one(
            &task_input,
            &params,
            &config,
            &dataset,
            &fingerprint,
        ))
    });
    match outcome {
        Ok(Ok(o)) => manifest_row(py, &o, &key),
        Ok(Err(e)) => fail(py, &input, format!("{}: {e:#}", input.source)),
        Err(e) => fail(py, &input, format!("{}: {e}", input.source)),
    }
}

/// list_inputs(paths) -> (inputs, params, problems)
///
/// The inputs under `paths` as `analyze` finds them (directories walked,
/// sorted; captures told by their magic numbers): a list of dicts (path,
/// source, kind, reason, size), the run's parameter columns as (name,
/// type) pairs, and the (path, reason) of directories that could not be
/// listed.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn list_inputs<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
) -> PyResult<(
    Bound<'py, PyList>,
    Vec<(String, String)>,
    Vec<(String, String)>,
)> {
    let (found, problems) = py.detach(|| inputs::discover(&paths));
    let (list, params) = planned_inputs(py, found)?;
    let problems = problems
        .into_iter()
        .map(|p| (p.path.display().to_string(), p.reason))
        .collect();
    Ok((list, params, problems))
}

/// The inputs of a run as `list_inputs` gives them, and its parameter
/// columns.
#[allow(clippy::type_complexity)]
fn planned_inputs(
    py: Python<'_>,
    found: Vec<Input>,
) -> PyResult<(Bound<'_, PyList>, Vec<(String, String)>)> {
    let (planned, params) = batch::plan(found, None);
    let list = PyList::empty(py);
    for input in &planned {
        let d = PyDict::new(py);
        d.set_item("path", &input.path)?;
        d.set_item("source", &input.source)?;
        let (kind, reason) = match &input.kind {
            InputKind::Capture => ("capture", None),
            InputKind::NotCapture(r) => ("not_capture", Some(r.clone())),
            InputKind::Unreadable(r) => ("unreadable", Some(r.clone())),
        };
        d.set_item("kind", kind)?;
        d.set_item("reason", reason)?;
        d.set_item("size", input.size)?;
        d.set_item("modified_ns", input.modified_ns)?;
        d.set_item("key", dataset::key(&input.source))?;
        list.append(d)?;
    }
    let params = params
        .into_iter()
        .map(|(n, t)| (n, param_type_name(t).to_string()))
        .collect();
    Ok((list, params))
}

/// plan_inputs(entries) -> (inputs, params)
///
/// `list_inputs` for inputs another listing found (objects in object
/// storage): `entries` are (path, source, kind, reason, size,
/// modified_ns), `path` a local path where the harness files of the
/// input's run are mirrored (it need not exist). The inputs as
/// `list_inputs` gives them, and the run's parameter columns.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn plan_inputs<'py>(
    py: Python<'py>,
    entries: Vec<(
        PathBuf,
        String,
        String,
        Option<String>,
        Option<u64>,
        Option<i128>,
    )>,
) -> PyResult<(Bound<'py, PyList>, Vec<(String, String)>)> {
    let found = entries
        .into_iter()
        .map(|(path, source, kind, reason, size, modified_ns)| {
            let mut input = input_from(
                &path,
                input_kind(&kind, reason),
                Some(source),
                None,
                size,
                modified_ns,
            );
            // The mirror holds no capture: the listing's figures only.
            input.size = size;
            input.modified_ns = modified_ns;
            input
        })
        .collect();
    planned_inputs(py, found)
}

/// classify_found(name, head) -> (kind, reason) | None
///
/// What the walk of `analyze` makes of a file named `name` met in a
/// directory whose first bytes are `head` (64 KiB is enough for a gzip
/// header's first block): None when it is no input (hidden, a harness
/// file), else its kind (capture, not_capture, unreadable) and why.
#[pyfunction]
fn classify_found(name: &str, head: &[u8]) -> Option<(&'static str, Option<String>)> {
    if !inputs::is_candidate(name) {
        return None;
    }
    Some(
        match inputs::found_kind(name, sniff_reader(std::io::Cursor::new(head))) {
            InputKind::Capture => ("capture", None),
            InputKind::NotCapture(r) => ("not_capture", Some(r)),
            InputKind::Unreadable(r) => ("unreadable", Some(r)),
        },
    )
}

/// open_dataset(out_root, table_format="parquet"): creates the dataset's
/// directory and removes the temporaries killed runs on this machine left
/// (what `analyze --out` does once at its start; a driver calls it before
/// fanning out, the tasks do not).
#[pyfunction]
#[pyo3(signature = (out_root, table_format="parquet"))]
fn open_dataset(py: Python<'_>, out_root: PathBuf, table_format: &str) -> PyResult<()> {
    // The codec does not name any file.
    let format = format_from(table_format, "snappy")?;
    py.detach(|| Dataset::open(&out_root, format).map(|_| ()))
        .map_err(|e| PyRuntimeError::new_err(format!("{e:#}")))
}

/// check_options(**options): raises for an unknown or bad option (a
/// driver checks before fanning out, so that no task fails on it).
#[pyfunction]
#[pyo3(signature = (**options))]
fn check_options(options: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    config_from(PathBuf::new(), TableFormat::PARQUET, false, options).map(|_| ())
}

/// The key of a source (its part files are `part-<key>.<ext>`).
#[pyfunction]
fn part_key(source: &str) -> String {
    dataset::key(source)
}

/// Whether `path` names a part file (and not a temporary or a record).
#[pyfunction]
fn is_part(path: PathBuf) -> bool {
    dataset::part_key(Path::new(&path)).is_some()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowTable>()?;
    m.add_function(wrap_pyfunction!(analyze_capture, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_points, m)?)?;
    m.add_function(wrap_pyfunction!(write_capture, m)?)?;
    m.add_function(wrap_pyfunction!(list_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(plan_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(classify_found, m)?)?;
    m.add_function(wrap_pyfunction!(check_options, m)?)?;
    m.add_function(wrap_pyfunction!(open_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(part_key, m)?)?;
    m.add_function(wrap_pyfunction!(is_part, m)?)?;
    m.add_class::<options::AnalysisOption>()?;
    m.add("ANALYSIS_OPTIONS", options::exported(m.py())?)?;
    // The one version: python/Cargo.toml's (pyproject.toml takes it from
    // there too, `dynamic = ["version"]`).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let tables: Vec<&str> = schema::all().iter().map(|t| t.name).collect();
    m.add("TABLES", tables)?;
    Ok(())
}
