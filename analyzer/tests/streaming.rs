//! Streaming: finished associations leave the analysis as the capture is
//! read (after `end_linger` once ended, after `idle_timeout` when idle),
//! with their own events and handovers, and nothing of them stays behind.

mod common;

use common::{read_frames, sample, tempdir, write_pcap, PcapFrame, RawFrame};
use sctp_handover::analysis::{
    analyze_file, analyze_stream, AnalysisOptions, AssociationPart, AssociationReport, ReportSink,
    Retired,
};
use sctp_handover::capture;
use sctp_handover::decode::{DecodeOptions, Decoded, Decoder};
use sctp_handover::events::AssociationEndReason;
use sctp_handover::handover::{HandoverConfig, HandoverEngine};
use sctp_handover::output::{jsonl, summary::Summary};
use sctp_handover::time::Timestamp;
use sctp_handover::track::{Footprint, TrackConfig, Tracker};
use std::path::{Path, PathBuf};

const SEC: i64 = 1_000_000_000;

/// Records what arrives, in order.
#[derive(Default)]
struct Arrivals(Vec<AssociationReport>);

impl ReportSink for Arrivals {
    fn part(&mut self, part: AssociationPart) {
        panic!("no association here is long enough to be handed on in parts: {part:?}");
    }
    fn association(&mut self, report: AssociationReport) {
        self.0.push(report);
    }
}

/// `parts` one after the other, each shifted to start `gap` after the
/// previous one's last frame.
fn concatenate(path: &Path, parts: &[Vec<RawFrame>], gap_ns: i64) {
    let mut frames: Vec<RawFrame> = Vec::new();
    for part in parts {
        let shift = match frames.last() {
            Some(last) => last.ts_ns + gap_ns - part[0].ts_ns,
            None => 0,
        };
        frames.extend(part.iter().map(|f| RawFrame {
            ts_ns: f.ts_ns + shift,
            ..f.clone()
        }));
    }
    let pf: Vec<PcapFrame<'_>> = frames
        .iter()
        .map(|f| PcapFrame {
            ts_ns: f.ts_ns,
            data: &f.data,
            original_len: f.original_len,
        })
        .collect();
    write_pcap(path, frames[0].link_type, true, false, &pf);
}

fn stream(path: &Path, options: &AnalysisOptions) -> Vec<AssociationReport> {
    let mut sink = Arrivals::default();
    let file = analyze_stream(path, options, &mut sink).expect("analysed");
    assert_eq!(file.associations, sink.0.len() as u64);
    let handovers: usize = sink.0.iter().map(|r| r.handovers.len()).sum();
    assert_eq!(file.handovers, handovers as u64);
    sink.0
}

/// The text summary of `path` (every association with `all`).
fn summary_of(path: &Path, all: bool) -> String {
    let mut s = Summary::new(all);
    let file = analyze_stream(path, &AnalysisOptions::default(), &mut s).expect("analysed");
    let mut out = Vec::new();
    s.finish(&file, &mut out).expect("write");
    String::from_utf8(out).expect("utf-8")
}

fn two_samples(dir: &Path, gap_ns: i64) -> (PathBuf, usize) {
    let first = read_frames(&sample("koh-kim-1", "mn"));
    let second = read_frames(&sample("koh-kim-2", "mn"));
    let path = dir.join("two.pcap");
    concatenate(&path, &[first.clone(), second], gap_ns);
    (path, first.len())
}

