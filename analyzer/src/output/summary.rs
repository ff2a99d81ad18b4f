//! The human-readable terminal summary, built as associations stream by.
//!
//! [`Summary`] is a [`ReportSink`]: it counts every association and keeps
//! the rendered text of only those it will show (with handovers, failovers
//! or anomalies; all of them with `--all`), so its memory is bounded by
//! what is shown and its time is linear in the input. [`Summary::finish`]
//! writes the file header and totals, the associations shown in id order,
//! the handover table, and how many associations were left out.

use crate::analysis::{AssociationPart, AssociationReport, FileAnalysis, FileReport, ReportSink};
use crate::events::AssociationEndReason;
use crate::events::{AddressSource, AssocId, Event, EventKind};
use crate::handover::{ComponentDescriptor, Handover, SwitchClass, COMPONENTS};
use crate::time::{Nanos, Timestamp};
use crate::track::assoc::{Association, Start};
use crate::track::rto::RttStats;
use rustc_hash::FxHashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

fn ms(v: Option<Nanos>) -> String {
    v.map_or_else(|| "-".into(), |n| format!("{:.3}", n.as_millis_f64()))
}

fn rtt_cell(s: &RttStats) -> String {
    if s.samples == 0 {
        "-".into()
    } else {
        format!(
            "{}/{}/{} ({})",
            ms(s.min),
            ms(s.mean()),
            ms(s.max),
            s.samples
        )
    }
}

fn rel(t: Timestamp, origin: Option<Timestamp>) -> String {
    match origin {
        Some(o) => format!("{:.6}", t.since(o).as_secs_f64()),
        None => t.to_string(),
    }
}

/// Why an association is worth showing beyond its handovers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Anomalies {
    /// Paths inferred inactive (Path.Max.Retrans exceeded) at least once.
    inactive_paths: usize,
    /// ASCONFs (by serial and sender) no ASCONF-ACK answered.
    unanswered_asconfs: u64,
    malformed_chunks: u64,
    aborted: bool,
}

impl Anomalies {
    fn of(a: &Association) -> Self {
        Anomalies {
            inactive_paths: a
                .paths
                .iter()
                .filter(|p| p.inactive_transitions > 0)
                .count(),
            unanswered_asconfs: a.unanswered_asconfs(),
            malformed_chunks: a.malformed_chunks,
            aborted: a.end == Some(AssociationEndReason::Abort),
        }
    }

    fn any(&self) -> bool {
        *self != Anomalies::default()
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        if self.inactive_paths > 0 {
            let n = self.inactive_paths as u64;
            parts.push(format!("{n} path{} inferred inactive", plural(n)));
        }
        if self.unanswered_asconfs > 0 {
            let n = self.unanswered_asconfs;
            parts.push(format!("{n} unanswered ASCONF{}", plural(n)));
        }
        if self.malformed_chunks > 0 {
            parts.push(format!("{} malformed chunk(s)", self.malformed_chunks));
        }
        if self.aborted {
            parts.push("ended by ABORT".into());
        }
        parts.join(", ")
    }
}

/// Associations whose details the summary shows without `--all`.
const SHOWN_AT_MOST: usize = 100;

/// Event lines and handover rows shown per association: a long
/// association's thousands are read as tables, and the summary's memory
/// stays bounded.
const LINES_AT_MOST: usize = 200;

/// What the summary knows of an association from the parts handed on
/// before it finished ([`ReportSink::part`]), then from its report.
#[derive(Default)]
struct Gathered {
    switches: usize,
    failovers: usize,
    /// Rendered event lines by frame (the first `LINES_AT_MOST`), and how
    /// many more there were.
    lines: Vec<(u64, String)>,
    lines_left_out: usize,
    /// Handover table rows (the first `LINES_AT_MOST`), and how many more.
    rows: Vec<(u64, AssocId, String)>,
    rows_left_out: usize,
}

