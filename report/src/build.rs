//! From inputs to the document: captures are analysed into the same tables
//! `analyze --out` writes (so every number comes from one place), tables
//! directories are read as they are; per-capture sections are drawn from
//! traces of the captures; comparison and sweep sections are computed with
//! polars from the `handovers` table.

use crate::components::{self, COUNTS};
use crate::document::{slug, Block, Document, Excluded, Section, Table};
use crate::figures::svg::num;
use crate::figures::{bars, rtt, sweep, timeline, tsn};
use crate::stats::{self, GroupBy, Stat};
use crate::trace::{CaptureTrace, TraceSink};
use anyhow::{bail, Context};
use polars::functions::concat_df_diagonal;
use polars::prelude::{DataFrame, IdxCa, IdxSize};
use sctp_handover::analysis::analyze_stream;
use sctp_handover::handover::{Handover, Point};
use sctp_handover_tables::batch::{self, BatchConfig, Outcome, Progress};
use sctp_handover_tables::inputs::{self, Input, InputKind};
use sctp_handover_tables::{dataset, read};
use std::collections::HashSet;
use std::path::PathBuf;

/// `--x PARAM [--series PARAM] --metric COMPONENT`.
#[derive(Debug, Clone)]
pub struct SweepRequest {
    /// The column (or parameter name) on the x axis.
    pub x: String,
    /// The column whose values each get a line of their own; None: one line.
    pub series: Option<String>,
    /// The latency component or column on the y axis (`failover_time`, ...).
    pub metric: String,
    /// Predictions drawn beside failover metrics: `backoff` (RTO doubled
    /// at each expiry), `fixed-rto` (PMR × RTO).
    pub predict: Vec<String>,
}

/// What a report is drawn from and what it shows (`sctp-handover report`).
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// Captures, directories of captures and `analyze --out` datasets.
    pub inputs: Vec<PathBuf>,
    /// The document's title; None: "SCTP handover report".
    pub title: Option<String>,
    /// How handovers are grouped in the comparison sections.
    pub group_by: GroupBy,
    /// Keep only handovers of these classes (empty: all).
    pub classes: Vec<String>,
    /// Keep only captures taken at these sides (empty: all).
    pub sides: Vec<String>,
    /// A sweep section's axes; None: no sweep section.
    pub sweep: Option<SweepRequest>,
    /// Draw a section per capture (TSN, RTT, handover time lines).
    pub capture_sections: bool,
    /// Captures that get a section of their own (the first ones).
    pub max_captures: usize,
    /// Associations drawn per capture (those with handovers first).
    pub max_associations: usize,
    /// How captures are analysed; `out` is where their tables go.
    pub batch: BatchConfig,
}

/// The document, and how each analysed capture ended.
pub struct Built {
    /// The report.
    pub document: Document,
    /// How each capture analysed for it ended, in input order.
    pub outcomes: Vec<Outcome>,
    /// Directories among the inputs that could not be listed (also in
    /// `document.excluded`, with the reason).
    pub unlisted: Vec<String>,
}

fn point_text(p: &Option<Point>) -> String {
    match p {
        Some(Point {
            frame: Some(f),
            what,
            ..
        }) => format!("frame {f} ({what})"),
        Some(Point {
            frame: None, what, ..
        }) => format!("event log ({what})"),
        None => String::new(),
    }
}

/// The table beneath a handover's time line: every component, its value
/// or why it has none.
fn handover_table(h: &Handover, name: String, title: String) -> Table {
    let mut t = Table::new(
        name,
        title,
        &["component", "column", "ms", "from", "to", "why null"],
    );
    for def in components::latency() {
        let Some(c) = (def.get)(h) else {
            continue;
        };
        t.row(vec![
            def.label.into(),
            format!("{}_ms", def.name),
            num(c.ms),
            point_text(&c.from),
            point_text(&c.to),
            c.missing.clone().unwrap_or_default(),
        ]);
    }
    t
}

