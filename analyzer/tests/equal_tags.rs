//! Associations whose two directions carry the same verification tag on
//! the same port (issue #28, item 7): the tag cannot tell the directions
//! apart, the addresses do (docs/metrics.md, "Associations and endpoints").
//! A real capture (Wireshark's `Mobile-Originating-Call(AMR).pcap`, M3UA on
//! 2905 ↔ 2905, captured mid-stream, tag 0x15fb59e2 both ways) against
//! tshark's per-direction counts, and crafted exchanges: from the INIT, from
//! the INIT ACK, and mid-stream between multihomed peers.

mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions, FileAnalysis};
use sctp_handover::capture::link_type;
use sctp_handover::events::AssociationEndReason;
use sctp_handover::track::assoc::{Association, Start};
use sctp_handover::wire::sctp::Packet as SctpPacket;
use sctp_handover::wire::sctp_chunk::chunk_type;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

fn analyze(path: &Path) -> FileAnalysis {
    analyze_file(path, &AnalysisOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn addresses(a: &Association, endpoint: usize) -> Vec<IpAddr> {
    a.endpoints[endpoint]
        .addresses
        .iter()
        .map(|i| i.address)
        .collect()
}

/// (DATA, SACK) chunks on the path from `src` to `dst`.
fn data_and_sacks(a: &Association, src: IpAddr, dst: IpAddr) -> (u64, u64) {
    let p = a
        .path(src, dst)
        .unwrap_or_else(|| panic!("no path {src} -> {dst}"));
    let chunks = &a.paths[usize::from(p)].chunks;
    (chunks.get(chunk_type::DATA), chunks.get(chunk_type::SACK))
}

fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

#[test]
fn mobile_originating_call_has_two_directions_like_tshark() {
    let Some(dir) = common::public_captures_if_present() else {
        return;
    };
    let path = dir.join(
        "files/ajbanjara__Wireshark__uploads____moin_import____attachments__\
         SampleCaptures__Mobile-Originating-Call(AMR).pcap",
    );
    let analysis = analyze(&path);
    assert_eq!(analysis.associations.len(), 1);
    let a = &analysis.associations[0];
    assert_eq!(a.start, Start::MidStream);
    let (first, second) = (v4(172, 210, 0, 1), v4(172, 210, 0, 2));
    // Frame 2, the first SCTP packet, comes from 172.210.0.1: endpoint 0.
    assert_eq!(addresses(a, 0), [first]);
    assert_eq!(addresses(a, 1), [second]);
    for e in &a.endpoints {
        assert_eq!(e.port, 2905);
        assert_eq!(e.verification_tag, Some(0x15fb_59e2));
    }
    // `tshark -q -z sctp,stat`: 172.210.0.1 -> .2 8 DATA, 10 SACK;
    // .2 -> .1 10 DATA, 8 SACK. `-o sctp.tsn_analysis:TRUE -Y
    // sctp.retransmission`: no frame.
    assert_eq!(a.paths.len(), 2);
    assert_eq!(data_and_sacks(a, first, second), (8, 10));
    assert_eq!(data_and_sacks(a, second, first), (10, 8));
    let d = [a.directions[0].counters(), a.directions[1].counters()];
    // A direction's SACKs are those acknowledging its DATA (sent the other way).
    assert_eq!((d[0].data_chunks, d[0].new_chunks, d[0].sacks), (8, 8, 8));
    assert_eq!(
        (d[1].data_chunks, d[1].new_chunks, d[1].sacks),
        (10, 10, 10)
    );
    for c in d {
        assert_eq!(c.retransmitted_chunks, 0);
        assert_eq!(c.first_seen_below_highest, 0);
    }
}

// ---- crafted exchanges on 2905 <-> 2905 ----

const PORT: u16 = 2905;
const TAG: u32 = 0x15fb_59e2;

fn chunk(kind: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let mut c = vec![kind, flags];
    c.extend_from_slice(&((4 + value.len()) as u16).to_be_bytes());
    c.extend_from_slice(value);
    c.resize(c.len().div_ceil(4) * 4, 0);
    c
}

fn data(tsn: u32) -> Vec<u8> {
    let mut v = tsn.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 3, b'm', b'3', b'u', b'a']);
    chunk(chunk_type::DATA, 0x03, &v)
}

