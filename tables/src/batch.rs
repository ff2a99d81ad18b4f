//! The batch: every input analysed in parallel (worker threads), each streamed into
//! its part files, a bad input never stopping the others.

use crate::dataset::{self, Dataset, Done};
use crate::inputs::{self, Input, InputKind};
use crate::records::{file_row, AssociationTables, FileOutcome};
use crate::rows::Rows;
use crate::schema;
use crate::write::{ParamType, ParamValue, PartWriter, Provenance, TableFormat};
use sctp_handover::analysis::{
    analyze_reader, AnalysisOptions, AssociationPart, AssociationReport, FileReport, ReportSink,
};
use sctp_handover::handover::{anchors, CapturePoint};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Bytes of rows (values and text, all tables) buffered per input before
/// the largest table is written as a batch, a Parquet row group: bounds
/// the memory of the rows, of their data frame and of its encoding while
/// the analysis goes on (docs/performance.md).
pub const FLUSH_BYTES: usize = 1 << 20;

/// What an `analyze --out` run writes and how (the settings a dataset's
/// fingerprint is taken from, and how the work is shared out).
#[derive(Debug, Clone)]
pub struct BatchConfig {
    /// The dataset's directory (`--out`).
    pub out: PathBuf,
    /// The table format of its parts.
    pub format: TableFormat,
    /// Worker threads; 0 = all cores.
    pub jobs: usize,
    /// Redo inputs already complete in `out`.
    pub force: bool,
    /// (index, count), 0-based.
    pub shard: Option<(u64, u64)>,
    /// The analysis options every input is analysed with.
    pub options: AnalysisOptions,
    /// Use the harness's events.jsonl and capture side found beside a
    /// capture (when `options` has no anchors of its own).
    pub harness_files: bool,
}

/// How one input ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The input's path as found.
    pub source: String,
    /// `ok`, `truncated`, `failed`, `skipped`.
    pub status: String,
    /// Why it failed, was cut short or skipped; None when `ok`.
    pub error: Option<String>,
    /// Associations found.
    pub associations: u64,
    /// Handovers (data path switches) found.
    pub handovers: u64,
    /// The input's size in bytes (0 when unknown).
    pub bytes: u64,
    /// Already complete in the dataset; not analysed again.
    pub reused: bool,
    /// Wall-clock seconds its analysis and writing took.
    pub seconds: f64,
}

impl Outcome {
    /// Whether the input could not be analysed (what makes the run's exit
    /// status partial).
    pub fn failed(&self) -> bool {
        self.status == "failed"
    }
}

/// Told as the batch advances (from worker threads).
pub trait Progress: Sync {
    /// One input is done (analysed, reused, failed or skipped).
    fn input_done(&self, _outcome: &Outcome) {}
}

/// Nothing to tell.
pub struct Silent;
impl Progress for Silent {}

/// The inputs of this run (shard applied), and the parameter columns of
/// the run: one per swept parameter of any input, typed for all.
pub fn plan(
    inputs: Vec<Input>,
    shard: Option<(u64, u64)>,
) -> (Vec<Input>, Vec<(String, ParamType)>) {
    let inputs: Vec<Input> = match shard {
        Some((i, n)) => inputs
            .into_iter()
            .filter(|x| dataset::in_shard(&x.source, i, n))
            .collect(),
        None => inputs,
    };
    let mut params: Vec<(String, ParamType)> = Vec::new();
    for run in inputs.iter().filter_map(|i| i.run.as_ref()) {
        for (name, value) in &run.params {
            let numeric = value.parse::<f64>().is_ok();
            match params.iter_mut().find(|(n, _)| n == name) {
                Some((_, ty)) => {
                    if !numeric {
                        *ty = ParamType::Text;
                    }
                }
                None => params.push((
                    name.clone(),
                    if numeric {
                        ParamType::Number
                    } else {
                        ParamType::Text
                    },
                )),
            }
        }
    }
    (inputs, params)
}

