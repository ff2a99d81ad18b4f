//! One capture point's SCTP packets, reduced to what pairing needs: when
//! and where each was seen, its identity and a short summary of its chunks.
//! Each capture is read on its own thread through the analyzer's capture
//! and decode layers and handed over a bounded channel, so that two
//! captures can be merged in time order while neither is held in memory.

use rustc_hash::FxHasher;
use sctp_handover::analysis::{AnalysisOptions, FrameAnalyzer};
use sctp_handover::capture::{self, CaptureError, ReadOutcome};
use sctp_handover::decode::{DecodeOptions, Decoded, Decoder};
use sctp_handover::events::{Event, EventSink, RetransmissionReason};
use sctp_handover::time::Timestamp;
use sctp_handover::track::dedup::DuplicateDetector;
use sctp_handover::wire::sctp::Packet as SctpPacket;
use sctp_handover::wire::sctp_chunk::{
    chunk_type, AsconfAckChunk, AsconfChunk, Chunk, DataChunk, HeartbeatChunk, IDataChunk,
    InitChunk, SackChunk, FLAG_T,
};
use sctp_handover::wire::sctp_param::{param_type, AsconfOp, AsconfRequestRepr};
use std::hash::Hasher;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

/// Observations in flight between a reader thread and the merge: enough to
/// keep both threads busy, small enough not to matter.
const CHANNEL_DEPTH: usize = 4096;

/// What makes two observations the same SCTP packet: the IP addresses, the
/// SCTP common header (ports, verification tag and the CRC32c that covers
/// every byte of the packet, RFC 9260 §3.1, so a snaplen that cut one copy
/// short does not matter) and a digest of the chunks' identities (TSN,
/// stream and SSN, SACK cumulative TSN and gap blocks, ASCONF serial,
/// HEARTBEAT info, INIT tags). A retransmission built of the same chunks
/// has the same identity: pairing tells the copies apart by time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub verification_tag: u32,
    pub checksum: u32,
    pub chunk_digest: u64,
}

/// The chunks of one packet, as much as the reports need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkSummary {
    /// Chunk types in packet order (RFC 9260 §3.2 codes).
    pub types: Vec<u8>,
    /// TSNs of the DATA and I-DATA chunks.
    pub data_tsns: Vec<u32>,
    /// Cumulative TSN ack of a SACK / NR-SACK.
    pub cumulative_tsn_ack: Option<u32>,
    /// Serial of an ASCONF (RFC 5061 §4.1.1).
    pub asconf_serial: Option<u32>,
    /// Initiate tag of an INIT or INIT ACK (RFC 9260 §3.3.2).
    pub initiate_tag: Option<u32>,
    /// Addresses the sender says are its own: INIT / INIT ACK address
    /// parameters and ASCONF ADD-IP requests (RFC 5061 §4.2.1).
    pub announced_addresses: Vec<IpAddr>,
    /// The verification tag is the sender's own (INIT's zero tag excepted):
    /// the T bit of ABORT / SHUTDOWN COMPLETE (RFC 9260 §3.3.7, §3.3.13).
    pub tag_reflected: bool,
}

impl ChunkSummary {
    /// Short text such as `SACK+DATA(21)` for reports.
    pub fn label(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut tsns = self.data_tsns.iter();
        for &t in &self.types {
            let name = chunk_type::name(t).to_ascii_uppercase();
            let part = match t {
                chunk_type::DATA | chunk_type::I_DATA => match tsns.next() {
                    Some(tsn) => format!("{name}({tsn})"),
                    None => name,
                },
                chunk_type::ASCONF => match self.asconf_serial {
                    Some(s) => format!("{name}(serial {s})"),
                    None => name,
                },
                _ => name,
            };
            parts.push(part);
        }
        parts.join("+")
    }

    pub fn has(&self, chunk: u8) -> bool {
        self.types.contains(&chunk)
    }
}

/// One SCTP packet seen at one capture point.
#[derive(Debug, Clone)]
pub struct Observation {
    /// 0 or 1: which of the two points saw it.
    pub point: usize,
    /// 1-based frame number in that point's capture.
    pub frame: u64,
    /// Capture time on that point's own clock.
    pub time: Timestamp,
    pub key: PacketKey,
    pub chunks: ChunkSummary,
    /// For each DATA chunk the analyzer's tracker classed a retransmission
    /// in this point's capture: its TSN and why the sender sent it again.
    pub retransmission_reasons: Vec<(u32, RetransmissionReason)>,
}

