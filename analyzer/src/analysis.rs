//! The one-pass pipeline over a capture file: frames → decode → duplicate
//! check → tracker, with accounting that puts every frame in exactly one
//! category.

use crate::capture::{self, CaptureError, CaptureFormat};
use crate::decode::{DecodeOptions, Decoded, Decoder};
use crate::events::{AssocId, Event, EventSink};
use crate::handover::{CapturePoint, Handover, HandoverConfig, HandoverEngine};
use crate::time::{Nanos, Timestamp};
use crate::track::assoc::Association;
use crate::track::dedup::DuplicateDetector;
use crate::track::limits::Hit;
use crate::track::{PacketVerdict, TrackConfig, Tracker};
use crate::wire::sctp::Packet as SctpPacket;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Malformed frames listed individually (all are counted).
const MAX_LISTED_PROBLEMS: usize = 1000;

/// How one capture is analysed: decoding, tracking, handover and
/// filtering settings ([`crate::settings::Settings`] builds them from the
/// front ends' options).
#[derive(Debug, Clone)]
pub struct AnalysisOptions {
    /// Which encapsulations are looked into (e.g. SCTP over UDP) and IP
    /// reassembly.
    pub decode: DecodeOptions,
    /// Includes when associations are finished and handed to the sink
    /// ([`TrackConfig::end_linger`], [`TrackConfig::idle_timeout`]).
    pub track: TrackConfig,
    /// Whether each complete SCTP packet's CRC32c is checked; failures are
    /// counted in [`FileReport::checksum`], the packets still analysed.
    pub verify_checksum: bool,
    /// Copies of the same packet closer than this are capture duplicates.
    pub duplicate_window: Nanos,
    /// How handovers are classified and their components bounded.
    pub handover: HandoverConfig,
    /// A capture filter (e.g. libpcap's BPF, `--filter`): frames it
    /// rejects are counted as `filtered_out` and not decoded.
    pub frame_filter: Option<Arc<dyn FrameFilter>>,
}

/// Decides which frames are analysed, like a capture filter applied while
/// reading a file (`tcpdump -r FILE EXPR`). Implemented outside the core
/// (libpcap lives in another crate); one [`FrameMatcher`] per file.
pub trait FrameFilter: std::fmt::Debug + Send + Sync {
    /// The per-file state of this filter.
    fn matcher(&self) -> Box<dyn FrameMatcher>;
}

/// A filter's per-file state (e.g. programs compiled per link type).
pub trait FrameMatcher {
    /// Whether the frame passes; an error when the filter cannot apply to
    /// this link type (the file then fails with that reason).
    fn keep(&mut self, link_type: u32, data: &[u8], original_len: u32) -> Result<bool, String>;
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            decode: DecodeOptions::default(),
            track: TrackConfig::default(),
            verify_checksum: false,
            duplicate_window: Nanos(1_000_000),
            handover: HandoverConfig::new(),
            frame_filter: None,
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
    /// SCTP packets not tracked because a cap on tracked state was reached
    /// (`TrackConfig::limits`; the file's `limits` says which).
    pub sctp_untracked: u64,
    /// The same SCTP packet captured a second time (e.g. `-i any`).
    pub capture_duplicates: u64,
    /// ICMP/ICMPv6 errors quoting an SCTP packet (not traffic).
    pub icmp_about_sctp: u64,
    /// IP fragments of an SCTP datagram, counted with the frame that
    /// completed reassembly (or left incomplete).
    pub ip_fragments: u64,
    /// Frames holding no SCTP packet (other protocols).
    pub not_sctp: u64,
    /// Frames cut by the snaplen before the SCTP common header.
    pub truncated: u64,
    /// Frames whose link or IP headers are invalid.
    pub malformed: u64,
    /// Frames of a link type the decoder does not read.
    pub unsupported_link_type: u64,
    /// pcapng custom / systemd-journal records (numbered as frames by
    /// Wireshark, so counted here to keep frame numbers aligned).
    pub non_packet_records: u64,
    /// Frames the capture filter (`--filter`) rejected.
    pub filtered_out: u64,
}

/// How many categories there are.
pub const ACCOUNTING_CATEGORIES: usize = 13;