/// What identifies the analysis settings in the dataset's records: a rerun
/// with other settings, by an analyzer whose results changed
/// ([`sctp_handover::RESULTS_REVISION`]) or into tables of another format
/// ([`schema::FORMAT_REVISION`]), redoes every input.
pub fn fingerprint(config: &BatchConfig) -> String {
    let mut options = config.options.clone();
    options.handover.anchors.clear();
    let text = format!(
        "{:?}|{:?}|{}|{}|{}|{}",
        options,
        config.format,
        config.harness_files,
        env!("CARGO_PKG_VERSION"),
        sctp_handover::RESULTS_REVISION,
        schema::FORMAT_REVISION
    );
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

/// Stack of each worker: room for an analysis and the table writers
/// (polars' frames are large in unoptimised builds).
const WORKER_STACK: usize = 16 << 20;

/// The workers of `analyze` without `--out`: `jobs` threads (0: one per
/// core).
pub fn worker_pool(jobs: usize) -> anyhow::Result<rayon::ThreadPool> {
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .stack_size(WORKER_STACK)
        .thread_name(|i| format!("analyze-{i}"))
        .build()?)
}

/// Runs the batch; outcomes in input order.
///
/// The workers are plain threads (`config.jobs`, 0: one per core) that
/// take the inputs in order, not a rayon pool: polars writes each batch of
/// rows on its own rayon pool, and a rayon worker waiting on another pool
/// runs its own pool's queued jobs meanwhile. Here those were the next
/// inputs, nested on the waiting worker's stack, each holding its analysis
/// until the ones above it finished: memory grew with the number of inputs
/// (5 MB per 25 MB capture).
pub fn run(
    inputs: Vec<Input>,
    params: &[(String, ParamType)],
    config: &BatchConfig,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<Outcome>> {
    let dataset = Dataset::open(&config.out, config.format)?;
    let fingerprint = fingerprint(config);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let jobs = if config.jobs == 0 { cores } else { config.jobs };
    let workers = jobs.min(inputs.len()).max(1);
    let next = AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Outcome>>> =
        inputs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for i in 0..workers {
            let (inputs, slots, next) = (&inputs, &slots, &next);
            let (dataset, fingerprint) = (&dataset, &fingerprint);
            let spawned = std::thread::Builder::new()
                .name(format!("analyze-{i}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let (Some(input), Some(slot)) = (inputs.get(k), slots.get(k)) else {
                        break;
                    };
                    // A panic outside the analysis (which catches its own)
                    // ends this input as failed, not the worker.
                    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        let outcome = run_one(input, params, config, dataset, fingerprint);
                        progress.input_done(&outcome);
                        outcome
                    }));
                    if let (Ok(outcome), Ok(mut s)) = (outcome, slot.lock()) {
                        *s = Some(outcome);
                    }
                });
            match spawned {
                Ok(_) => {}
                // Fewer workers than asked: the ones running take every input.
                Err(_) if i > 0 => break,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    })?;
    let outcomes = slots
        .into_iter()
        .zip(&inputs)
        .map(|(slot, input)| {
            slot.into_inner().ok().flatten().unwrap_or_else(|| Outcome {
                source: input.source.clone(),
                status: "failed".into(),
                error: Some(format!("{}: the worker analysing it stopped", input.source)),
                associations: 0,
                handovers: 0,
                bytes: 0,
                reused: false,
                seconds: 0.0,
            })
        })
        .collect();
    Ok(outcomes)
}