#[test]
fn an_ended_association_is_reported_before_the_file_ends() {
    let dir = tempdir("streaming-ended");
    // 60 s apart: well beyond the 10 s linger after SHUTDOWN COMPLETE.
    let (path, first_len) = two_samples(&dir, 60 * SEC);
    let reports = stream(&path, &AnalysisOptions::default());
    assert_eq!(reports.len(), 2);
    let (a, b) = (&reports[0], &reports[1]);
    assert_eq!(a.association.id, 0);
    assert_eq!(
        a.association.end,
        Some(AssociationEndReason::ShutdownComplete)
    );
    assert_eq!(
        a.retired,
        Retired::Ended {
            before_frame: first_len as u64 + 1
        },
        "retired as soon as the next capture's first frame shows the linger is over"
    );
    assert_eq!(b.association.id, 1, "ids stay unique and increasing");
    assert_eq!(b.retired, Retired::EndOfFile);

    // The first association's report is what the first capture alone gives.
    let alone =
        analyze_file(&sample("koh-kim-1", "mn"), &AnalysisOptions::default()).expect("analysed");
    assert_eq!(
        serde_json::to_value(&a.association).expect("json"),
        serde_json::to_value(&alone.associations[0]).expect("json")
    );
    assert_eq!(
        serde_json::to_value(&a.events).expect("json"),
        serde_json::to_value(&alone.events).expect("json")
    );
    assert_eq!(
        serde_json::to_value(&a.handovers).expect("json"),
        serde_json::to_value(&alone.handovers).expect("json")
    );
    for r in &reports {
        assert!(r.events.iter().all(|e| e.association == r.association.id));
        assert!(r.events.windows(2).all(|w| w[0].frame <= w[1].frame));
        assert!(r
            .handovers
            .iter()
            .all(|h| h.association == r.association.id));
    }
    let second =
        analyze_file(&sample("koh-kim-2", "mn"), &AnalysisOptions::default()).expect("analysed");
    assert_eq!(b.events.len(), second.events.len());
    assert_eq!(b.handovers.len(), second.handovers.len());

    // Closer than the linger: both stay until the end, reported in id order.
    let dir = tempdir("streaming-linger");
    let (path, _) = two_samples(&dir, 2 * SEC);
    let reports = stream(&path, &AnalysisOptions::default());
    let order: Vec<_> = reports
        .iter()
        .map(|r| (r.association.id, r.retired))
        .collect();
    assert_eq!(order, [(0, Retired::EndOfFile), (1, Retired::EndOfFile)]);
}

#[test]
fn an_idle_association_is_retired_and_a_later_packet_starts_a_new_one() {
    let dir = tempdir("streaming-idle");
    let frames = read_frames(&sample("koh-kim-1", "mn"));
    // Split in the middle of the data transfer, 400 s of silence between.
    let split = 60;
    let path = dir.join("idle.pcap");
    concatenate(
        &path,
        &[frames[..split].to_vec(), frames[split..].to_vec()],
        400 * SEC,
    );
    let reports = stream(&path, &AnalysisOptions::default());
    assert_eq!(reports.len(), 2, "idle for longer than the 300 s default");
    assert_eq!(reports[0].association.id, 0);
    assert_eq!(reports[0].association.end, None);
    assert_eq!(
        reports[0].retired,
        Retired::Idle {
            before_frame: split as u64 + 1
        }
    );
    assert_eq!(reports[1].association.id, 1);
    assert_eq!(
        serde_json::to_value(reports[1].association.start).expect("json"),
        "mid_stream"
    );

    // A longer idle timeout keeps it one association, as without the gap.
    let mut options = AnalysisOptions::default();
    options.track.idle_timeout = sctp_handover::time::Nanos(500 * SEC);
    let reports = stream(&path, &options);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].retired, Retired::EndOfFile);
    assert_eq!(
        reports[0].association.end,
        Some(AssociationEndReason::ShutdownComplete)
    );
}