impl Accounting {
    /// Every category as (its name, as a field and a `frames_*` column,
    /// count), in declaration order: the one list the outputs and the
    /// total follow.
    pub fn categories(&self) -> [(&'static str, u64); ACCOUNTING_CATEGORIES] {
        [
            ("sctp", self.sctp),
            ("sctp_truncated", self.sctp_truncated),
            ("sctp_malformed", self.sctp_malformed),
            ("sctp_untracked", self.sctp_untracked),
            ("capture_duplicates", self.capture_duplicates),
            ("icmp_about_sctp", self.icmp_about_sctp),
            ("ip_fragments", self.ip_fragments),
            ("not_sctp", self.not_sctp),
            ("truncated", self.truncated),
            ("malformed", self.malformed),
            ("unsupported_link_type", self.unsupported_link_type),
            ("non_packet_records", self.non_packet_records),
            ("filtered_out", self.filtered_out),
        ]
    }

    /// The number of frames in the file: the sum of every category.
    pub fn total(&self) -> u64 {
        self.categories().iter().map(|(_, n)| n).sum()
    }
}

/// What the pipeline made of one frame: its [`Accounting`] category, with
/// the reason for the problem categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameOutcome {
    /// A complete SCTP packet, analysed.
    Sctp,
    /// An SCTP packet cut short by the snaplen; its complete chunks were
    /// analysed.
    SctpTruncated,
    /// A chunk could not be decoded (the chunks before it were applied).
    SctpMalformed(&'static str),
    /// A second copy of an SCTP packet already seen.
    CaptureDuplicate,
    /// An ICMP/ICMPv6 error quoting an SCTP packet.
    IcmpAboutSctp,
    /// An IP fragment of an SCTP datagram (reassembled or not).
    IpFragment,
    /// A frame holding no SCTP packet.
    NotSctp,
    /// Cut by the snaplen before the SCTP common header (the reason).
    Truncated(&'static str),
    /// Invalid link or IP headers (the reason).
    Malformed(&'static str),
    /// A link type the decoder does not read (its number).
    UnsupportedLinkType(u32),
    /// A pcapng record that holds no packet (custom, systemd journal).
    NonPacketRecord,
    /// Not tracked: a cap on tracked state was reached.
    SctpUntracked,
    /// Rejected by the capture filter.
    FilteredOut,
}

/// A frame that was malformed or truncated, with why.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// The frame's number (1-based).
    pub frame: u64,
    /// What was wrong with it.
    pub reason: String,
}

/// Whether the capture's timestamps go backwards.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct TimeOrder {
    /// Frames whose timestamp is earlier than the previous frame's.
    pub regressions: u64,
    /// The first frame whose timestamp is earlier than the previous frame's;
    /// None when there is none.
    pub first_regression_frame: Option<u64>,
    /// The largest step backwards (zero when there is none).
    #[serde(serialize_with = "crate::track::rto::ms")]
    pub largest_regression: Nanos,
}

/// What one capture file holds beyond its associations: how it was read
/// and how every frame was classified. Known when the file is done.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The file as it was given.
    pub path: PathBuf,
    /// The container format (pcap, pcapng, ...).
    pub format: CaptureFormat,
    /// The file was compressed (read through a decompressor).
    pub compressed: bool,
    /// The number of frames (and non-packet records) read.
    pub frames: u64,
    /// The time of the first frame; None for a file without frames.
    pub first_time: Option<Timestamp>,
    /// The time of the last frame; None for a file without frames.
    pub last_time: Option<Timestamp>,
    /// How every frame was classified.
    pub accounting: Accounting,
    /// The link types of its frames (LINKTYPE_* numbers), in order of first
    /// appearance.
    pub link_types: Vec<u32>,
    /// Malformed / truncated frames with reasons (the first 1000).
    pub problems: Vec<Problem>,
    /// Whether SCTP checksums were verified, and how many failed.
    pub checksum: ChecksumReport,
    /// Whether timestamps went backwards.
    pub time_order: TimeOrder,
    /// Set when the file ended early or a record was corrupt.
    pub warning: Option<String>,
    /// The tracker's counters (ICMP errors matched, stale SACKs, ...).
    pub counters: crate::track::TrackCounters,
    /// Where the capture was taken (sender, receiver, in between), as
    /// inferred or given.
    pub capture_point: CapturePoint,
    /// Associations handed to the sink.
    pub associations: u64,
    /// Data path switches over all associations.
    pub handovers: u64,
    /// One line per cap on tracked state that was reached (which cap, how
    /// often, from which frame); empty when none was.
    pub limits: Vec<String>,
}