/// One input into `dataset`: its parts and then its record, or the record
/// it already has there (unless `config.force`). `params` are the run's
/// parameter columns ([`plan`]), `fingerprint` is [`fingerprint`]`(config)`.
/// Never fails: a bad input ends as an outcome with status `failed`.
/// Called by [`run`] and by the Python bindings (one task per input on a
/// Ray/Dask/Spark cluster), so both write the same dataset.
pub fn run_one(
    input: &Input,
    params: &[(String, ParamType)],
    config: &BatchConfig,
    dataset: &Dataset,
    fingerprint: &str,
) -> Outcome {
    match (!config.force && !input.is_stdin())
        .then(|| dataset.completed(input, fingerprint))
        .flatten()
    {
        Some(done) => Outcome {
            source: done.source,
            status: done.status,
            error: done.error,
            associations: done.associations,
            handovers: done.handovers,
            bytes: input.size.unwrap_or(0),
            reused: true,
            seconds: 0.0,
        },
        None => process(input, params, config, dataset, fingerprint),
    }
}

/// The provenance columns of an input (`watch --out` writes the same).
pub fn provenance(input: &Input, params: &[(String, ParamType)]) -> Provenance {
    let run = input.run.as_ref();
    Provenance {
        source: input.source.clone(),
        scenario: run.and_then(|r| r.scenario.clone()),
        repetition: run.and_then(|r| r.repetition),
        capture_side: run.and_then(|r| r.side.clone()),
        run_valid: run.and_then(|r| r.valid),
        run_invalid_reason: run.and_then(|r| r.invalid_reason.clone()),
        params: params
            .iter()
            .map(|(name, ty)| {
                let value = run
                    .and_then(|r| r.params.iter().find(|(n, _)| n == name))
                    .map(|(_, v)| match v.parse::<f64>() {
                        Ok(x) if *ty == ParamType::Number => ParamValue::Number(x),
                        _ => ParamValue::Text(v.clone()),
                    });
                (name.clone(), *ty, value)
            })
            .collect(),
    }
}

/// The analysis options of one input: the harness's event log and capture
/// side when it left them beside the capture and none were given.
pub fn options_for(input: &Input, config: &BatchConfig) -> Result<AnalysisOptions, String> {
    let mut options = config.options.clone();
    if !config.harness_files {
        return Ok(options);
    }
    let Some(run) = &input.run else {
        return Ok(options);
    };
    if options.handover.anchors.is_empty() {
        if let Some(events) = &run.events {
            options.handover.anchors = anchors::load(events).map_err(|e| e.to_string())?;
        }
    }
    if options.handover.capture_point == CapturePoint::Unknown {
        options.handover.capture_point = run
            .side
            .as_deref()
            .and_then(CapturePoint::of_harness_capture)
            .unwrap_or_default();
    }
    Ok(options)
}

/// One input's per-association tables on their way to its part files
/// (`analyze --out` and `watch --out`): rows are buffered and written every
/// [`FLUSH_BYTES`], so memory stays bounded. The first write error stops the
/// writing and is returned by [`PartTables::finish`].
pub struct PartTables {
    tables: AssociationTables,
    writers: Vec<PartWriter>,
    /// The input's capture point (each handover row carries it).
    pub capture_point: CapturePoint,
    error: Option<String>,
}

impl PartTables {
    /// Empty tables for the input of part key `key` in `dataset`; every
    /// handover row gets `capture_point`.
    pub fn new(
        dataset: &Dataset,
        key: &str,
        format: TableFormat,
        capture_point: CapturePoint,
    ) -> Self {
        PartTables {
            tables: AssociationTables::new(),
            writers: part_writers(dataset, key, format),
            capture_point,
            error: None,
        }
    }

    /// A finished association's rows.
    pub fn add(&mut self, report: &AssociationReport, provenance: &Provenance) {
        self.tables.add(report, self.capture_point);
        self.write_when_full(provenance);
    }

    /// The rows of a part of a long association, handed on before it
    /// finished.
    pub fn add_part(&mut self, part: &AssociationPart, provenance: &Provenance) {
        self.tables.add_part(part, self.capture_point);
        self.write_when_full(provenance);
    }

    /// [`PartTables::add`] for a live capture: `drops` holds, per handover
    /// in order, the drop spans it meets as text (None: none).
    pub fn add_live(
        &mut self,
        report: &AssociationReport,
        drops: &[Option<String>],
        provenance: &Provenance,
    ) {
        self.tables.add_live(report, self.capture_point, drops);
        self.write_when_full(provenance);
    }

