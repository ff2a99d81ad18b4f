//! The table rows of a long association handed on in parts before it is
//! finished are those of the whole association: an outstanding HEARTBEAT
//! or ASCONF waits for a later part with its answer (the `events` table
//! omits answered HEARTBEATs, the `asconf` table pairs each ASCONF with its
//! ASCONF-ACK), and the `associations` row counts what the parts held.
//! Checked on every sample and public capture with a part taken after every
//! frame that adds an event, against no parts.

#[path = "../../analyzer/tests/common/mod.rs"]
mod common;

use sctp_handover::analysis::{
    analyze_stream, AnalysisOptions, AssociationPart, AssociationReport, ReportSink,
};
use sctp_handover::handover::CapturePoint;
use sctp_handover_tables::records::AssociationTables;
use std::path::Path;

struct Tables {
    tables: AssociationTables,
    parts: u64,
}

impl ReportSink for Tables {
    fn part(&mut self, part: AssociationPart) {
        self.parts += 1;
        self.tables.add_part(&part, CapturePoint::Mn);
    }
    fn association(&mut self, report: AssociationReport) {
        self.tables.add(&report, CapturePoint::Mn);
    }
}

/// Every table's rows as text, sorted (parts change the order of rows,
/// not their content), and the number of parts.
fn tables(path: &Path, part_events: usize) -> (Vec<(&'static str, Vec<String>)>, u64) {
    let mut options = AnalysisOptions::default();
    options.handover.part_events = part_events;
    let mut sink = Tables {
        tables: AssociationTables::new(),
        parts: 0,
    };
    analyze_stream(path, &options, &mut sink).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let tables = sink
        .tables
        .by_name()
        .into_iter()
        .map(|(name, rows)| {
            let height = rows.len();
            let columns = rows.take_columns();
            let mut text: Vec<String> = (0..height)
                .map(|i| {
                    let cells: Vec<String> = columns
                        .iter()
                        .map(|c| format!("{:?}", c.get(i).expect("a row of the column")))
                        .collect();
                    cells.join(" | ")
                })
                .collect();
            text.sort();
            (name, text)
        })
        .collect();
    (tables, sink.parts)
}

#[test]
fn parts_give_the_tables_the_rows_of_the_whole_association() {
    let captures = common::samples_and_public_captures();
    let mut with_parts = 0;
    for path in &captures {
        let (whole, no_parts) = tables(path, usize::MAX);
        assert_eq!(no_parts, 0, "{}: parts without a threshold", path.display());
        let (parted, parts) = tables(path, 1);
        for ((name, w), (_, p)) in whole.iter().zip(&parted) {
            assert_eq!(
                p,
                w,
                "{}: the {name} table differs with parts",
                path.display()
            );
        }
        if parts > 0 {
            with_parts += 1;
        }
    }
    // All 20 samples hand rows on in parts; 50 or more with the public
    // captures.
    let minimum = if common::public_captures_present() {
        50
    } else {
        15
    };
    assert!(
        with_parts >= minimum,
        "only {with_parts} of {} captures were handed on in parts",
        captures.len()
    );
}
