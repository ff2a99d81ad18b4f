//! The reproduction report (`sctp-handover-lab reproduction`, `make
//! reproduce`): the seeds' experiments replayed on the kernel by the
//! harness, analysed in batch, and set section by section beside the
//! published values (docs/reproduction.md).
//!
//! Inputs: the runs directory (`<sweep>/<scenario>/<group>/rNN/` with the
//! harness's events.jsonl), the dataset `analyze --out` wrote from it, and
//! the sweeps file naming each sweep's scenario and parameters. Every
//! number comes from the dataset's tables or the kernel's lines of
//! events.jsonl (`truth.rs`).
//!
//! The binary's steps: [`export()`] copies what the report reads beside it,
//! [`Config::from_copy`] names that copy, [`build`] draws the document from
//! it and [`write()`] writes the files. One file per paper draws its sections
//! (`koh_kim.rs`, `bokor.rs`, `honda.rs`, `eklund.rs`, `wang_song.rs`;
//! `published.rs` holds the papers' numbers).

mod bokor;
mod eklund;
mod export;
mod honda;
mod koh_kim;
mod prediction;
mod published;
mod rows;
mod runs;
mod scatter;
mod sweeps;
mod truth;
mod verdict;
mod wang_song;

pub use export::export;

use crate::document::{Block, Document, Section, Table};
use crate::figures::svg::trimmed;
use crate::stats::Stat;
use anyhow::Context;
use rows::Rows;
use sctp_handover_harness_formats::Meta;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use sweeps::Sweep;
use verdict::Verdict;

/// Where the report is drawn from; [`Config::from_copy`] reads the report's
/// own copy.
pub struct Config {
    /// The harness runs (`<sweep>/<scenario>/<group>/rNN/`).
    pub(crate) runs: PathBuf,
    /// The dataset `analyze --out` wrote from them.
    pub(crate) tables: PathBuf,
    /// The sweeps file (scripts/reproduce.sweeps).
    pub(crate) sweeps: PathBuf,
    /// Lines for the provenance section (date, machine load, …).
    pub(crate) provenance: Vec<String>,
}

impl Config {
    /// The configuration that redraws the report from its own copy in
    /// `dir` (tables/, runs/, sweeps.txt, provenance.txt; [`export()`]
    /// writes it).
    pub fn from_copy(dir: &Path) -> anyhow::Result<Config> {
        let notes = std::fs::read_to_string(dir.join("provenance.txt"))
            .with_context(|| format!("{}: no provenance.txt", dir.display()))?;
        Ok(Config {
            runs: dir.join("runs"),
            tables: dir.join("tables"),
            sweeps: dir.join("sweeps.txt"),
            provenance: notes.lines().map(str::to_owned).collect(),
        })
    }
}

/// What every section reads.
pub(crate) struct Data {
    pub runs: PathBuf,
    pub sweeps: Vec<Sweep>,
    pub handovers: Rows,
    pub asconf: Rows,
    pub associations: Rows,
    pub files: Rows,
    /// The verdicts the sections reach, in section order (the top table).
    pub verdicts: RefCell<Vec<Verdict>>,
}

impl Data {
    pub fn sweep(&self, id: &str) -> Vec<&Sweep> {
        self.sweeps.iter().filter(|s| s.id == id).collect()
    }

    /// The run directory of row `i` of `rows` (one of `sweep`'s).
    pub fn run_dir(&self, rows: &Rows, i: usize, sweep: &str) -> Option<PathBuf> {
        let source = rows.text("source", i)?;
        Some(self.runs.join(rows::run_of(&source, sweep)?))
    }

    /// The sweep's section header: the harness commands and the runs found.
    pub fn describe(&self, section: &mut Section, sweep: &str) {
        for s in self.sweep(sweep) {
            section.text(format!(
                "Scenario harness/scenarios/{}.toml; {}; runs: {}.",
                s.scenario,
                s.command(),
                s.describe_runs(&self.runs.join(&s.id).join(&s.scenario))
            ));
        }
        let left_out = self.invalid_runs(sweep);
        if !left_out.is_empty() {
            section.text(format!(
                "Left out of every statistic: {} run(s) whose script did not take effect \
                 (meta.json valid: false; listed with the harness's reason under \"Inputs \
                 left out\").",
                left_out.len()
            ));
        }
    }

