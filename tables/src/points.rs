//! The tables of `analyze --point` (docs/tables.md, "Several capture
//! points"): `points` (the clock between a pair of points), `owd` (every
//! packet seen at both points, streamed into its part file as pairing finds
//! it) and `handovers_two_sided` (one row per handover seen at both
//! points). Their schemas live here, beside the per-capture tables'
//! (`schema.rs`), and are written by the same part writer.

use crate::batch::{options_for, BatchConfig, FLUSH_BYTES};
use crate::dataset::{self, Dataset};
use crate::inputs::{open_capture, Input};
use crate::rows::Rows;
use crate::schema::{Col, Table, Ty};
use crate::write::{take_frame, PartWriter, Provenance};
use polars::prelude::DataFrame;
use sctp_handover::analysis::{analyze_reader, AssociationPart, AssociationReport, ReportSink};
use sctp_handover::handover::Handover;
use sctp_handover_points::two_sided::{
    analyze_two_sided, OneSidedHandover, SideInterrupt, TwoSidedHandover, PARTS,
};
use sctp_handover_points::{
    Loss, OwdSample, PointInput, PointsOptions, PointsReport, PointsSink, Retransmission,
};

const fn col(name: &'static str, ty: Ty, unit: &'static str, doc: &'static str) -> Col {
    Col {
        name,
        ty,
        unit,
        doc,
    }
}

/// One row per pair of capture points analysed together (`--point`).
pub const POINTS: Table = Table {
    name: "points",
    row: "pair of capture points (`analyze --point`)",
    columns: &[
        col("point_a", Ty::Str, "", "the first point's name (`--point NAME=…`); its clock is the reference of every time in these tables"),
        col("source_a", Ty::Str, "", "the first point's capture, as the per-capture tables' `source`"),
        col("point_b", Ty::Str, "", "the second point's name"),
        col("source_b", Ty::Str, "", "the second point's capture"),
        col("reference_time", Ty::Time, "", "A-clock time the offset is given at (the first point's first SCTP packet)"),
        col("offset_ms", Ty::F64, "ms", "B's clock minus A's at the reference time (docs/points.md, \"Clock offset and drift\")"),
        col("offset_uncertainty_ms", Ty::F64, "ms", "half the band the two directions' fastest packets leave: how far the offset can be off if the paths are asymmetric"),
        col("drift_ppm", Ty::F64, "ppm", "how much faster B's clock runs"),
        col("clock_samples", Ty::U64, "", "packets the estimate used (paired, unambiguous)"),
        col("clock_span_s", Ty::F64, "s", "A-clock seconds those packets span"),
        col("paired", Ty::U64, "", "packets seen at both points"),
        col("not_seen_at_receiver", Ty::U64, "", "packets seen where they were sent, never where they were going (lost on the way)"),
        col("not_seen_at_sender", Ty::U64, "", "packets seen where they were going, never where they came from"),
        col("retransmissions", Ty::U64, "", "DATA chunks sent again, seen at their sender's point"),
        col("spurious_retransmissions", Ty::U64, "", "of those, the ones an earlier transmission of whose TSN had arrived"),
        col("peak_waiting", Ty::U64, "", "most packets waiting for their copy at once (the memory bound)"),
    ],
};

/// One row per packet seen at both capture points: its one-way delay.
pub const OWD: Table = Table {
    name: "owd",
    row: "packet seen at both capture points, in the order pairing found them",
    columns: &[
        col("sender_point", Ty::Str, "", "the point where it was sent"),
        col("receiver_point", Ty::Str, "", "the point where it arrived"),
        col("src", Ty::Str, "", "source address (the path)"),
        col("dst", Ty::Str, "", "destination address"),
        col("sent_time", Ty::Time, "", "seen at the sender's point, on the first point's clock"),
        col("received_time", Ty::Time, "", "seen at the receiver's point, on the first point's clock"),
        col("one_way_delay_ms", Ty::F64, "ms", "received_time − sent_time"),
        col("sender_frame", Ty::U64, "", "its frame in the sender's point's capture"),
        col("receiver_frame", Ty::U64, "", "its frame in the receiver's point's capture"),
        col("chunks", Ty::Str, "", "its chunks, e.g. `SACK+DATA(21)`"),
        col("ambiguous", Ty::Bool, "", "identical copies were waiting: paired by the path's least one-way delay (docs/points.md)"),
    ],
};