impl Observation {
    /// Why this packet's DATA chunk `tsn` was sent again, as the analysis
    /// of this point's capture infers it; None when it did not class the
    /// chunk a retransmission.
    pub fn retransmission_reason(&self, tsn: u32) -> Option<RetransmissionReason> {
        self.retransmission_reasons
            .iter()
            .find(|(t, _)| *t == tsn)
            .map(|(_, reason)| *reason)
    }
}

/// Keeps the reasons of the retransmissions the tracker finds in the frame
/// it is given; every other event is dropped as it comes.
#[derive(Default)]
struct RetransmissionReasons(Vec<(u32, RetransmissionReason)>);

impl EventSink for RetransmissionReasons {
    fn emit(&mut self, event: Event) {
        if let (sctp_handover::events::EventKind::Retransmission { tsn, .. }, Some(reason)) =
            (&event.kind, event.kind.retransmission_reason())
        {
            self.0.push((*tsn, reason));
        }
    }
}

/// Reduces an SCTP datagram to an observation; `None` when the common
/// header itself is missing.
pub fn observe(
    point: usize,
    frame: u64,
    time: Timestamp,
    src: IpAddr,
    dst: IpAddr,
    bytes: &[u8],
) -> Option<Observation> {
    let packet = SctpPacket::new_checked(bytes).ok()?;
    let mut digest = FxHasher::default();
    let mut chunks = ChunkSummary::default();
    // A chunk that does not parse still counts by its type and bytes: the
    // checksum already identifies the packet, the digest only separates
    // packets whose checksums collide.
    for item in packet.chunks() {
        let Ok((_, chunk)) = item else {
            digest.write_u8(0xff);
            break;
        };
        let t = chunk.chunk_type();
        chunks.types.push(t);
        digest.write_u8(t);
        summarise_chunk(&chunk, &mut chunks, &mut digest);
    }
    Some(Observation {
        point,
        frame,
        time,
        key: PacketKey {
            src,
            dst,
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            verification_tag: packet.verification_tag(),
            checksum: packet.checksum(),
            chunk_digest: digest.finish(),
        },
        chunks,
        retransmission_reasons: Vec::new(),
    })
}

fn summarise_chunk(chunk: &Chunk<&[u8]>, out: &mut ChunkSummary, digest: &mut FxHasher) {
    match chunk.chunk_type() {
        chunk_type::DATA => {
            if let Ok(d) = DataChunk::new_checked(chunk) {
                out.data_tsns.push(d.tsn());
                digest.write_u32(d.tsn());
                digest.write_u16(d.stream_id());
                digest.write_u16(d.stream_seq());
            }
        }
        chunk_type::I_DATA => {
            if let Ok(d) = IDataChunk::new_checked(chunk) {
                out.data_tsns.push(d.tsn());
                digest.write_u32(d.tsn());
                digest.write_u16(d.stream_id());
                digest.write_u32(d.message_id());
            }
        }
        chunk_type::SACK | chunk_type::NR_SACK => {
            if let Ok(s) = SackChunk::new_checked(chunk) {
                out.cumulative_tsn_ack = Some(s.cumulative_tsn_ack());
                digest.write_u32(s.cumulative_tsn_ack());
                digest.write_u32(s.a_rwnd());
                for (start, end) in s.gap_blocks() {
                    digest.write_u16(start);
                    digest.write_u16(end);
                }
                for dup in s.dup_tsns() {
                    digest.write_u32(dup);
                }
            }
        }
        chunk_type::INIT | chunk_type::INIT_ACK => {
            if let Ok(init) = InitChunk::new_checked(chunk) {
                out.initiate_tag = Some(init.initiate_tag());
                digest.write_u32(init.initiate_tag());
                digest.write_u32(init.initial_tsn());
                for p in init.params().flatten() {
                    if matches!(
                        p.param_type(),
                        param_type::IPV4_ADDRESS | param_type::IPV6_ADDRESS
                    ) {
                        if let Ok(a) = p.address() {
                            out.announced_addresses.push(a);
                        }
                    }
                }
            }
        }
        chunk_type::HEARTBEAT | chunk_type::HEARTBEAT_ACK => {
            if let Ok(info) = HeartbeatChunk::new_checked(chunk).and_then(|h| h.info()) {
                digest.write(info);
            }
        }
        chunk_type::ASCONF => {
            if let Ok(a) = AsconfChunk::new_checked(chunk) {
                out.asconf_serial = Some(a.serial());
                digest.write_u32(a.serial());
                for p in a.requests().flatten() {
                    if let Ok(Some(r)) = AsconfRequestRepr::parse(&p) {
                        if r.op == AsconfOp::AddIp && !r.is_wildcard() {
                            out.announced_addresses.push(r.address);
                        }
                    }
                }
            }
        }
        chunk_type::ASCONF_ACK => {
            if let Ok(a) = AsconfAckChunk::new_checked(chunk) {
                digest.write_u32(a.serial());
            }
        }
        chunk_type::ABORT | chunk_type::SHUTDOWN_COMPLETE => {
            out.tag_reflected |= chunk.flags() & FLAG_T != 0;
            digest.write(chunk.value());
        }
        _ => digest.write(chunk.value()),
    }
}

