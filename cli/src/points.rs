//! `sctp-handover points`: two capture points of the same traffic (the
//! mobile node's and the correspondent's captures of a handover) paired
//! packet by packet: clock offset and drift between them, one-way delay
//! per path and direction, packets lost on the way, spurious
//! retransmissions (docs/points.md).

use crate::exit::{usage, Status};
use anyhow::Context;
use clap::{Args, ValueEnum};
use sctp_handover::time::Timestamp;
use sctp_handover_points::series::OwdSeries;
use sctp_handover_points::two_sided::{OneSidedHandover, TwoSidedHandover};
use sctp_handover_points::{
    analyze_points, Direction, Loss, LossKind, OwdSample, PointInput, PointsOptions, PointsReport,
    PointsSink, Retransmission,
};
use sctp_handover_report::points as report_points;
use sctp_handover_report::Figure;
use sctp_handover_tables::batch::{self, BatchConfig};
use sctp_handover_tables::dataset::Dataset;
use sctp_handover_tables::inputs::Input;
use sctp_handover_tables::points::{self as point_tables, PairAnalysis};
use sctp_handover_tables::write::ParamType;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `sctp-handover points`.
#[derive(Args)]
pub struct PointsArgs {
    /// A capture point as NAME=CAPTURE (e.g. `mn=mn.pcap`); exactly two.
    /// The first point's clock is the reference.
    #[arg(long = "point", value_name = "NAME=CAPTURE", required = true, value_parser = parse_point)]
    points: Vec<PointInput>,
    #[arg(long, value_enum, default_value_t = PointsFormat::Text)]
    format: PointsFormat,
    /// With `--format jsonl`: also one `owd` record per packet seen at both
    /// points.
    #[arg(long)]
    owd_samples: bool,
    /// How long a packet waits for its copy at the other point before it
    /// counts as not seen there, in ms; much longer than any one-way delay.
    #[arg(long, default_value_t = 2000, value_name = "MS")]
    window_ms: u32,
}

#[derive(Clone, Copy, ValueEnum)]
enum PointsFormat {
    /// A readable summary; losses and retransmissions one per line.
    Text,
    /// JSON lines: `loss`, `retransmission` (and `owd` with
    /// --owd-samples) records as found, then `clock`, `association`,
    /// `path` and one `summary`.
    Jsonl,
}

/// Parses `--point NAME=CAPTURE`.
pub(crate) fn parse_point(s: &str) -> Result<PointInput, String> {
    match s.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok(PointInput {
            name: name.to_owned(),
            path: PathBuf::from(path),
        }),
        _ => Err(format!("{s}: expected NAME=CAPTURE, e.g. mn=mn.pcap")),
    }
}

/// Writes records as they are found; the first write error stops the
/// writing and is returned at the end.
struct Writer<'a> {
    out: Box<dyn Write + 'a>,
    format: PointsFormat,
    owd_samples: bool,
    names: [String; 2],
    error: Option<std::io::Error>,
}

fn direction_label(names: &[String; 2], d: Direction) -> String {
    format!("{}→{}", names[d.sender()], names[d.receiver()])
}

impl Writer<'_> {
    fn record(&mut self, kind: &str, value: &impl serde::Serialize) {
        if self.error.is_some() {
            return;
        }
        let mut v = match serde_json::to_value(value) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        v.insert("record".into(), kind.into());
        let r = serde_json::to_writer(&mut self.out, &v)
            .map_err(std::io::Error::from)
            .and_then(|_| self.out.write_all(b"\n"));
        if let Err(e) = r {
            self.error = Some(e);
        }
    }

    fn line(&mut self, text: std::fmt::Arguments) {
        if self.error.is_none() {
            if let Err(e) = writeln!(self.out, "{text}") {
                self.error = Some(e);
            }
        }
    }
}

/// Epoch seconds on the first point's clock, as tshark's `-t e` shows.
fn epoch(t: i64) -> String {
    Timestamp(t).to_string()
}

