//! `sctp-handover watch`: handovers as they happen, from live interfaces
//! (libpcap) or from a capture still being written (`--follow`), one line
//! (or one JSON line) per event as soon as it is complete.

use crate::{analysis_options, AnalysisArgs};
use anyhow::Context;
use clap::ValueEnum;
use sctp_handover::analysis::{AssociationReport, ReportSink, StreamAnalyzer};
use sctp_handover::capture::{self, Frame};
use sctp_handover::events::{Event, EventKind};
use sctp_handover::handover::{Component, Handover};
use sctp_handover::time::Timestamp;
use sctp_handover_live::follow::{self, FollowReader, Stop};
use sctp_handover_live::interfaces::Live;
use sctp_handover_live::write::PcapngWriter;
use serde_json::json;
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
    /// No status line.
    #[arg(short, long)]
    quiet: bool,
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
}

fn ms(c: &Component) -> String {
    c.ms.map_or("–".into(), |v| format!("{v:.3} ms"))
}

impl Printer {
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
            let line = json!({"type": "event", "source": self.source, "event": e}).to_string();
            self.line(line);
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
        let line = if self.json {
            json!({"type": "switch", "source": self.source, "handover": h}).to_string()
        } else {
            self.handover_line(h, "SWITCH")
        };
        self.line(line);
    }

    fn association(&mut self, r: AssociationReport) {
        // Every component resolved: the handovers in full.
        for h in &r.handovers {
            let source = self
                .switch_sources
                .remove(&(h.association, h.switch_frame))
                .unwrap_or_else(|| self.source.clone());
            let line = if self.json {
                json!({"type": "handover", "source": source, "handover": h}).to_string()
            } else {
                self.handover_line(h, "HANDOVER")
            };
            self.line(line);
        }
        let line = if self.json {
            json!({
                "type": "association",
                "source": self.source,
                "association": r.association.id,
                "handovers": r.handovers.len(),
                "packets": r.association.packets,
                "retired": r.retired,
            })
            .to_string()
        } else {
            format!(
                "assoc {} finished: {} packets, {} handover{}",
                r.association.id,
                r.association.packets,
                r.handovers.len(),
                if r.handovers.len() == 1 { "" } else { "s" }
            )
        };
        self.line(line);
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

pub fn run(args: WatchArgs) -> anyhow::Result<ExitCode> {
    let options = analysis_options(&args.analysis)?;
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
    };
    let mut status = Status {
        on: !args.quiet && std::io::stderr().is_terminal(),
        last: Instant::now(),
        frames_then: 0,
    };
    let mut frames = 0u64;
    let mut summary = Vec::new();
    if let Some(path) = &args.follow {
        let dir = path.is_dir();
        let mut current = follow::wait_for(path, dir, &stop);
        while let Some(file) = current {
            printer.source = file.display().to_string();
            let reader = FollowReader::new(&file, dir.then_some(path.as_path()), stop.clone())
                .with_context(|| format!("{}: cannot open", file.display()))?;
            match capture::from_reader(&file, reader) {
                Ok(mut r) => {
                    let outcome = r.for_each_frame(|f| {
                        frames += 1;
                        analyzer.frame(&f, &mut printer);
                        status.tick(&analyzer, frames);
                    });
                    if let Ok(o) = outcome {
                        if let Some(w) = o.warning {
                            eprintln!("sctp-handover: warning: {w}");
                        }
                    }
                }
                Err(e) => eprintln!("sctp-handover: {e}"),
            }
            current = if dir {
                follow::next_after(path, &file, &stop)
            } else {
                None
            };
        }
    } else {
        let live = Live::open(&args.interfaces, stop.clone()).map_err(anyhow::Error::msg)?;
        let mut keep = match &args.write {
            Some(p) => Some(
                PcapngWriter::create(p).with_context(|| format!("cannot write {}", p.display()))?,
            ),
            None => None,
        };
        let mut last_packet = Instant::now();
        while !stop.reached(last_packet) {
            match live.frames.recv_timeout(Duration::from_millis(200)) {
                Ok(f) => {
                    frames += 1;
                    last_packet = Instant::now();
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
                    analyzer.frame(&frame, &mut printer);
                    status.tick(&analyzer, frames);
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
    analyzer.finish(&mut printer);
    if status.on {
        eprintln!();
    }
    let a = analyzer.accounting();
    let (associations, handovers) = analyzer.totals();
    eprintln!(
        "sctp-handover: {frames} frames ({} SCTP analysed, {} filtered out), {associations} associations, {handovers} handovers",
        a.sctp + a.sctp_truncated + a.sctp_malformed,
        a.filtered_out
    );
    for line in summary {
        eprintln!("sctp-handover: {line}");
    }
    Ok(ExitCode::SUCCESS)
}