#[test]
fn retired_associations_leave_no_state_behind() {
    let dir = tempdir("streaming-state");
    let (path, first_len) = two_samples(&dir, 60 * SEC);
    let mut decoder = Decoder::new(DecodeOptions::default());
    let mut tracker = Tracker::new(TrackConfig::default());
    let mut engine = HandoverEngine::new(HandoverConfig::new());
    let mut alive_at = Vec::new();
    let mut retired = Vec::new();
    let mut reader = capture::open(&path).expect("capture");
    reader
        .for_each_frame(|frame| {
            while let Some(a) = tracker.retire_due(frame.timestamp) {
                let (events, handovers) = engine.retire(a.id);
                assert!(!events.is_empty() && !handovers.is_empty());
                retired.push((frame.number, a.id, tracker.footprint(), engine.alive()));
            }
            if let Decoded::Sctp(dg) = decoder.decode(&frame) {
                tracker.packet(frame.number, frame.timestamp, &dg, &mut engine);
            }
            alive_at.push(tracker.alive());
        })
        .expect("read");
    assert_eq!(alive_at[first_len - 1], 1);
    assert_eq!(
        retired,
        [(first_len as u64 + 1, 0, Footprint::default(), 0)],
        "the first association left every table of the tracker and the engine"
    );
    assert_eq!(alive_at.last(), Some(&1));
    let far = Timestamp(i64::MAX);
    let last = tracker.retire_due(far).expect("the second one is due");
    assert_eq!(last.id, 1);
    assert!(tracker.retire_due(far).is_none());
    engine.retire(last.id);
    assert_eq!(tracker.alive(), 0);
    assert_eq!(tracker.footprint(), Footprint::default());
    assert_eq!(engine.alive(), 0);
    assert_eq!(tracker.created(), 2);
}

#[test]
fn json_lines_carry_the_document_objects_record_by_record() {
    let path = sample("koh-kim-1", "mn");
    let mut out = Vec::new();
    jsonl::header(&mut out).expect("write");
    let mut lines = jsonl::JsonLines::new(&mut out, &path);
    let file = analyze_stream(&path, &AnalysisOptions::default(), &mut lines).expect("analysed");
    lines.finish(&file).expect("write");
    jsonl::failed(&mut out, Path::new("bad.pcap"), &"not a capture").expect("write");
    let records: Vec<serde_json::Value> = String::from_utf8(out)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let header = &records[0];
    assert_eq!(header["record"], "header");
    assert_eq!(header["schema"], "sctp-handover/analysis");
    assert_eq!(header["schema_version"], 3);
    assert!(header["tool_version"].is_string());

    // The same objects as the collected analysis, plus record and source.
    let all = analyze_file(&path, &AnalysisOptions::default()).expect("analysed");
    let doc = serde_json::to_value(&all).expect("json");
    let source = path.display().to_string();
    let strip = |r: &serde_json::Value, kind: &str| {
        assert_eq!(r["record"], kind);
        assert_eq!(r["source"], source.as_str());
        let mut o = r.as_object().expect("object").clone();
        o.remove("record");
        o.remove("source");
        serde_json::Value::Object(o)
    };
    let of = |kind: &str| -> Vec<serde_json::Value> {
        records
            .iter()
            .filter(|r| r["record"] == kind && r["source"] == source.as_str())
            .map(|r| strip(r, kind))
            .collect()
    };
    assert_eq!(
        of("association"),
        *doc["associations"].as_array().expect("list")
    );
    assert_eq!(of("handover"), *doc["handovers"].as_array().expect("list"));
    assert_eq!(of("event"), *doc["events"].as_array().expect("list"));
    assert_eq!(records[1]["record"], "association", "association first");

    let f = strip(&records[records.len() - 2], "file");
    assert_eq!(f["associations"], 1);
    assert_eq!(f["handovers"], 2);
    for key in [
        "frames",
        "accounting",
        "counters",
        "problems",
        "format",
        "path",
    ] {
        assert_eq!(f[key], doc["file"][key], "{key}");
    }
    assert!(f.get("events").is_none());
    let failed = &records[records.len() - 1];
    assert_eq!(failed["record"], "file");
    assert_eq!(failed["source"], "bad.pcap");
    assert_eq!(failed["error"], "not a capture");
}

