//! `sctp-handover watch`: handovers as they happen, from live interfaces
//! (libpcap) or from a capture still being written (`--follow`), one line
//! (or one JSON line) per event as soon as it is complete.
//!
//! Live, four threads share the work so that none of them makes another
//! lose frames: a capture thread per interface only drains libpcap's ring
//! into the queue (`sctp_handover_live::interfaces`), this thread analyses
//! and prints, one thread writes `--write`'s file and one the `--out`
//! tables. Frames lost anywhere are counted by cause with the time spans
//! they were lost in, and every result whose time span meets one says so.

use crate::exit::Status as ExitStatus;
use crate::{analysis_options, AnalysisArgs, TableArgs};
use anyhow::Context;
use clap::ValueEnum;
use sctp_handover::analysis::{AssociationPart, AssociationReport, ReportSink, StreamAnalyzer};
use sctp_handover::capture::{self, CaptureFormat, Frame};
use sctp_handover::events::{Event, EventKind};
use sctp_handover::handover::{CapturePoint, Component, Handover, COMPONENTS};
use sctp_handover::time::Timestamp;
use sctp_handover_live::drops::{DropLog, DropSpan};
use sctp_handover_live::follow::{self, FollowReader, Stop};
use sctp_handover_live::interfaces::{CaptureConfig, InterfaceStats, Live, Pump};
use sctp_handover_live::write::WriterThread;
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The queue's default: as large as the kernel's buffer, so that together
/// they hold two seconds of a burst the analysis cannot keep up with.
const DEFAULT_QUEUE_KIB: u64 = 131_072;
/// The kernel's buffer by default (KiB): a second at 300 000 frames/s of
/// SCTP signalling, whose frames take about 100 bytes of ring beside
/// their ~300 bytes (TPACKET_V3 header and alignment).
const DEFAULT_BUFFER_KIB: u64 = 131_072;
/// The packet-buffer timeout: how late, at most, a frame captured in a
/// quiet moment reaches the analysis (docs/watch.md, "Capture").
const BUFFER_TIMEOUT_MS: u32 = 10;
/// Lines written but not flushed go out at least this often; and whenever
/// the analysis has caught up with the capture.
const FLUSH_EVERY: Duration = Duration::from_millis(10);
/// New drops are reported in the output at most this often.
const DROP_LINES_EVERY: Duration = Duration::from_secs(1);

/// How `watch` prints events.
#[derive(Clone, Copy, ValueEnum)]
pub enum WatchFormat {
    /// One readable line per event.
    Text,
    /// JSON lines: one JSON object per event (docs/watch.md). `json` is
    /// accepted too, as `analyze --format` accepted it.
    #[value(alias = "json")]
    Jsonl,
}

/// The arguments of `sctp-handover watch`.
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
    /// Output on standard output.
    #[arg(long, value_enum, default_value_t = WatchFormat::Text)]
    format: WatchFormat,
    /// Keep every captured frame in this pcapng file (live capture; as
    /// tcpdump's -w); analysing it afterwards gives what the live run gave.
    #[arg(
        short = 'w',
        long,
        value_name = "FILE.pcapng",
        conflicts_with = "follow"
    )]
    write: Option<PathBuf>,
    /// Bytes kept of each captured frame (as tcpdump's -s). The default
    /// keeps every frame whole: the analysis walks every chunk of a packet,
    /// and a frame cut short loses the chunks after the cut. Frames are
    /// packed in the kernel's buffer by their own length, so a large
    /// snaplen costs nothing (except with --immediate-mode).
    #[arg(short = 's', long, default_value_t = 262_144, value_name = "BYTES")]
    snaplen: i32,
    /// The kernel's capture buffer per interface, in KiB (as tcpdump's -B).
    /// Default 131072 (128 MiB, about a second of 300 000 signalling
    /// frames/s), or a sixteenth of the machine's memory if that is less.
    #[arg(short = 'B', long = "buffer-size", value_name = "KiB")]
    buffer_size: Option<u64>,
    /// Hand each frame over as soon as it is captured (as tcpdump's
    /// --immediate-mode) instead of in blocks at most 10 ms late. The
    /// kernel's buffer is then cut into slots of the snaplen: lower it
    /// (-s 2048) or the buffer holds few frames.
    #[arg(long)]
    immediate_mode: bool,
    /// The queue between capture and analysis, in KiB: frames captured
    /// and not yet analysed (and written by --write). Full, further frames
    /// are dropped and counted as dropped by the queue.
    #[arg(long, value_name = "KiB", default_value_t = DEFAULT_QUEUE_KIB)]
    queue_size: u64,
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
    /// Flush after every line (`--follow`, whose reader waits inside the
    /// analysis, where nothing else would flush); live, lines are flushed
    /// every [`FLUSH_EVERY`] and whenever the analysis has caught up.
    flush_each: bool,
    unflushed: bool,
    last_flush: Instant,
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
    /// The last frame's capture time (what a result completed by the end
    /// of the input reaches to).
    last_time: Option<Timestamp>,
    /// Live: the drops so far, to mark the results they may have touched.
    marks: Option<Marks>,
    /// Handovers printed in full that met a drop span.
    marked: u64,
    /// `--out`: finished associations' rows, written by their own thread.
    tables: Option<TablesThread>,
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

