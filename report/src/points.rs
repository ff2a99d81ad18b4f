//! The sections of a report over two capture points (`report --point`,
//! docs/points.md): first each handover as both points saw it — the
//! ASCONF's journey and each side's data interrupt in its parts — then the
//! one-way delay figure, the clock between the points and the losses and
//! retransmissions per path. Column names are the `handovers_two_sided` and
//! `points` tables' (`sctp_handover_tables::points`) and the parts' are
//! [`PARTS`]'s, so the report, the tables and the text output say the same.

use crate::document::{Block, Section, Table};
use crate::figures::owd::{self as owd_fig, Mark, OwdPath};
use crate::figures::svg::num;
use crate::figures::Figure;
use sctp_handover_points::series::PathSeries;
use sctp_handover_points::two_sided::{SideInterrupt, TwoSidedHandover, PARTS};
use sctp_handover_points::{Direction, PointsReport};
use sctp_handover_tables::points::{PairAnalysis, HANDOVERS_TWO_SIDED, POINTS};
use sctp_handover_tables::schema::{Col, Table as Schema};

/// A column of `table` by name: its definition is where the report's
/// header and its meaning come from. Every name the report uses is one of
/// the table's (checked by a test), so a missing one is a bug here.
fn column(table: &'static Schema, name: &str) -> &'static Col {
    table
        .columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("{} has no column {name}", table.name))
}

/// The `handovers_two_sided` columns of the switches table, in order.
const SWITCH_COLUMNS: &[&str] = &[
    "sender_point",
    "receiver_point",
    "from_src",
    "from_dst",
    "to_src",
    "to_dst",
    "sender_class",
    "sender_switch_frame",
    "sender_switch_time",
    "receiver_class",
    "receiver_switch_frame",
    "receiver_switch_time",
];

/// The `handovers_two_sided` columns of the ASCONF table, in order.
const ASCONF_COLUMNS: &[&str] = &[
    "asconf_requester_point",
    "asconf_requests",
    "asconf_transmissions",
    "asconf_sent_time",
    "asconf_received_time",
    "asconf_one_way_delay_ms",
    "asconf_peer_processing_ms",
    "asconf_ack_received_time",
    "asconf_ack_one_way_delay_ms",
    "asconf_peer_to_first_new_data_ms",
];

/// The `points` columns of the clock table.
const CLOCK_COLUMNS: &[&str] = &[
    "point_a",
    "point_b",
    "offset_ms",
    "offset_uncertainty_ms",
    "drift_ppm",
    "clock_samples",
    "clock_span_s",
    "paired",
    "not_seen_at_receiver",
    "not_seen_at_sender",
    "retransmissions",
    "spurious_retransmissions",
];

/// The names of the two points and the time axis every time is shown on.
struct Clock<'a> {
    names: &'a [String; 2],
    reference_ns: i64,
}

impl Clock<'_> {
    /// Seconds since the reference (the first point's first SCTP packet).
    fn at(&self, ns: i64) -> String {
        num(Some((ns - self.reference_ns) as f64 / 1e9))
    }
    /// A column's header: its name, and the unit of a time (the axis is
    /// said once, in the section's first paragraph).
    fn header(&self, name: &str) -> String {
        if name.ends_with("_time") {
            format!("{name} (s)")
        } else {
            name.to_string()
        }
    }
}

fn ms(ns: Option<i64>) -> String {
    num(ns.map(|n| n as f64 / 1e6))
}

fn direction_label(names: &[String; 2], d: Direction) -> String {
    format!("{}→{}", names[d.sender()], names[d.receiver()])
}