fn capture_section(
    trace: &CaptureTrace,
    anchors: &[sctp_handover::handover::anchors::Anchor],
) -> anyhow::Result<Vec<Section>> {
    // Named by the capture's path: stable when other inputs come and go.
    let stem = format!("c-{}", slug(&trace.source));
    let mut top = Section::new(stem.clone(), format!("Capture {}", trace.source), 2);
    if let Some(f) = &trace.file {
        let span = match (f.first_time, f.last_time) {
            (Some(a), Some(b)) => format!(", {:.3} s", b.since(a).as_millis_f64() / 1000.0),
            _ => String::new(),
        };
        top.text(format!(
            "{} frames ({} SCTP){span}; {} associations, {} data path switches; capture point {}.",
            f.frames,
            f.accounting.sctp + f.accounting.sctp_truncated,
            f.associations,
            f.handovers,
            f.capture_point.as_str()
        ));
        if let Some(w) = &f.warning {
            top.text(format!("Warning: {w}"));
        }
    }
    if trace.associations.is_empty() {
        top.text("No association with DATA or a handover: nothing to draw.");
    }
    if trace.omitted > 0 {
        top.text(format!(
            "{} more associations with DATA are not drawn (--draw-associations).",
            trace.omitted
        ));
    }
    let mut sections = vec![top];
    for a in &trace.associations {
        let astem = format!("{stem}-a{}", a.id);
        let mut s = Section::new(
            astem.clone(),
            format!(
                "Association {} (ports {} ↔ {}), {} handover{}",
                a.id,
                a.ports.0,
                a.ports.1,
                a.handovers.len(),
                if a.handovers.len() == 1 { "" } else { "s" }
            ),
            3,
        );
        for sender in 0..2 {
            if let Some(f) = tsn::figure(trace, a, sender, anchors, format!("{astem}-tsn{sender}"))?
            {
                s.blocks.push(Block::Figure(f));
            }
        }
        if let Some(f) = rtt::figure(trace, a, format!("{astem}-rtt"))? {
            s.blocks.push(Block::Figure(f));
        }
        if a.handovers.is_empty() {
            s.text("No data path switch in this association.");
        }
        for (i, h) in a.handovers.iter().enumerate() {
            let title = format!(
                "Handover {}, {}: path {} → path {} at frame {}",
                i + 1,
                h.class.as_str(),
                h.from_path,
                h.to_path,
                h.switch_frame
            );
            s.text(format!(
                "Handover {}: DATA from endpoint {} moves from path {} ({} → {}) to path {} ({} → {}) \
                 at frame {} (TSN {}).",
                i + 1,
                h.sender,
                h.from_path,
                h.from_src,
                h.from_dst,
                h.to_path,
                h.to_src,
                h.to_dst,
                h.switch_frame,
                h.switch_tsn
            ));
            let hstem = format!("{astem}-h{}", i + 1);
            match timeline::figure(h, format!("{hstem}-timeline"), title.clone())? {
                Some(f) => s.blocks.push(Block::Figure(f)),
                None => s.text(format!("{title}: no component could be computed.")),
            }
            s.blocks.push(Block::Table(handover_table(
                h,
                format!("{hstem}-components"),
                format!(
                    "Components of handover {} (frame {})",
                    i + 1,
                    h.switch_frame
                ),
            )));
        }
        sections.push(s);
    }
    Ok(sections)
}

fn stat_cells(s: &Stat) -> Vec<String> {
    vec![
        s.n.to_string(),
        num(s.mean),
        num(s.median),
        num(s.min),
        num(s.max),
        num(s.std),
    ]
}

/// Every compared quantity: (column, label, unit, file stem).
fn compared() -> Vec<(String, &'static str, &'static str, String)> {
    components::latency()
        .iter()
        .map(|c| {
            (
                format!("{}_ms", c.name),
                c.label,
                c.unit,
                c.name.to_string(),
            )
        })
        .chain(
            COUNTS
                .iter()
                .map(|(col, label, unit)| (col.to_string(), *label, *unit, col.to_string())),
        )
        .collect()
}