impl PointsSink for Writer<'_> {
    fn owd(&mut self, sample: &OwdSample) {
        if self.owd_samples {
            if let PointsFormat::Jsonl = self.format {
                self.record("owd", sample);
            }
        }
    }
    fn loss(&mut self, loss: &Loss) {
        match self.format {
            PointsFormat::Jsonl => self.record("loss", loss),
            PointsFormat::Text => {
                let what = match loss.kind {
                    LossKind::NotSeenAtReceiver => "lost (not seen at the receiver)",
                    LossKind::NotSeenAtSender => "not seen at the sender",
                };
                let dir = direction_label(&self.names, loss.direction);
                self.line(format_args!(
                    "{what}: {} frame {} at {} ({dir}, path {} → {}): {}",
                    loss.seen_at,
                    loss.frame,
                    epoch(loss.time_ns),
                    loss.src,
                    loss.dst,
                    loss.chunks
                ));
            }
        }
    }
    fn retransmission(&mut self, r: &Retransmission) {
        match self.format {
            PointsFormat::Jsonl => self.record("retransmission", r),
            PointsFormat::Text => {
                let dir = direction_label(&self.names, r.direction);
                let sender = self.names[r.direction.sender()].clone();
                let verdict = if r.spurious {
                    "spurious (an earlier transmission arrived)"
                } else {
                    "needed (no earlier transmission arrived)"
                };
                self.line(format_args!(
                    "retransmission: {sender} frame {} at {} TSN {} (transmission {}, {}) ({dir}, path {} → {}): {verdict}",
                    r.frame, epoch(r.sent_ns), r.tsn, r.transmission, r.reason.as_str(), r.src, r.dst
                ));
            }
        }
    }
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

fn summary_text(w: &mut Writer, report: &PointsReport) {
    let names = w.names.clone();
    let c = &report.clock;
    w.line(format_args!(
        "clock: {b} − {a} = {:.6} ms ± {:.6} ms at {a} time {}, drift {:+.2} ppm ({} packets over {:.3} s)",
        c.offset_ns / 1e6,
        c.offset_uncertainty_ns / 1e6,
        epoch(c.reference_ns),
        c.drift_ppm,
        c.samples,
        c.span_s,
        a = names[0],
        b = names[1],
    ));
    for p in &report.points {
        w.line(format_args!(
            "point {}: {} ({} frames, {} SCTP packets){}",
            p.name,
            p.path,
            p.frames,
            p.sctp_packets,
            p.warning
                .as_deref()
                .map(|x| format!("; warning: {x}"))
                .unwrap_or_default()
        ));
    }
    for a in &report.associations {
        let seen: Vec<&str> = a.seen_at.iter().map(|&i| names[i].as_str()).collect();
        let ends: Vec<String> = a
            .endpoints
            .iter()
            .map(|e| {
                let s = e.at.iter().flatten().next();
                let port = s.and_then(|s| s.port).map_or("?".into(), |p| p.to_string());
                let addrs: Vec<String> = s
                    .map(|s| s.addresses.iter().map(|x| x.to_string()).collect())
                    .unwrap_or_default();
                format!("tag {:#010x} port {port} [{}]", e.tag, addrs.join(", "))
            })
            .collect();
        w.line(format_args!(
            "association: {} — seen at {}{}",
            ends.join(" ↔ "),
            seen.join(", "),
            if a.ports_differ {
                " (ports differ)"
            } else {
                ""
            }
        ));
    }
    for p in &report.paths {
        let owd = match (p.owd_min_ns, p.owd_mean_ns, p.owd_max_ns) {
            (Some(lo), Some(mean), Some(hi)) => format!(
                "one-way delay min {} mean {} max {}",
                ms(lo as f64),
                ms(mean),
                ms(hi as f64)
            ),
            _ => "no packet seen at both points".into(),
        };
        // The reasons' names as the analyzer writes them, e.g. ` (2
        // t3_expiry, 1 fast_retransmit)`.
        let reasons = if p.retransmissions_by_reason.is_empty() {
            String::new()
        } else {
            let parts: Vec<String> = p
                .retransmissions_by_reason
                .iter()
                .map(|(reason, n)| format!("{n} {reason}"))
                .collect();
            format!(" ({})", parts.join(", "))
        };
        w.line(format_args!(
            "path {}→{} {} → {}: {} paired, {owd}; {} lost, {} not seen at the sender; {} retransmissions{reasons}, {} spurious",
            p.from,
            p.to,
            p.src,
            p.dst,
            p.paired,
            p.not_seen_at_receiver,
            p.not_seen_at_sender,
            p.retransmissions,
            p.spurious_retransmissions
        ));
    }
    w.line(format_args!(
        "packets: {} paired ({} among identical copies), {} lost, {} not seen at the sender, {} of unknown direction; {} retransmissions, {} spurious",
        report.paired,
        report.ambiguous_pairs,
        report.not_seen_at_receiver,
        report.not_seen_at_sender,
        report.direction_unknown,
        report.retransmissions,
        report.spurious_retransmissions
    ));
}