/// Epoch seconds with up to nine decimals ("1795343548.249122000", how
/// the records write times) in ns.
fn epoch_ns(text: &str) -> Option<i64> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (secs, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = secs.parse().ok()?;
    let frac: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().ok()? * 10i64.pow(9 - frac.len() as u32)
    };
    let ns = secs.checked_mul(1_000_000_000)?.checked_add(frac)?;
    Some(if negative { -ns } else { ns })
}

/// The earliest and latest instant a record rests on: every time in it
/// (keys `time` and `…_time`: frames, anchors, ASCONF transmissions and
/// answers, T3 expiries, the window's end). Read from the serialised
/// record, so a time the analyzer adds later is taken into account too.
fn span_of(v: &Value) -> Option<(i64, i64)> {
    fn walk(v: &Value, span: &mut Option<(i64, i64)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let t = (k == "time" || k.ends_with("_time"))
                        .then(|| x.as_str().and_then(epoch_ns))
                        .flatten();
                    match t {
                        Some(t) => {
                            let s = span.get_or_insert((t, t));
                            s.0 = s.0.min(t);
                            s.1 = s.1.max(t);
                        }
                        None => walk(x, span),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, span)),
            _ => {}
        }
    }
    let mut span = None;
    walk(v, &mut span);
    span
}

/// Live capture's drops, for marking results: a handover (or an
/// association) whose span meets a drop span may rest on incomplete
/// frames, and says so in every output.
struct Marks {
    log: Arc<DropLog>,
    names: Vec<String>,
    /// Frames of each span already reported in a `drops` line.
    reported: Vec<u64>,
    generation: u64,
    last_report: Instant,
}

impl Marks {
    fn name(&self, s: &DropSpan) -> &str {
        self.names.get(s.interface).map_or("?", String::as_str)
    }

    fn json(&self, spans: &[DropSpan]) -> Value {
        Value::Array(
            spans
                .iter()
                .map(|s| {
                    json!({
                        "cause": s.cause.name(),
                        "interface": self.name(s),
                        "from": Timestamp(s.from_ns),
                        "to": Timestamp(s.to_ns),
                        "frames": s.frames,
                    })
                })
                .collect(),
        )
    }

    /// "kernel shb1 523 frames 1795343548.200000000–1795343548.249122000; …"
    fn text(&self, spans: &[DropSpan]) -> String {
        self.text_with(spans, true)
    }

