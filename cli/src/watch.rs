//! `sctp-handover watch`: handovers as they happen, from live interfaces
//! (libpcap) or from a capture still being written (`--follow`), one line
//! (or one JSON line) per event as soon as it is complete.

use crate::{analysis_options, AnalysisArgs, TableArgs};
use anyhow::Context;
use clap::ValueEnum;
use sctp_handover::analysis::{AssociationPart, AssociationReport, ReportSink, StreamAnalyzer};
use sctp_handover::capture::{self, CaptureFormat, Frame};
use sctp_handover::events::{Event, EventKind};
use sctp_handover::handover::{CapturePoint, Component, Handover};
use sctp_handover::time::Timestamp;
use sctp_handover_live::follow::{self, FollowReader, Stop};
use sctp_handover_live::interfaces::Live;
use sctp_handover_live::write::PcapngWriter;
use sctp_handover_tables::batch::{self, BatchConfig, PartTables};
use sctp_handover_tables::dataset::{self, Dataset, Done};
use sctp_handover_tables::inputs::{self, Input, InputKind};
use sctp_handover_tables::records::{file_row, FileOutcome};
use sctp_handover_tables::rows::Rows;
use sctp_handover_tables::schema;
use sctp_handover_tables::write::{PartWriter, Provenance};
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, ValueEnum)]
pub enum WatchFormat {
    /// One readable line per event.
    Text,
    /// One JSON object per line (docs/watch.md).
    Jsonl,
}

#[derive(clap::Args)]
pub struct WatchArgs {
    /// Capture on this interface (repeat for several; needs CAP_NET_RAW and
    /// CAP_NET_ADMIN).
    #[arg(
        short = 'i',
        long = "interface",
        value_name = "IFACE",
        required_unless_present = "follow"
    )]
    interfaces: Vec<String>,
    /// Follow a capture file still being written (`tcpdump -w`), or a
    /// directory it rotates files into (`-G`/`-C`).
    #[arg(long, value_name = "PATH", conflicts_with = "interfaces")]
    follow: Option<PathBuf>,
    /// Stop after this many seconds without a new packet (default: run
    /// until Ctrl-C or SIGTERM).
    #[arg(long, value_name = "SECONDS")]
    idle_exit: Option<f64>,
    #[arg(long, value_enum, default_value_t = WatchFormat::Text)]
    format: WatchFormat,
    /// Keep every captured frame in this pcapng file (live capture);
    /// analysing it afterwards gives what the live run gave.
    #[arg(long, value_name = "FILE.pcapng", conflicts_with = "follow")]
    write: Option<PathBuf>,
    /// Bytes kept of each captured frame (as tcpdump's -s). In immediate
    /// mode libpcap sizes the kernel's ring slots by it: with the default
    /// a 2 MB buffer holds only a few frames, so a briefly starved watch
    /// drops; 2048 holds every frame of a 1500-byte MTU link whole.
    #[arg(short = 's', long, default_value_t = 262_144, value_name = "BYTES")]
    snaplen: i32,
    /// No status line.
    #[arg(short, long)]
    quiet: bool,
    /// When the watch ends, write the tables `analyze --out DIR` writes
    /// (files, associations, paths, asconf, events, handovers) for what
    /// was watched, as one input of the dataset in DIR (docs/watch.md).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    tables: TableArgs,
    #[command(flatten)]
    analysis: AnalysisArgs,
}

/// Prints events as they come.
struct Printer {
    json: bool,
    out: std::io::BufWriter<std::io::Stdout>,
    /// The file the frames come from (`--follow`), for the output.
    source: String,
    origin: Option<Timestamp>,
    handovers: u64,
    /// The file each switch of an alive association was seen in (its
    /// frame numbers are that file's), until the association finishes.
    switch_sources: std::collections::HashMap<(u32, u64), String>,
    /// Handovers of alive associations already printed in full (handed on
    /// in parts), for the count when they finish.
    handed_on: std::collections::HashMap<u32, usize>,
    /// The frame being analysed (number, capture time): the packet that
    /// completes whatever is printed now; None after the input ended.
    current: Option<(u64, Timestamp)>,
    /// `--out`: finished associations' rows.
    tables: Option<TablesOut>,
}