/// Runs `sctp-handover points`: pairs the two captures and prints (or
/// writes) the report.
pub fn run(args: PointsArgs) -> anyhow::Result<Status> {
    if args.points.len() != 2 {
        return Err(usage(anyhow::anyhow!(
            "--point: exactly two capture points are supported, {} given",
            args.points.len()
        )));
    }
    let names = [args.points[0].name.clone(), args.points[1].name.clone()];
    let stdout = std::io::stdout();
    let mut writer = Writer {
        out: Box::new(std::io::BufWriter::new(stdout.lock())),
        format: args.format,
        owd_samples: args.owd_samples,
        names,
        error: None,
    };
    let options = PointsOptions {
        window_ns: i64::from(args.window_ms) * 1_000_000,
    };
    let report = analyze_points(&args.points, &options, &mut writer)?;
    match args.format {
        PointsFormat::Text => summary_text(&mut writer, &report),
        PointsFormat::Jsonl => {
            writer.record("clock", &report.clock);
            for a in &report.associations {
                writer.record("association", a);
            }
            for p in &report.paths {
                writer.record("path", p);
            }
            writer.record(
                "summary",
                &serde_json::json!({
                    "points": report.points,
                    "paired": report.paired,
                    "ambiguous_pairs": report.ambiguous_pairs,
                    "not_seen_at_receiver": report.not_seen_at_receiver,
                    "not_seen_at_sender": report.not_seen_at_sender,
                    "direction_unknown": report.direction_unknown,
                    "retransmissions": report.retransmissions,
                    "spurious_retransmissions": report.spurious_retransmissions,
                    "window_ns": report.window_ns,
                    "peak_waiting": report.peak_waiting,
                }),
            );
        }
    }
    if let Some(e) = writer.error.take() {
        return Err(anyhow::Error::new(e).context("writing standard output"));
    }
    writer.out.flush().context("writing standard output")?;
    Ok(Status::partial_if(
        report.points.iter().any(|p| p.warning.is_some()),
    ))
}

/// Milliseconds of a nanosecond value, or `null`.
fn ms_or_null(ns: Option<i64>) -> String {
    ns.map_or("null".into(), |n| format!("{:.3}", n as f64 / 1e6))
}

/// The text lines of the two-sided records (after each point's summary).
fn two_sided_text(out: &mut dyn Write, records: &[TwoSidedHandover]) -> std::io::Result<()> {
    use sctp_handover_points::two_sided::PARTS;
    for t in records {
        writeln!(
            out,
            "two-sided handover {}→{} ({} → {} to {} → {}): {} at {} frame {}, {} at {} frame {}",
            t.sender_point,
            t.receiver_point,
            t.from_src,
            t.from_dst,
            t.to_src,
            t.to_dst,
            t.sender_class,
            t.sender_point,
            t.sender_switch_frame,
            t.receiver_class,
            t.receiver_point,
            t.receiver_switch_frame
        )?;
        for (role, side) in [("sender", &t.sender), ("receiver", &t.receiver)] {
            let parts: Vec<String> = PARTS
                .iter()
                .map(|p| match (p.get)(side) {
                    Some(_) => format!("{} {} ms", p.label, ms_or_null((p.get)(side))),
                    None => format!("{} null", p.label),
                })
                .collect();
            writeln!(
                out,
                "  {role} {}: {}{}",
                side.point,
                parts.join(", "),
                side.missing
                    .as_deref()
                    .map(|m| format!(" (not decomposed: {m})"))
                    .unwrap_or_default()
            )?;
        }
        if let Some(a) = &t.asconf {
            writeln!(
                out,
                "  ASCONF {} (serial {}) from {} {} → {}: one-way delay {} ms, peer processing {} ms, ASCONF-ACK one-way delay {} ms{}",
                a.requests,
                a.serial,
                a.requester_point,
                a.src,
                a.dst,
                ms_or_null(Some(a.one_way_delay_ns)),
                ms_or_null(a.peer_processing_ns),
                ms_or_null(a.ack_one_way_delay_ns),
                a.peer_to_first_new_data_ns
                    .map(|n| format!(
                        ", the peer's first new DATA on the new path {:.3} ms after it arrived",
                        n as f64 / 1e6
                    ))
                    .unwrap_or_default()
            )?;
        }
    }
    Ok(())
}