fn comparison_section(
    df: &DataFrame,
    by: &GroupBy,
    excluded: &mut Vec<Excluded>,
) -> anyhow::Result<Section> {
    let (groups, rest, why) = stats::groups(df, by)?;
    let mut s = Section::new("comparison", "Comparison", 2);
    let how = match by {
        GroupBy::All => "all handovers as one group".to_string(),
        GroupBy::Column(c) => format!("grouped by `{c}`"),
        GroupBy::Globs(g) => format!(
            "grouped by --group {}",
            g.iter()
                .map(|(n, p)| format!("{n}={}", p.as_str()))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    };
    s.text(format!(
        "{} handovers from {} inputs, {how}. For each component: n (handovers with a value), \
         mean, median, minimum, maximum and the sample standard deviation (n − 1), in the \
         layout of a table of N-run averages. Components that are null everywhere are left out. \
         n counts data path switches: a handover that moves DATA in both directions counts \
         twice, and each capture point counts its own (group by `class`, `sender` or \
         `capture_side` too, e.g. --by scenario,class, to compare like with like).",
        df.height(),
        stats::sources(df)?.len()
    ));
    for g in groups.iter().filter(|g| g.rows.height() == 0) {
        s.text(format!("Group `{}` holds no handover.", g.name));
    }
    if rest.height() > 0 {
        let mut sources: Vec<String> = stats::text_values(&rest, "source")?
            .into_iter()
            .flatten()
            .collect();
        sources.sort();
        sources.dedup();
        for src in sources {
            excluded.push(Excluded {
                input: src,
                reason: format!("its handovers are in no group: {why}"),
            });
        }
    }
    // The overview: one row per quantity, one column per group.
    let mut header = vec!["quantity".to_string(), "unit".to_string()];
    header.extend(groups.iter().map(|g| format!("{} mean ± sd (n)", g.name)));
    let mut overview = Table {
        name: "comparison-overview".into(),
        title: "Means per group".into(),
        header,
        rows: Vec::new(),
    };
    let mut details = Vec::new();
    for (column, label, unit, stem) in compared() {
        let mut per_group = Vec::new();
        for g in &groups {
            per_group.push((
                g.name.clone(),
                stats::stat(&g.rows, &column)?.unwrap_or_default(),
            ));
        }
        if per_group.iter().all(|(_, st)| st.n == 0) {
            continue;
        }
        let mut row = vec![label.to_string(), unit.to_string()];
        for (_, st) in &per_group {
            row.push(match st.mean {
                Some(m) => format!(
                    "{m:.3}{} ({})",
                    st.std.map_or(String::new(), |sd| format!(" ± {sd:.3}")),
                    st.n
                ),
                None => "– (0)".into(),
            });
        }
        overview.row(row);
        let mut t = Table::new(
            format!("comparison-{stem}"),
            format!(
                "{label}{}",
                if unit.is_empty() {
                    String::new()
                } else {
                    format!(" ({unit})")
                }
            ),
            &["group", "n", "mean", "median", "min", "max", "std"],
        );
        for (g, st) in &per_group {
            let mut cells = vec![g.clone()];
            cells.extend(stat_cells(st));
            t.row(cells);
        }
        // One group has nothing to compare: its table says it all.
        let fig = if per_group.len() > 1 {
            bars::figure(&per_group, label, unit, format!("comparison-{stem}-bars"))?
        } else {
            None
        };
        details.push((t, fig));
    }
    s.blocks.push(Block::Table(overview));
    for (t, fig) in details {
        s.blocks.push(Block::Table(t));
        if let Some(f) = fig {
            s.blocks.push(Block::Figure(f));
        }
    }
    Ok(s)
}

/// Units of the harness's swept parameters (harness/src/scenario.rs), for
/// axis labels; other columns are drawn without one.
fn parameter_unit(name: &str) -> Option<&'static str> {
    match name {
        "rto" | "rto_min" | "rto_max" | "rto_initial" | "hb_interval" | "sack_delay" | "delay"
        | "delay_ms" => Some("ms"),
        n if n.ends_with("_ms") => Some("ms"),
        _ => None,
    }
}

fn axis_label(name: &str) -> String {
    match parameter_unit(name) {
        Some(u) => format!("{name} ({u}, swept parameter)"),
        None => format!("{name} (swept parameter)"),
    }
}

/// Metrics the predicted failover times (`--predict`) are drawn beside.
const PREDICTED_METRICS: [&str; 2] = ["failover_time", "failover_detection"];