    fn text_with(&self, spans: &[DropSpan], cause: bool) -> String {
        spans
            .iter()
            .map(|s| {
                format!(
                    "{}{} {} frame{} {}–{}",
                    if cause { s.cause.name() } else { "" },
                    if cause {
                        format!(" {}", self.name(s))
                    } else {
                        self.name(s).to_string()
                    },
                    s.frames,
                    if s.frames == 1 { "" } else { "s" },
                    Timestamp(s.from_ns).epoch_string(),
                    Timestamp(s.to_ns).epoch_string()
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// What a drop cause is called in sentences.
fn cause_words(cause: &str) -> &str {
    match cause {
        "queue" => "the watch's queue",
        "kernel" => "the kernel",
        _ => "the interface",
    }
}

/// What `--out` gets of each handover: the drops its span meets, as text
/// (None: none).
type Mark = Option<String>;

impl Printer {
    /// Whether any frame was lost so far (else nothing needs marking).
    fn may_overlap(&self) -> bool {
        self.marks.as_ref().is_some_and(|m| m.log.generation() != 0)
    }

    /// The drop spans that meet a record's span, where `open_end` says the
    /// record reaches to the frame that completed it (a window not closed
    /// yet, or closed by the end of the input).
    fn overlapping(&self, record: &Value, open_end: bool) -> Vec<DropSpan> {
        let Some(marks) = &self.marks else {
            return Vec::new();
        };
        let Some((from, mut to)) = span_of(record) else {
            return Vec::new();
        };
        if open_end {
            if let Some(t) = self.current.map(|c| c.1).or(self.last_time) {
                to = to.max(t.0);
            }
        }
        marks.log.overlapping(from, to)
    }

    /// Handovers whose every component is resolved: printed in full.
    fn resolved(&mut self, handovers: &[Handover]) -> Vec<Mark> {
        let mut marks = Vec::with_capacity(handovers.len());
        for h in handovers {
            let source = self
                .switch_sources
                .remove(&(h.association, h.switch_frame))
                .unwrap_or_else(|| self.source.clone());
            // Walked for its times only when a drop may meet it.
            let spans = if self.may_overlap() {
                let r = serde_json::to_value(h).unwrap_or(Value::Null);
                self.overlapping(&r, r["window"]["end"].is_null())
            } else {
                Vec::new()
            };
            if !spans.is_empty() {
                self.marked += 1;
            }
            let text = self.marks.as_ref().map(|m| m.text(&spans));
            if self.json {
                let drops = self.marks.as_ref().map(|m| m.json(&spans));
                let record = serde_json::to_string(h).unwrap_or_else(|_| "null".into());
                self.record_line("handover", "handover", &record, drops, Some(source));
            } else {
                let line = self.handover_line(h, "HANDOVER", text.as_deref());
                self.line(line);
            }
            marks.push(text.filter(|t| !t.is_empty()));
        }
        marks
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

    /// A JSON line carrying an analyzer record (`event` or `handover`),
    /// written without building a `Value` of it: the records are large
    /// and many come at once (a renumbering moves every association), and
    /// building one tree per line cost more than the analysis. Keys in
    /// alphabetical order, as the lines built from a `Value` have them;
    /// the record's own in its declaration order, as `analyze --format
    /// json` writes it.
    fn record_line(
        &mut self,
        kind: &str,
        key: &str,
        record: &str,
        drops: Option<Value>,
        source: Option<String>,
    ) {
        let source = source.unwrap_or_else(|| self.source.clone());
        let completed_by = match self.current {
            Some((frame, time)) => json!({"frame": frame, "time": time}),
            None => Value::Null,
        };
        let mut text = String::with_capacity(record.len() + 256);
        text.push('{');
        if let Some(d) = drops {
            text.push_str(&format!("\"capture_drops\":{d},"));
        }
        text.push_str(&format!(
            "\"completed_by\":{completed_by},{}:{record},\"printed\":{},\"source\":{},\"type\":{}}}",
            json!(key),
            json!(wall_clock()),
            json!(source),
            json!(kind)
        ));
        self.line(text);
    }

    fn line(&mut self, text: String) {
        let _ = writeln!(self.out, "{text}");
        self.unflushed = true;
        if self.flush_each {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.unflushed {
            let _ = self.out.flush();
            self.unflushed = false;
        }
        self.last_flush = Instant::now();
    }

    /// Flushes if lines have waited [`FLUSH_EVERY`].
    fn flush_if_due(&mut self) {
        if self.unflushed && self.last_flush.elapsed() >= FLUSH_EVERY {
            self.flush();
        }
    }

    fn time(&self, t: Timestamp) -> String {
        t.epoch_string()
    }

    fn handover_line(&self, h: &Handover, what: &str, drops: Option<&str>) -> String {
        // The components the line shows (a failover's only for a failover).
        let components: Vec<String> = COMPONENTS
            .iter()
            .filter(|c| c.in_watch_line)
            .filter_map(|c| Some(format!("{} {}", c.label, ms((c.get)(h)?))))
            .collect();
        format!(
            "{} {what} assoc {} endpoint {} path {} ({} → {}) → path {} ({} → {}) at frame {} [{}]: {}{}",
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
            h.class.as_str(),
            components.join(", "),
            drops
                .filter(|d| !d.is_empty())
                .map_or(String::new(), |d| format!(" [capture drops overlap: {d}]"))
        )
    }

    /// Drops recorded since the last report, as lines (at most every
    /// [`DROP_LINES_EVERY`], and at the end with `now`): each span that
    /// grew, with its frames so far.
    fn report_drops(&mut self, now: bool) {
        let Some(marks) = self.marks.as_mut() else {
            return;
        };
        if !now && marks.last_report.elapsed() < DROP_LINES_EVERY {
            return;
        }
        marks.last_report = Instant::now();
        let generation = marks.log.generation();
        if generation == marks.generation {
            return;
        }
        marks.generation = generation;
        let spans = marks.log.spans();
        marks.reported.resize(spans.len(), 0);
        let mut lines = Vec::new();
        for (s, reported) in spans.iter().zip(marks.reported.iter_mut()) {
            if s.frames == *reported {
                continue;
            }
            let new = s.frames - *reported;
            *reported = s.frames;
            lines.push((s.clone(), new));
        }
        for (s, new) in lines {
            if self.json {
                let Some(marks) = self.marks.as_ref() else {
                    return;
                };
                let line = json!({
                    "type": "drops",
                    "cause": s.cause.name(),
                    "interface": marks.name(&s),
                    "from": Timestamp(s.from_ns),
                    "to": Timestamp(s.to_ns),
                    "frames": s.frames,
                    "new_frames": new,
                });
                self.json_line(line, None);
            } else {
                let Some(marks) = self.marks.as_ref() else {
                    return;
                };
                let line = format!(
                    "{} DROPS {} {}: {} frame{} lost by {} from {} to {} ({new} since the last report)",
                    Timestamp(s.to_ns).epoch_string(),
                    s.cause.name(),
                    marks.name(&s),
                    s.frames,
                    if s.frames == 1 { "" } else { "s" },
                    cause_words(s.cause.name()),
                    Timestamp(s.from_ns).epoch_string(),
                    Timestamp(s.to_ns).epoch_string(),
                );
                self.line(line);
            }
        }
    }

    fn send_to_tables(&mut self, msg: TableMsg) {
        if let Some(t) = self.tables.as_mut() {
            t.send(msg);
        }
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
                    .map(|r| format!("{} {} {}", r.op.name(), r.address, r.outcome.as_str()))
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
            let record = serde_json::to_string(e).unwrap_or_else(|_| "null".into());
            self.record_line("event", "event", &record, None, None);
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
        // The window runs on from the switch: what is known so far.
        let spans = if self.may_overlap() {
            self.overlapping(&serde_json::to_value(h).unwrap_or(Value::Null), true)
        } else {
            Vec::new()
        };
        if self.json {
            let drops = self.marks.as_ref().map(|m| m.json(&spans));
            let record = serde_json::to_string(h).unwrap_or_else(|_| "null".into());
            self.record_line("switch", "handover", &record, drops, None);
        } else {
            let text = self.marks.as_ref().map(|m| m.text(&spans));
            let line = self.handover_line(h, "SWITCH", text.as_deref());
            self.line(line);
        }
    }

    fn part(&mut self, part: AssociationPart) {
        *self.handed_on.entry(part.association).or_default() += part.handovers.len();
        let marks = self.resolved(&part.handovers);
        self.send_to_tables(TableMsg::Part(part, marks));
    }

    fn association(&mut self, r: AssociationReport) {
        let marks = self.resolved(&r.handovers);
        let handovers = r.handovers.len() + self.handed_on.remove(&r.association.id).unwrap_or(0);
        let a = &r.association;
        let spans = match &self.marks {
            Some(m) => m.log.overlapping(a.first_time.0, a.last_time.0),
            None => Vec::new(),
        };
        if self.json {
            let mut line = json!({
                "type": "association",
                "association": a.id,
                "handovers": handovers,
                "packets": a.packets,
                "retired": r.retired,
            });
            if let Some(m) = &self.marks {
                line["capture_drops"] = m.json(&spans);
            }
            self.json_line(line, None);
        } else {
            let drops = match &self.marks {
                Some(m) if !spans.is_empty() => {
                    format!(" [capture drops overlap: {}]", m.text(&spans))
                }
                _ => String::new(),
            };
            let line = format!(
                "assoc {} finished: {} packets, {} handover{}{drops}",
                a.id,
                a.packets,
                handovers,
                if handovers == 1 { "" } else { "s" }
            );
            self.line(line);
        }
        self.send_to_tables(TableMsg::Report(Box::new(r), marks));
    }
}

/// The status line on a terminal: alive associations, packets per second.
struct Status {
    on: bool,
    last: Instant,
    frames_then: u64,
}

impl Status {
    fn due(&self) -> bool {
        self.on && self.last.elapsed() >= Duration::from_secs(1)
    }

    fn tick(&mut self, analyzer: &StreamAnalyzer, frames: u64, extra: &str) {
        if !self.due() {
            return;
        }
        let pps = (frames - self.frames_then) as f64 / self.last.elapsed().as_secs_f64();
        eprint!(
            "\r{} associations alive, {pps:.0} packets/s, {frames} frames{extra}   ",
            analyzer.alive()
        );
        self.last = Instant::now();
        self.frames_then = frames;
    }
}

/// What the printer hands the tables' thread.
enum TableMsg {
    Report(Box<AssociationReport>, Vec<Mark>),
    Part(AssociationPart, Vec<Mark>),
}

/// Finished associations queued for the tables' thread. Bounded: if the
/// tables cannot keep up the analysis waits, and the capture queue (whose
/// overflow is counted) takes the backlog.
const TABLE_QUEUE: usize = 4096;

/// `--out` on a thread of its own, so that building and encoding the rows
/// (Parquet batches take tens of ms) never holds the analysis up.
struct TablesThread {
    tx: Option<SyncSender<TableMsg>>,
    thread: Option<JoinHandle<TablesOut>>,
}

impl TablesThread {
    fn start(mut tables: TablesOut) -> anyhow::Result<Self> {
        let (tx, rx) = sync_channel::<TableMsg>(TABLE_QUEUE);
        let thread = std::thread::Builder::new()
            .name("tables".into())
            .spawn(move || {
                for msg in rx {
                    match msg {
                        TableMsg::Report(r, marks) => tables.add(&r, &marks),
                        TableMsg::Part(p, marks) => tables.add_part(&p, &marks),
                    }
                }
                tables
            })
            .context("cannot start the tables' thread")?;
        Ok(TablesThread {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    fn send(&mut self, msg: TableMsg) {
        if let Some(tx) = &self.tx {
            // A thread that is gone panicked: finish() says so.
            let _ = tx.send(msg);
        }
    }

    /// Waits for every queued association to be added.
    fn finish(mut self) -> anyhow::Result<TablesOut> {
        drop(self.tx.take());
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(t)) => Ok(t),
            _ => anyhow::bail!("the tables' thread failed"),
        }
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
    /// Captured live: the handovers rows say which met a drop span.
    live: bool,
}

impl TablesOut {
    /// `live`: the handovers table carries the drop marks.
    fn open(
        config: &BatchConfig,
        input: Input,
        capture_point: CapturePoint,
        live: bool,
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
            live,
        })
    }

    fn add(&mut self, r: &AssociationReport, marks: &[Mark]) {
        if self.live {
            self.parts.add_live(r, marks, &self.provenance);
        } else {
            self.parts.add(r, &self.provenance);
        }
    }

    fn add_part(&mut self, part: &AssociationPart, marks: &[Mark]) {
        if self.live {
            self.parts.add_part_live(part, marks, &self.provenance);
        } else {
            self.parts.add_part(part, &self.provenance);
        }
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
        stream: None,
    }
}

/// The kernel buffer's default: [`DEFAULT_BUFFER_KIB`], or a sixteenth of
/// the machine's memory if that is less (a small VM, the harness's
/// 384 MiB guest), since the kernel allocates the whole ring at once.
fn default_buffer_kib() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    });
    match total_kib {
        Some(t) => DEFAULT_BUFFER_KIB.min(t / 16).max(2048),
        None => DEFAULT_BUFFER_KIB,
    }
}

/// "12.3 MiB", "40 KiB"
fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// The lines of the summary about the capture: each interface's counts
/// (the first line's shape is what the harness reads), then every drop
/// span by cause.
fn capture_summary(
    stats: &[InterfaceStats],
    marks: Option<&Marks>,
    queue: (usize, usize),
) -> Vec<String> {
    let mut lines = Vec::new();
    for s in stats {
        lines.push(format!(
            "{}: {} received by the filter, {} dropped by the kernel, {} by the interface, {} by the watch's queue{}",
            s.name,
            s.received,
            s.dropped,
            s.if_dropped,
            s.queue_dropped,
            s.error.as_ref().map_or(String::new(), |e| format!("; stopped: {e}"))
        ));
    }
    let Some(marks) = marks else {
        return lines;
    };
    let spans = marks.log.spans();
    if spans.is_empty() {
        lines.push("no frame was lost".into());
    } else {
        let mut causes: Vec<_> = spans.iter().map(|s| s.cause).collect();
        causes.sort();
        causes.dedup();
        for cause in causes {
            let of: Vec<DropSpan> = spans.iter().filter(|s| s.cause == cause).cloned().collect();
            let frames: u64 = of.iter().map(|s| s.frames).sum();
            lines.push(format!(
                "dropped by {}: {frames} frames in {} span{}: {}",
                cause_words(cause.name()),
                of.len(),
                if of.len() == 1 { "" } else { "s" },
                marks.text_with(&of, false)
            ));
        }
    }
    lines.push(format!(
        "queue: at most {} of {} held",
        size(queue.0),
        size(queue.1)
    ));
    lines
}

/// Runs `sctp-handover watch` until the inputs end (or Ctrl-C): one line
/// per event, a handover line per switch.
pub fn run(args: WatchArgs) -> anyhow::Result<ExitStatus> {
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
    let live = args.follow.is_none();
    // Live, the capture filter decides which frames are captured at all
    // (as `tcpdump -i IFACE -w FILE EXPR`): the capture threads apply it,
    // and frames it rejects are counted but never queued, numbered or kept
    // by --write.
    let live_filter = if live {
        options.frame_filter.take()
    } else {
        None
    };
    let tables = match &args.out {
        Some(_) => Some(TablesThread::start(TablesOut::open(
            &config,
            input.clone(),
            options.handover.capture_point,
            live,
        )?)?),
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
        out: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout()),
        flush_each: !live,
        unflushed: false,
        last_flush: Instant::now(),
        source: String::new(),
        origin: None,
        handovers: 0,
        switch_sources: Default::default(),
        handed_on: Default::default(),
        current: None,
        last_time: None,
        marks: None,
        marked: 0,
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
    let mut failure = None;
    // A followed file that could not be read: exit status 1.
    let mut unread = false;
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
                        printer.last_time = Some(f.timestamp);
                        analyzer.frame(&f, &mut printer);
                        status.tick(&analyzer, frames, "");
                    });
                    match outcome {
                        Ok(o) => {
                            if let Some(w) = &o.warning {
                                eprintln!("sctp-handover: warning: {w}");
                            }
                            warning = o.warning;
                        }
                        Err(e) => {
                            eprintln!("sctp-handover: error: {e}");
                            warning = Some(e.to_string());
                            unread = true;
                        }
                    }
                }
                Err(e) => {
                    eprintln!("sctp-handover: error: {e}");
                    warning = Some(e.to_string());
                    unread = true;
                }
            }
            current = if dir {
                follow::next_after(path, &file, &stop)
            } else {
                None
            };
        }
    } else {
        let buffer_kib = args.buffer_size.unwrap_or_else(default_buffer_kib);
        let capture = CaptureConfig {
            snaplen: args.snaplen,
            buffer_bytes: usize::try_from(buffer_kib.saturating_mul(1024)).unwrap_or(usize::MAX),
            immediate: args.immediate_mode,
            timeout_ms: BUFFER_TIMEOUT_MS,
            queue_bytes: usize::try_from(args.queue_size.saturating_mul(1024))
                .unwrap_or(usize::MAX),
            filter: live_filter,
        };
        let mut live = Live::open(&args.interfaces, &capture).map_err(anyhow::Error::msg)?;
        printer.marks = Some(Marks {
            log: live.drops.clone(),
            names: live.names(),
            reported: Vec::new(),
            generation: 0,
            last_report: Instant::now(),
        });
        // Open before the capture is announced, so that a bad path fails
        // before the harness (waiting for the line below) starts its run.
        let mut keep = match &args.write {
            Some(p) => Some(
                WriterThread::create(p).with_context(|| format!("cannot write {}", p.display()))?,
            ),
            None => None,
        };
        // Frames are queued from here on (the harness waits for this line).
        eprintln!(
            "sctp-handover: capturing on {} (kernel buffer {buffer_kib} KiB{}, queue {} KiB)",
            args.interfaces.join(", "),
            if args.immediate_mode {
                ", immediate mode".to_string()
            } else {
                format!(", blocks handed over within {BUFFER_TIMEOUT_MS} ms")
            },
            args.queue_size
        );
        let mut last_packet = Instant::now();
        let mut stopping = false;
        let mut write_failed = false;
        loop {
            if !stopping && (stop.reached(last_packet) || write_failed) {
                // The captures read what their rings still hold, hand it
                // over and end; it is analysed before the summary.
                live.stop();
                stopping = true;
            }
            let pumped = live.pump(Duration::from_millis(50), |batch, i| {
                let Some(f) = batch.get(i) else {
                    return;
                };
                frames += 1;
                if let Some(w) = keep.as_mut() {
                    write_failed |= !w.frame(batch, i);
                }
                let frame = Frame {
                    number: frames,
                    timestamp: Timestamp(f.ts_ns),
                    link_type: f.link_type,
                    interface: f.interface as u32,
                    original_len: f.original_len,
                    data: f.data,
                };
                printer.current = Some((frame.number, frame.timestamp));
                printer.last_time = Some(frame.timestamp);
                analyzer.frame(&frame, &mut printer);
            });
            match pumped {
                Pump::Frames {
                    frames: n,
                    rejected: r,
                    caught_up,
                } => {
                    rejected += r;
                    if n > 0 || r > 0 {
                        last_packet = Instant::now();
                    }
                    if caught_up {
                        // Nothing captured waits: what was printed goes out
                        // now rather than at the next FLUSH_EVERY.
                        printer.flush();
                    }
                }
                Pump::Idle => {
                    // Caught up with the capture: nothing printed waits.
                    printer.flush();
                    if let Some(w) = keep.as_mut() {
                        write_failed |= !w.flush();
                    }
                }
                Pump::Ended => break,
            }
            printer.report_drops(false);
            printer.flush_if_due();
            if status.due() {
                let queued = live.budget.used();
                let extra = format!(
                    ", queue {:.0} %",
                    queued as f64 * 100.0 / live.budget.limit().max(1) as f64
                );
                status.tick(&analyzer, frames + rejected, &extra);
            }
        }
        printer.current = None;
        printer.report_drops(true);
        if let Some(w) = keep {
            if let Err(e) = w.finish() {
                failure = Some(anyhow::Error::new(e).context("writing --write"));
            }
        }
        let queue = (live.budget.peak(), live.budget.limit());
        let stats = live.finish();
        rejected = stats.iter().map(|s| s.rejected).sum();
        summary = capture_summary(&stats, printer.marks.as_ref(), queue);
    }
    printer.current = None;
    analyzer.finish(&mut printer);
    printer.flush();
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
    if printer.marks.is_some() {
        eprintln!(
            "sctp-handover: {} handover{} met a drop span (marked: their components may be incomplete)",
            printer.marked,
            if printer.marked == 1 { "" } else { "s" }
        );
    }
    if let Some(tables) = printer.tables.take() {
        let tables = tables.finish()?;
        let mut report = analyzer.into_report(&input.path, format, frames + rejected, warning);
        report.accounting.filtered_out += rejected;
        let out = config.out.display().to_string();
        tables
            .finish(&report, started.elapsed().as_secs_f64())
            .with_context(|| format!("writing the tables into {out}"))?;
        eprintln!("sctp-handover: tables in {out}/ (source {})", input.source);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(ExitStatus::partial_if(unread))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_text_is_read_back_to_the_nanosecond() {
        assert_eq!(
            epoch_ns("1795343548.249122000"),
            Some(1_795_343_548_249_122_000)
        );
        assert_eq!(epoch_ns("12.5"), Some(12_500_000_000));
        assert_eq!(epoch_ns("-1.000000001"), Some(-1_000_000_001));
        assert_eq!(epoch_ns("7"), Some(7_000_000_000));
        assert_eq!(epoch_ns("1.0000000001"), None);
        assert_eq!(epoch_ns("ended"), None);
    }

    #[test]
    fn a_record_spans_every_time_it_names_however_deep() {
        let record = json!({
            "switch_time": "10.000000000",
            "data_interrupt": {"ms": 5.0, "from": {"frame": 1, "time": "9.500000000"}},
            "asconf": [{"time": "8.000000000", "ack_time": "8.010000000", "rtt_ms": 10.0}],
            "window": {"end": {"frame": 9, "time": "11.000000000"}},
            "failover_time": {"ms": null, "missing": "not a failover"},
            "class_reason": "no time here",
        });
        assert_eq!(span_of(&record), Some((8_000_000_000, 11_000_000_000)));
        assert_eq!(span_of(&json!({"ms": 3.0})), None);
    }
}