/// One row per handover seen at both capture points.
pub const HANDOVERS_TWO_SIDED: Table = Table {
    name: "handovers_two_sided",
    row: "handover seen at both capture points (docs/metrics.md, \"Two capture points\"); joins the `handovers` table on (`source`, `association`, `switch_frame`) through `sender_source`, `sender_association`, `sender_switch_frame` and the receiver's three",
    columns: &[
        col("sender_point", Ty::Str, "", "the data sender's point"),
        col("receiver_point", Ty::Str, "", "the data receiver's point"),
        col("seen_at", Ty::Str, "", "`both`, or the name of the only point whose analysis found the handover: then the other side's columns are null and `one_sided_reason` says why (when which point sent the DATA is unknown, the point's columns are the sender's)"),
        col("sender_source", Ty::Str, "", "the sender's point's capture (`source` of its `handovers` row)"),
        col("receiver_source", Ty::Str, "", "the receiver's point's capture"),
        col("sender_association", Ty::U64, "", "the association's id in the sender's point's analysis"),
        col("receiver_association", Ty::U64, "", "its id in the receiver's point's analysis"),
        col("from_src", Ty::Str, "", "old path: source"),
        col("from_dst", Ty::Str, "", "old path: destination"),
        col("to_src", Ty::Str, "", "new path: source"),
        col("to_dst", Ty::Str, "", "new path: destination"),
        col("sender_class", Ty::Str, "", "the switch's class at the sender's point"),
        col("receiver_class", Ty::Str, "", "its class at the receiver's point"),
        col("sender_switch_frame", Ty::U64, "", "the switch frame at the sender's point"),
        col("receiver_switch_frame", Ty::U64, "", "the switch frame at the receiver's point"),
        col("sender_switch_time", Ty::Time, "", "the sender's switch frame, on the first point's clock"),
        col("receiver_switch_time", Ty::Time, "", "the receiver's switch frame, on the first point's clock"),
        col("sender_interrupt_ms", Ty::F64, "ms", "the data interrupt at the sender's point, on its clock (the `handovers` row's `data_interrupt_ms`); = sender_one_way_delay_ms + sender_loss_ms + sender_endpoint_ms exactly when these are not null"),
        col("sender_one_way_delay_ms", Ty::F64, "ms", "0: the sender's capture sees no travel"),
        col("sender_loss_ms", Ty::F64, "ms", "when the sender's first DATA on the new path was a needed retransmission, its wait: from its TSN's original transmission (or the last old-path DATA, if later) to it; else 0. Never negative"),
        col("sender_endpoint_ms", Ty::F64, "ms", "the rest of the sender's interrupt: pacing, processing, idle, timers with nothing lost. Never negative"),
        col("receiver_interrupt_ms", Ty::F64, "ms", "the data interrupt at the receiver's point, on its clock; = receiver_one_way_delay_ms + receiver_loss_ms + receiver_endpoint_ms exactly when these are not null"),
        col("receiver_one_way_delay_ms", Ty::F64, "ms", "one-way delay of the receiver's first new-path DATA minus that of its last old-path DATA; negative when the new path is the faster"),
        col("receiver_loss_ms", Ty::F64, "ms", "when the first DATA the sender sent after the receiver's last old-path DATA never arrived: from that DATA to the receiver's first new-path DATA, at the sender; else 0. Never negative"),
        col("receiver_endpoint_ms", Ty::F64, "ms", "the sender's time from the receiver's last old-path DATA to its next DATA (all of it to the first new-path DATA when nothing was lost): pacing, processing, idle. Never negative"),
        col("sender_missing", Ty::Str, "", "why the sender's parts are null (e.g. a negative interrupt: the paths overlapped); null when they are there"),
        col("receiver_missing", Ty::Str, "", "why the receiver's parts are null"),
        col("one_sided_reason", Ty::Str, "", "why the other point has no part in this row: what was looked for and not found (the sender's handover the receiver's DATA was sent in, or a receiver's handover tracing to the sender's); null when `seen_at` is `both`"),
        col("asconf_requester_point", Ty::Str, "", "the point of the endpoint that sent the ASCONF that moved the DATA (docs/metrics.md, \"Two capture points\"); null without one"),
        col("asconf_serial", Ty::U64, "", "its serial"),
        col("asconf_requests", Ty::Str, "", "its requests, e.g. `set_primary 198.51.100.102`"),
        col("asconf_transmissions", Ty::U64, "", "its transmissions at the requester"),
        col("asconf_sent_time", Ty::Time, "", "its first transmission, first point's clock"),
        col("asconf_src", Ty::Str, "", "the path of the first copy to arrive: source"),
        col("asconf_dst", Ty::Str, "", "destination"),
        col("asconf_received_time", Ty::Time, "", "that copy's arrival at the peer, first point's clock"),
        col("asconf_one_way_delay_ms", Ty::F64, "ms", "that copy's one-way delay"),
        col("asconf_peer_processing_ms", Ty::F64, "ms", "at the peer: the copy its ASCONF-ACK answers → the ASCONF-ACK; null without one"),
        col("asconf_ack_received_time", Ty::Time, "", "the ASCONF-ACK's arrival at the requester; null when it did not arrive"),
        col("asconf_ack_one_way_delay_ms", Ty::F64, "ms", "its one-way delay"),
        col("asconf_peer_to_first_new_data_ms", Ty::F64, "ms", "when the peer is the data sender: the ASCONF's first arrival → its switch (first new DATA on the new path), on its clock"),
    ],
};