/// The text lines of the handovers seen at one point only, and the count
/// line that says how many of each point's handovers are in no two-sided
/// record (never dropped silently).
fn one_sided_text(
    out: &mut dyn Write,
    names: &[String; 2],
    two_sided: usize,
    records: &[OneSidedHandover],
) -> std::io::Result<()> {
    for o in records {
        let role = match o.at_data_sender {
            Some(true) => "data sender ",
            Some(false) => "data receiver ",
            None => "",
        };
        writeln!(
            out,
            "one-sided handover at {role}{} ({} → {} to {} → {}): {} at {} frame {}, data interrupt {} ms; none at {}: {}",
            o.point,
            o.from_src,
            o.from_dst,
            o.to_src,
            o.to_dst,
            o.class,
            o.point,
            o.switch_frame,
            ms_or_null(o.interrupt_ns),
            o.other_point,
            o.reason
        )?;
    }
    let only = |i: usize| records.iter().filter(|o| o.point == names[i]).count();
    writeln!(
        out,
        "{two_sided} two-sided handovers; {} seen at one point only ({} at {}, {} at {})",
        records.len(),
        only(0),
        names[0],
        only(1),
        names[1]
    )
}

/// `analyze --point A=… --point B=…`: each point analysed as `analyze`
/// analyses a capture (its output or tables as today), then both paired
/// and every handover both saw put together (docs/metrics.md, "Two
/// capture points").
pub fn analyze(args: &crate::AnalyzeArgs) -> anyhow::Result<Status> {
    let options = crate::analysis_options(&args.analysis)?;
    let found = point_inputs(&args.points)?;
    let config = BatchConfig {
        out: args.out.clone().unwrap_or_default(),
        format: args.tables.format(),
        jobs: args.jobs.unwrap_or(0),
        force: args.force,
        shard: None,
        options,
        harness_files: !args.analysis.no_harness_files,
    };
    let (planned, params) = batch::plan(found, None);
    // `plan` keeps the inputs' order: that of the --point options.
    // Each point's own analysis, as `analyze PATH` gives it.
    let mut failed = match &args.out {
        Some(_) => crate::run_batch(planned.clone(), &params, &config, args)?,
        None => crate::output::run(planned.clone(), &config, args)?,
    };
    let names = [args.points[0].name.clone(), args.points[1].name.clone()];
    let points_options = PointsOptions::default();
    // Each capture's handovers again, kept (a second pass over each: the
    // outputs above stream theirs away), then the pairing.
    let pair = match &args.out {
        Some(out) => {
            let dataset = Dataset::open(out, config.format)?;
            let (pair, figure) = pair_into_dataset(
                &dataset,
                &planned,
                &params,
                &names,
                &config,
                &points_options,
            )?;
            let dir = out.join("figures");
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            for (ext, text) in [("svg", &figure.svg), ("csv", &figure.csv)] {
                let path = dir.join(format!("{}.{ext}", figure.name));
                std::fs::write(&path, text)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            println!(
                "{} two-sided handovers, {} seen at one point only; tables in {}/: points, owd, handovers_two_sided; figure {}/figures/{}.svg (data: .csv)",
                pair.records.len(),
                pair.one_sided.len(),
                out.display(),
                out.display(),
                figure.name
            );
            pair
        }
        None => {
            let pair =
                point_tables::analyze_pair(&planned, &names, &config, &points_options, &mut ())?;
            let mut out: Box<dyn Write> = match &args.output {
                Some(p) => Box::new(
                    std::fs::OpenOptions::new()
                        .append(true)
                        .open(p)
                        .with_context(|| format!("cannot open {}", p.display()))?,
                ),
                None => Box::new(std::io::stdout().lock()),
            };
            match args.format {
                crate::Format::Jsonl => {
                    let mut clock = serde_json::to_value(pair.report.clock)?;
                    if let serde_json::Value::Object(m) = &mut clock {
                        m.insert("record".into(), "points_clock".into());
                        m.insert("points".into(), serde_json::json!(names));
                    }
                    serde_json::to_writer(&mut out, &clock)?;
                    out.write_all(b"\n")?;
                    for t in &pair.records {
                        let mut v = serde_json::to_value(t)?;
                        if let serde_json::Value::Object(m) = &mut v {
                            m.insert("record".into(), "two_sided_handover".into());
                        }
                        serde_json::to_writer(&mut out, &v)?;
                        out.write_all(b"\n")?;
                    }
                    for o in &pair.one_sided {
                        let mut v = serde_json::to_value(o)?;
                        if let serde_json::Value::Object(m) = &mut v {
                            m.insert("record".into(), "one_sided_handover".into());
                        }
                        serde_json::to_writer(&mut out, &v)?;
                        out.write_all(b"\n")?;
                    }
                }
                crate::Format::Text => {
                    let c = &pair.report.clock;
                    writeln!(
                        out,
                        "points {} and {}: clock {b} − {a} = {:.6} ms ± {:.6} ms, drift {:+.2} ppm",
                        names[0],
                        names[1],
                        c.offset_ns / 1e6,
                        c.offset_uncertainty_ns / 1e6,
                        c.drift_ppm,
                        a = names[0],
                        b = names[1],
                    )?;
                    two_sided_text(&mut out, &pair.records)?;
                    one_sided_text(&mut out, &names, pair.records.len(), &pair.one_sided)?;
                }
            }
            out.flush()?;
            pair
        }
    };
    failed |= pair.report.points.iter().any(|p| p.warning.is_some());
    Ok(Status::partial_if(failed))
}

/// Two planned captures (in --point order) paired, the `owd` table
/// streamed into `dataset` and the `points` and `handovers_two_sided`
/// tables written after it, with the one-way delay figure: what
/// `analyze --point --out` and `report --point` both write.
pub(crate) fn pair_into_dataset(
    dataset: &Dataset,
    planned: &[Input],
    params: &[(String, ParamType)],
    names: &[String; 2],
    config: &BatchConfig,
    options: &PointsOptions,
) -> anyhow::Result<(PairAnalysis, Figure)> {
    let sources = [planned[0].source.as_str(), planned[1].source.as_str()];
    let key = point_tables::pair_key(sources);
    let mut provenance = batch::provenance(&planned[0], params);
    // Rows of a pair of points belong to neither capture side.
    provenance.capture_side = None;
    let mut none = ();
    let mut owd = point_tables::OwdTable::new(dataset, &key, names.clone(), &provenance, &mut none);
    let mut series = OwdSeries::new(&mut owd);
    let pair = point_tables::analyze_pair(planned, names, config, options, &mut series)?;
    let series = series.finish();
    owd.finish()?;
    point_tables::write_summary_tables(dataset, &key, &provenance, sources, &pair)?;
    let figure = report_points::owd_figure(names, &pair.report, &series, &pair.records, &key)?;
    Ok((pair, figure))
}

/// The two `--point` captures (of `analyze` or `report`) checked and found
/// as inputs, in the options' order: exactly two, named differently, each
/// one capture file (usage errors otherwise).
pub(crate) fn point_inputs(
    points: &[PointInput],
) -> anyhow::Result<Vec<sctp_handover_tables::inputs::Input>> {
    use sctp_handover_tables::inputs::{self, InputKind};
    if points.len() != 2 {
        return Err(usage(anyhow::anyhow!(
            "--point: exactly two capture points are supported, {} given",
            points.len()
        )));
    }
    if points[0].name == points[1].name {
        return Err(usage(anyhow::anyhow!(
            "--point: the two points need different names, both are `{}`",
            points[0].name
        )));
    }
    // Each capture is read several times (docs/points.md): a stream cannot be.
    if points.iter().any(|p| inputs::is_stdin(&p.path)) {
        return Err(usage(anyhow::anyhow!(
            "--point: a capture point must be a file (`-`, standard input, can be read only once)"
        )));
    }
    let paths: Vec<PathBuf> = points.iter().map(|p| p.path.clone()).collect();
    let (found, problems) = inputs::discover(&paths);
    if let Some(p) = problems.first() {
        return Err(usage(anyhow::anyhow!("{}: {}", p.path.display(), p.reason)));
    }
    if found.len() != 2 || found.iter().any(|i| i.kind != InputKind::Capture) {
        return Err(usage(anyhow::anyhow!(
            "--point: each point must name one capture file"
        )));
    }
    Ok(found)
}