/// When and why an association was handed to the sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Retired {
    /// It ended (SHUTDOWN COMPLETE, ABORT, superseded) and no packet of it
    /// came for `end_linger`; noticed at `before_frame`, which was not
    /// analysed yet.
    Ended {
        /// The first frame past the linger (1-based).
        before_frame: u64,
    },
    /// No packet of it came for `idle_timeout`; noticed at `before_frame`.
    Idle {
        /// The first frame past the idle timeout (1-based).
        before_frame: u64,
    },
    /// The file ended (associations then come in id order).
    EndOfFile,
}

/// One association, finished: it ended (SHUTDOWN COMPLETE, ABORT, a
/// restart) and went quiet, went idle, or the file ended. Its events and
/// handovers come with it, so that consumers need no global index.
#[derive(Debug)]
pub struct AssociationReport {
    /// The association's state at its end: endpoints, paths, counters.
    pub association: Association,
    /// Every data path switch of this association with its components,
    /// in switch order.
    pub handovers: Vec<Handover>,
    /// This association's events, in frame order.
    pub events: Vec<Event>,
    /// How it was handed over (ended, idle, or end of the file).
    pub retired: Retired,
}

/// The settled part of a long association's results, handed on before the
/// association is finished so that what it holds stays bounded
/// ([`crate::handover::PART_EVENTS`] events): events whose answers the
/// outputs pair them with are settled (an outstanding HEARTBEAT or ASCONF
/// waits for a later part, with its answer), handovers once every
/// component is final. The parts and the [`AssociationReport`] together
/// hold each event and handover exactly once; each part is in frame
/// (switch) order, and events held back for their answer come in a later
/// part than events after them.
#[derive(Debug)]
pub struct AssociationPart {
    /// The association the part belongs to.
    pub association: AssocId,
    /// Its settled data path switches, in switch order.
    pub handovers: Vec<Handover>,
    /// Its settled events, in frame order (held-back answers excepted).
    pub events: Vec<Event>,
}

/// Receives each association once it is finished; the analysis keeps
/// nothing of it afterwards (memory is bounded by what is alive).
/// Associations arrive in the order they finish; ids are unique and
/// increasing in order of creation within a file.
pub trait ReportSink {
    /// The time of the file's first frame (the origin of relative times),
    /// called once before any association when the file has frames.
    fn first_frame(&mut self, _time: Timestamp) {}
    /// Every per-chunk fact as it happens (DATA, SACK, acknowledged TSN),
    /// for sinks that draw traces; most sinks ignore them.
    fn observe(&mut self, _observation: &crate::events::Observation) {}
    /// Every event as it happens, before the association is finished (for
    /// live output); most sinks wait for [`ReportSink::association`].
    fn event(&mut self, _event: &Event) {}
    /// A data path switch, as soon as its first new DATA is seen: the
    /// components known by then (later ones resolve when the association
    /// is finished and come with [`ReportSink::association`]).
    fn switch(&mut self, _handover: &Handover) {}
    /// A settled part of a long association's events and handovers, before
    /// the association itself ([`AssociationPart`]).
    fn part(&mut self, part: AssociationPart);
    /// A finished association with its handovers and events; the last thing
    /// received about it.
    fn association(&mut self, report: AssociationReport);
}

/// Everything learned from one capture file, collected in memory (for
/// tests and small inputs; batch work streams through [`ReportSink`]).
#[derive(Debug, Serialize)]
pub struct FileAnalysis {
    /// How the file was read and its frames classified (reachable directly
    /// through `Deref`: `analysis.accounting`).
    pub file: FileReport,
    /// In association id order.
    pub associations: Vec<Association>,
    /// Every data path switch with its latency components.
    pub handovers: Vec<Handover>,
    /// In frame order.
    pub events: Vec<Event>,
}

impl std::ops::Deref for FileAnalysis {
    type Target = FileReport;
    fn deref(&self) -> &FileReport {
        &self.file
    }
}

impl FileAnalysis {
    /// The file-level part (counts instead of the lists).
    pub fn file_report(&self) -> FileReport {
        self.file.clone()
    }
}

/// Whether SCTP checksums (CRC32c) were verified, and their failures.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ChecksumReport {
    /// Checksums were verified (`verify_checksum`); when false the other
    /// fields are zero / None.
    pub verified: bool,
    /// Complete SCTP packets whose checksum did not match.
    pub failures: u64,
    /// The first of them; None when none failed.
    pub first_failure_frame: Option<u64>,
}