/// The three tables, in the order docs/tables.md lists them.
pub fn all() -> [&'static Table; 3] {
    [&POINTS, &OWD, &HANDOVERS_TWO_SIDED]
}

/// docs/tables.md's section on these tables, generated from the
/// definitions above as the per-capture tables' reference is.
pub fn markdown_reference() -> String {
    let mut s = String::new();
    for t in all() {
        s.push_str(&format!(
            "\n### `{}`\n\nOne row per {}.\n\n| column | type | unit | meaning |\n|---|---|---|---|\n",
            t.name, t.row
        ));
        for c in t.columns {
            s.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                c.name,
                c.ty.name(),
                c.unit,
                c.doc
            ));
        }
    }
    s
}

fn ms(ns: Option<i64>) -> Option<f64> {
    ns.map(|n| n as f64 / 1e6)
}

/// The `owd` table's part, fed as pairing finds the pairs (a
/// [`PointsSink`]): rows are written every [`FLUSH_BYTES`], never held.
/// Other records are handed on to `inner`.
pub struct OwdTable<'a> {
    names: [String; 2],
    rows: Rows,
    writer: Option<PartWriter>,
    provenance: &'a Provenance,
    inner: &'a mut dyn PointsSink,
    error: Option<anyhow::Error>,
}

impl<'a> OwdTable<'a> {
    /// The `owd` part of the input `key` in `dataset`, for the points
    /// named `names`; records other than pairs go on to `inner`.
    pub fn new(
        dataset: &Dataset,
        key: &str,
        names: [String; 2],
        provenance: &'a Provenance,
        inner: &'a mut dyn PointsSink,
    ) -> Self {
        OwdTable {
            names,
            rows: Rows::new(&OWD),
            writer: Some(PartWriter::new(dataset.part(OWD.name, key), dataset.format)),
            provenance,
            inner,
            error: None,
        }
    }

    /// Completes the part; the first write error, if any.
    pub fn finish(mut self) -> anyhow::Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.writer.take() {
            Some(w) => w.finish(&mut self.rows, self.provenance),
            None => Ok(0),
        }
    }
}

impl PointsSink for OwdTable<'_> {
    fn owd(&mut self, s: &OwdSample) {
        self.inner.owd(s);
        if self.error.is_some() {
            return;
        }
        owd_row(&mut self.rows, &self.names, s);
        if self.rows.bytes() >= FLUSH_BYTES {
            if let Some(w) = self.writer.as_mut() {
                if let Err(e) = w.write(&mut self.rows, self.provenance) {
                    self.error = Some(e);
                }
            }
        }
    }
    fn loss(&mut self, l: &Loss) {
        self.inner.loss(l);
    }
    fn retransmission(&mut self, r: &Retransmission) {
        self.inner.retransmission(r);
    }
}