#[test]
fn the_summary_shows_what_matters_and_counts_the_rest() {
    let dir = tempdir("streaming-summary");
    let cut = read_frames(&sample("koh-kim-2", "mn"));
    let whole = read_frames(&sample("koh-kim-1", "mn"));
    // Cut before its first path switch: an association with nothing to
    // show (superseded by the next INIT); then a whole exchange.
    let path = dir.join("summary.pcap");
    concatenate(&path, &[cut[..60].to_vec(), whole], 60 * SEC);
    let render = |all: bool| summary_of(&path, all);
    let short = render(false);
    assert!(
        short.contains("2 associations, 2 handovers (0 failovers), 0 associations with anomalies"),
        "{short}"
    );
    assert!(!short.contains("\nassociation 0 "), "{short}");
    assert!(short.contains("\nassociation 1 "), "{short}");
    assert!(short.contains("new DATA from endpoint 1 moves from path 1 to path 2"));
    assert!(
        short.ends_with(
            "… and 1 more association without handovers or anomalies (--all lists them)\n"
        ),
        "{short}"
    );
    let totals = short.find("2 associations").expect("totals");
    let table = short.find("handovers (ms;").expect("handover table");
    assert!(totals < short.find("\nassociation 1").expect("section") && table > totals);

    let all = render(true);
    assert!(all.contains("\nassociation 0 ") && all.contains("\nassociation 1 "));
    assert!(!all.contains("more association"), "{all}");
}

#[test]
fn the_summary_details_at_most_a_hundred_associations_and_counts_the_rest() {
    let dir = tempdir("streaming-summary-cap");
    let exchange = read_frames(&sample("koh-kim-1", "mn"));
    // 120 copies, each after the previous one has been retired (the
    // 60 s gap exceeds the 10 s linger), so each is a new association
    // with its two planned switches.
    let path = dir.join("many.pcap");
    concatenate(&path, &vec![exchange; 120], 60 * SEC);
    let render = |all: bool| summary_of(&path, all);
    let short = render(false);
    assert!(short.contains("120 associations, 240 handovers"), "{short}");
    assert_eq!(short.matches("\nassociation ").count(), 100);
    assert!(short.contains("\nassociation 99 ") && !short.contains("\nassociation 100 "));
    assert_eq!(
        short.matches(" planned ").count(),
        200,
        "table rows of those shown"
    );
    assert!(short.ends_with(
        "… and 20 more associations with handovers or anomalies (--all lists them; --out writes every one as tables)\n"
    ), "{}", &short[short.len() - 300..]);
    let all = render(true);
    assert_eq!(all.matches("\nassociation ").count(), 120);
    assert!(!all.contains("more association"));
}

/// Events and observations in arrival order, as text.
#[derive(Default)]
struct Log(Vec<String>);

impl sctp_handover::events::EventSink for Log {
    fn emit(&mut self, event: sctp_handover::events::Event) {
        self.0.push(format!("{event:?}"));
    }
    fn observe(&mut self, o: &sctp_handover::events::Observation) {
        self.0.push(format!("{o:?}"));
    }
}

/// A caller feeding frames one at a time (the C plugin on a pipe) gets the
/// same events, observations and accounting as the analysis of the file,
/// and each frame's outcome is its accounting category.
#[test]
fn frame_analyzer_fed_frame_by_frame_equals_the_file_analysis() {
    use sctp_handover::analysis::{analyze_file_with, FrameAnalyzer, FrameOutcome};
    for path in common::all_samples() {
        let options = AnalysisOptions::default();
        let mut whole = Log::default();
        let report = analyze_file_with(&path, &options, &mut whole).expect("analysable");
        let mut fed = Log::default();
        let mut analyzer = FrameAnalyzer::new(&options);
        let mut sctp = 0;
        for (i, f) in read_frames(&path).iter().enumerate() {
            let outcome = analyzer.frame(
                &capture::Frame {
                    number: i as u64 + 1,
                    timestamp: Timestamp(f.ts_ns),
                    link_type: f.link_type,
                    interface: 0,
                    original_len: f.original_len,
                    data: &f.data,
                },
                &mut fed,
            );
            sctp += u64::from(outcome == FrameOutcome::Sctp);
        }
        assert_eq!(fed.0, whole.0, "{}", path.display());
        assert_eq!(sctp, report.accounting.sctp, "{}", path.display());
        assert_eq!(
            format!("{:?}", analyzer.accounting()),
            format!("{:?}", report.accounting),
            "{}",
            path.display()
        );
    }
}