fn ms(c: &Component) -> String {
    c.ms.map_or("–".into(), |v| format!("{v:.3} ms"))
}

/// The wall clock now (CLOCK_REALTIME, the clock capture timestamps are
/// taken with).
fn wall_clock() -> Timestamp {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp(d.as_nanos() as i64)
}

impl Printer {
    /// Handovers whose every component is resolved: printed in full.
    fn resolved(&mut self, handovers: &[Handover]) {
        for h in handovers {
            let source = self
                .switch_sources
                .remove(&(h.association, h.switch_frame))
                .unwrap_or_else(|| self.source.clone());
            if self.json {
                self.json_line(json!({"type": "handover", "handover": h}), Some(source));
            } else {
                let line = self.handover_line(h, "HANDOVER");
                self.line(line);
            }
        }
    }

    /// A JSON line with the fields every line carries: `source`,
    /// `completed_by` (the packet whose analysis printed it) and `printed`
    /// (the wall clock as it is written).
    fn json_line(&mut self, mut v: Value, source: Option<String>) {
        let source = source.unwrap_or_else(|| self.source.clone());
        v["source"] = json!(source);
        v["completed_by"] = match self.current {
            Some((frame, time)) => json!({"frame": frame, "time": time}),
            None => Value::Null,
        };
        v["printed"] = json!(wall_clock());
        self.line(v.to_string());
    }

    fn line(&mut self, text: String) {
        let _ = writeln!(self.out, "{text}");
        // Each event is complete when printed: nothing waits in a buffer.
        let _ = self.out.flush();
    }

    fn time(&self, t: Timestamp) -> String {
        t.epoch_string()
    }

    fn handover_line(&self, h: &Handover, what: &str) -> String {
        format!(
            "{} {what} assoc {} endpoint {} path {} ({} → {}) → path {} ({} → {}) at frame {} [{}]: \
             data interrupt {}, new-data gap {}, total handover latency {}{}",
            self.time(h.switch_time),
            h.association,
            h.sender,
            h.from_path,
            h.from_src,
            h.from_dst,
            h.to_path,
            h.to_src,
            h.to_dst,
            h.switch_frame,
            sctp_handover_tables::records::class_name(h.class),
            ms(&h.data_interrupt),
            ms(&h.new_data_gap),
            ms(&h.total_handover_latency),
            h.failover
                .as_ref()
                .map_or(String::new(), |f| format!(", failover time {}", ms(&f.failover_time)))
        )
    }
}

impl ReportSink for Printer {
    fn first_frame(&mut self, time: Timestamp) {
        self.origin.get_or_insert(time);
    }