/// One `owd` row: a packet seen at both points.
fn owd_row(rows: &mut Rows, names: &[String; 2], s: &OwdSample) {
    let (from, to) = (s.direction.sender(), s.direction.receiver());
    rows.text(&names[from])
        .text(&names[to])
        .address(Some(s.src))
        .address(Some(s.dst))
        .time(Some(s.sent_ns))
        .time(Some(s.sent_ns + s.owd_ns))
        .f64(s.owd_ns as f64 / 1e6)
        .u64(s.sender_frame)
        .u64(s.receiver_frame)
        .text(&s.chunks)
        .bool(s.ambiguous)
        .end();
}

/// The `owd` table in memory (the Python API returns it whole); other
/// records go on to `inner`.
pub struct OwdRows<'a> {
    names: [String; 2],
    /// The rows found so far.
    pub rows: Rows,
    inner: &'a mut dyn PointsSink,
}

impl<'a> OwdRows<'a> {
    /// No rows yet, for the points named `names`.
    pub fn new(names: [String; 2], inner: &'a mut dyn PointsSink) -> Self {
        OwdRows {
            names,
            rows: Rows::new(&OWD),
            inner,
        }
    }
}

impl PointsSink for OwdRows<'_> {
    fn owd(&mut self, s: &OwdSample) {
        self.inner.owd(s);
        owd_row(&mut self.rows, &self.names, s);
    }
    fn loss(&mut self, l: &Loss) {
        self.inner.loss(l);
    }
    fn retransmission(&mut self, r: &Retransmission) {
        self.inner.retransmission(r);
    }
}

fn side(rows: &mut Rows, s: &SideInterrupt) {
    for p in PARTS {
        rows.f64(ms((p.get)(s)));
    }
}

/// The `points` and `handovers_two_sided` parts of one pair of points.
pub fn write_summary_tables(
    dataset: &Dataset,
    key: &str,
    provenance: &Provenance,
    sources: [&str; 2],
    pair: &PairAnalysis,
) -> anyhow::Result<()> {
    let (mut points, mut two_sided) = summary_rows(sources, pair);
    PartWriter::new(dataset.part(POINTS.name, key), dataset.format)
        .finish(&mut points, provenance)?;
    PartWriter::new(dataset.part(HANDOVERS_TWO_SIDED.name, key), dataset.format)
        .finish(&mut two_sided, provenance)?;
    Ok(())
}

