//! The bodies of the fuzz targets, one function per target. Each must
//! return normally for every input: a panic (including an arithmetic
//! overflow, kept checked in the fuzz build) or a failed check here is what
//! AFL++ records as a crash.

#![warn(missing_docs)]

use sctp_handover::analysis::{
    analyze_reader, AnalysisOptions, AssociationPart, AssociationReport, ReportSink,
};
use sctp_handover::capture::{self, link_type, Frame};
use sctp_handover::decode::{DecodeOptions, Decoded, Decoder};
use sctp_handover::events::Observation;
use sctp_handover::output::summary::Summary;
use sctp_handover::time::Timestamp;
use sctp_handover::wire::sctp::Packet;
use sctp_handover::wire::sctp_chunk::{
    chunk_type, error_causes, AsconfAckChunk, AsconfChunk, Chunk, DataChunk, ForwardTsnChunk,
    HeartbeatChunk, IDataChunk, InitChunk, SackChunk, ShutdownChunk,
};
use sctp_handover::wire::sctp_param::{AsconfRequestRepr, AsconfResponseRepr, Params};
use std::hint::black_box;
use std::io::Cursor;
use std::path::Path;

const NAME: &str = "fuzz-input";

/// `capture`: the bytes as a capture file (pcap, pcapng, either gzip-
/// compressed), every frame read.
pub fn capture(data: &[u8]) {
    let Ok(mut reader) = capture::from_reader(Path::new(NAME), Cursor::new(data.to_vec())) else {
        return;
    };
    let mut frames = 0u64;
    let mut last = 0u64;
    let outcome = reader.for_each_frame(|frame| {
        frames += 1;
        assert_eq!(frame.number, last + 1, "frames are numbered 1, 2, ...");
        last = frame.number;
        black_box((frame.is_cut(), frame.timestamp, frame.data.len()));
    });
    if let Ok(outcome) = outcome {
        assert_eq!(outcome.frames, frames, "every frame counted is delivered");
    }
    black_box((reader.format(), reader.is_compressed()));
}

/// The link types `decode` picks from with its first byte.
const LINK_TYPES: [u32; 11] = [
    link_type::ETHERNET,
    link_type::LINUX_SLL,
    link_type::LINUX_SLL2,
    link_type::RAW,
    link_type::RAW_12,
    link_type::IPV4,
    link_type::IPV6,
    link_type::NULL,
    link_type::LOOP,
    link_type::NON_PACKET_RECORD,
    // Not one the decoder handles.
    147,
];

/// `decode`: one frame through the link, IP and SCTP decoders. The first
/// byte picks the link type (low nibble, modulo the list above) and whether
/// the frame was cut by the snaplen (bit 7); the rest is the frame. An SCTP
/// packet found is walked chunk by chunk through every typed view.
pub fn decode(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let link = LINK_TYPES[usize::from(selector & 0x0f) % LINK_TYPES.len()];
    let cut = selector & 0x80 != 0;
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    let frame = Frame {
        number: 1,
        timestamp: Timestamp::default(),
        link_type: link,
        interface: 0,
        original_len: if cut { len.saturating_add(64) } else { len },
        data: bytes,
    };
    let mut decoder = Decoder::new(DecodeOptions::default());
    match decoder.decode(&frame) {
        Decoded::Sctp(dg) => {
            assert!(
                dg.bytes.len() <= bytes.len() || dg.reassembled,
                "an SCTP packet inside a frame is no longer than the frame"
            );
            sctp(dg.bytes);
        }
        other => {
            black_box(other);
        }
    }
}

fn sctp(bytes: &[u8]) {
    let Ok(packet) = Packet::new_checked(bytes) else {
        return;
    };
    black_box((
        packet.src_port(),
        packet.dst_port(),
        packet.verification_tag(),
        packet.verify_checksum(),
    ));
    for chunk in packet.chunks() {
        let Ok((offset, chunk)) = chunk else {
            continue;
        };
        assert!(
            offset + chunk.length() <= bytes.len(),
            "chunk inside packet"
        );
        walk_chunk(&chunk);
    }
}