/// One sentence per event of a two-sided handover, in the order they
/// happened: what a reader reads before the numbers.
fn story(clock: &Clock, i: usize, t: &TwoSidedHandover) -> String {
    let mut s = format!(
        "Handover {i}: the data sender ({}) moved from {} → {} to {} → {}; {} saw its switch \
         (class {}) at frame {} ({} s), {} the first DATA on the new path (class {}) at frame {} \
         ({} s).",
        t.sender_point,
        t.from_src,
        t.from_dst,
        t.to_src,
        t.to_dst,
        t.sender_point,
        t.sender_class.as_str(),
        t.sender_switch_frame,
        clock.at(t.sender_switch_ns),
        t.receiver_point,
        t.receiver_class.as_str(),
        t.receiver_switch_frame,
        clock.at(t.receiver_switch_ns),
    );
    match &t.asconf {
        Some(a) => {
            let peer = if a.requester_point == clock.names[0] {
                &clock.names[1]
            } else {
                &clock.names[0]
            };
            s.push_str(&format!(
                " {} sent the ASCONF ({}, serial {}) at {} s; {peer} received it at {} s, {} ms \
                 later (one-way delay).",
                a.requester_point,
                a.requests,
                a.serial,
                clock.at(a.sent_ns),
                clock.at(a.received_ns),
                ms(Some(a.one_way_delay_ns)),
            ));
            match a.peer_processing_ns {
                Some(p) => s.push_str(&format!(
                    " {peer} answered with its ASCONF-ACK {} ms after it arrived",
                    ms(Some(p))
                )),
                None => s.push_str(&format!(" {peer}'s ASCONF-ACK was not captured")),
            }
            match (a.ack_received_ns, a.ack_one_way_delay_ns) {
                (Some(at), Some(owd)) => s.push_str(&format!(
                    ", which reached {} at {} s ({} ms one-way delay).",
                    a.requester_point,
                    clock.at(at),
                    ms(Some(owd))
                )),
                _ => s.push_str(&format!(", which never reached {}.", a.requester_point)),
            }
            if let Some(n) = a.peer_to_first_new_data_ns {
                s.push_str(&format!(
                    " {peer} sent its first DATA on the new path {} ms after the ASCONF arrived.",
                    ms(Some(n))
                ));
            }
        }
        None => s.push_str(" No ASCONF moved it (a failover or the sender's own choice)."),
    }
    for (role, side) in [("sender", &t.sender), ("receiver", &t.receiver)] {
        s.push_str(&format!(
            " At the {role} ({}) the data interrupt was {} ms",
            side.point,
            ms(side.interrupt_ns)
        ));
        match &side.missing {
            Some(why) => s.push_str(&format!(", not decomposed: {why}.")),
            None => {
                let parts: Vec<String> = PARTS[1..]
                    .iter()
                    .map(|p| format!("{} {} ms", p.label, ms((p.get)(side))))
                    .collect();
                s.push_str(&format!(" = {}.", parts.join(" + ")));
            }
        }
    }
    s
}

fn headers(clock: &Clock, names: &[&str]) -> Vec<String> {
    let mut header = vec!["handover".to_string()];
    header.extend(
        names
            .iter()
            .map(|n| clock.header(column(&HANDOVERS_TWO_SIDED, n).name)),
    );
    header
}

fn switch_table(clock: &Clock, records: &[TwoSidedHandover]) -> Table {
    let mut t = Table {
        name: "two-sided-switches".into(),
        title: "Each handover's paths and its switch at each point (columns of the \
                handovers_two_sided table)"
            .into(),
        header: headers(clock, SWITCH_COLUMNS),
        rows: Vec::new(),
    };
    for (i, r) in records.iter().enumerate() {
        t.row(vec![
            (i + 1).to_string(),
            r.sender_point.clone(),
            r.receiver_point.clone(),
            r.from_src.to_string(),
            r.from_dst.to_string(),
            r.to_src.to_string(),
            r.to_dst.to_string(),
            r.sender_class.as_str().to_string(),
            r.sender_switch_frame.to_string(),
            clock.at(r.sender_switch_ns),
            r.receiver_class.as_str().to_string(),
            r.receiver_switch_frame.to_string(),
            clock.at(r.receiver_switch_ns),
        ]);
    }
    t
}