impl Gathered {
    /// Counts what decides whether the association is shown.
    fn count<'h>(&mut self, handovers: impl Iterator<Item = &'h Handover>) {
        for h in handovers {
            self.switches += 1;
            if h.class == SwitchClass::Failover {
                self.failovers += 1;
            }
        }
    }

    /// Renders what the association's section shows.
    fn render<'e, 'h>(
        &mut self,
        origin: Option<Timestamp>,
        events: impl Iterator<Item = &'e Event>,
        handovers: impl Iterator<Item = &'h Handover>,
    ) {
        for e in events {
            if let Some(line) = event_line(e, origin) {
                self.lines.push((e.frame, line));
            }
        }
        for h in handovers {
            self.rows
                .push((h.switch_frame, h.association, handover_row(h)));
        }
        // A quarter more before trimming: each trim sorts what is kept.
        let trim_at = LINES_AT_MOST + LINES_AT_MOST / 4;
        if self.lines.len() >= trim_at || self.rows.len() >= trim_at {
            self.keep_first();
        }
    }

    /// Keeps the first `LINES_AT_MOST` lines and rows by frame, counting
    /// the others: parts bring lines out of frame order (a request held
    /// back for its answer comes after later lines), and the section shows
    /// the same lines with parts as without. Stable: within a frame,
    /// lines keep the order of their events.
    fn keep_first(&mut self) {
        self.lines.sort_by_key(|(frame, _)| *frame);
        self.lines_left_out += self.lines.len().saturating_sub(LINES_AT_MOST);
        self.lines.truncate(LINES_AT_MOST);
        self.rows.sort_by_key(|(frame, id, _)| (*frame, *id));
        self.rows_left_out += self.rows.len().saturating_sub(LINES_AT_MOST);
        self.rows.truncate(LINES_AT_MOST);
    }
}

/// One association's rendered section and handover table rows.
struct Section {
    id: AssocId,
    text: String,
    rows: Vec<(u64, AssocId, String)>,
    /// Handover rows not shown (beyond `LINES_AT_MOST`).
    rows_left_out: usize,
}

impl PartialEq for Section {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for Section {}
impl PartialOrd for Section {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Section {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.id.cmp(&other.id)
    }
}

/// The terminal summary of one capture file, fed association by
/// association (see the module documentation).
pub struct Summary {
    all: bool,
    origin: Option<Timestamp>,
    associations: u64,
    handovers: u64,
    failovers: u64,
    anomalous: u64,
    /// Associations with handovers or anomalies.
    interesting: u64,
    /// Rendered sections of the associations shown (a max-heap by id, so
    /// that the highest is dropped when more than SHOWN_AT_MOST qualify).
    sections: std::collections::BinaryHeap<Section>,
    /// Associations alive that handed on parts of their results.
    gathered: FxHashMap<AssocId, Gathered>,
}

impl Summary {
    /// `all`: list every association, not only those with handovers,
    /// failovers or anomalies.
    pub fn new(all: bool) -> Self {
        Summary {
            all,
            origin: None,
            associations: 0,
            handovers: 0,
            failovers: 0,
            anomalous: 0,
            interesting: 0,
            sections: std::collections::BinaryHeap::new(),
            gathered: FxHashMap::default(),
        }
    }

    fn add<'e, 'h, E, H>(&mut self, a: &Association, events: E, handovers: H)
    where
        E: Iterator<Item = &'e Event> + Clone,
        H: Iterator<Item = &'h Handover> + Clone,
    {
        self.associations += 1;
        let mut g = self.gathered.remove(&a.id).unwrap_or_default();
        g.count(handovers.clone());
        let anomalies = Anomalies::of(a);
        self.handovers += g.switches as u64;
        self.failovers += g.failovers as u64;
        if anomalies.any() {
            self.anomalous += 1;
        }
        let interesting = g.switches > 0 || anomalies.any();
        if interesting {
            self.interesting += 1;
        }
        if !(self.all || interesting) {
            return;
        }
        // Without --all, the details of the first SHOWN_AT_MOST by id: a
        // summary of thousands of handovers is read as tables, not text.
        if !self.all && self.sections.len() >= SHOWN_AT_MOST {
            match self.sections.peek() {
                Some(Section { id, .. }) if *id > a.id => {
                    self.sections.pop();
                }
                _ => return,
            }
        }
        g.render(self.origin, events, handovers);
        g.keep_first();
        let mut text = String::new();
        association(&mut text, a, &anomalies).expect("writing to a String cannot fail");
        for (_, line) in &g.lines {
            text.push_str(line);
            text.push('\n');
        }
        if g.lines_left_out > 0 {
            let n = g.lines_left_out;
            writeln!(
                text,
                "  … and {n} more event{} (--format jsonl and --out list every one)",
                if n == 1 { "" } else { "s" }
            )
            .expect("writing to a String cannot fail");
        }
        self.sections.push(Section {
            id: a.id,
            text,
            rows: g.rows,
            rows_left_out: g.rows_left_out,
        });
    }