fn walk_chunk(chunk: &Chunk<&[u8]>) {
    black_box((
        chunk.chunk_type(),
        chunk.flags(),
        chunk.value(),
        chunk.bytes(),
    ));
    match chunk.chunk_type() {
        chunk_type::DATA => {
            if let Ok(d) = DataChunk::new_checked(chunk) {
                black_box((
                    d.tsn(),
                    d.stream_id(),
                    d.stream_seq(),
                    d.ppid(),
                    d.user_data(),
                ));
            }
        }
        chunk_type::I_DATA => {
            if let Ok(d) = IDataChunk::new_checked(chunk) {
                black_box((d.tsn(), d.stream_id(), d.message_id(), d.user_data()));
            }
        }
        chunk_type::SACK | chunk_type::NR_SACK => {
            if let Ok(s) = SackChunk::new_checked(chunk) {
                black_box((s.cumulative_tsn_ack(), s.a_rwnd()));
                black_box(s.gap_blocks().count());
                black_box(s.dup_tsns().fold(0u32, |a, t| a ^ t));
            }
        }
        chunk_type::INIT | chunk_type::INIT_ACK => {
            if let Ok(i) = InitChunk::new_checked(chunk) {
                black_box((i.initiate_tag(), i.a_rwnd(), i.initial_tsn()));
                black_box((i.outbound_streams(), i.inbound_streams()));
                params(i.params());
            }
        }
        chunk_type::HEARTBEAT | chunk_type::HEARTBEAT_ACK => {
            if let Ok(h) = HeartbeatChunk::new_checked(chunk) {
                let _ = black_box(h.info());
            }
        }
        chunk_type::ASCONF => {
            if let Ok(a) = AsconfChunk::new_checked(chunk) {
                black_box(a.serial());
                if let Ok(p) = a.lookup_address() {
                    let _ = black_box(p.address());
                }
                for p in a.requests().flatten() {
                    let _ = black_box(AsconfRequestRepr::parse(&p));
                    params(p.nested());
                }
            }
        }
        chunk_type::ASCONF_ACK => {
            if let Ok(a) = AsconfAckChunk::new_checked(chunk) {
                black_box(a.serial());
                for p in a.responses().flatten() {
                    let _ = black_box(AsconfResponseRepr::parse(&p));
                    params(p.nested());
                }
            }
        }
        chunk_type::FORWARD_TSN | chunk_type::I_FORWARD_TSN => {
            if let Ok(f) = ForwardTsnChunk::new_checked(chunk) {
                black_box(f.new_cumulative_tsn());
            }
        }
        chunk_type::SHUTDOWN => {
            if let Ok(s) = ShutdownChunk::new_checked(chunk) {
                black_box(s.cumulative_tsn_ack());
            }
        }
        chunk_type::ABORT | chunk_type::ERROR => params(error_causes(chunk)),
        _ => {}
    }
}

fn params(params: Params<'_>) {
    for p in params.flatten() {
        black_box((p.param_type(), p.value()));
        let _ = black_box(p.address());
        let _ = black_box(p.correlation_id());
    }
}

/// `pipeline`: the bytes as a capture file through the whole analysis
/// (decoder, duplicate check, tracker, handover engine); every finished
/// association, its handovers and events serialised as `--format json`
/// writes them and fed to the terminal summary, and the file's report
/// serialised and summarised. Every frame must be accounted for exactly once.
pub fn pipeline(data: &[u8]) {
    let path = Path::new(NAME);
    let Ok(reader) = capture::from_reader(path, Cursor::new(data.to_vec())) else {
        return;
    };
    let options = AnalysisOptions {
        verify_checksum: true,
        ..AnalysisOptions::default()
    };
    let mut sink = Outputs {
        summary: Summary::new(true),
    };
    let Ok(report) = analyze_reader(reader, &options, &mut sink) else {
        return;
    };
    assert_eq!(
        report.accounting.total(),
        report.frames,
        "every frame in exactly one accounting category"
    );
    json(&report);
    let mut text = Vec::new();
    if let Err(e) = sink.summary.finish(&report, &mut text) {
        panic!("the summary into memory cannot fail: {e}");
    }
}

/// Serialises as `--format json` does (the records' bodies).
fn json(value: &impl serde::Serialize) {
    if let Err(e) = serde_json::to_writer(std::io::sink(), value) {
        panic!("JSON serialisation failed: {e}");
    }
}

/// Both outputs the command line offers: every association serialised as
/// its JSON lines would be, then handed to the terminal summary.
struct Outputs {
    summary: Summary,
}

impl ReportSink for Outputs {
    fn first_frame(&mut self, time: Timestamp) {
        self.summary.first_frame(time);
    }
    fn observe(&mut self, observation: &Observation) {
        black_box(observation);
        self.summary.observe(observation);
    }
    fn part(&mut self, part: AssociationPart) {
        for h in &part.handovers {
            json(h);
        }
        for e in &part.events {
            json(e);
        }
        self.summary.part(part);
    }
    fn association(&mut self, report: AssociationReport) {
        json(&report.association);
        for h in &report.handovers {
            json(h);
        }
        for e in &report.events {
            json(e);
        }
        self.summary.association(report);
    }
}