/// A capture point: a name (`mn`, `cn`, `router`) and its capture.
#[derive(Debug, Clone)]
pub struct PointInput {
    /// The point's name, as reports and tables label it.
    pub name: String,
    /// Its capture file (pcap or pcapng, possibly gzip-compressed).
    pub path: PathBuf,
}

/// What a reader thread sends.
pub enum Message {
    Packet(Observation),
    /// The capture ended (or could not be read).
    End(Result<ReadOutcome, CaptureError>),
}

/// Reads one capture on its own thread; observations arrive in capture
/// order on the returned channel, then one `End`. With `with_reasons`, each
/// carries its retransmissions' reasons ([`read_capture`]).
pub fn spawn_reader(
    point: usize,
    path: &Path,
    with_reasons: bool,
) -> (Receiver<Message>, JoinHandle<()>) {
    let (tx, rx) = sync_channel(CHANNEL_DEPTH);
    let path = path.to_owned();
    let handle = std::thread::spawn(move || {
        let result = read_capture(point, &path, with_reasons, |obs| {
            tx.send(Message::Packet(obs)).is_ok()
        });
        // The merge may have stopped listening (an error elsewhere): then
        // nobody needs the end either.
        let _ = tx.send(Message::End(result));
    });
    (rx, handle)
}

/// Streams a capture's SCTP packets as observations. `deliver` returns
/// false when nobody listens any more; the rest of the file is then
/// skipped (the capture reader has no early exit, so it still reads on).
/// `with_reasons`: also run the analyzer over the frames for the reasons of
/// the retransmissions (the pass that reports them needs them, the clock's
/// calibration does not).
pub fn read_capture(
    point: usize,
    path: &Path,
    with_reasons: bool,
    mut deliver: impl FnMut(Observation) -> bool,
) -> Result<ReadOutcome, CaptureError> {
    let mut reader = capture::open(path)?;
    let mut decoder = Decoder::new(DecodeOptions::default());
    // `tcpdump -i any` can see one packet on two interfaces (a bridge and
    // its port): the analyzer's own rule drops the second copy.
    let analysis_options = AnalysisOptions::default();
    let mut duplicates = DuplicateDetector::new(analysis_options.duplicate_window);
    // The analyzer's own pass over the same frames says why each
    // retransmission was sent (its tracker's inference at this point);
    // like the pairing, it holds the associations alive, not the packets.
    let mut analyzer = with_reasons.then(|| FrameAnalyzer::new(&analysis_options));
    let mut reasons = RetransmissionReasons::default();
    let mut listening = true;
    reader.for_each_frame(|frame| {
        if !listening {
            return;
        }
        reasons.0.clear();
        if let Some(analyzer) = analyzer.as_mut() {
            analyzer.frame(&frame, &mut reasons);
        }
        if let Decoded::Sctp(dg) = decoder.decode(&frame) {
            if duplicates.is_duplicate(&dg, frame.timestamp) {
                return;
            }
            if let Some(obs) = observe(
                point,
                frame.number,
                frame.timestamp,
                dg.src,
                dg.dst,
                dg.bytes,
            ) {
                let mut obs = obs;
                obs.retransmission_reasons = std::mem::take(&mut reasons.0);
                listening = deliver(obs);
            }
        }
    })
}