    fn event(&mut self, e: &Event) {
        let text = match &e.kind {
            EventKind::AssociationStart { how } => format!("association starts ({how})"),
            EventKind::AssociationEnd { reason } => format!("association ends ({reason})"),
            EventKind::Asconf {
                serial, requests, ..
            } => format!(
                "ASCONF serial {serial}: {}",
                requests
                    .iter()
                    .map(|r| format!("{} {}", r.op.name(), r.address))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            EventKind::AsconfAck {
                serial,
                request_frame,
                rtt_ms,
                results,
                ..
            } => format!(
                "ASCONF-ACK serial {serial} for frame {}, RTT {}: {}",
                request_frame.map_or("?".into(), |f| f.to_string()),
                rtt_ms.map_or("?".into(), |r| format!("{r:.3} ms")),
                results
                    .iter()
                    .map(|r| format!("{} {} {:?}", r.op.name(), r.address, r.outcome))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            EventKind::PathInactive { path, error_count } => {
                format!("path {path} inferred inactive (error count {error_count})")
            }
            EventKind::PathActive { path } => format!("path {path} inferred active"),
            EventKind::PeerPrimarySet { address, .. } => format!("peer primary set to {address}"),
            _ => return,
        };
        if self.json {
            self.json_line(json!({"type": "event", "event": e}), None);
        } else {
            let line = format!(
                "{} assoc {} frame {}: {text}",
                self.time(e.time),
                e.association,
                e.frame
            );
            self.line(line);
        }
    }

    fn switch(&mut self, h: &Handover) {
        self.handovers += 1;
        self.switch_sources
            .insert((h.association, h.switch_frame), self.source.clone());
        if self.json {
            self.json_line(json!({"type": "switch", "handover": h}), None);
        } else {
            let line = self.handover_line(h, "SWITCH");
            self.line(line);
        }
    }

    fn part(&mut self, part: AssociationPart) {
        *self.handed_on.entry(part.association).or_default() += part.handovers.len();
        self.resolved(&part.handovers);
        if let Some(t) = self.tables.as_mut() {
            t.add_part(&part);
        }
    }

    fn association(&mut self, r: AssociationReport) {
        self.resolved(&r.handovers);
        let handovers = r.handovers.len() + self.handed_on.remove(&r.association.id).unwrap_or(0);
        if self.json {
            self.json_line(
                json!({
                    "type": "association",
                    "association": r.association.id,
                    "handovers": handovers,
                    "packets": r.association.packets,
                    "retired": r.retired,
                }),
                None,
            );
        } else {
            let line = format!(
                "assoc {} finished: {} packets, {} handover{}",
                r.association.id,
                r.association.packets,
                handovers,
                if handovers == 1 { "" } else { "s" }
            );
            self.line(line);
        }
        if let Some(t) = self.tables.as_mut() {
            t.add(&r);
        }
    }
}

/// The status line on a terminal: alive associations, packets per second.
struct Status {
    on: bool,
    last: Instant,
    frames_then: u64,
}

impl Status {
    fn tick(&mut self, analyzer: &StreamAnalyzer, frames: u64) {
        if !self.on || self.last.elapsed() < Duration::from_secs(1) {
            return;
        }
        let pps = (frames - self.frames_then) as f64 / self.last.elapsed().as_secs_f64();
        eprint!(
            "\r{} associations alive, {pps:.0} packets/s, {frames} frames   ",
            analyzer.alive()
        );
        self.last = Instant::now();
        self.frames_then = frames;
    }
}

/// `--out`: the watch as one input of an `analyze --out` dataset. Rows of
/// finished associations are written to the (hidden, temporary) part files
/// whenever they reach `FLUSH_BYTES`, as `analyze` does, so memory stays bounded;
/// the parts are completed and renamed into place when the watch ends.
struct TablesOut {
    dataset: Dataset,
    input: Input,
    key: String,
    fingerprint: String,
    provenance: Provenance,
    parts: PartTables,
}

impl TablesOut {
    fn open(
        config: &BatchConfig,
        input: Input,
        capture_point: CapturePoint,
    ) -> anyhow::Result<Self> {
        let dataset = Dataset::open(&config.out, config.format)?;
        let key = dataset::key(&input.source);
        let (planned, params) = batch::plan(vec![input], None);
        let input = planned.into_iter().next().context("the watched input")?;
        let parts = PartTables::new(&dataset, &key, config.format, capture_point);
        Ok(TablesOut {
            provenance: batch::provenance(&input, &params),
            fingerprint: batch::fingerprint(config),
            dataset,
            input,
            key,
            parts,
        })
    }

    fn add(&mut self, r: &AssociationReport) {
        self.parts.add(r, &self.provenance);
    }

    fn add_part(&mut self, part: &AssociationPart) {
        self.parts.add_part(part, &self.provenance);
    }

    /// Completes every part, the files row and the input's record.
    fn finish(
        mut self,
        report: &sctp_handover::analysis::FileReport,
        seconds: f64,
    ) -> anyhow::Result<()> {
        self.parts.finish(&self.provenance)?;
        // The input as it is now (a followed file has grown since the start).
        let meta = std::fs::metadata(&self.input.path)
            .ok()
            .filter(|m| m.is_file());
        let size = meta.as_ref().map(|m| m.len());
        let modified_ns = meta
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i128);
        let status = if report.warning.is_some() {
            "truncated"
        } else {
            "ok"
        };
        let mut files = Rows::new(&schema::FILES);
        file_row(
            &mut files,
            &FileOutcome {
                status,
                error: report.warning.clone(),
                size_bytes: size,
                report: Some(report),
                seconds,
            },
        );
        PartWriter::new(self.dataset.part("files", &self.key), self.dataset.format)
            .finish(&mut files, &self.provenance)?;
        self.dataset.mark_done(&Done {
            source: self.input.source.clone(),
            size,
            modified_ns,
            fingerprint: self.fingerprint.clone(),
            status: status.into(),
            error: report.warning.clone(),
            associations: report.associations,
            handovers: report.handovers,
            tool_version: env!("CARGO_PKG_VERSION").into(),
        })
    }
}

/// The input the watch stands for in `--out`'s dataset: a followed file as
/// `analyze` finds it (harness run beside it included), a followed
/// directory, the file `--write` keeps, or the interfaces.
fn watched_input(args: &WatchArgs) -> Input {
    if let Some(path) = &args.follow {
        if !path.is_dir() {
            let (mut found, _) = inputs::discover(std::slice::from_ref(path));
            if let Some(input) = found.pop() {
                return input;
            }
        }
    }
    let (path, source) = match (&args.follow, &args.write) {
        (Some(p), _) | (None, Some(p)) => (p.clone(), p.display().to_string()),
        (None, None) => (
            PathBuf::new(),
            format!("live:{}", args.interfaces.join(",")),
        ),
    };
    Input {
        path,
        source,
        size: None,
        modified_ns: None,
        kind: InputKind::Capture,
        run: None,
    }
}

pub fn run(args: WatchArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let base = analysis_options(&args.analysis)?;
    let input = watched_input(&args);
    let config = BatchConfig {
        out: args.out.clone().unwrap_or_default(),
        format: args.tables.format(),
        jobs: 1,
        force: true,
        shard: None,
        options: base.clone(),
        harness_files: !args.analysis.no_harness_files,
    };
    // A followed harness capture is analysed as `analyze` would: with the
    // run's events.jsonl and capture side (read now, at the start).
    let mut options = match &input.run {
        Some(_) => batch::options_for(&input, &config).map_err(anyhow::Error::msg)?,
        None => base,
    };
    // Live, the capture filter decides which frames are captured at all
    // (as `tcpdump -i IFACE -w FILE EXPR`): frames it rejects are counted
    // but get no number and are not kept by --write.
    let live_filter: Option<Box<dyn sctp_handover::analysis::FrameMatcher>> =
        if args.follow.is_none() {
            options.frame_filter.take().map(|f| f.matcher())
        } else {
            None
        };
    let tables = match &args.out {
        Some(_) => Some(TablesOut::open(
            &config,
            input.clone(),
            options.handover.capture_point,
        )?),
        None => None,
    };
    let flag = Arc::new(AtomicBool::new(false));
    {
        let flag = flag.clone();
        // Ctrl-C and SIGTERM end cleanly (the summary is printed).
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed));
    }
    let stop = Stop {
        flag,
        idle: args.idle_exit.map(Duration::from_secs_f64),
    };
    let mut analyzer = StreamAnalyzer::new(&options);
    let mut printer = Printer {
        json: matches!(args.format, WatchFormat::Jsonl),
        out: std::io::BufWriter::new(std::io::stdout()),
        source: String::new(),
        origin: None,
        handovers: 0,
        switch_sources: Default::default(),
        handed_on: Default::default(),
        current: None,
        tables,
    };
    let mut status = Status {
        on: !args.quiet && std::io::stderr().is_terminal(),
        last: Instant::now(),
        frames_then: 0,
    };
    let mut frames = 0u64;
    let mut rejected = 0u64;
    let mut summary = Vec::new();
    // How the frames were held, and the last file's warning (--out).
    let mut format = (CaptureFormat::Pcapng, false);
    let mut warning = None;
    if let Some(path) = &args.follow {
        let dir = path.is_dir();
        let mut current = follow::wait_for(path, dir, &stop);
        while let Some(file) = current {
            printer.source = file.display().to_string();
            let reader = FollowReader::new(&file, dir.then_some(path.as_path()), stop.clone())
                .with_context(|| format!("{}: cannot open", file.display()))?;
            match capture::from_reader(&file, reader) {
                Ok(mut r) => {
                    format = (r.format(), r.is_compressed());
                    let outcome = r.for_each_frame(|f| {
                        frames += 1;
                        printer.current = Some((f.number, f.timestamp));
                        analyzer.frame(&f, &mut printer);
                        status.tick(&analyzer, frames);
                    });
                    match outcome {
                        Ok(o) => {
                            if let Some(w) = &o.warning {
                                eprintln!("sctp-handover: warning: {w}");
                            }
                            warning = o.warning;
                        }
                        Err(e) => {
                            eprintln!("sctp-handover: {e}");
                            warning = Some(e.to_string());
                        }
                    }
                }
                Err(e) => {
                    eprintln!("sctp-handover: {e}");
                    warning = Some(e.to_string());
                }
            }
            current = if dir {
                follow::next_after(path, &file, &stop)
            } else {
                None
            };
        }
    } else {
        let live =
            Live::open(&args.interfaces, args.snaplen, stop.clone()).map_err(anyhow::Error::msg)?;
        // Packets are queued from here on (the harness waits for this line).
        eprintln!("sctp-handover: capturing on {}", args.interfaces.join(", "));
        let mut keep = match &args.write {
            Some(p) => Some(
                PcapngWriter::create(p).with_context(|| format!("cannot write {}", p.display()))?,
            ),
            None => None,
        };
        let mut filter = live_filter;
        let mut filter_errors: Vec<u32> = Vec::new();
        let mut last_packet = Instant::now();
        while !stop.reached(last_packet) {
            match live.frames.recv_timeout(Duration::from_millis(200)) {
                Ok(f) => {
                    last_packet = Instant::now();
                    if let Some(m) = filter.as_mut() {
                        let keep = match m.keep(f.link_type, &f.data, f.original_len) {
                            Ok(k) => k,
                            Err(why) => {
                                if !filter_errors.contains(&f.link_type) {
                                    filter_errors.push(f.link_type);
                                    eprintln!("sctp-handover: --filter: {why}");
                                }
                                false
                            }
                        };
                        if !keep {
                            rejected += 1;
                            continue;
                        }
                    }
                    frames += 1;
                    if let Some(w) = keep.as_mut() {
                        w.frame(f.interface, f.link_type, f.ts_ns, f.original_len, &f.data)
                            .context("writing --write")?;
                    }
                    let frame = Frame {
                        number: frames,
                        timestamp: Timestamp(f.ts_ns),
                        link_type: f.link_type,
                        interface: f.interface as u32,
                        original_len: f.original_len,
                        data: &f.data,
                    };
                    printer.current = Some((frame.number, frame.timestamp));
                    analyzer.frame(&frame, &mut printer);
                    status.tick(&analyzer, frames + rejected);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(_) => break,
            }
        }
        stop.flag.store(true, Ordering::Relaxed);
        if let Some(w) = keep {
            w.finish().context("writing --write")?;
        }
        for s in live.finish() {
            summary.push(format!(
                "{}: {} received by the filter, {} dropped by the kernel, {} by the interface{}",
                s.name,
                s.received,
                s.dropped,
                s.if_dropped,
                s.error.map_or(String::new(), |e| format!("; stopped: {e}"))
            ));
        }
    }
    printer.current = None;
    analyzer.finish(&mut printer);
    if status.on {
        eprintln!();
    }
    let a = analyzer.accounting();
    let (associations, handovers) = analyzer.totals();
    eprintln!(
        "sctp-handover: {} frames ({} SCTP analysed, {} filtered out), {associations} associations, {handovers} handovers",
        frames + rejected,
        a.sctp + a.sctp_truncated + a.sctp_malformed,
        a.filtered_out + rejected
    );
    for line in summary {
        eprintln!("sctp-handover: {line}");
    }
    if let Some(tables) = printer.tables.take() {
        let mut report = analyzer.into_report(&input.path, format, frames + rejected, warning);
        report.accounting.filtered_out += rejected;
        let out = config.out.display().to_string();
        tables
            .finish(&report, started.elapsed().as_secs_f64())
            .with_context(|| format!("writing the tables into {out}"))?;
        eprintln!("sctp-handover: tables in {out}/ (source {})", input.source);
    }
    Ok(ExitCode::SUCCESS)
}
