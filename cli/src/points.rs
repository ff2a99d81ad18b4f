//! `sctp-handover points`: two capture points of the same traffic (the
//! mobile node's and the correspondent's captures of a handover) paired
//! packet by packet: clock offset and drift between them, one-way delay
//! per path and direction, packets lost on the way, spurious
//! retransmissions (docs/points.md).

use crate::exit::{usage, Status};
use anyhow::Context;
use clap::{Args, ValueEnum};
use sctp_handover::time::Timestamp;
use sctp_handover_points::{
    analyze_points, Direction, Loss, LossKind, OwdSample, PointInput, PointsOptions, PointsReport,
    PointsSink, Retransmission,
};
use std::io::Write;
use std::path::PathBuf;

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

fn parse_point(s: &str) -> Result<PointInput, String> {
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
                    "retransmission: {sender} frame {} at {} TSN {} (transmission {}) ({dir}, path {} → {}): {verdict}",
                    r.frame, epoch(r.sent_ns), r.tsn, r.transmission, r.src, r.dst
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
        w.line(format_args!(
            "path {}→{} {} → {}: {} paired, {owd}; {} lost, {} not seen at the sender; {} retransmissions, {} spurious",
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
