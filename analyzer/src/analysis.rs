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

/// What one capture file holds beyond its associations: how it was read
/// and how every frame was classified. Known when the file is done.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
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
    pub capture_point: CapturePoint,
    /// Associations handed to the sink.
    pub associations: u64,
    /// Data path switches over all associations.
    pub handovers: u64,
}

/// One association, finished: it ended (SHUTDOWN COMPLETE, ABORT, a
/// restart), went idle, or the file ended. Its events and handovers come
/// with it, so that consumers need no global index.
#[derive(Debug)]
pub struct AssociationReport {
    pub association: crate::track::assoc::Association,
    /// Every data path switch of this association with its components.
    pub handovers: Vec<Handover>,
    /// This association's events, in frame order.
    pub events: Vec<Event>,
}

/// Receives each association once it is finished; the analysis keeps
/// nothing of it afterwards (memory is bounded by what is alive).
pub trait ReportSink {
    fn association(&mut self, report: AssociationReport);
}

/// Everything learned from one capture file, collected in memory (for
/// tests and small inputs; batch work streams through [`ReportSink`]).
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
    /// In association id order.
    pub associations: Vec<crate::track::assoc::Association>,
    pub capture_point: CapturePoint,
    /// Every data path switch with its latency components.
    pub handovers: Vec<Handover>,
    /// In frame order.
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

impl Pipeline {
    fn new(options: &AnalysisOptions) -> Self {
        Pipeline {
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
        }
    }
}

impl Pipeline {
    fn report(
        self,
        path: &Path,
        reader: &capture::CaptureReader,
        outcome: capture::ReadOutcome,
    ) -> FileReport {
        FileReport {
            path: path.to_owned(),
            format: reader.format(),
            compressed: reader.is_compressed(),
            frames: outcome.frames,
            first_time: self.first_time,
            last_time: self.previous_time,
            accounting: self.accounting,
            link_types: self.link_types,
            problems: self.problems,
            checksum: self.checksum,
            time_order: self.time_order,
            warning: outcome.warning,
            counters: self.tracker.counters,
            capture_point: self.options.handover.capture_point,
            associations: self.tracker.associations.len() as u64,
            handovers: 0,
        }
    }
}

/// Runs the pipeline with a caller's event sink (e.g. the C plugin's, which
/// wraps its own handover engine); no association reports.
pub fn analyze_file_with(
    path: &Path,
    options: &AnalysisOptions,
    sink: &mut dyn EventSink,
) -> Result<FileReport, CaptureError> {
    let mut reader = capture::open(path)?;
    let mut pipeline = Pipeline::new(options);
    let outcome = reader.for_each_frame(|frame| pipeline.frame(&frame, sink))?;
    Ok(pipeline.report(path, &reader, outcome))
}

/// Analyses one capture file in a single streaming pass: each association
/// goes to `sink` once it is finished, with its events and handovers.
pub fn analyze_stream(
    path: &Path,
    options: &AnalysisOptions,
    sink: &mut dyn ReportSink,
) -> Result<FileReport, CaptureError> {
    let mut reader = capture::open(path)?;
    let mut pipeline = Pipeline::new(options);
    let mut engine = HandoverEngine::new(options.handover.clone());
    let outcome = reader.for_each_frame(|frame| pipeline.frame(&frame, &mut engine))?;
    let associations = std::mem::take(&mut pipeline.tracker.associations);
    let (events, handovers) = engine.finish();
    let mut events_of: Vec<Vec<Event>> = associations.iter().map(|_| Vec::new()).collect();
    let mut handovers_of: Vec<Vec<Handover>> = associations.iter().map(|_| Vec::new()).collect();
    for e in events {
        if let Some(list) = events_of.get_mut(e.association as usize) {
            list.push(e);
        }
    }
    let mut handover_count = 0;
    for h in handovers {
        if let Some(list) = handovers_of.get_mut(h.association as usize) {
            handover_count += 1;
            list.push(h);
        }
    }
    let association_count = associations.len() as u64;
    for ((association, events), handovers) in
        associations.into_iter().zip(events_of).zip(handovers_of)
    {
        sink.association(AssociationReport {
            association,
            handovers,
            events,
        });
    }
    let mut report = pipeline.report(path, &reader, outcome);
    report.associations = association_count;
    report.handovers = handover_count;
    Ok(report)
}

/// Collects every finished association (for [`analyze_file`]).
#[derive(Default)]
struct Collect {
    associations: Vec<crate::track::assoc::Association>,
    handovers: Vec<Handover>,
    events: Vec<Event>,
}

impl ReportSink for Collect {
    fn association(&mut self, report: AssociationReport) {
        self.associations.push(report.association);
        self.handovers.extend(report.handovers);
        self.events.extend(report.events);
    }
}

/// Analyses a file and keeps everything in memory: associations in id
/// order, events in frame order, handovers in switch order.
pub fn analyze_file(path: &Path, options: &AnalysisOptions) -> Result<FileAnalysis, CaptureError> {
    let mut all = Collect::default();
    let file = analyze_stream(path, options, &mut all)?;
    all.associations.sort_by_key(|a| a.id);
    // Stable sorts: within a frame, events keep their emission order.
    all.events.sort_by_key(|e| e.frame);
    all.handovers.sort_by_key(|h| h.switch_frame);
    Ok(FileAnalysis {
        path: file.path,
        format: file.format,
        compressed: file.compressed,
        frames: file.frames,
        first_time: file.first_time,
        last_time: file.last_time,
        accounting: file.accounting,
        link_types: file.link_types,
        problems: file.problems,
        checksum: file.checksum,
        time_order: file.time_order,
        warning: file.warning,
        counters: file.counters,
        associations: all.associations,
        capture_point: file.capture_point,
        handovers: all.handovers,
        events: all.events,
    })
}