    /// Writes the summary: header and totals, the associations shown (id
    /// order), the handover table, and how many were left out.
    pub fn finish(self, file: &FileReport, out: &mut dyn Write) -> io::Result<()> {
        let mut s = String::new();
        header(&mut s, file).expect("writing to a String cannot fail");
        let mut totals = format!(
            "  {} association{}, {} handover{} ({} failover{}), {} association{} with anomalies",
            self.associations,
            if self.associations == 1 { "" } else { "s" },
            self.handovers,
            if self.handovers == 1 { "" } else { "s" },
            self.failovers,
            if self.failovers == 1 { "" } else { "s" },
            self.anomalous,
            if self.anomalous == 1 { "" } else { "s" },
        );
        totals.push('\n');
        s.push_str(&totals);
        out.write_all(s.as_bytes())?;
        let sections = self.sections.into_sorted_vec();
        for section in &sections {
            out.write_all(section.text.as_bytes())?;
        }
        let mut rows: Vec<&(u64, AssocId, String)> =
            sections.iter().flat_map(|x| x.rows.iter()).collect();
        rows.sort_by_key(|(frame, id, _)| (*frame, *id));
        let mut s = String::new();
        handover_table(&mut s, file, &rows).expect("writing to a String cannot fail");
        let rows_left_out: usize = sections.iter().map(|x| x.rows_left_out).sum();
        if rows_left_out > 0 {
            writeln!(
                s,
                "  … and {rows_left_out} more handover{} of the associations above (--format jsonl and --out list every one)",
                if rows_left_out == 1 { "" } else { "s" }
            )
            .expect("writing to a String cannot fail");
        }
        let shown = sections.len() as u64;
        let plain = self.associations - self.interesting;
        let interesting_hidden = self.interesting - shown.min(self.interesting);
        if interesting_hidden > 0 {
            writeln!(
                s,
                "\n… and {interesting_hidden} more association{} with handovers or anomalies (--all lists them; --out writes every one as tables)",
                if interesting_hidden == 1 { "" } else { "s" }
            )
            .expect("writing to a String cannot fail");
        }
        let plain_hidden = if self.all { 0 } else { plain };
        if plain_hidden > 0 {
            writeln!(
                s,
                "\n… and {plain_hidden} more association{} without handovers or anomalies (--all lists them)",
                if plain_hidden == 1 { "" } else { "s" }
            )
            .expect("writing to a String cannot fail");
        }
        out.write_all(s.as_bytes())
    }
}

impl ReportSink for Summary {
    fn first_frame(&mut self, time: Timestamp) {
        self.origin = Some(time);
    }

    fn part(&mut self, part: AssociationPart) {
        let g = self.gathered.entry(part.association).or_default();
        g.count(part.handovers.iter());
        g.render(self.origin, part.events.iter(), part.handovers.iter());
    }

