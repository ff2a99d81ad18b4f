//! The one-pass pipeline over a capture file: frames → decode → duplicate
//! check → tracker, with accounting that puts every frame in exactly one
//! category.

use crate::capture::{self, CaptureError, CaptureFormat};
use crate::decode::{DecodeOptions, Decoded, Decoder};
use crate::events::{Event, EventSink};
use crate::handover::{CapturePoint, Handover, HandoverConfig, HandoverEngine};
use crate::time::{Nanos, Timestamp};
use crate::track::dedup::DuplicateDetector;
use crate::track::{PacketVerdict, TrackConfig, Tracker};
use crate::wire::sctp::Packet as SctpPacket;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Malformed frames listed individually (all are counted).
const MAX_LISTED_PROBLEMS: usize = 1000;

#[derive(Debug, Clone)]
pub struct AnalysisOptions {
    pub decode: DecodeOptions,
    pub track: TrackConfig,
    pub verify_checksum: bool,
    /// Copies of the same packet closer than this are capture duplicates.
    pub duplicate_window: Nanos,
    pub handover: HandoverConfig,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            decode: DecodeOptions::default(),
            track: TrackConfig::default(),
            verify_checksum: false,
            duplicate_window: Nanos(1_000_000),
            handover: HandoverConfig::new(),
        }
    }
}

/// Every frame lands in exactly one of these; `total()` equals the frames
/// in the file.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Accounting {
    /// SCTP packets fully analysed.
    pub sctp: u64,
    /// SCTP packets cut short by the snaplen; their complete chunks were
    /// still analysed.
    pub sctp_truncated: u64,
    /// SCTP packets with a chunk that could not be decoded; the chunks
    /// before it were still analysed.
    pub sctp_malformed: u64,
    /// The same SCTP packet captured a second time (e.g. `-i any`).
    pub capture_duplicates: u64,
    /// ICMP/ICMPv6 errors quoting an SCTP packet (not traffic).
    pub icmp_about_sctp: u64,
    /// IP fragments of an SCTP datagram, counted with the frame that
    /// completed reassembly (or left incomplete).
    pub ip_fragments: u64,
    pub not_sctp: u64,
    /// Frames cut by the snaplen before the SCTP common header.
    pub truncated: u64,
    /// Frames whose link or IP headers are invalid.
    pub malformed: u64,
    pub unsupported_link_type: u64,
    /// pcapng custom / systemd-journal records (numbered as frames by
    /// Wireshark, so counted here to keep frame numbers aligned).
    pub non_packet_records: u64,
}