fn sweep_section(
    df: &DataFrame,
    request: &SweepRequest,
    excluded: &mut Vec<Excluded>,
) -> anyhow::Result<Section> {
    let x = stats::resolve_column(df, &request.x)?;
    let series = request
        .series
        .as_deref()
        .map(|s| stats::resolve_column(df, s))
        .transpose()?;
    let metric = stats::resolve_column(df, &request.metric)?;
    let key = metric.trim_end_matches("_ms");
    let label = components::label_of(key).unwrap_or(key);
    let xs = stats::numbers(df, &x).with_context(|| format!("--x {x}: not a number column"))?;
    if xs.iter().all(|v| v.is_none()) {
        bail!("--x {}: no numeric value in column `{x}`", request.x);
    }
    let series_values: Vec<Option<String>> = match &series {
        Some(c) => stats::text_values(df, c)?,
        None => vec![Some("all".into()); df.height()],
    };
    let sources = stats::text_values(df, "source")?;
    // One pass: rows bucketed by (series, x); rows without either are
    // listed, never dropped silently.
    let mut buckets: std::collections::BTreeMap<(String, u64), Vec<IdxSize>> =
        std::collections::BTreeMap::new();
    let mut left_out: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for i in 0..df.height() {
        match (&series_values[i], xs[i].filter(|v| v.is_finite())) {
            (Some(sv), Some(xv)) => buckets
                .entry((sv.clone(), xv.to_bits()))
                .or_default()
                .push(i as IdxSize),
            _ => {
                if let Some(src) = &sources[i] {
                    left_out.insert(src.clone());
                }
            }
        }
    }
    for src in left_out {
        excluded.push(Excluded {
            input: src,
            reason: format!(
                "not in the sweep: no value of `{x}`{}",
                series
                    .as_ref()
                    .map_or(String::new(), |c| format!(" or `{c}`"))
            ),
        });
    }
    let mut names: Vec<String> = buckets.keys().map(|(n, _)| n.clone()).collect();
    names.dedup();
    if names.iter().all(|n| n.parse::<f64>().is_ok()) {
        names.sort_by(|a, b| {
            a.parse::<f64>()
                .unwrap_or(0.0)
                .total_cmp(&b.parse::<f64>().unwrap_or(0.0))
        });
    }
    let predict = |name: &str| request.predict.iter().any(|p| p == name);
    let predicted = PREDICTED_METRICS.contains(&key);
    // The configured prediction needs both swept parameters.
    let configured = df.column("param_pmr").is_ok() && df.column("param_rto").is_ok();
    let mut all_series = Vec::new();
    let mut predictions = Vec::new();
    let mut table = Table::new(
        format!("sweep-{}", slug(key)),
        format!("{label} over {}", request.x),
        &["series", "x", "n", "mean", "median", "min", "max", "std"],
    );
    for name in &names {
        let series_label = match &series {
            Some(c) => format!("{} = {name}", c.trim_start_matches("param_")),
            None => name.clone(),
        };
        let mut points = Vec::new();
        // (label, points): fixed RTO configured, fixed RTO observed, backoff.
        let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        let mut add = |what: String, xv: f64, v: Option<f64>| {
            if let Some(v) = v {
                match lines.iter_mut().find(|(w, _)| *w == what) {
                    Some((_, pts)) => pts.push((xv, v)),
                    None => lines.push((what, vec![(xv, v)])),
                }
            }
        };
        for ((sv, bits), idx) in buckets.range((name.clone(), 0)..=(name.clone(), u64::MAX)) {
            if sv != name {
                continue;
            }
            let xv = f64::from_bits(*bits);
            let rows = df.take(&IdxCa::from_vec("idx".into(), idx.clone()))?;
            let st = stats::stat(&rows, &metric)?.unwrap_or_default();
            let mut cells = vec![series_label.clone(), num(Some(xv))];
            cells.extend(stat_cells(&st));
            table.row(cells);
            points.push((xv, st));
            if !predicted {
                continue;
            }
            if predict("fixed-rto") && configured {
                let pmr = stats::numbers(&rows, "param_pmr")?;
                let rto = stats::numbers(&rows, "param_rto")?;
                let products: Vec<f64> = pmr
                    .iter()
                    .zip(&rto)
                    .filter_map(|(p, r)| Some((*p)? * (*r)?))
                    .collect();
                let mean = (!products.is_empty())
                    .then(|| products.iter().sum::<f64>() / products.len() as f64);
                add(
                    format!("fixed RTO, configured PMR × RTO, {series_label}"),
                    xv,
                    mean,
                );
            }
            if predict("fixed-rto") {
                let m = stats::stat(&rows, "failover_predicted_fixed_rto_ms")?.and_then(|s| s.mean);
                add(
                    format!("fixed RTO, observed PMR × RTO, {series_label}"),
                    xv,
                    m,
                );
            }
            if predict("backoff") {
                let m = stats::stat(&rows, "failover_predicted_backoff_ms")?.and_then(|s| s.mean);
                add(
                    format!("backoff, observed PMR and RTO, {series_label}"),
                    xv,
                    m,
                );
            }
        }
        for (what, pts) in lines {
            predictions.push(sweep::Prediction {
                name: what,
                series: series_label.clone(),
                points: pts,
            });
        }
        all_series.push(sweep::Series {
            name: series_label,
            points,
        });
    }
    let mut s = Section::new("sweep", format!("Sweep: {label} over {}", request.x), 2);
    s.text(format!(
        "{label} (column `{metric}`) against `{x}`{}: the mean at each value with a band from the \
         minimum to the maximum.",
        series.as_ref().map_or(String::new(), |c| format!(
            ", one series per value of `{c}`"
        )),
    ));
    if predicted && !predictions.is_empty() {
        s.text(
            "Dashed: the predicted failover times (docs/metrics.md, Failover). \"Configured\" is \
             the fixed-RTO prediction, PMR × RTO, with the swept Path.Max.Retrans and RTO \
             (RTO.Min = RTO.Max); \"observed\" uses the PMR and RTO the analysis inferred from \
             each capture's T3 expiries (the old path's error count at its last expiry − 1, and \
             the median implied RTO), averaged per point. The fixed-RTO prediction covers the \
             time the T3 timer runs after the first expiry; the failover time also holds the \
             first RTO (from the first unanswered DATA or the link_down event) and the waits for \
             the DATA that restart the timer, so it exceeds the prediction by about one RTO or \
             more. Linux moves new DATA at the (PMR+1)-th expiry (RFC 9260 §8.2: the error \
             count must exceed PMR).",
        );
    }
    let title = format!("{label} vs {}", request.x.trim_start_matches("param_"));
    let y_label = if metric.ends_with("_ms") {
        format!("{label} (ms)")
    } else {
        label.to_string()
    };
    if let Some(f) = sweep::figure(
        sweep::SweepSpec {
            title: &title,
            x_label: &axis_label(x.trim_start_matches("param_")),
            y_label: &y_label,
            name: format!("sweep-{}-figure", slug(key)),
        },
        &all_series,
        &predictions,
    )? {
        s.blocks.push(Block::Figure(f));
    } else {
        s.text(format!("No value of `{metric}` to draw."));
    }
    s.blocks.push(Block::Table(table));
    Ok(s)
}