struct Pipeline {
    options: AnalysisOptions,
    /// The capture filter's state for this file.
    filter: Option<Box<dyn FrameMatcher>>,
    /// Link types the filter could not be applied to (reported once).
    filter_errors: Vec<u32>,
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
    /// Reassembly drops already charged to a frame, and the frame whose
    /// decoding the next drops belong to.
    fragment_drops_noted: u64,
    last_decoded_frame: u64,
    /// The tracker's outstanding requests of an association whose part is
    /// taken (reused).
    open_requests: Vec<u64>,
}

impl Pipeline {
    /// Charges reassembly drops (made while decoding the last frame) to it.
    fn note_fragment_drops(&mut self) {
        let dropped = self.decoder.fragments_dropped();
        if dropped > self.fragment_drops_noted {
            self.tracker
                .counters
                .limits
                .fragments
                .record(self.last_decoded_frame, dropped - self.fragment_drops_noted);
            self.fragment_drops_noted = dropped;
        }
    }

    fn problem(&mut self, frame: u64, reason: impl Into<String>) {
        if self.problems.len() < MAX_LISTED_PROBLEMS {
            self.problems.push(Problem {
                frame,
                reason: reason.into(),
            });
        }
    }

    fn frame<D: Downstream>(&mut self, frame: &capture::Frame<'_>, sink: &mut D) -> FrameOutcome {
        let outcome = self.apply(frame, sink);
        if let Some(id) = sink.part_due() {
            self.tracker.open_requests(id, &mut self.open_requests);
            sink.part(id, &self.open_requests);
        }
        outcome
    }

    fn apply<D: Downstream>(&mut self, frame: &capture::Frame<'_>, sink: &mut D) -> FrameOutcome {
        let time = frame.timestamp;
        if self.first_time.is_none() {
            self.first_time = Some(time);
            sink.first_frame(time);
        }
        // Associations finished by now leave before this frame is applied:
        // a packet after the linger or idle time starts a new association.
        while let Some(a) = self.tracker.retire_due(time) {
            let before_frame = frame.number;
            let why = if a.end.is_some() {
                Retired::Ended { before_frame }
            } else {
                Retired::Idle { before_frame }
            };
            sink.retired(a, why);
        }
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
        if frame.link_type != crate::capture::link_type::NON_PACKET_RECORD {
            if let Some(m) = self.filter.as_mut() {
                match m.keep(frame.link_type, frame.data, frame.original_len) {
                    Ok(true) => {}
                    Ok(false) => {
                        self.accounting.filtered_out += 1;
                        return FrameOutcome::FilteredOut;
                    }
                    Err(why) => {
                        // Said once per link type; its frames are not kept.
                        if !self.filter_errors.contains(&frame.link_type) {
                            self.filter_errors.push(frame.link_type);
                            self.problem(frame.number, why);
                        }
                        self.accounting.filtered_out += 1;
                        return FrameOutcome::FilteredOut;
                    }
                }
            }
        }

        self.note_fragment_drops();
        self.last_decoded_frame = frame.number;
        match self.decoder.decode(frame) {
            Decoded::Sctp(dg) => {
                if self.dedup.is_duplicate(&dg, time) {
                    self.accounting.capture_duplicates += 1;
                    return FrameOutcome::CaptureDuplicate;
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
                        FrameOutcome::SctpTruncated
                    }
                    PacketVerdict::Analysed => {
                        self.accounting.sctp += 1;
                        FrameOutcome::Sctp
                    }
                    PacketVerdict::Malformed(why) => {
                        self.accounting.sctp_malformed += 1;
                        self.problem(frame.number, why);
                        FrameOutcome::SctpMalformed(why)
                    }
                    PacketVerdict::Untracked => {
                        self.accounting.sctp_untracked += 1;
                        FrameOutcome::SctpUntracked
                    }
                }
            }
            Decoded::IcmpAboutSctp(q) => {
                self.accounting.icmp_about_sctp += 1;
                self.tracker.icmp(frame.number, time, &q, sink);
                FrameOutcome::IcmpAboutSctp
            }
            Decoded::Fragment => {
                self.accounting.ip_fragments += 1;
                FrameOutcome::IpFragment
            }
            Decoded::NotSctp => {
                self.accounting.not_sctp += 1;
                FrameOutcome::NotSctp
            }
            Decoded::Truncated(why) => {
                self.accounting.truncated += 1;
                self.problem(frame.number, format!("truncated: {why}"));
                FrameOutcome::Truncated(why)
            }
            Decoded::Malformed(why) => {
                self.accounting.malformed += 1;
                self.problem(frame.number, why);
                FrameOutcome::Malformed(why)
            }
            Decoded::NonPacketRecord => {
                self.accounting.non_packet_records += 1;
                FrameOutcome::NonPacketRecord
            }
            Decoded::UnsupportedLinkType(t) => {
                self.accounting.unsupported_link_type += 1;
                self.problem(frame.number, format!("unsupported link type {t}"));
                FrameOutcome::UnsupportedLinkType(t)
            }
        }
    }
}