fn sack(cum: u32) -> Vec<u8> {
    let mut v = cum.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    chunk(chunk_type::SACK, 0, &v)
}

/// INIT or INIT ACK (with a state cookie) without address parameters.
fn init(kind: u8, tag: u32, tsn: u32) -> Vec<u8> {
    let mut v = tag.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 1, 0, 0, 0, 10, 0, 10]);
    v.extend_from_slice(&tsn.to_be_bytes());
    if kind == chunk_type::INIT_ACK {
        v.extend_from_slice(&[0, 7, 0, 8, 0xc0, 0x0c, 0x1e, 0x00]);
    }
    chunk(kind, 0, &v)
}

/// An IPv4 packet carrying SCTP from PORT to PORT (with its CRC32c).
fn packet(src: IpAddr, dst: IpAddr, vtag: u32, chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut sctp = PORT.to_be_bytes().to_vec();
    sctp.extend_from_slice(&PORT.to_be_bytes());
    sctp.extend_from_slice(&vtag.to_be_bytes());
    sctp.extend_from_slice(&[0; 4]);
    for c in chunks {
        sctp.extend_from_slice(c);
    }
    let crc = SctpPacket::new_checked(&sctp[..])
        .expect("header")
        .compute_checksum();
    sctp[8..12].copy_from_slice(&crc.to_le_bytes());
    let (IpAddr::V4(s), IpAddr::V4(d)) = (src, dst) else {
        panic!("IPv4 only here");
    };
    let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 132, 0, 0];
    ip[2..4].copy_from_slice(&((20 + sctp.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&s.octets());
    ip.extend_from_slice(&d.octets());
    ip.extend_from_slice(&sctp);
    ip
}

/// The analysis of the packets written as a raw-IP capture, one
/// millisecond apart.
fn analyze_packets(name: &str, packets: Vec<Vec<u8>>) -> FileAnalysis {
    let dir = common::tempdir(name);
    let path = dir.join(format!("{name}.pcap"));
    let frames: Vec<(i64, Vec<u8>)> = packets
        .into_iter()
        .enumerate()
        .map(|(i, p)| (1_000_000 * i as i64, p))
        .collect();
    common::write_frames(&path, link_type::RAW, false, false, &frames);
    analyze(&path)
}

/// From the INIT (or, without it, from the INIT ACK), the two Initiate
/// Tags equal by chance: every packet in its direction, the ABORT with the
/// T bit (its sender's own tag) included.
#[test]
fn equal_initiate_tags_keep_two_directions() {
    let (a1, b1) = (v4(10, 0, 0, 1), v4(10, 0, 1, 1));
    let to_b = |chunks: &[Vec<u8>]| packet(a1, b1, TAG, chunks);
    let to_a = |chunks: &[Vec<u8>]| packet(b1, a1, TAG, chunks);
    let all = vec![
        packet(a1, b1, 0, &[init(chunk_type::INIT, TAG, 100)]),
        to_a(&[init(chunk_type::INIT_ACK, TAG, 500)]),
        to_b(&[chunk(chunk_type::COOKIE_ECHO, 0, &[0xc0, 0x0c, 0x1e, 0x00])]),
        to_a(&[chunk(chunk_type::COOKIE_ACK, 0, &[])]),
        to_b(&[data(100)]),
        to_a(&[sack(100), data(500)]),
        to_b(&[sack(500), data(101)]),
        to_a(&[sack(101)]),
        to_a(&[chunk(chunk_type::ABORT, 0x01, &[])]),
    ];
    for (name, packets, start) in [
        ("equal-tags-init", all.clone(), Start::Init),
        ("equal-tags-init-ack", all[1..].to_vec(), Start::InitAck),
    ] {
        let analysis = analyze_packets(name, packets);
        assert_eq!(analysis.associations.len(), 1, "{name}");
        let a = &analysis.associations[0];
        assert_eq!(a.start, start, "{name}");
        assert_eq!(addresses(a, 0), [a1], "{name}");
        assert_eq!(addresses(a, 1), [b1], "{name}");
        assert_eq!(a.endpoints[0].verification_tag, Some(TAG), "{name}");
        assert_eq!(a.endpoints[1].verification_tag, Some(TAG), "{name}");
        assert!(a.established_frame.is_some(), "{name}: COOKIE ACK seen");
        assert_eq!(a.end, Some(AssociationEndReason::Abort), "{name}");
        assert_eq!(a.paths.len(), 2, "{name}");
        for p in &a.paths {
            assert_eq!(p.sender, usize::from(p.src == b1), "{name}: {p:?}");
        }
        let abort_path = a.path(b1, a1).expect("path b1 -> a1");
        let aborts = a.paths[usize::from(abort_path)]
            .chunks
            .get(chunk_type::ABORT);
        assert_eq!(aborts, 1, "{name}: the ABORT from endpoint 1");
        let d = [a.directions[0].counters(), a.directions[1].counters()];
        assert_eq!((d[0].new_chunks, d[0].sacks), (2, 2), "{name}");
        assert_eq!((d[1].new_chunks, d[1].sacks), (1, 1), "{name}");
        for c in d {
            assert_eq!(c.retransmitted_chunks, 0, "{name}");
        }
    }
}

/// Mid-stream between multihomed peers: an address never seen before is
/// placed by the packet's other address; with neither address known, the
/// packet is endpoint 0's. The same with distinct tags, as a control.
#[test]
fn multihomed_mid_stream_with_equal_tags_keeps_two_directions() {
    let (a1, a2, a3) = (v4(10, 0, 0, 1), v4(10, 0, 0, 2), v4(10, 0, 0, 3));
    let (b1, b2, b3) = (v4(10, 0, 1, 1), v4(10, 0, 1, 2), v4(10, 0, 1, 3));
    for (name, tag_of_a, tag_of_b) in [
        ("equal-tags-mid-stream", TAG, TAG),
        ("distinct-tags-mid-stream", 0x0bad_cafe, TAG),
    ] {
        let packets = vec![
            packet(a1, b1, tag_of_b, &[data(10)]),
            packet(b1, a1, tag_of_a, &[sack(10), data(70)]),
            packet(a1, b1, tag_of_b, &[sack(70)]),
            // New source, known destination (endpoint 1's): endpoint 0 sends.
            packet(a2, b1, tag_of_b, &[data(11)]),
            // New source, known destination (endpoint 0's): endpoint 1 sends.
            packet(b2, a1, tag_of_a, &[sack(11)]),
            packet(b2, a2, tag_of_a, &[data(71)]),
            packet(a2, b2, tag_of_b, &[sack(71)]),
            // Neither address known: endpoint 0's.
            packet(a3, b3, tag_of_b, &[data(12)]),
            packet(b1, a3, tag_of_a, &[sack(12)]),
        ];
        let analysis = analyze_packets(name, packets);
        assert_eq!(analysis.associations.len(), 1, "{name}");
        let a = &analysis.associations[0];
        assert_eq!(a.start, Start::MidStream, "{name}");
        assert_eq!(addresses(a, 0), [a1, a2, a3], "{name}");
        assert_eq!(addresses(a, 1), [b1, b2, b3], "{name}");
        assert_eq!(a.endpoints[0].verification_tag, Some(tag_of_a), "{name}");
        assert_eq!(a.endpoints[1].verification_tag, Some(tag_of_b), "{name}");
        let a_side = [a1, a2, a3];
        for p in &a.paths {
            let sender = usize::from(!a_side.contains(&p.src));
            assert_eq!(p.sender, sender, "{name}: {p:?}");
        }
        let d = [a.directions[0].counters(), a.directions[1].counters()];
        assert_eq!((d[0].new_chunks, d[0].sacks), (3, 3), "{name}");
        assert_eq!((d[1].new_chunks, d[1].sacks), (2, 2), "{name}");
        for c in d {
            assert_eq!(c.retransmitted_chunks, 0, "{name}");
        }
    }
}