/// One row per handover an ASCONF moved: its journey between the points.
fn asconf_table(clock: &Clock, records: &[TwoSidedHandover]) -> Table {
    let mut t = Table {
        name: "two-sided-asconf".into(),
        title: "The ASCONF that moved each handover, seen where it was sent and where it \
                arrived (columns of the handovers_two_sided table)"
            .into(),
        header: headers(clock, ASCONF_COLUMNS),
        rows: Vec::new(),
    };
    for (i, r) in records.iter().enumerate() {
        let Some(a) = &r.asconf else { continue };
        t.row(vec![
            (i + 1).to_string(),
            a.requester_point.clone(),
            a.requests.clone(),
            a.transmissions.to_string(),
            clock.at(a.sent_ns),
            clock.at(a.received_ns),
            ms(Some(a.one_way_delay_ns)),
            ms(a.peer_processing_ns),
            a.ack_received_ns.map(|t| clock.at(t)).unwrap_or_default(),
            ms(a.ack_one_way_delay_ns),
            ms(a.peer_to_first_new_data_ns),
        ]);
    }
    t
}

/// One row per handover and side: the interrupt and its parts ([`PARTS`]).
fn interrupt_table(records: &[TwoSidedHandover]) -> Table {
    let mut header: Vec<String> = ["handover", "side", "point"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(PARTS.iter().map(|p| format!("{} (ms)", p.label)));
    header.push("not decomposed because".into());
    let mut t = Table {
        name: "two-sided-interrupts".into(),
        title: "The data interrupt as each side saw it, and its parts (they add up to it)".into(),
        header,
        rows: Vec::new(),
    };
    for (i, r) in records.iter().enumerate() {
        for (role, side) in [("sender", &r.sender), ("receiver", &r.receiver)] {
            t.row(side_row(i + 1, role, side));
        }
    }
    t
}

fn side_row(handover: usize, role: &str, side: &SideInterrupt) -> Vec<String> {
    let mut row = vec![handover.to_string(), role.to_string(), side.point.clone()];
    row.extend(PARTS.iter().map(|p| ms((p.get)(side))));
    row.push(side.missing.clone().unwrap_or_default());
    row
}

/// What each part and each story column means, from their definitions.
fn meaning_table() -> Table {
    let mut t = Table::new(
        "two-sided-columns",
        "What the columns above mean",
        &["column", "meaning"],
    );
    for p in PARTS {
        t.row(vec![format!("{} (ms)", p.label), p.description.to_string()]);
    }
    for name in SWITCH_COLUMNS.iter().chain(ASCONF_COLUMNS) {
        let c = column(&HANDOVERS_TWO_SIDED, name);
        t.row(vec![c.name.to_string(), c.doc.to_string()]);
    }
    t
}

fn one_sided_table(clock: &Clock, pair: &PairAnalysis) -> Table {
    let mut t = Table {
        name: "one-sided-handovers".into(),
        title: "Handovers seen at one point only, and why the other has none".into(),
        header: vec![
            "point".into(),
            "at".into(),
            "association".into(),
            "from_src".into(),
            "from_dst".into(),
            "to_src".into(),
            "to_dst".into(),
            "class".into(),
            "switch_frame".into(),
            clock.header("switch_time"),
            format!("{} (ms)", PARTS[0].label),
            column(&HANDOVERS_TWO_SIDED, "one_sided_reason").name.into(),
        ],
        rows: Vec::new(),
    };
    for o in &pair.one_sided {
        let at = match o.at_data_sender {
            Some(true) => "data sender",
            Some(false) => "data receiver",
            None => "",
        };
        t.row(vec![
            o.point.clone(),
            at.into(),
            u64::from(o.association).to_string(),
            o.from_src.to_string(),
            o.from_dst.to_string(),
            o.to_src.to_string(),
            o.to_dst.to_string(),
            o.class.as_str().into(),
            o.switch_frame.to_string(),
            clock.at(o.switch_ns),
            ms(o.interrupt_ns),
            o.reason.clone(),
        ]);
    }
    t
}

fn clock_table(report: &PointsReport) -> Table {
    let header: Vec<&str> = CLOCK_COLUMNS
        .iter()
        .map(|n| column(&POINTS, n).name)
        .collect();
    let mut t = Table::new(
        "points-clock",
        "The clock between the points and what was paired (columns of the points table)",
        &header,
    );
    let c = &report.clock;
    let name = |i: usize| report.points.get(i).map(|p| p.name.clone());
    t.row(vec![
        name(0).unwrap_or_default(),
        name(1).unwrap_or_default(),
        num(Some(c.offset_ns / 1e6)),
        num(Some(c.offset_uncertainty_ns / 1e6)),
        num(Some(c.drift_ppm)),
        c.samples.to_string(),
        num(Some(c.span_s)),
        report.paired.to_string(),
        report.not_seen_at_receiver.to_string(),
        report.not_seen_at_sender.to_string(),
        report.retransmissions.to_string(),
        report.spurious_retransmissions.to_string(),
    ]);
    t
}

/// One row per path and direction: delays, losses, retransmissions
/// (the fields of the pairing's path summary).
fn path_table(names: &[String; 2], report: &PointsReport) -> Table {
    let mut t = Table::new(
        "points-paths",
        "Per path and direction: one-way delay, packets lost, retransmissions",
        &[
            "direction",
            "src",
            "dst",
            "paired",
            "owd_min_ms",
            "owd_mean_ms",
            "owd_max_ms",
            "not_seen_at_receiver",
            "not_seen_at_sender",
            "retransmissions",
            "spurious_retransmissions",
        ],
    );
    for p in &report.paths {
        t.row(vec![
            direction_label(names, p.direction),
            p.src.to_string(),
            p.dst.to_string(),
            p.paired.to_string(),
            ms(p.owd_min_ns),
            num(p.owd_mean_ns.map(|n| n / 1e6)),
            ms(p.owd_max_ns),
            p.not_seen_at_receiver.to_string(),
            p.not_seen_at_sender.to_string(),
            p.retransmissions.to_string(),
            p.spurious_retransmissions.to_string(),
        ]);
    }
    t
}

/// The report's sections for a pair of points `names` (in `--point`
/// order), before the usual sections of each capture: the handovers seen
/// from both sides, the one-way delay figure (from [`owd_figure`]), the
/// clock and the paths.
pub fn sections(names: &[String; 2], pair: &PairAnalysis, figure: Figure) -> Vec<Section> {
    let report = &pair.report;
    let clock = Clock {
        names,
        reference_ns: report.clock.reference_ns,
    };
    let mut handovers = Section::new(
        "two-sided",
        format!(
            "Handovers seen from both points ({} and {})",
            names[0], names[1]
        ),
        2,
    );
    handovers.text(format!(
        "{} handovers seen at both points, {} at one point only. Times are seconds after {}'s \
         first SCTP packet, on {}'s clock ({}'s times carried onto it by the estimated offset \
         and drift, below); durations at one point are on that point's own clock \
         (docs/metrics.md, \"Two capture points\").",
        pair.records.len(),
        pair.one_sided.len(),
        names[0],
        names[0],
        names[1]
    ));
    for (i, r) in pair.records.iter().enumerate() {
        handovers.text(story(&clock, i + 1, r));
    }
    if !pair.records.is_empty() {
        handovers
            .blocks
            .push(Block::Table(interrupt_table(&pair.records)));
        handovers
            .blocks
            .push(Block::Table(switch_table(&clock, &pair.records)));
        let asconf = asconf_table(&clock, &pair.records);
        if asconf.rows.is_empty() {
            handovers.text("No ASCONF moved any of these handovers.");
        } else {
            handovers.blocks.push(Block::Table(asconf));
        }
    }
    if !pair.one_sided.is_empty() {
        handovers
            .blocks
            .push(Block::Table(one_sided_table(&clock, pair)));
    }
    if !pair.records.is_empty() {
        handovers.blocks.push(Block::Table(meaning_table()));
    }

    let mut delays = Section::new("one-way-delay", "One-way delay per path", 2);
    delays.blocks.push(Block::Figure(figure));

    let mut paths = Section::new("clock-and-paths", "Clock, losses and retransmissions", 2);
    let c = &report.clock;
    paths.text(format!(
        "{b}'s clock minus {a}'s: {} ms ± {} ms at {a}'s first SCTP packet, drift {} ppm, from \
         {} packets over {} s. The uncertainty is half the fastest round trip: the offset is \
         exact if the fastest packets took as long each way (docs/points.md, \"Clock offset and \
         drift\").",
        num(Some(c.offset_ns / 1e6)),
        num(Some(c.offset_uncertainty_ns / 1e6)),
        num(Some(c.drift_ppm)),
        c.samples,
        num(Some(c.span_s)),
        a = names[0],
        b = names[1],
    ));
    for p in &report.points {
        if let Some(w) = &p.warning {
            paths.text(format!("{} ({}): {w}", p.name, p.path));
        }
    }
    paths.blocks.push(Block::Table(clock_table(report)));
    paths.blocks.push(Block::Table(path_table(names, report)));
    vec![handovers, delays, paths]
}

/// The one-way delay figure of a pair of points: every path's series (as
/// `OwdSeries` kept it) and each two-sided record's events at the point
/// that saw them. `key` names its files (`owd-KEY.svg`, `.csv`).
pub fn owd_figure(
    names: &[String; 2],
    report: &PointsReport,
    series: &[PathSeries],
    records: &[TwoSidedHandover],
    key: &str,
) -> anyhow::Result<Figure> {
    let paths: Vec<OwdPath> = series
        .iter()
        .map(|p| OwdPath {
            label: format!(
                "{} {} → {}",
                direction_label(names, p.direction),
                p.src,
                p.dst
            ),
            points: p
                .samples
                .iter()
                .map(|&(t, d)| (t, d as f64 / 1e6))
                .collect(),
        })
        .collect();
    let index = |name: &str| usize::from(name != names[0]);
    let mut marks = Vec::new();
    for t in records {
        let (s, r) = (index(&t.sender_point), index(&t.receiver_point));
        marks.push(Mark {
            time_ns: t.sender_switch_ns,
            point: s,
            label: format!("{}: switch {}", names[s], t.sender_switch_frame),
        });
        marks.push(Mark {
            time_ns: t.receiver_switch_ns,
            point: r,
            label: format!("{}: switch {}", names[r], t.receiver_switch_frame),
        });
        if let Some(a) = &t.asconf {
            let rq = index(&a.requester_point);
            let op = a.requests.split(' ').next().unwrap_or("ASCONF");
            marks.push(Mark {
                time_ns: a.sent_ns,
                point: rq,
                label: format!("{}: {op} sent", names[rq]),
            });
            marks.push(Mark {
                time_ns: a.received_ns,
                point: 1 - rq,
                label: format!("{}: {op} in", names[1 - rq]),
            });
            if let Some(ack) = a.ack_received_ns {
                marks.push(Mark {
                    time_ns: ack,
                    point: rq,
                    label: format!("{}: ACK in", names[rq]),
                });
            }
        }
    }
    marks.sort_by_key(|m| m.time_ns);
    owd_fig::figure(
        format!("owd-{key}"),
        [names[0].as_str(), names[1].as_str()],
        report.clock.reference_ns,
        &paths,
        &marks,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column the report names is one the tables define (the report
    /// would panic on a renamed one).
    #[test]
    fn every_column_named_is_defined() {
        for name in SWITCH_COLUMNS
            .iter()
            .chain(ASCONF_COLUMNS)
            .chain(["one_sided_reason"].iter())
        {
            assert_eq!(column(&HANDOVERS_TWO_SIDED, name).name, *name);
        }
        for name in CLOCK_COLUMNS {
            assert_eq!(column(&POINTS, name).name, *name);
        }
        let t = meaning_table();
        assert_eq!(
            t.rows.len(),
            PARTS.len() + SWITCH_COLUMNS.len() + ASCONF_COLUMNS.len()
        );
        assert_eq!(t.rows[0][0], "data interrupt (ms)");
    }
}