    /// The run directories (relative to runs/) of a sweep whose harness
    /// check failed, with the reason.
    pub fn invalid_runs(&self, sweep: &str) -> Vec<(String, String)> {
        let f = &self.files;
        let mut out: Vec<(String, String)> = (0..f.len)
            .filter(|&i| f.text("run_valid", i).as_deref() == Some("false"))
            .filter_map(|i| {
                let src = f.text("source", i)?;
                Some((
                    rows::run_of(&src, sweep)?,
                    f.text("run_invalid_reason", i).unwrap_or_default(),
                ))
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    pub fn verdict(&self, v: Verdict) {
        self.verdicts.borrow_mut().push(v);
    }
}

/// A section's "the paper's parameters beside ours" table.
pub(crate) fn setup_table(name: &str, title: &str, rows: &[(&str, &str, &str)]) -> Block {
    let mut t = Table::new(name, title, &["parameter", "paper", "this reproduction"]);
    for (p, paper, ours) in rows {
        t.row(vec![(*p).into(), (*paper).into(), (*ours).into()]);
    }
    Block::Table(t)
}

pub(crate) fn load(config: &Config) -> anyhow::Result<Data> {
    let read = |t: &str| -> anyhow::Result<Rows> {
        match sctp_handover_tables::read::read_table(&config.tables, t)? {
            Some(df) => Rows::new(&df),
            None => Ok(Rows::empty()),
        }
    };
    Ok(Data {
        runs: config.runs.clone(),
        sweeps: sweeps::read(&config.sweeps)?,
        handovers: read("handovers").context("the handovers table")?,
        asconf: read("asconf").context("the asconf table")?,
        associations: read("associations").context("the associations table")?,
        files: read("files").context("the files table")?,
        verdicts: RefCell::new(Vec::new()),
    })
}

/// The whole report.
pub fn build(config: &Config) -> anyhow::Result<Document> {
    let data = load(config)?;
    let mut doc = Document {
        title: "The seeds' experiments on the Linux kernel: a reproduction".into(),
        summary: vec![
            "Each section replays a published experiment with sctp-harness (Linux 6.1 SCTP in \
             User-Mode Linux, netem links), analyses both capture points with sctp-handover \
             analyze, and sets the result beside the published value. Run-to-run noise is shown \
             as min–max. Numbers come from the tables in tables/ (the analyzer's output for each \
             run) and from the kernel's own log in runs/…/events.jsonl."
                .into(),
        ],
        ..Default::default()
    };
    let mut body = Vec::new();
    body.extend(koh_kim::sections(&data)?);
    body.extend(bokor::sections(&data)?);
    body.extend(honda::sections(&data)?);
    body.extend(eklund::sections(&data)?);
    body.extend(wang_song::sections(&data)?);
    doc.sections.push(verdict::section(&data.verdicts.borrow()));
    doc.sections.push(provenance(&data, config));
    doc.sections.extend(body);
    doc.excluded = excluded(&data);
    Ok(doc)
}

fn provenance(data: &Data, config: &Config) -> Section {
    let mut s = Section::new("provenance", "Provenance", 2);
    for line in &config.provenance {
        s.text(line.clone());
    }
    let kernel = (0..data.files.len)
        .filter_map(|i| data.files.text("source", i))
        .filter_map(|src| {
            let dir = Path::new(&src).parent()?.to_owned();
            let rel = data
                .sweeps
                .iter()
                .find_map(|sw| rows::run_of(&src, &sw.id))
                .map(|r| data.runs.join(r))
                .unwrap_or(dir);
            let meta = std::fs::read_to_string(rel.join("meta.json")).ok()?;
            let meta = Meta::parse(&meta).ok()?;
            Some(format!("Linux {} (HZ = {})", meta.kernel?, meta.kernel_hz?))
        })
        .next()
        .unwrap_or_else(|| "unknown (no meta.json found)".into());
    s.text(format!(
        "Kernel: {kernel}, in User-Mode Linux with one CPU; links are netem delays on veth \
         pairs (docs/harness.md), not radio links. With HZ = 100 every timer (RTO, heartbeat, \
         delayed SACK) moves in 10 ms steps."
    ));
    let mut t = Table::new(
        "sweeps",
        "The harness sweeps (scripts/reproduce.sweeps)",
        &[
            "sweep",
            "scenario",
            "repetitions",
            "parameters",
            "runs found (ok, valid)",
        ],
    );
    for sw in &data.sweeps {
        t.row(vec![
            sw.id.clone(),
            sw.scenario.clone(),
            sw.repeat.to_string(),
            sw.sets.join(" "),
            sw.describe_runs(&data.runs.join(&sw.id).join(&sw.scenario)),
        ]);
    }
    s.blocks.push(Block::Table(t));
    s.text(
        "Analysis: each parameter combination was analysed with its own sender parameters \
         (sctp-handover analyze DIR --out tables --rto-initial-ms/--rto-min-ms/--rto-max-ms/--pmr \
         from its scenario.toml), so inferred path states use the kernel's Path.Max.Retrans.",
    );
    s
}

/// Inputs that failed to read, and captures of runs whose script did not
/// take effect (the harness's check, meta.json `valid: false`).
fn excluded(data: &Data) -> Vec<crate::document::Excluded> {
    let f = &data.files;
    (0..f.len)
        .filter_map(|i| {
            let input = f.text("source", i).unwrap_or_default();
            if f.text("status", i).as_deref() == Some("failed") {
                Some(crate::document::Excluded {
                    input,
                    reason: f.text("error", i).unwrap_or_default(),
                })
            } else if f.text("run_valid", i).as_deref() == Some("false") {
                Some(crate::document::Excluded {
                    input,
                    reason: format!(
                        "run invalid (its script did not take effect): {}",
                        f.text("run_invalid_reason", i).unwrap_or_default()
                    ),
                })
            } else {
                None
            }
        })
        .collect()
}

/// Statistics of some values (sample standard deviation, n − 1).
pub(crate) fn stat_of(values: &[f64]) -> Stat {
    let n = values.len();
    if n == 0 {
        return Stat::default();
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let std = (n >= 2)
        .then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
    Stat {
        n,
        mean: Some(mean),
        median: Some(median),
        min: sorted.first().copied(),
        max: sorted.last().copied(),
        std,
    }
}

/// "mean (min–max)" with `places` decimals, or "–" without values.
pub(crate) fn mmm(s: &Stat, places: usize) -> String {
    match (s.mean, s.min, s.max) {
        (Some(mean), Some(lo), Some(hi)) => {
            format!("{mean:.places$} ({lo:.places$}–{hi:.places$})")
        }
        _ => "–".into(),
    }
}

/// The cells n, mean, min, max of a statistic (ms to 0.01).
pub(crate) fn cells(s: &Stat) -> Vec<String> {
    let r = |v: Option<f64>| v.map_or(String::new(), |x| trimmed(x, 2));
    vec![s.n.to_string(), r(s.mean), r(s.min), r(s.max)]
}

/// Writes the report: `index.html`, `README.md` and `assets/` (every
/// figure as SVG + CSV, every table as CSV + Markdown) in `out`.
pub fn write(doc: &Document, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let assets = out.join("assets");
    let _ = std::fs::remove_dir_all(&assets);
    doc.write_assets(&assets)?;
    std::fs::write(out.join("index.html"), crate::html::render(doc))?;
    std::fs::write(
        out.join("README.md"),
        crate::markdown::render(doc, "assets"),
    )?;
    Ok(())
}