    fn association(&mut self, report: AssociationReport) {
        self.add(
            &report.association,
            report.events.iter(),
            report.handovers.iter(),
        );
    }
}

/// The summary of an analysis collected in memory, listing every
/// association.
pub fn write(out: &mut dyn Write, f: &FileAnalysis) -> io::Result<()> {
    let mut summary = Summary::new(true);
    summary.origin = f.first_time;
    let mut events: FxHashMap<AssocId, Vec<&Event>> = FxHashMap::default();
    for e in &f.events {
        events.entry(e.association).or_default().push(e);
    }
    let mut handovers: FxHashMap<AssocId, Vec<&Handover>> = FxHashMap::default();
    for h in &f.handovers {
        handovers.entry(h.association).or_default().push(h);
    }
    for a in &f.associations {
        let e = events.get(&a.id).map_or(&[][..], Vec::as_slice);
        let h = handovers.get(&a.id).map_or(&[][..], Vec::as_slice);
        summary.add(a, e.iter().copied(), h.iter().copied());
    }
    summary.finish(&f.file_report(), out)
}

fn header(s: &mut String, f: &FileReport) -> std::fmt::Result {
    let span = match (f.first_time, f.last_time) {
        (Some(a), Some(b)) => format!(", {:.3} s", b.since(a).as_secs_f64()),
        _ => String::new(),
    };
    writeln!(
        s,
        "{}  ({}{}, {} frames{})",
        f.path.display(),
        f.format.as_str(),
        if f.compressed { ", gzip" } else { "" },
        f.frames,
        span
    )?;
    let a = &f.accounting;
    let mut parts = vec![format!("{} SCTP analysed", a.sctp)];
    for (n, label) in [
        (a.sctp_truncated, "SCTP cut short (partly analysed)"),
        (a.sctp_malformed, "SCTP with malformed chunks"),
        (a.sctp_untracked, "SCTP not tracked (a limit was reached)"),
        (a.capture_duplicates, "capture duplicates"),
        (a.icmp_about_sctp, "ICMP errors about SCTP"),
        (a.ip_fragments, "IP fragments"),
        (a.not_sctp, "not SCTP"),
        (a.truncated, "truncated"),
        (a.malformed, "malformed"),
        (a.unsupported_link_type, "unsupported link type"),
        (a.non_packet_records, "pcapng records without packets"),
        (a.filtered_out, "filtered out (--filter)"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {label}"));
        }
    }
    writeln!(s, "  frames: {}", parts.join(", "))?;
    if let Some(w) = &f.warning {
        writeln!(s, "  warning: {w}")?;
    }
    for l in &f.limits {
        writeln!(s, "  warning: {l}")?;
    }
    for p in f.problems.iter().take(5) {
        writeln!(s, "  frame {}: {}", p.frame, p.reason)?;
    }
    if f.problems.len() > 5 {
        writeln!(
            s,
            "  … {} more problem frames (see --format jsonl)",
            f.problems.len() - 5
        )?;
    }
    if f.time_order.regressions > 0 {
        writeln!(
            s,
            "  timestamps go backwards {} time(s), first at frame {}, by up to {}",
            f.time_order.regressions,
            f.time_order.first_regression_frame.unwrap_or(0),
            f.time_order.largest_regression
        )?;
    }
    if f.checksum.verified {
        writeln!(
            s,
            "  CRC32c: {} failure(s){}",
            f.checksum.failures,
            f.checksum
                .first_failure_frame
                .map_or(String::new(), |n| format!(", first at frame {n}"))
        )?;
    }
    let chunks: Vec<String> = f
        .counters
        .chunks
        .iter()
        .map(|(n, c)| format!("{n} {c}"))
        .collect();
    writeln!(s, "  chunks: {}", chunks.join(", "))?;
    Ok(())
}

fn cell(c: &crate::handover::Component) -> String {
    c.ms.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// The components the handover table shows, in the descriptors' order,
/// with their column headings.
fn summary_components() -> impl Iterator<Item = (&'static ComponentDescriptor, &'static str)> {
    COMPONENTS
        .iter()
        .filter_map(|c| Some((c, c.summary_heading?)))
}

fn handover_row(h: &Handover) -> String {
    let mut row = format!(
        "  {:>5} {:>3} {:>9} {:<8} {:>6}",
        h.association,
        format!("{}>{}", h.sender, 1 - h.sender),
        format!("{}->{}", h.from_path, h.to_path),
        h.class.as_str(),
        h.switch_frame,
    );
    for (c, _) in summary_components() {
        let text = (c.get)(h).map_or_else(|| "-".into(), |x| sent_cell(x, c.transmissions_of(h)));
        write!(row, " {text:>10}").expect("writing to a String cannot fail");
    }
    write!(
        row,
        " {:>4} {:>4} {:>12}",
        h.window.retransmissions,
        h.window.lost_in_switch,
        window_end_cell(&h.window)
    )
    .expect("writing to a String cannot fail");
    row
}

/// A component's value; for one timed from a request, with the request's
/// transmissions when it was sent more than once (the time is from the
/// first).
fn sent_cell(c: &crate::handover::Component, transmissions: Option<u32>) -> String {
    match transmissions {
        Some(n) if n > 1 && c.ms.is_some() => format!("{}x{n}", cell(c)),
        _ => cell(c),
    }
}

/// Where the handover window ended: the SACK's frame, or why it ended
/// without one.
fn window_end_cell(w: &crate::handover::HandoverWindow) -> String {
    match (w.end_reason, w.end.and_then(|p| p.frame)) {
        (crate::handover::WindowEnd::CumulativeAck, Some(f)) => format!("sack {f}"),
        (crate::handover::WindowEnd::NextSwitch, Some(f)) => format!("switch {f}"),
        _ => "capture end".to_owned(),
    }
}

fn handover_table(
    s: &mut String,
    f: &FileReport,
    rows: &[&(u64, AssocId, String)],
) -> std::fmt::Result {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(s)?;
    writeln!(
        s,
        "handovers (ms; capture point {}; '-' = not computable, see --format jsonl for why)",
        f.capture_point
    )?;
    write!(
        s,
        "  {:>5} {:>3} {:>9} {:<8} {:>6}",
        "assoc", "dir", "paths", "class", "frame"
    )?;
    for (_, heading) in summary_components() {
        write!(s, " {heading:>10}")?;
    }
    writeln!(s, " {:>4} {:>4} {:>12}", "rtx", "lost", "window end")?;
    for (_, _, row) in rows {
        writeln!(s, "{row}")?;
    }
    Ok(())
}

fn association(s: &mut String, a: &Association, anomalies: &Anomalies) -> std::fmt::Result {
    let start = match a.start {
        Start::Init => "INIT",
        Start::InitAck => "INIT ACK (INIT not captured)",
        Start::MidStream => "mid-stream (no INIT captured)",
    };
    writeln!(s)?;
    writeln!(
        s,
        "association {}  ports {} <-> {}  from {} at frame {}{}, {} packets",
        a.id,
        a.endpoints[0].port,
        a.endpoints[1].port,
        start,
        a.first_frame,
        match (a.end, a.end_frame) {
            (Some(r), Some(fr)) => format!(", ended by {r} at frame {fr}"),
            _ => String::new(),
        },
        a.packets
    )?;
    if anomalies.any() {
        writeln!(s, "  anomalies: {}", anomalies.describe())?;
    }
    for (i, e) in a.endpoints.iter().enumerate() {
        let addrs: Vec<String> = e
            .addresses
            .iter()
            .map(|ad| {
                let how: Vec<&str> = ad
                    .learned_from
                    .iter()
                    .map(|h| match h {
                        AddressSource::Init => "init",
                        AddressSource::Observed => "seen",
                        AddressSource::Asconf => "asconf",
                    })
                    .collect();
                let mut t = format!("{} [{}]", ad.address, how.join(","));
                if let Some(c) = ad.confirmed_frame {
                    let _ = write!(t, " confirmed@{c}");
                }
                if let Some(d) = ad.deleted_frame {
                    let _ = write!(t, " deleted@{d}");
                }
                t
            })
            .collect();
        writeln!(
            s,
            "  endpoint {i}: port {}, tag {}: {}",
            e.port,
            e.verification_tag
                .map_or_else(|| "?".into(), |t| format!("0x{t:08x}")),
            addrs.join("; ")
        )?;
    }
    writeln!(
        s,
        "  {:>4} {:<36} {:>6} {:>9} {:>11} {:>8} {:>28} {:>28} {:>8} {:>9} {:>8}",
        "path",
        "source -> destination",
        "pkts",
        "bytes",
        "DATA new/rt",
        "HB s/a",
        "HB RTT ms min/mean/max (n)",
        "DATA RTT ms min/mean/max (n)",
        "RTO ms",
        "confirmed",
        "state"
    )?;
    for p in &a.paths {
        writeln!(
            s,
            "  {:>4} {:<36} {:>6} {:>9} {:>11} {:>8} {:>28} {:>28} {:>8} {:>9} {:>8}",
            p.id,
            format!("{} -> {}", p.src, p.dst),
            p.packets,
            p.bytes,
            format!("{}/{}", p.data_new, p.data_retransmitted),
            format!("{}/{}", p.heartbeats_sent, p.heartbeats_acked),
            rtt_cell(&p.hb_rtt),
            rtt_cell(&p.data_rtt),
            ms(p.rto.srtt.map(|_| p.rto.rto)),
            p.confirmed_frame
                .map_or_else(|| "-".into(), |c| c.to_string()),
            p.status().as_str()
        )?;
    }
    for d in &a.directions {
        let c = d.counters();
        if c.data_chunks == 0 && c.sacks == 0 {
            continue;
        }
        // Stale SACKs (discarded, docs/metrics.md) are named only when
        // there are any.
        let stale = if c.stale_sacks > 0 {
            format!(" ({} stale, discarded)", c.stale_sacks)
        } else {
            String::new()
        };
        writeln!(
            s,
            "  data {} -> {}: {} new, {} retransmitted ({} after ack, {} fast), {} SACKs{}, {} gap blocks, {} dup TSNs reported",
            d.sender,
            1 - d.sender,
            c.new_chunks,
            c.retransmitted_chunks,
            c.retransmitted_after_ack,
            c.fast_retransmissions,
            c.sacks,
            stale,
            c.gap_blocks,
            c.dup_tsns_reported
        )?;
        let mut segs: Vec<String> = d
            .new_data_paths
            .iter()
            .map(|g| {
                format!(
                    "path {} frames {}-{} ({} chunks)",
                    g.path, g.first_frame, g.last_frame, g.new_chunks
                )
            })
            .collect();
        if d.new_data_paths_left_out > 0 && !segs.is_empty() {
            let n = d.new_data_paths_left_out;
            segs.insert(segs.len() - 1, format!("… {n} more …"));
        }
        if !segs.is_empty() {
            writeln!(s, "    new DATA on: {}", segs.join(", "))?;
        }
    }
    Ok(())
}

/// The summary's line for an event it lists (ASCONF, ASCONF-ACK, data
/// path switch, path inferred inactive), without its newline.
fn event_line(e: &Event, origin: Option<Timestamp>) -> Option<String> {
    let line = match &e.kind {
        EventKind::Asconf {
            serial,
            requests,
            sender,
            retransmission,
            transmission,
            first_frame,
            ..
        } => {
            let reqs: Vec<String> = requests
                .iter()
                .map(|r| format!("{} {} (corr {})", r.op.name(), r.address, r.correlation_id))
                .collect();
            let again = match (retransmission, first_frame) {
                (false, _) => String::new(),
                (true, Some(f)) => format!(" [retransmission {transmission}, first frame {f}]"),
                (true, None) => " [retransmission]".to_owned(),
            };
            format!(
                "  frame {:>6} t={} ASCONF serial {} from endpoint {}{}: {}",
                e.frame,
                rel(e.time, origin),
                serial,
                sender,
                again,
                reqs.join(", ")
            )
        }
        EventKind::AsconfAck {
            serial,
            request_frame,
            rtt_ms,
            repeated,
            results,
            ..
        } => {
            let res: Vec<String> = results
                .iter()
                .map(|r| {
                    format!(
                        "{} {}: {}{}",
                        r.op.name(),
                        r.address,
                        r.outcome.as_str(),
                        r.error_cause.map_or(String::new(), |c| format!(" ({c})"))
                    )
                })
                .collect();
            format!(
                "  frame {:>6} t={} ASCONF-ACK serial {} for frame {} (RTT {} ms){}: {}",
                e.frame,
                rel(e.time, origin),
                serial,
                request_frame.map_or_else(|| "?".into(), |r| r.to_string()),
                rtt_ms.map_or_else(|| "-".into(), |r| format!("{r:.3}")),
                if *repeated {
                    " [repeated: answered before]"
                } else {
                    ""
                },
                res.join(", ")
            )
        }
        EventKind::DataPathChange {
            sender,
            from_path: Some(from),
            to_path,
            tsn,
        } => {
            format!(
                "  frame {:>6} t={} new DATA from endpoint {} moves from path {} to path {} (TSN {})",
                e.frame,
                rel(e.time, origin),
                sender,
                from,
                to_path,
                tsn
            )
        }
        EventKind::PathInactive { path, error_count } => format!(
            "  frame {:>6} t={} path {} inferred inactive after {} consecutive errors",
            e.frame,
            rel(e.time, origin),
            path,
            error_count
        ),
        EventKind::PathPotentiallyFailed { path, error_count } => format!(
            "  frame {:>6} t={} path {} inferred potentially failed (RFC 7829) after {} consecutive error{}",
            e.frame,
            rel(e.time, origin),
            path,
            error_count,
            if *error_count == 1 { "" } else { "s" }
        ),
        EventKind::SpuriousExpiry {
            path,
            expiry_frame,
            tsn,
            ..
        } => format!(
            "  frame {:>6} t={} the T3 expiry of path {} at frame {} was spurious: TSN {} reported received twice",
            e.frame,
            rel(e.time, origin),
            path,
            expiry_frame,
            tsn
        ),
        EventKind::ErrorCounterCleared {
            path,
            error_count,
            by,
        } => format!(
            "  frame {:>6} t={} path {} error counter cleared from {} by a {}",
            e.frame,
            rel(e.time, origin),
            path,
            error_count,
            if *by == "sack" { "SACK" } else { "HEARTBEAT ACK" }
        ),
        _ => return None,
    };
    Some(line)
}