impl Accounting {
    pub fn total(&self) -> u64 {
        self.sctp
            + self.sctp_truncated
            + self.sctp_malformed
            + self.capture_duplicates
            + self.icmp_about_sctp
            + self.ip_fragments
            + self.not_sctp
            + self.truncated
            + self.malformed
            + self.unsupported_link_type
            + self.non_packet_records
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub frame: u64,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct TimeOrder {
    /// Frames whose timestamp is earlier than the previous frame's.
    pub regressions: u64,
    pub first_regression_frame: Option<u64>,
    #[serde(serialize_with = "crate::track::rto::ms")]
    pub largest_regression: Nanos,
}

/// Everything learned from one capture file.
#[derive(Debug, Serialize)]
pub struct FileAnalysis {
    pub path: PathBuf,
    pub format: CaptureFormat,
    pub compressed: bool,
    pub frames: u64,
    pub first_time: Option<Timestamp>,
    pub last_time: Option<Timestamp>,
    pub accounting: Accounting,
    pub link_types: Vec<u32>,
    /// Malformed / truncated frames with reasons (the first 1000).
    pub problems: Vec<Problem>,
    pub checksum: ChecksumReport,
    pub time_order: TimeOrder,
    /// Set when the file ended early or a record was corrupt.
    pub warning: Option<String>,
    pub counters: crate::track::TrackCounters,
    pub associations: Vec<crate::track::assoc::Association>,
    pub capture_point: CapturePoint,
    /// Every data path switch with its latency components.
    pub handovers: Vec<Handover>,
    pub events: Vec<Event>,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ChecksumReport {
    pub verified: bool,
    pub failures: u64,
    pub first_failure_frame: Option<u64>,
}

struct Pipeline {
    options: AnalysisOptions,
    decoder: Decoder,
    dedup: DuplicateDetector,
    tracker: Tracker,
    accounting: Accounting,
    problems: Vec<Problem>,
    checksum: ChecksumReport,
    time_order: TimeOrder,
    previous_time: Option<Timestamp>,
    first_time: Option<Timestamp>,
    link_types: Vec<u32>,
}

impl Pipeline {
    fn problem(&mut self, frame: u64, reason: impl Into<String>) {
        if self.problems.len() < MAX_LISTED_PROBLEMS {
            self.problems.push(Problem {
                frame,
                reason: reason.into(),
            });
        }
    }

    fn frame(&mut self, frame: &capture::Frame<'_>, sink: &mut dyn EventSink) {
        let time = frame.timestamp;
        self.first_time.get_or_insert(time);
        if let Some(prev) = self.previous_time {
            if time < prev {
                let t = &mut self.time_order;
                t.regressions += 1;
                t.first_regression_frame.get_or_insert(frame.number);
                t.largest_regression = t.largest_regression.max(prev.since(time));
            }
        }
        self.previous_time = Some(time);
        if !self.link_types.contains(&frame.link_type) {
            self.link_types.push(frame.link_type);
        }

        match self.decoder.decode(frame) {
            Decoded::Sctp(dg) => {
                if self.dedup.is_duplicate(&dg, time) {
                    self.accounting.capture_duplicates += 1;
                    return;
                }
                if self.options.verify_checksum {
                    if let Ok(p) = SctpPacket::new_checked(dg.bytes) {
                        if !dg.cut && !p.verify_checksum() {
                            self.checksum.failures += 1;
                            self.checksum
                                .first_failure_frame
                                .get_or_insert(frame.number);
                        }
                    }
                }
                let cut = dg.cut;
                match self.tracker.packet(frame.number, time, &dg, sink) {
                    PacketVerdict::Analysed if cut => {
                        self.accounting.sctp_truncated += 1;
                    }
                    PacketVerdict::Analysed => self.accounting.sctp += 1,
                    PacketVerdict::Malformed(why) => {
                        self.accounting.sctp_malformed += 1;
                        self.problem(frame.number, why);
                    }
                }
            }
            Decoded::IcmpAboutSctp(q) => {
                self.accounting.icmp_about_sctp += 1;
                self.tracker.icmp(frame.number, time, &q, sink);
            }
            Decoded::Fragment => self.accounting.ip_fragments += 1,
            Decoded::NotSctp => self.accounting.not_sctp += 1,
            Decoded::Truncated(why) => {
                self.accounting.truncated += 1;
                self.problem(frame.number, format!("truncated: {why}"));
            }
            Decoded::Malformed(why) => {
                self.accounting.malformed += 1;
                self.problem(frame.number, why);
            }
            Decoded::NonPacketRecord => self.accounting.non_packet_records += 1,
            Decoded::UnsupportedLinkType(t) => {
                self.accounting.unsupported_link_type += 1;
                self.problem(frame.number, format!("unsupported link type {t}"));
            }
        }
    }
}

/// Analyses one capture file in a single streaming pass. Events go to
/// `sink` as they happen; the returned analysis holds the final state.
pub fn analyze_file_with(
    path: &Path,
    options: &AnalysisOptions,
    sink: &mut dyn EventSink,
) -> Result<FileAnalysis, CaptureError> {
    let mut reader = capture::open(path)?;
    let mut pipeline = Pipeline {
        options: options.clone(),
        decoder: Decoder::new(options.decode.clone()),
        dedup: DuplicateDetector::new(options.duplicate_window),
        tracker: Tracker::new(options.track),
        accounting: Accounting::default(),
        problems: Vec::new(),
        checksum: ChecksumReport {
            verified: options.verify_checksum,
            ..Default::default()
        },
        time_order: TimeOrder::default(),
        previous_time: None,
        first_time: None,
        link_types: Vec::new(),
    };
    let outcome = reader.for_each_frame(|frame| pipeline.frame(&frame, sink))?;
    Ok(FileAnalysis {
        path: path.to_owned(),
        format: reader.format(),
        compressed: reader.is_compressed(),
        frames: outcome.frames,
        first_time: pipeline.first_time,
        last_time: pipeline.previous_time,
        accounting: pipeline.accounting,
        link_types: pipeline.link_types,
        problems: pipeline.problems,
        checksum: pipeline.checksum,
        time_order: pipeline.time_order,
        warning: outcome.warning,
        counters: pipeline.tracker.counters,
        associations: pipeline.tracker.associations,
        capture_point: options.handover.capture_point,
        handovers: Vec::new(),
        events: Vec::new(),
    })
}

/// Analyses a file: associations, paths, events and handovers.
pub fn analyze_file(path: &Path, options: &AnalysisOptions) -> Result<FileAnalysis, CaptureError> {
    let mut engine = HandoverEngine::new(options.handover.clone());
    let mut analysis = analyze_file_with(path, options, &mut engine)?;
    let (events, handovers) = engine.finish();
    analysis.events = events;
    analysis.handovers = handovers;
    Ok(analysis)
}
