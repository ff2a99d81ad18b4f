//! A long association hands its settled results on in parts before it is
//! finished (memory stays bounded by what is alive): the parts and the
//! finished association together give the outputs exactly what the whole
//! association gives them. Checked on every sample and public capture with
//! a part taken after every frame that adds an event, against no parts.

mod common;

use sctp_handover::analysis::{
    analyze_stream, AnalysisOptions, AssociationPart, AssociationReport, FileReport, ReportSink,
};
use sctp_handover::output::jsonl::JsonLines;
use sctp_handover::output::summary::Summary;
use sctp_handover::time::Timestamp;
use std::path::Path;

/// A sink that counts the parts it passes on.
struct Counted<S> {
    sink: S,
    parts: u64,
}

impl<S: ReportSink> ReportSink for Counted<S> {
    fn first_frame(&mut self, time: Timestamp) {
        self.sink.first_frame(time);
    }
    fn part(&mut self, part: AssociationPart) {
        assert!(
            !part.events.is_empty() || !part.handovers.is_empty(),
            "an empty part was handed on"
        );
        self.parts += 1;
        self.sink.part(part);
    }
    fn association(&mut self, report: AssociationReport) {
        self.sink.association(report);
    }
}

fn run<S: ReportSink>(path: &Path, part_events: usize, sink: S) -> (S, FileReport, u64) {
    run_with(path, part_events, usize::MAX, sink)
}

/// `max_events`: the cap on events held at once (`--max-events`).
fn run_with<S: ReportSink>(
    path: &Path,
    part_events: usize,
    max_events: usize,
    sink: S,
) -> (S, FileReport, u64) {
    let mut options = AnalysisOptions::default();
    options.handover.part_events = part_events;
    options.track.limits.events = max_events;
    let mut counted = Counted { sink, parts: 0 };
    let file = analyze_stream(path, &options, &mut counted)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (counted.sink, file, counted.parts)
}

/// JSON lines, sorted: parts change their order, not their content.
fn sorted_lines(json: Vec<u8>) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8(json)
        .expect("JSON is UTF-8")
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// The JSON lines (sorted: parts change their order, not their content),
/// the text summary and the number of parts.
fn outputs(path: &Path, part_events: usize) -> (Vec<String>, String, u64) {
    let (json, file, parts) = run(path, part_events, JsonLines::new(Vec::new(), path));
    let lines = sorted_lines(json.finish(&file).expect("writing to memory"));
    let (summary, file, _) = run(path, part_events, Summary::new(true));
    let mut text = Vec::new();
    summary.finish(&file, &mut text).expect("writing to memory");
    (
        lines,
        String::from_utf8(text).expect("the summary is UTF-8"),
        parts,
    )
}

#[test]
fn parts_give_the_outputs_what_the_whole_association_gives() {
    let mut with_parts = 0;
    let mut parts_total = 0;
    for path in common::samples_and_public_captures() {
        let (whole_json, whole_text, no_parts) = outputs(&path, usize::MAX);
        assert_eq!(no_parts, 0, "{}: parts without a threshold", path.display());
        let (json, text, parts) = outputs(&path, 1);
        assert_eq!(
            json,
            whole_json,
            "{}: JSON lines differ with parts",
            path.display()
        );
        assert_eq!(
            text,
            whole_text,
            "{}: summary differs with parts",
            path.display()
        );
        if parts > 0 {
            with_parts += 1;
            parts_total += parts;
        }
    }
    // Parts were taken at all: every capture with an association that
    // lives past its first events hands some on (all 20 samples do; 76 of
    // the samples and public captures together).
    let minimum = if common::public_captures_present() {
        50
    } else {
        15
    };
    assert!(
        with_parts >= minimum,
        "only {with_parts} captures were handed on in parts ({parts_total} parts)"
    );
}

/// A cap on events held at once (`--max-events`, here 64) below the part
/// size takes a part at half of it: only what a part cannot take (requests
/// still waiting for their answer, a frame's events beyond the cap) could
/// be dropped, and on these captures nothing is.
#[test]
fn a_cap_on_held_events_hands_them_on_instead_of_dropping_them() {
    let mut capped_somewhere = 0;
    for path in common::samples_and_public_captures() {
        let (whole, file, _) = run(&path, usize::MAX, JsonLines::new(Vec::new(), &path));
        let whole = whole.finish(&file).expect("writing to memory");
        let (capped, file, parts) = run_with(&path, 1024, 64, JsonLines::new(Vec::new(), &path));
        let dropped = file.limits.iter().find(|l| l.contains("--max-events"));
        assert!(dropped.is_none(), "{}: {dropped:?}", path.display());
        let capped = capped.finish(&file).expect("writing to memory");
        assert_eq!(
            sorted_lines(capped),
            sorted_lines(whole),
            "{}",
            path.display()
        );
        if parts > 0 {
            capped_somewhere += 1;
        }
    }
    // 10 of the samples reach the cap; 15 or more with the public captures.
    let minimum = if common::public_captures_present() {
        15
    } else {
        8
    };
    assert!(
        capped_somewhere >= minimum,
        "the cap was reached in {capped_somewhere} captures only"
    );
}