impl Pipeline {
    fn new(options: &AnalysisOptions) -> Self {
        Pipeline {
            filter: options.frame_filter.as_ref().map(|f| f.matcher()),
            filter_errors: Vec::new(),
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
            fragment_drops_noted: 0,
            last_decoded_frame: 0,
            open_requests: Vec::new(),
        }
    }
}

impl Pipeline {
    /// End of file: every association still alive is finished, in id order.
    fn finish<D: Downstream>(&mut self, sink: &mut D) {
        for a in self.tracker.retire_all() {
            sink.retired(a, Retired::EndOfFile);
        }
    }

    fn report(
        self,
        path: &Path,
        reader: &capture::CaptureReader,
        outcome: capture::ReadOutcome,
        events_dropped: Hit,
    ) -> FileReport {
        self.report_of(
            path,
            (reader.format(), reader.is_compressed()),
            outcome.frames,
            outcome.warning,
            events_dropped,
        )
    }

    fn report_of(
        mut self,
        path: &Path,
        (format, compressed): (CaptureFormat, bool),
        frames: u64,
        warning: Option<String>,
        events_dropped: Hit,
    ) -> FileReport {
        self.note_fragment_drops();
        self.tracker.counters.limits.events = events_dropped;
        let limits = self
            .tracker
            .counters
            .limits
            .warnings(
                &self.options.track.limits,
                self.options.decode.max_reassembly,
            )
            .collect();
        FileReport {
            path: path.to_owned(),
            format,
            compressed,
            frames,
            first_time: self.first_time,
            last_time: self.previous_time,
            accounting: self.accounting,
            link_types: self.link_types,
            problems: self.problems,
            checksum: self.checksum,
            time_order: self.time_order,
            warning,
            counters: self.tracker.counters,
            capture_point: self.options.handover.capture_point,
            associations: self.tracker.created(),
            handovers: 0,
            limits,
        }
    }
}

/// Where the pipeline's events and finished associations go.
trait Downstream: EventSink {
    fn first_frame(&mut self, _time: Timestamp) {}
    /// An association whose settled results should be handed on now.
    fn part_due(&mut self) -> Option<AssocId> {
        None
    }
    /// Hands on the settled part; `open`: the frames of its outstanding
    /// requests.
    fn part(&mut self, _id: AssocId, _open: &[u64]) {}
    fn retired(&mut self, association: Association, why: Retired);
}

/// A caller's event sink; finished associations go to the list when there
/// is one, else are dropped.
struct EventsOnly<'a>(&'a mut dyn EventSink, Option<&'a mut Vec<Association>>);

impl EventSink for EventsOnly<'_> {
    fn emit(&mut self, event: Event) {
        self.0.emit(event);
    }
    fn observe(&mut self, observation: &crate::events::Observation) {
        self.0.observe(observation);
    }
}

impl Downstream for EventsOnly<'_> {
    fn retired(&mut self, association: Association, _: Retired) {
        if let Some(list) = self.1.as_mut() {
            list.push(association);
        }
    }
}

/// The handover engine, handing each finished association to a sink.
struct Reports<'a> {
    state: &'a mut ReportState,
    sink: &'a mut dyn ReportSink,
}

/// The handover engine and what went through it.
struct ReportState {
    engine: HandoverEngine,
    associations: u64,
    handovers: u64,
}

impl ReportState {
    fn new(options: &AnalysisOptions) -> Self {
        ReportState {
            engine: HandoverEngine::new(HandoverConfig {
                max_events: options.track.limits.events,
                pf_retrans: options.track.pf_retrans,
                ..options.handover.clone()
            }),
            associations: 0,
            handovers: 0,
        }
    }
}