/// The rows of the `points` table (one) and of `handovers_two_sided` (one
/// per two-sided record, then one per handover seen at one point only).
pub fn summary_rows(sources: [&str; 2], pair: &PairAnalysis) -> (Rows, Rows) {
    let (report, records, one_sided) = (&pair.report, &pair.records, &pair.one_sided);
    let names = [
        report.points[0].name.as_str(),
        report.points[1].name.as_str(),
    ];
    let mut rows = Rows::new(&POINTS);
    let c = &report.clock;
    rows.text(names[0])
        .text(sources[0])
        .text(names[1])
        .text(sources[1])
        .time(Some(c.reference_ns))
        .f64(c.offset_ns / 1e6)
        .f64(c.offset_uncertainty_ns / 1e6)
        .f64(c.drift_ppm)
        .u64(c.samples)
        .f64(c.span_s)
        .u64(report.paired)
        .u64(report.not_seen_at_receiver)
        .u64(report.not_seen_at_sender)
        .u64(report.retransmissions)
        .u64(report.spurious_retransmissions)
        .u64(report.peak_waiting as u64)
        .end();
    let points = rows;

    let source_of = |name: &str| {
        if name == names[0] {
            sources[0]
        } else {
            sources[1]
        }
    };
    let mut rows = Rows::new(&HANDOVERS_TWO_SIDED);
    for t in records {
        rows.text(&t.sender_point)
            .text(&t.receiver_point)
            .text("both")
            .text(source_of(&t.sender_point))
            .text(source_of(&t.receiver_point))
            .u64(u64::from(t.sender_association))
            .u64(u64::from(t.receiver_association))
            .address(Some(t.from_src))
            .address(Some(t.from_dst))
            .address(Some(t.to_src))
            .address(Some(t.to_dst))
            .text(t.sender_class.as_str())
            .text(t.receiver_class.as_str())
            .u64(t.sender_switch_frame)
            .u64(t.receiver_switch_frame)
            .time(Some(t.sender_switch_ns))
            .time(Some(t.receiver_switch_ns));
        side(&mut rows, &t.sender);
        side(&mut rows, &t.receiver);
        rows.str(t.sender.missing.as_deref())
            .str(t.receiver.missing.as_deref())
            .str(None::<&str>);
        let a = t.asconf.as_ref();
        rows.str(a.map(|a| a.requester_point.as_str()))
            .u64(a.map(|a| u64::from(a.serial)))
            .str(a.map(|a| a.requests.as_str()))
            .u64(a.map(|a| u64::from(a.transmissions)))
            .time(a.map(|a| a.sent_ns))
            .address(a.map(|a| a.src))
            .address(a.map(|a| a.dst))
            .time(a.map(|a| a.received_ns))
            .f64(ms(a.map(|a| a.one_way_delay_ns)))
            .f64(ms(a.and_then(|a| a.peer_processing_ns)))
            .time(a.and_then(|a| a.ack_received_ns))
            .f64(ms(a.and_then(|a| a.ack_one_way_delay_ns)))
            .f64(ms(a.and_then(|a| a.peer_to_first_new_data_ns)))
            .end();
    }
    for o in one_sided {
        one_sided_row(&mut rows, o, source_of(&o.point));
    }
    (points, rows)
}

/// A handover one point only saw: its point's columns (the sender's or
/// the receiver's, as `at_data_sender` says; the sender's when unknown),
/// the other side's and the ASCONF's null.
fn one_sided_row(rows: &mut Rows, o: &OneSidedHandover, source: &str) {
    let at_sender = o.at_data_sender != Some(false);
    let mine = |v: &str| at_sender.then_some(v.to_owned());
    let theirs = |v: &str| (!at_sender).then_some(v.to_owned());
    let here = |v: u64| {
        if at_sender {
            (Some(v), None)
        } else {
            (None, Some(v))
        }
    };
    let (assoc_s, assoc_r) = here(u64::from(o.association));
    let (frame_s, frame_r) = here(o.switch_frame);
    let (time_s, time_r) = if at_sender {
        (Some(o.switch_ns), None)
    } else {
        (None, Some(o.switch_ns))
    };
    rows.str(mine(&o.point))
        .str(theirs(&o.point))
        .text(&o.point)
        .str(mine(source))
        .str(theirs(source))
        .u64(assoc_s)
        .u64(assoc_r)
        .address(Some(o.from_src))
        .address(Some(o.from_dst))
        .address(Some(o.to_src))
        .address(Some(o.to_dst))
        .str(mine(o.class.as_str()))
        .str(theirs(o.class.as_str()))
        .u64(frame_s)
        .u64(frame_r)
        .time(time_s)
        .time(time_r);
    // The point's interrupt, undivided: its parts need the other point.
    let interrupt = ms(o.interrupt_ns);
    for side_is_sender in [true, false] {
        let v = if side_is_sender == at_sender {
            interrupt
        } else {
            None
        };
        rows.f64(v);
        for _ in 1..PARTS.len() {
            rows.f64(None);
        }
    }
    rows.str(None::<&str>)
        .str(None::<&str>)
        .str(Some(o.reason.as_str()));
    // The ASCONF columns: its one-way delay needs both points.
    rows.str(None::<&str>)
        .u64(None)
        .str(None::<&str>)
        .u64(None)
        .time(None)
        .address(None)
        .address(None)
        .time(None)
        .f64(None)
        .f64(None)
        .time(None)
        .f64(None)
        .f64(None)
        .end();
}

/// Keeps every handover of one capture's analysis (the per-point records
/// the two-sided ones are built from; a few per association).
#[derive(Default)]
struct KeepHandovers {
    handovers: Vec<Handover>,
}

