//! Retransmitted DATA on every capture in `../shared/public-captures`,
//! frame by frame, against tshark's own TSN analysis
//! (`-o sctp.tsn_analysis:TRUE`, the `sctp.retransmission` field): every
//! (frame, TSN) one side flags and the other does not falls in a named
//! category (docs/metrics.md, "Retransmissions against tshark"):
//!
//! * flagged by tshark only: the frame is a **capture duplicate** (the
//!   same packet captured again; we never count it, tshark sees its TSNs
//!   a second time);
//! * flagged by us only: the packet's **verification tag is 0** (tshark
//!   skips the TSN analysis of such packets), or the TSN was **never
//!   captured before** (`previous_frame` None: first seen below the
//!   highest TSN, or below the first TSN seen; tshark flags a TSN only when
//!   it saw it in an earlier frame).
//!
//! Anything else fails the test, listed with file, frame and TSN.
//! `cargo test --test public_retransmissions -- --nocapture` prints the
//! per-file table.

mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions, FrameAnalyzer, FrameOutcome};
use sctp_handover::capture;
use sctp_handover::events::{Discard, EventKind};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// tshark processes (and analyses) run at once: the suite runs on 2 cores.
const WORKERS: usize = 2;

/// One DATA / I-DATA chunk as tshark dissected it.
#[derive(Debug, Clone, Copy)]
struct TsharkChunk {
    frame: u64,
    tsn: u32,
    /// The SCTP common header carried verification tag 0.
    tag_zero: bool,
    /// `sctp.retransmission` under this chunk's TSN.
    retransmission: bool,
}

/// The value of `name="…"`-style attribute `key` in a PDML line.
fn attr<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!(" {key}=\""))? + key.len() + 3;
    let len = line[start..].find('"')?;
    Some(&line[start..start + len])
}

fn hex_u32(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 16).map_err(|e| format!("bad hex {s:?}: {e}"))
}