impl EventSink for Reports<'_> {
    fn emit(&mut self, event: Event) {
        self.sink.event(&event);
        let switch_frame = matches!(
            event.kind,
            crate::events::EventKind::DataPathChange {
                from_path: Some(_),
                ..
            }
        )
        .then_some(event.frame);
        self.state.engine.emit(event);
        if let Some(frame) = switch_frame {
            if let Some(h) = self
                .state
                .engine
                .last_handover()
                .filter(|h| h.switch_frame == frame)
            {
                self.sink.switch(h);
            }
        }
    }
    fn observe(&mut self, observation: &crate::events::Observation) {
        self.state.engine.observe(observation);
        self.sink.observe(observation);
    }
}

impl Downstream for Reports<'_> {
    fn first_frame(&mut self, time: Timestamp) {
        self.sink.first_frame(time);
    }
    fn part_due(&mut self) -> Option<AssocId> {
        self.state.engine.part_due()
    }
    fn part(&mut self, id: AssocId, open: &[u64]) {
        let (events, handovers) = self.state.engine.take_part(id, open);
        if events.is_empty() && handovers.is_empty() {
            return;
        }
        self.state.handovers += handovers.len() as u64;
        self.sink.part(AssociationPart {
            association: id,
            handovers,
            events,
        });
    }
    fn retired(&mut self, association: Association, retired: Retired) {
        let (events, handovers) = self.state.engine.retire(association.id);
        self.state.associations += 1;
        self.state.handovers += handovers.len() as u64;
        self.sink.association(AssociationReport {
            association,
            handovers,
            events,
            retired,
        });
    }
}

/// The pipeline of [`analyze_stream`] fed one frame at a time, across as
/// many files or live captures as the caller reads (`watch`): events and
/// switches go to the sink as they happen, each association with its
/// handovers once it is finished. Memory is bounded by what is alive.
pub struct StreamAnalyzer {
    pipeline: Pipeline,
    state: ReportState,
}

impl StreamAnalyzer {
    /// A pipeline with no state yet.
    pub fn new(options: &AnalysisOptions) -> Self {
        StreamAnalyzer {
            pipeline: Pipeline::new(options),
            state: ReportState::new(options),
        }
    }

    /// Analyses the next frame (frames in capture order; numbers are the
    /// caller's).
    pub fn frame(&mut self, frame: &capture::Frame<'_>, sink: &mut dyn ReportSink) -> FrameOutcome {
        let mut reports = Reports {
            state: &mut self.state,
            sink,
        };
        self.pipeline.frame(frame, &mut reports)
    }

    /// The end: every association still alive is finished, in id order.
    pub fn finish(&mut self, sink: &mut dyn ReportSink) {
        let mut reports = Reports {
            state: &mut self.state,
            sink,
        };
        self.pipeline.finish(&mut reports);
    }

    /// How the frames analysed so far were classified.
    pub fn accounting(&self) -> &Accounting {
        &self.pipeline.accounting
    }

    /// Associations alive in the tracker.
    pub fn alive(&self) -> usize {
        self.pipeline.tracker.alive()
    }

    /// Associations finished and data path switches seen so far.
    pub fn totals(&self) -> (u64, u64) {
        (self.state.associations, self.state.handovers)
    }

    /// What [`analyze_reader`] reports for a file, for frames the caller
    /// read itself (`watch --out`: its files table row); call after
    /// [`StreamAnalyzer::finish`]. `format` is how the frames were held.
    pub fn into_report(
        self,
        path: &Path,
        format: (CaptureFormat, bool),
        frames: u64,
        warning: Option<String>,
    ) -> FileReport {
        let StreamAnalyzer { pipeline, state } = self;
        let events_dropped = state.engine.events_dropped();
        let mut report = pipeline.report_of(path, format, frames, warning, events_dropped);
        report.associations = state.associations;
        report.handovers = state.handovers;
        report
    }
}

/// The pipeline of [`analyze_file_with`] for a caller that reads the frames
/// itself and hands them over one at a time, in capture order (the
/// Wireshark C plugin, when Wireshark reads a pipe or a file it was not
/// given on its command line). Frame numbers are the caller's. Finished
/// associations leave the tracker as in a file analysis.
pub struct FrameAnalyzer {
    pipeline: Pipeline,
}

