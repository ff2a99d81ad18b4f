//! JSON lines (`--format json`, schema 2; docs/json-schema.md): one JSON
//! object per line, written as associations are retired, so that output
//! starts at once and memory stays bounded by the associations alive.
//!
//! A stream is a [`header`] line, then per file: for each association (in
//! the order they finish) its `association` line, its `handover` lines and
//! its `event` lines, then the file's `file` line ([`JsonLines::finish`],
//! or [`failed`] for a file that could not be read). A long association's
//! settled handovers and events come earlier, in parts
//! ([`crate::analysis::AssociationPart`]), before its `association` line.

use crate::analysis::{AssociationPart, AssociationReport, FileReport, ReportSink};
use serde::Serialize;
use std::fmt::Display;
use std::io::{self, Write};
use std::path::Path;

/// The `schema` field of the JSON Lines header record: what the file holds.
pub const SCHEMA_NAME: &str = "sctp-handover/analysis";
/// Bumped on any incompatible change to a record's shape. 3: the failover
/// predictions renamed by what they predict (`predicted_eq3_ms` →
/// `predicted_backoff_ms`, `predicted_eq4_ms` → `predicted_fixed_rto_ms`).
pub const SCHEMA_VERSION: u32 = 3;

#[derive(Serialize)]
struct Record<'a, T: Serialize> {
    record: &'static str,
    source: &'a str,
    #[serde(flatten)]
    body: &'a T,
}

fn line(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    line_into(&mut Vec::new(), out, value)
}

/// Serialises `value` into `text` (cleared first), then writes it with its
/// newline in one call: serde_json writes a record in dozens of small
/// pieces, cheap into a vector and not through a `dyn Write`.
fn line_into(text: &mut Vec<u8>, out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    text.clear();
    serde_json::to_writer(&mut *text, value)?;
    text.push(b'\n');
    out.write_all(text)
}

/// The first line of a stream:
/// `{"record":"header","schema":"sctp-handover/analysis","schema_version":3,"tool_version":…}`.
pub fn header(out: &mut dyn Write) -> io::Result<()> {
    #[derive(Serialize)]
    struct Header {
        record: &'static str,
        schema: &'static str,
        schema_version: u32,
        tool_version: &'static str,
    }
    line(
        out,
        &Header {
            record: "header",
            schema: SCHEMA_NAME,
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION"),
        },
    )
}

/// The `file` line of a file that could not be analysed:
/// `{"record":"file","source":…,"error":…}`.
pub fn failed(out: &mut dyn Write, source: &Path, error: &dyn Display) -> io::Result<()> {
    #[derive(Serialize)]
    struct Failed<'a> {
        record: &'static str,
        source: &'a str,
        error: String,
    }
    line(
        out,
        &Failed {
            record: "file",
            source: &source.display().to_string(),
            error: error.to_string(),
        },
    )
}

/// Writes one file's records to `out` as its associations are retired.
/// A write error stops the writing and is returned by [`JsonLines::finish`].
pub struct JsonLines<W: Write> {
    out: W,
    source: String,
    error: Option<io::Error>,
    /// The record being written, reused from line to line.
    text: Vec<u8>,
}

impl<W: Write> JsonLines<W> {
    /// `source`: the capture file, repeated in every record.
    pub fn new(out: W, source: &Path) -> Self {
        JsonLines {
            out,
            source: source.display().to_string(),
            error: None,
            text: Vec::new(),
        }
    }

    fn record(&mut self, record: &'static str, body: &impl Serialize) {
        if self.error.is_some() {
            return;
        }
        let r = Record {
            record,
            source: &self.source,
            body,
        };
        if let Err(e) = line_into(&mut self.text, &mut self.out, &r) {
            self.error = Some(e);
        }
    }

    /// Writes the `file` line (the file's fields; `associations` and
    /// `handovers` are counts) and gives the writer back.
    pub fn finish(mut self, file: &FileReport) -> io::Result<W> {
        self.record("file", file);
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}

impl<W: Write> ReportSink for JsonLines<W> {
    fn part(&mut self, part: AssociationPart) {
        for h in &part.handovers {
            self.record("handover", h);
        }
        for e in &part.events {
            self.record("event", e);
        }
    }

    fn association(&mut self, report: AssociationReport) {
        self.record("association", &report.association);
        for h in &report.handovers {
            self.record("handover", h);
        }
        for e in &report.events {
            self.record("event", e);
        }
    }
}