/// The DATA chunks of the frames tshark flags (a retransmission in at
/// least one chunk) and of the packets with verification tag 0, paired
/// with their flags through the PDML tree. A chunk shows its TSN as
/// `sctp.data_tsn_raw` (absolute) and, when the TSN analysis ran for its
/// packet, first as `sctp.data_tsn` (relative) with `sctp.retransmission`
/// as its child; all follow the packet's `sctp.verification_tag`. Document
/// order therefore pairs each flag with its TSN even when a packet
/// bundles several DATA chunks.
fn tshark_chunks(path: &Path) -> Result<Vec<TsharkChunk>, String> {
    let out = std::process::Command::new("tshark")
        .args(["-n", "-o", "sctp.tsn_analysis:TRUE", "-Y"])
        .arg("sctp.retransmission || (sctp.verification_tag == 0 && sctp.data_tsn_raw)")
        .args(["-T", "pdml", "-r"])
        .arg(path)
        .output()
        .map_err(|e| format!("tshark does not run (make setup installs it): {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A file cut in the middle of a record: tshark says so and fails after
    // printing every complete frame (our reader reports the same frames).
    if !out.status.success() && !stderr.contains("cut short") {
        return Err(format!("tshark failed: {stderr}"));
    }
    let text = String::from_utf8(out.stdout).map_err(|e| format!("tshark output: {e}"))?;
    let mut chunks = Vec::new();
    let mut frame = None;
    let mut tag_zero = false;
    // The relative TSN item seen (its raw value) and whether it is flagged.
    let mut pending: Option<(u32, bool)> = None;
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("<packet>") {
            if pending.is_some() {
                return Err(format!(
                    "frame {frame:?}: sctp.data_tsn without sctp.data_tsn_raw"
                ));
            }
            frame = None;
            tag_zero = false;
            continue;
        }
        if !line.starts_with("<field ") {
            continue;
        }
        let Some(name) = attr(line, "name") else {
            continue;
        };
        let value = || {
            attr(line, "value")
                .ok_or_else(|| format!("frame {frame:?}: {name} without value"))
                .and_then(hex_u32)
        };
        match name {
            "frame.number" if frame.is_none() => {
                let n = attr(line, "show").ok_or("frame.number without show")?;
                frame = Some(n.parse::<u64>().map_err(|e| format!("frame {n:?}: {e}"))?);
            }
            "sctp.verification_tag" => tag_zero = value()? == 0,
            "sctp.data_tsn" => {
                let tsn = value()?;
                if let Some((t, _)) = pending.replace((tsn, false)) {
                    return Err(format!("frame {frame:?}: TSN {t:#x} without its raw TSN"));
                }
            }
            "sctp.retransmission" => match pending.as_mut() {
                Some((_, flagged)) => *flagged = true,
                None => return Err(format!("frame {frame:?}: retransmission without a TSN")),
            },
            "sctp.data_tsn_raw" => {
                let tsn = value()?;
                let retransmission = match pending.take() {
                    Some((t, flagged)) if t == tsn => flagged,
                    Some((t, _)) => {
                        return Err(format!("frame {frame:?}: TSN {t:#x} then raw {tsn:#x}"))
                    }
                    None => false,
                };
                chunks.push(TsharkChunk {
                    frame: frame.ok_or("TSN before frame.number")?,
                    tsn,
                    tag_zero,
                    retransmission,
                });
            }
            _ => {}
        }
    }
    if pending.is_some() {
        return Err(format!(
            "frame {frame:?}: sctp.data_tsn without sctp.data_tsn_raw"
        ));
    }
    Ok(chunks)
}

/// The frames our pipeline counts as capture duplicates (the same pipeline
/// as `analyze_file`, fed frame by frame to see each frame's outcome).
fn capture_duplicate_frames(path: &Path) -> Result<BTreeSet<u64>, String> {
    let mut reader = capture::open(path).map_err(|e| format!("open: {e}"))?;
    let mut pipeline = FrameAnalyzer::new(&AnalysisOptions::default());
    let mut duplicates = BTreeSet::new();
    reader
        .for_each_frame(|frame| {
            if pipeline.frame(&frame, &mut Discard) == FrameOutcome::CaptureDuplicate {
                duplicates.insert(frame.number);
            }
        })
        .map_err(|e| format!("read: {e}"))?;
    Ok(duplicates)
}

/// One file's comparison: counts of (frame, TSN) pairs.
#[derive(Debug, Default, Clone)]
struct Row {
    ours: usize,
    tshark: usize,
    tshark_frames: usize,
    both: usize,
    /// tshark only, in a frame we count as a capture duplicate.
    duplicate: usize,
    /// Ours only, in a packet with verification tag 0.
    tag_zero: usize,
    /// Ours only, a TSN never captured before (`previous_frame` None).
    never_seen: usize,
    /// Differences in no category, described.
    unexplained: Vec<String>,
}

fn compare(path: &Path) -> Result<Row, String> {
    let chunks = tshark_chunks(path)?;
    let analysis =
        analyze_file(path, &AnalysisOptions::default()).map_err(|e| format!("analyze: {e}"))?;
    let duplicates = capture_duplicate_frames(path)?;
    if duplicates.len() as u64 != analysis.accounting.capture_duplicates {
        return Err(format!(
            "{} capture duplicates frame by frame, {} in the accounting",
            duplicates.len(),
            analysis.accounting.capture_duplicates
        ));
    }

    // (frame, TSN) → previous frame; a TSN twice in one frame stays visible.
    let mut ours: BTreeMap<(u64, u32), Vec<Option<u64>>> = BTreeMap::new();
    for e in &analysis.events {
        if let EventKind::Retransmission {
            tsn,
            previous_frame,
            ..
        } = e.kind
        {
            ours.entry((e.frame, tsn)).or_default().push(previous_frame);
        }
    }
    let theirs: BTreeSet<(u64, u32)> = chunks
        .iter()
        .filter(|c| c.retransmission)
        .map(|c| (c.frame, c.tsn))
        .collect();
    let tag_zero: BTreeSet<(u64, u32)> = chunks
        .iter()
        .filter(|c| c.tag_zero)
        .map(|c| (c.frame, c.tsn))
        .collect();

    let mut row = Row {
        ours: ours.values().map(Vec::len).sum(),
        tshark: chunks.iter().filter(|c| c.retransmission).count(),
        tshark_frames: theirs.iter().map(|(f, _)| f).collect::<BTreeSet<_>>().len(),
        ..Row::default()
    };
    if row.tshark != theirs.len() {
        row.unexplained.push(format!(
            "tshark flags the same TSN twice in one frame ({} chunks, {} (frame, TSN))",
            row.tshark,
            theirs.len()
        ));
    }
    for (&(frame, tsn), previous) in &ours {
        for (i, &previous_frame) in previous.iter().enumerate() {
            if i == 0 && theirs.contains(&(frame, tsn)) {
                row.both += 1;
            } else if tag_zero.contains(&(frame, tsn)) {
                row.tag_zero += 1;
            } else if previous_frame.is_none() {
                row.never_seen += 1;
            } else {
                row.unexplained.push(format!(
                    "frame {frame} TSN {tsn}: ours only (previous frame {previous_frame:?}, \
                     verification tag not 0)"
                ));
            }
        }
    }
    for &(frame, tsn) in theirs.iter().filter(|k| !ours.contains_key(k)) {
        if duplicates.contains(&frame) {
            row.duplicate += 1;
        } else {
            row.unexplained.push(format!(
                "frame {frame} TSN {tsn}: tshark only, not a capture duplicate"
            ));
        }
    }
    Ok(row)
}

#[test]
fn retransmissions_match_tshark_or_a_named_category() {
    let Some(dir) = common::public_captures_if_present() else {
        return;
    };
    let files = common::public_capture_files();
    assert!(!files.is_empty(), "INDEX.tsv lists no captures");
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Row, String>>>> = Mutex::new(vec![None; files.len()]);
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let row = compare(path);
                results.lock().expect("results")[i] = Some(row);
            });
        }
    });
    let results = results.into_inner().expect("results");

    let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
    let mut failures = Vec::new();
    let mut total = Row::default();
    let mut quiet = 0;
    println!(
        "{:>5} {:>7} {:>8} {:>5} {:>9} {:>5} {:>10} {:>11}  file",
        "ours", "tshark", "(frames)", "both", "duplicate", "tag0", "never_seen", "unexplained"
    );
    for (path, result) in files.iter().zip(results) {
        let row = match result.expect("every file compared") {
            Ok(row) => row,
            Err(why) => {
                failures.push(format!("{}: {why}", name(path)));
                continue;
            }
        };
        total.ours += row.ours;
        total.tshark += row.tshark;
        total.tshark_frames += row.tshark_frames;
        total.both += row.both;
        total.duplicate += row.duplicate;
        total.tag_zero += row.tag_zero;
        total.never_seen += row.never_seen;
        for u in &row.unexplained {
            failures.push(format!("{}: {u}", name(path)));
        }
        if row.ours == 0 && row.tshark == 0 {
            quiet += 1;
            continue;
        }
        println!(
            "{:>5} {:>7} {:>8} {:>5} {:>9} {:>5} {:>10} {:>11}  {}",
            row.ours,
            row.tshark,
            format!("({})", row.tshark_frames),
            row.both,
            row.duplicate,
            row.tag_zero,
            row.never_seen,
            row.unexplained.len(),
            name(path)
        );
    }
    println!(
        "{:>5} {:>7} {:>8} {:>5} {:>9} {:>5} {:>10} {:>11}  total over {} files \
         ({quiet} without retransmissions either side) in {:.1} s",
        total.ours,
        total.tshark,
        format!("({})", total.tshark_frames),
        total.both,
        total.duplicate,
        total.tag_zero,
        total.never_seen,
        failures.len(),
        files.len(),
        started.elapsed().as_secs_f64()
    );
    // Guards the PDML pairing: sctp-i-forward.pcap and SctpAllPackets.pcap
    // have retransmissions both sides flag.
    assert!(
        total.both > 0,
        "no retransmission flagged by both sides: tshark's output was not understood"
    );
    assert!(
        failures.is_empty(),
        "retransmissions differ from tshark's outside the named categories \
         (capture duplicate, verification tag 0, never captured before) in {}:\n  {}",
        dir.display(),
        failures.join("\n  ")
    );
}