impl FrameAnalyzer {
    /// A pipeline with no state yet.
    pub fn new(options: &AnalysisOptions) -> Self {
        FrameAnalyzer {
            pipeline: Pipeline::new(options),
        }
    }

    /// Analyses the next frame; its events and observations go to `sink`.
    pub fn frame(&mut self, frame: &capture::Frame<'_>, sink: &mut dyn EventSink) -> FrameOutcome {
        self.pipeline.frame(frame, &mut EventsOnly(sink, None))
    }

    /// [`FrameAnalyzer::frame`], adding to `retired` the associations that
    /// left the tracker before the frame (ended or idle), as they were at
    /// their end: what a caller keeps per association can go with them.
    pub fn frame_retiring(
        &mut self,
        frame: &capture::Frame<'_>,
        sink: &mut dyn EventSink,
        retired: &mut Vec<Association>,
    ) -> FrameOutcome {
        self.pipeline
            .frame(frame, &mut EventsOnly(sink, Some(retired)))
    }

    /// The end of the capture: every association still in the tracker
    /// leaves it, in id order, as at the end of a file analysis.
    pub fn finish(&mut self) -> Vec<Association> {
        self.pipeline.tracker.retire_all().collect()
    }

    /// How the frames so far were classified.
    pub fn accounting(&self) -> &Accounting {
        &self.pipeline.accounting
    }

    /// An association still in the tracker (a finished one leaves it after
    /// `end_linger` / `idle_timeout`), e.g. for its ports.
    pub fn association(&self, id: AssocId) -> Option<&crate::track::assoc::Association> {
        self.pipeline.tracker.association(id)
    }
}

/// Runs the pipeline with a caller's event sink (e.g. the C plugin's, which
/// wraps its own handover engine); no association reports. Finished
/// associations still leave the tracker (late packets after
/// `end_linger` / `idle_timeout` start new ones).
pub fn analyze_file_with(
    path: &Path,
    options: &AnalysisOptions,
    sink: &mut dyn EventSink,
) -> Result<FileReport, CaptureError> {
    let mut reader = capture::open(path)?;
    let mut pipeline = Pipeline::new(options);
    let mut events = EventsOnly(sink, None);
    let outcome = reader.for_each_frame(|frame| {
        pipeline.frame(&frame, &mut events);
    })?;
    pipeline.finish(&mut events);
    Ok(pipeline.report(path, &reader, outcome, Hit::default()))
}

/// Analyses one capture file in a single streaming pass: each association
/// goes to `sink` as soon as it is finished (see [`Retired`]), with its
/// events and handovers; memory is bounded by the associations alive.
pub fn analyze_stream(
    path: &Path,
    options: &AnalysisOptions,
    sink: &mut dyn ReportSink,
) -> Result<FileReport, CaptureError> {
    analyze_reader(capture::open(path)?, options, sink)
}

/// [`analyze_stream`] over a capture already opened, e.g. from memory or a
/// pipe with [`capture::from_reader`]; the report names the reader's path.
pub fn analyze_reader(
    mut reader: capture::CaptureReader,
    options: &AnalysisOptions,
    sink: &mut dyn ReportSink,
) -> Result<FileReport, CaptureError> {
    let mut stream = StreamAnalyzer::new(options);
    let outcome = reader.for_each_frame(|frame| {
        stream.frame(&frame, sink);
    })?;
    stream.finish(sink);
    let path = reader.path().to_owned();
    Ok(stream.into_report(
        &path,
        (reader.format(), reader.is_compressed()),
        outcome.frames,
        outcome.warning,
    ))
}

/// Collects every finished association (for [`analyze_file`]).
#[derive(Default)]
struct Collect {
    associations: Vec<Association>,
    handovers: Vec<Handover>,
    events: Vec<Event>,
}

impl ReportSink for Collect {
    fn part(&mut self, part: AssociationPart) {
        self.handovers.extend(part.handovers);
        self.events.extend(part.events);
    }
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
    // Stable sorts: within a frame and association, events keep their
    // emission order.
    all.events.sort_by_key(|e| (e.frame, e.association));
    all.handovers
        .sort_by_key(|h| (h.switch_frame, h.association));
    Ok(FileAnalysis {
        file,
        associations: all.associations,
        handovers: all.handovers,
        events: all.events,
    })
}