/// A column's values as text, or all null when the table has no such
/// column (written before it existed).
fn optional_text(df: &DataFrame, column: &str) -> anyhow::Result<Vec<Option<String>>> {
    if df.column(column).is_err() {
        return Ok(vec![None; df.height()]);
    }
    stats::text_values(df, column)
}

fn concat(frames: Vec<DataFrame>) -> anyhow::Result<Option<DataFrame>> {
    if frames.is_empty() {
        return Ok(None);
    }
    Ok(Some(concat_df_diagonal(&frames)?))
}

/// Builds the document; captures are analysed into `config.batch.out`.
pub fn build(config: &ReportConfig, progress: &dyn Progress) -> anyhow::Result<Built> {
    let mut doc = Document {
        title: config
            .title
            .clone()
            .unwrap_or_else(|| "SCTP handover report".into()),
        ..Default::default()
    };
    let (datasets, others): (Vec<PathBuf>, Vec<PathBuf>) = config
        .inputs
        .iter()
        .cloned()
        .partition(|p| read::is_dataset(p));
    let mut outcomes = Vec::new();
    let mut unlisted = Vec::new();
    let mut captures: Vec<Input> = Vec::new();
    // (dataset, the keys of the inputs to read from it: this run's only
    // for the captures' dataset, which may hold parts of earlier runs).
    let mut sources: Vec<(PathBuf, Option<HashSet<String>>)> =
        datasets.iter().map(|d| (d.clone(), None)).collect();
    if !others.is_empty() {
        let (found, problems) = inputs::discover(&others);
        unlisted = problems
            .iter()
            .map(|p| p.path.display().to_string())
            .collect();
        for p in problems {
            doc.excluded.push(Excluded {
                input: p.path.display().to_string(),
                reason: p.reason,
            });
        }
        let (planned, params) = batch::plan(found, None);
        captures = planned
            .iter()
            .filter(|i| i.kind == InputKind::Capture)
            .cloned()
            .collect();
        let keys: HashSet<String> = planned.iter().map(|i| dataset::key(&i.source)).collect();
        let mut batch_config = config.batch.clone();
        batch_config.force = true;
        outcomes = batch::run(planned, &params, &batch_config, progress)?;
        sources.push((config.batch.out.clone(), Some(keys)));
    }
    let mut files = Vec::new();
    let mut handovers = Vec::new();
    for (d, keys) in &sources {
        if let Some(f) = read::read_table_of(d, "files", keys.as_ref())? {
            files.push(f);
        }
        if let Some(h) = read::read_table_of(d, "handovers", keys.as_ref())? {
            handovers.push(h);
        }
    }
    let files = concat(files)?.context("no input: no capture and no table found")?;
    let all_handovers = concat(handovers)?;

    // Inputs that failed or are not captures: listed, never silently dropped.
    let file_sources = stats::text_values(&files, "source")?;
    let statuses = stats::text_values(&files, "status")?;
    let errors = stats::text_values(&files, "error")?;
    // Harness runs whose script did not take effect measured something
    // else than their scenario (docs/harness.md): out of the statistics.
    // Tables written before the columns existed have none.
    let run_valid = optional_text(&files, "run_valid")?;
    let run_reasons = optional_text(&files, "run_invalid_reason")?;
    let mut usable: Vec<String> = Vec::new();
    // Invalid runs' captures and why; still drawn per capture, with a warning.
    let mut invalid_runs: std::collections::HashMap<String, String> =
        std::collections::HashMap::new();
    let mut unchecked = 0;
    let mut seen: HashSet<String> = HashSet::new();
    for i in 0..files.height() {
        let src = file_sources[i].clone().unwrap_or_default();
        if !seen.insert(src.clone()) {
            doc.summary.push(format!(
                "{src} is in more than one input; its rows are counted once per input."
            ));
        }
        let reason = run_reasons[i].clone().unwrap_or_default();
        match statuses[i].as_deref() {
            Some("ok") | Some("truncated") if run_valid[i].as_deref() == Some("false") => {
                doc.excluded.push(Excluded {
                    input: src.clone(),
                    reason: format!(
                        "invalid harness run (its script did not take effect): {reason}"
                    ),
                });
                invalid_runs.insert(src, reason);
            }
            Some("ok") | Some("truncated") => {
                if run_valid[i].is_none() && !reason.is_empty() {
                    unchecked += 1;
                }
                usable.push(src)
            }
            status => doc.excluded.push(Excluded {
                input: src,
                reason: format!(
                    "{}: {}",
                    status.unwrap_or("unknown status"),
                    errors[i].clone().unwrap_or_default()
                ),
            }),
        }
    }
    if !invalid_runs.is_empty() {
        doc.summary.push(format!(
            "{} capture{} of invalid harness runs left out of the statistics: a scripted \
             action did not take effect (listed under Inputs left out).",
            invalid_runs.len(),
            if invalid_runs.len() == 1 { "" } else { "s" }
        ));
    }
    if unchecked > 0 {
        doc.summary.push(format!(
            "{unchecked} capture{} of harness runs whose script could not be checked (their \
             events.jsonl has no kernel view) are in the statistics.",
            if unchecked == 1 { "" } else { "s" }
        ));
    }
    let all_handovers = match all_handovers {
        Some(df) if !invalid_runs.is_empty() => {
            let sources = stats::text_values(&df, "source")?;
            Some(stats::mask(&df, |i| {
                sources[i]
                    .as_ref()
                    .is_none_or(|s| !invalid_runs.contains_key(s))
            })?)
        }
        other => other,
    };
    let had_handovers: HashSet<String> = match &all_handovers {
        Some(df) => stats::sources(df)?.into_iter().collect(),
        None => HashSet::new(),
    };
    let handovers = match &all_handovers {
        Some(df) => {
            let df = stats::filter_in(df, "class", &config.classes)?;
            Some(stats::filter_in(&df, "capture_side", &config.sides)?)
        }
        None => None,
    };
    let kept: HashSet<String> = match &handovers {
        Some(df) => stats::sources(df)?.into_iter().collect(),
        None => HashSet::new(),
    };
    let mut filters = Vec::new();
    if !config.classes.is_empty() {
        filters.push(format!("class {}", config.classes.join("/")));
    }
    if !config.sides.is_empty() {
        filters.push(format!("capture side {}", config.sides.join("/")));
    }
    for src in &usable {
        if kept.contains(src) {
            continue;
        }
        doc.excluded.push(Excluded {
            input: src.clone(),
            reason: if had_handovers.contains(src) {
                format!(
                    "not in the comparison: its handovers are filtered out (kept: {})",
                    filters.join(", ")
                )
            } else {
                "not in the comparison: no handover (no data path switch)".into()
            },
        });
    }
    doc.summary.insert(
        0,
        format!(
            "{} inputs ({} capture{} analysed now{}); {} handovers{}.",
            files.height(),
            captures.len(),
            if captures.len() == 1 { "" } else { "s" },
            if datasets.is_empty() {
                String::new()
            } else {
                format!(
                    ", tables read from {}",
                    datasets
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            handovers.as_ref().map_or(0, |d| d.height()),
            if filters.is_empty() {
                String::new()
            } else {
                format!(" kept ({})", filters.join(", "))
            }
        ),
    );

    if let Some(df) = handovers.as_ref().filter(|d| d.height() > 0) {
        doc.sections
            .push(comparison_section(df, &config.group_by, &mut doc.excluded)?);
        if let Some(req) = &config.sweep {
            doc.sections
                .push(sweep_section(df, req, &mut doc.excluded)?);
        }
    } else if config.sweep.is_some() {
        bail!("no handover in the inputs: nothing to sweep");
    }

    if config.capture_sections {
        let usable: HashSet<&String> = usable.iter().collect();
        let drawn: Vec<&Input> = captures
            .iter()
            .filter(|c| usable.contains(&c.source) || invalid_runs.contains_key(&c.source))
            .collect();
        if drawn.len() > config.max_captures {
            doc.summary.push(format!(
                "Per-capture sections for the first {} of {} captures (--draw-captures).",
                config.max_captures,
                drawn.len()
            ));
        }
        if !datasets.is_empty() {
            doc.summary.push(
                "Inputs given as tables have no per-capture figures (they need the packets): \
                 give the captures to draw them."
                    .into(),
            );
        }
        for input in drawn.into_iter().take(config.max_captures) {
            let options = batch::options_for(input, &config.batch).map_err(anyhow::Error::msg)?;
            let mut sink = TraceSink::new(config.max_associations);
            let analysed = analyze_stream(&input.path, &options, &mut sink);
            let (file, error) = match analysed {
                Ok(f) => (Some(f), None),
                Err(e) => (None, Some(e.to_string())),
            };
            let trace = sink.finish(input.source.clone(), file);
            let mut sections = capture_section(&trace, &options.handover.anchors)?;
            if let (Some(e), Some(first)) = (error, sections.first_mut()) {
                first.text(format!("Not drawn: {e}"));
            }
            if let (Some(why), Some(first)) =
                (invalid_runs.get(&input.source), sections.first_mut())
            {
                first.text(format!(
                    "Invalid harness run, left out of the statistics: a scripted action did \
                     not take effect ({why}). Its switches are not the handover its scenario \
                     scripts."
                ));
            }
            doc.sections.extend(sections);
        }
    }
    doc.excluded.sort_by(|a, b| a.input.cmp(&b.input));
    doc.excluded.dedup();
    Ok(Built {
        document: doc,
        outcomes,
        unlisted,
    })
}
