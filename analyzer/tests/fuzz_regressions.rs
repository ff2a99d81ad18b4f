//! Inputs the fuzz targets (fuzz/, `make fuzz`) once crashed on, kept in
//! tests/fuzz-regressions/ and analysed on every test run, and the
//! in-memory entry points the targets use ([`capture::from_reader`],
//! [`analyze_reader`]) checked against the file ones.

mod common;

use sctp_handover::analysis::{
    analyze_file, analyze_reader, AnalysisOptions, AssociationPart, AssociationReport, FileReport,
    ReportSink,
};
use sctp_handover::capture::{self, CaptureError};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Counts what the sink receives.
#[derive(Default)]
struct Count {
    associations: u64,
    handovers: u64,
}

impl ReportSink for Count {
    fn part(&mut self, part: AssociationPart) {
        self.handovers += part.handovers.len() as u64;
    }
    fn association(&mut self, report: AssociationReport) {
        self.associations += 1;
        self.handovers += report.handovers.len() as u64;
    }
}

fn regressions() -> Vec<PathBuf> {
    let dir = common::repo_root().join("analyzer/tests/fuzz-regressions");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_none_or(|e| e != "md"))
        .collect();
    inputs.sort();
    inputs
}

fn analyze_bytes(name: &Path, bytes: Vec<u8>) -> Result<(FileReport, Count), CaptureError> {
    let reader = capture::from_reader(name, Cursor::new(bytes))?;
    let mut count = Count::default();
    let options = AnalysisOptions {
        verify_checksum: true,
        ..AnalysisOptions::default()
    };
    let report = analyze_reader(reader, &options, &mut count)?;
    Ok((report, count))
}

/// What the `pipeline` target checks: no panic, every frame accounted for,
/// the report serialisable; quickly.
#[test]
fn committed_fuzz_findings_are_analysed_and_accounted() {
    let inputs = regressions();
    assert!(!inputs.is_empty(), "no inputs in tests/fuzz-regressions");
    for path in inputs {
        let started = Instant::now();
        let bytes = std::fs::read(&path).expect("readable");
        match analyze_bytes(&path, bytes) {
            Ok((report, _)) => {
                assert_eq!(
                    report.accounting.total(),
                    report.frames,
                    "{}",
                    path.display()
                );
                serde_json::to_string(&report).expect("serialisable");
            }
            Err(e) => {
                let message = e.to_string();
                assert!(message.contains(&*path.to_string_lossy()), "{message}");
            }
        }
        // The same through the path-based entry point.
        if let Ok(a) = analyze_file(&path, &AnalysisOptions::default()) {
            assert_eq!(a.accounting.total(), a.frames, "{}", path.display());
            serde_json::to_string(&a).expect("serialisable");
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{} took {:?}",
            path.display(),
            started.elapsed()
        );
    }
}

/// A pcapng Process Information Block claiming 10 bytes: pcap-parser 0.17
/// computed `10 - 12` (a panic in debug builds, a 4 GiB read in release).
#[test]
fn short_pcapng_block_ends_reading_with_a_warning() {
    let path = common::repo_root()
        .join("analyzer/tests/fuzz-regressions/pcapng-process-info-block-length-10.pcapng");
    let a = analyze_file(&path, &AnalysisOptions::default()).expect("a capture");
    assert_eq!(a.frames, 0);
    let warning = a.warning.as_deref().expect("a warning");
    assert!(
        warning.contains("record 1 at byte offset 48") && warning.contains("block length 10"),
        "{warning}"
    );
}

/// Reading from memory gives what reading the file gives, compressed or
/// not, and the report is named as the caller said.
#[test]
fn from_reader_reads_as_open_does() {
    let dir = common::tempdir("from-reader");
    let mut files = common::all_samples();
    let gz = dir.join("koh-kim-1-mn.pcap.gz");
    common::gzip(&common::sample("koh-kim-1", "mn"), &gz);
    files.push(gz);
    for path in files {
        let from_file = analyze_file(&path, &AnalysisOptions::default()).expect("readable");
        let name = Path::new("in-memory");
        let bytes = std::fs::read(&path).expect("readable");
        let (report, count) = analyze_bytes(name, bytes).expect("readable from memory");
        assert_eq!(report.path, name);
        assert_eq!(report.frames, from_file.frames, "{}", path.display());
        assert_eq!(report.format, from_file.format);
        assert_eq!(report.compressed, from_file.compressed);
        assert_eq!(
            serde_json::to_value(report.accounting).expect("json"),
            serde_json::to_value(from_file.accounting).expect("json"),
            "{}",
            path.display()
        );
        assert_eq!(count.associations, from_file.associations.len() as u64);
        assert_eq!(count.handovers, from_file.handovers.len() as u64);
    }
}

#[test]
fn from_reader_refuses_what_open_refuses() {
    let name = Path::new("stdin");
    match capture::from_reader(name, Cursor::new(Vec::new())) {
        Err(CaptureError::Empty { path }) => assert_eq!(path, name),
        other => panic!("expected Empty, got {:?}", other.err()),
    }
    match capture::from_reader(name, Cursor::new(b"GIF89a not a capture".to_vec())) {
        Err(e @ CaptureError::NotACapture { .. }) => {
            let message = e.to_string();
            assert!(message.starts_with("stdin: not a pcap"), "{message}");
        }
        other => panic!("expected NotACapture, got {:?}", other.err()),
    }
}