    /// [`PartTables::add_part`] for a live capture ([`PartTables::add_live`]).
    pub fn add_part_live(
        &mut self,
        part: &AssociationPart,
        drops: &[Option<String>],
        provenance: &Provenance,
    ) {
        self.tables.add_part_live(part, self.capture_point, drops);
        self.write_when_full(provenance);
    }

    /// While the rows of all tables hold [`FLUSH_BYTES`], writes the
    /// largest table: each batch is at least a fifth of the budget (most
    /// are the one or two tables with many rows), and a table with few rows
    /// gathers them until it is among the largest.
    fn write_when_full(&mut self, provenance: &Provenance) {
        while self.error.is_none() && self.tables.bytes() >= FLUSH_BYTES {
            let Some((writer, rows)) = self
                .writers
                .iter_mut()
                .zip(self.tables.by_name())
                .map(|(writer, (_, rows))| (writer, rows))
                .max_by_key(|(_, rows)| rows.bytes())
            else {
                return;
            };
            if let Err(e) = writer.write(rows, provenance) {
                self.error = Some(format!("{e:#}"));
            }
        }
    }

    /// Writes the rest and completes every part (renamed into place).
    pub fn finish(&mut self, provenance: &Provenance) -> anyhow::Result<()> {
        if let Some(e) = self.error.take() {
            anyhow::bail!(e);
        }
        let writers = std::mem::take(&mut self.writers);
        for (writer, (_, rows)) in writers.into_iter().zip(self.tables.by_name()) {
            writer.finish(rows, provenance)?;
        }
        Ok(())
    }
}

/// Streams finished associations into the part files.
struct TableSink<'a> {
    parts: PartTables,
    provenance: &'a Provenance,
}

impl ReportSink for TableSink<'_> {
    fn part(&mut self, part: AssociationPart) {
        self.parts.add_part(&part, self.provenance);
    }

    fn association(&mut self, report: AssociationReport) {
        self.parts.add(&report, self.provenance);
    }
}

/// How the analysis of one input ended ([`analyze_input`]).
pub struct Analysed {
    /// `ok`, `truncated`, `failed` or `skipped`.
    pub status: &'static str,
    /// Why it failed, was cut short or skipped; None when `ok`.
    pub error: Option<String>,
    /// The analysis's report; None when it failed or was skipped.
    pub report: Option<FileReport>,
    /// The input's bytes could not be read: its file's or stream's read
    /// failed ([`sctp_handover::capture::CaptureError::is_read_failure`]),
    /// unlike a capture that ends early, which is `truncated`. `failed`,
    /// and a dataset keeps no record of it, so the next run reads it again.
    pub unread: bool,
}

/// Analyses one input into `sink`: its status, error and report.
/// `set_point` is told the input's capture point before the first
/// association (the handover rows carry it). A panic in the analysis is
/// caught and becomes the input's error. Shared by the batch and the
/// Python bindings' `analyze_capture`.
pub fn analyze_input<S: ReportSink>(
    input: &Input,
    config: &BatchConfig,
    sink: &mut S,
    set_point: impl FnOnce(&mut S, CapturePoint),
) -> Analysed {
    let mut report = None;
    let mut unread = false;
    let (status, error) = match &input.kind {
        InputKind::NotCapture(why) => ("skipped", Some(why.clone())),
        InputKind::Unreadable(why) => ("failed", Some(format!("{}: {why}", input.source))),
        InputKind::Capture => match options_for(input, config) {
            Err(e) => ("failed", Some(e)),
            Ok(options) => {
                set_point(sink, options.handover.capture_point);
                // A panic is a bug, but it must not cost the other inputs.
                let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    inputs::open_capture(input).and_then(|r| analyze_reader(r, &options, sink))
                }));
                match result {
                    Ok(Ok(r)) => {
                        let status = if r.warning.is_some() {
                            "truncated"
                        } else {
                            "ok"
                        };
                        let warning = r.warning.clone();
                        report = Some(r);
                        (status, warning)
                    }
                    Ok(Err(e)) => {
                        unread = e.is_read_failure();
                        ("failed", Some(e.to_string()))
                    }
                    Err(panic) => {
                        let what = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_default();
                        (
                            "failed",
                            Some(format!(
                                "{}: internal error (please report): {what}",
                                input.source
                            )),
                        )
                    }
                }
            }
        },
    };
    Analysed {
        status,
        error,
        report,
        unread,
    }
}