impl ReportSink for KeepHandovers {
    fn part(&mut self, part: AssociationPart) {
        self.handovers.extend(part.handovers);
    }
    fn association(&mut self, report: AssociationReport) {
        self.handovers.extend(report.handovers);
    }
}

/// Two points paired: the pairing's summary, the two-sided records and
/// the handovers seen at one point only.
pub struct PairAnalysis {
    /// The pairing's summary: clock, associations, paths, counts.
    pub report: PointsReport,
    /// One per handover both points saw.
    pub records: Vec<TwoSidedHandover>,
    /// One per handover seen at one point only.
    pub one_sided: Vec<OneSidedHandover>,
}

/// Two planned captures (`batch::plan`'s order: the points') named
/// `names`: each one's handovers (its analysis as `analyze PATH` does it,
/// with `config`'s options and harness files), then the pairing, whose
/// samples and records stream to `sink`, and the two-sided and one-sided
/// records (docs/points.md). The command line and the Python API both
/// come here.
pub fn analyze_pair(
    planned: &[Input],
    names: &[String; 2],
    config: &BatchConfig,
    options: &PointsOptions,
    sink: &mut dyn PointsSink,
) -> anyhow::Result<PairAnalysis> {
    if planned.len() != 2 {
        anyhow::bail!("two capture points are needed, {} given", planned.len());
    }
    let mut kept: [Vec<Handover>; 2] = Default::default();
    for (input, keep) in planned.iter().zip(kept.iter_mut()) {
        let options = options_for(input, config).map_err(|e| anyhow::anyhow!(e))?;
        let mut sink = KeepHandovers::default();
        analyze_reader(open_capture(input)?, &options, &mut sink)?;
        *keep = sink.handovers;
    }
    let point_inputs: Vec<PointInput> = planned
        .iter()
        .zip(names)
        .map(|(i, n)| PointInput {
            name: n.clone(),
            path: i.path.clone(),
        })
        .collect();
    let handovers = [kept[0].as_slice(), kept[1].as_slice()];
    let (report, two_sided) = analyze_two_sided(&point_inputs, options, handovers, sink)?;
    Ok(PairAnalysis {
        report,
        records: two_sided.records,
        one_sided: two_sided.one_sided,
    })
}

/// The three tables of a pair of points in memory, with `provenance`'s
/// columns (the Python API's `analyze_points`): `points`, `owd`,
/// `handovers_two_sided`.
pub fn pair_frames(
    planned: &[Input],
    names: &[String; 2],
    config: &BatchConfig,
    provenance: &Provenance,
) -> anyhow::Result<Vec<(&'static str, DataFrame)>> {
    let mut none = ();
    let mut owd = OwdRows::new(names.clone(), &mut none);
    let pair = analyze_pair(planned, names, config, &PointsOptions::default(), &mut owd)?;
    let mut owd = owd.rows;
    let sources = [planned[0].source.as_str(), planned[1].source.as_str()];
    let (mut points, mut two_sided) = summary_rows(sources, &pair);
    Ok(vec![
        (POINTS.name, take_frame(&mut points, provenance)?),
        (OWD.name, take_frame(&mut owd, provenance)?),
        (
            HANDOVERS_TWO_SIDED.name,
            take_frame(&mut two_sided, provenance)?,
        ),
    ])
}

/// The part files' key of a pair of points: from both captures' sources.
pub fn pair_key(sources: [&str; 2]) -> String {
    dataset::key(&format!("{}+{}", sources[0], sources[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each side's interrupt columns are `<side>_<part>_ms` for PARTS, in
    /// order: the row builder writes them from PARTS.
    #[test]
    fn side_columns_follow_the_parts() {
        assert_eq!(PARTS.len(), 4);
        for side in ["sender", "receiver"] {
            let at = HANDOVERS_TWO_SIDED
                .columns
                .iter()
                .position(|c| c.name == format!("{side}_interrupt_ms"))
                .expect("the side's first column");
            for (i, p) in PARTS.iter().enumerate() {
                assert_eq!(
                    HANDOVERS_TWO_SIDED.columns[at + i].name,
                    format!("{side}_{}_ms", p.name)
                );
            }
        }
    }
}