/// One part writer per table of [`AssociationTables`], for the input
/// whose key is `key` (the `files` part is written last, by its own).
pub fn part_writers(dataset: &Dataset, key: &str, format: TableFormat) -> Vec<PartWriter> {
    AssociationTables::NAMES
        .iter()
        .map(|t| PartWriter::new(dataset.part(t, key), format))
        .collect()
}

fn process(
    input: &Input,
    params: &[(String, ParamType)],
    config: &BatchConfig,
    dataset: &Dataset,
    fingerprint: &str,
) -> Outcome {
    let started = Instant::now();
    let key = dataset::key(&input.source);
    let provenance = provenance(input, params);
    let mut sink = TableSink {
        parts: PartTables::new(
            dataset,
            &key,
            config.format,
            config.options.handover.capture_point,
        ),
        provenance: &provenance,
    };

    let Analysed {
        status,
        error,
        report,
        unread,
    } = analyze_input(input, config, &mut sink, |sink, point| {
        sink.parts.capture_point = point
    });
    // Everything of a failed input is dropped, the batches its writers
    // wrote already too (dropping them removes their files): its parts
    // hold no rows.
    if status == "failed" {
        let point = sink.parts.capture_point;
        sink.parts = PartTables::new(dataset, &key, config.format, point);
    }
    let finish = dataset
        .forget(&key)
        .map_err(|e| anyhow::anyhow!("removing its earlier record: {e}"))
        .and_then(|()| sink.parts.finish(&provenance));
    // A write that failed (a full disk, a lost mount) is not the input's
    // fault: like an input that could not be read, it is not complete,
    // and the next run analyses it again instead of reusing the failure.
    let (status, error, incomplete) = match finish {
        Ok(()) => (status.to_string(), error, unread),
        Err(e) => (
            "failed".to_string(),
            Some(format!("{}: writing tables: {e:#}", input.source)),
            true,
        ),
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut files = Rows::new(&schema::FILES);
    file_row(
        &mut files,
        &FileOutcome {
            status: &status,
            error: error.clone(),
            size_bytes: input.size,
            report: report.as_ref(),
            seconds,
        },
    );
    let written = PartWriter::new(dataset.part("files", &key), config.format)
        .finish(&mut files, &provenance)
        .and_then(|_| {
            // An input that could not be read, or whose tables could not
            // be written, is not complete: its `files` row tells why, and
            // the next run analyses it again.
            if incomplete {
                return Ok(());
            }
            dataset.mark_done(&Done {
                source: input.source.clone(),
                size: input.size,
                modified_ns: input.modified_ns,
                fingerprint: fingerprint.to_string(),
                status: status.clone(),
                error: error.clone(),
                associations: report.as_ref().map_or(0, |r| r.associations),
                handovers: report.as_ref().map_or(0, |r| r.handovers),
                tool_version: env!("CARGO_PKG_VERSION").into(),
            })
        });
    let (status, error) = match written {
        Ok(()) => (status, error),
        Err(e) => (
            "failed".into(),
            Some(format!("{}: writing tables: {e:#}", input.source)),
        ),
    };
    Outcome {
        source: input.source.clone(),
        status,
        error,
        associations: report.as_ref().map_or(0, |r| r.associations),
        handovers: report.as_ref().map_or(0, |r| r.handovers),
        bytes: input.size.unwrap_or(0),
        reused: false,
        seconds,
    }
}
