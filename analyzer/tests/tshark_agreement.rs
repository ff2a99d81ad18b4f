//! The analyzer and tshark 4.0 read every sample capture the same way:
//! SCTP frames, chunk counts by type, ASCONF / ASCONF-ACK frames and serial
//! numbers, HEARTBEAT ACK frames, and retransmitted DATA chunks.

mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use sctp_handover::events::EventKind;
use sctp_handover::wire::sctp_chunk::chunk_type;
use std::collections::BTreeMap;

struct TsharkView {
    sctp_frames: u64,
    chunks: BTreeMap<u8, u64>,
    asconf: Vec<(u64, u32)>,
    asconf_ack: Vec<(u64, u32)>,
    heartbeat_ack_frames: Vec<u64>,
    retransmissions: u64,
}

fn parse_u32(s: &str) -> u32 {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).expect("hex"),
        None => s.parse().expect("number"),
    }
}

fn tshark_view(path: &std::path::Path) -> TsharkView {
    let out = common::tshark(&[
        "-r",
        path.to_str().expect("utf-8 path"),
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-e",
        "frame.number",
        "-e",
        "sctp.chunk_type",
        "-e",
        "icmp.type",
        "-e",
        "icmpv6.type",
        "-e",
        "sctp.asconf_seq_nr_number",
        "-e",
        "sctp.asconf_ack_seq_nr_number",
        "-e",
        "sctp.retransmission",
    ]);
    let mut v = TsharkView {
        sctp_frames: 0,
        chunks: BTreeMap::new(),
        asconf: Vec::new(),
        asconf_ack: Vec::new(),
        heartbeat_ack_frames: Vec::new(),
        retransmissions: 0,
    };
    for line in out.lines() {
        let f: Vec<&str> = line.split('|').collect();
        let frame: u64 = f[0].parse().expect("frame number");
        // SCTP headers quoted in ICMP errors are not traffic.
        if f[1].is_empty() || !f[2].is_empty() || !f[3].is_empty() {
            continue;
        }
        v.sctp_frames += 1;
        for t in f[1].split(',') {
            let t: u8 = t.parse().expect("chunk type");
            *v.chunks.entry(t).or_default() += 1;
            if t == chunk_type::HEARTBEAT_ACK {
                v.heartbeat_ack_frames.push(frame);
            }
        }
        for s in f[4].split(',').filter(|s| !s.is_empty()) {
            v.asconf.push((frame, parse_u32(s)));
        }
        for s in f[5].split(',').filter(|s| !s.is_empty()) {
            v.asconf_ack.push((frame, parse_u32(s)));
        }
        v.retransmissions += f[6].split(',').filter(|s| !s.is_empty()).count() as u64;
    }
    v
}

#[test]
fn analyzer_agrees_with_tshark_on_every_sample_capture() {
    for path in common::all_samples() {
        let name = path.display().to_string();
        let t = tshark_view(&path);
        let options = AnalysisOptions {
            verify_checksum: true,
            ..AnalysisOptions::default()
        };
        let a = analyze_file(&path, &options).expect("analysable");
        // The harness turns checksum offload off: every CRC32c is real.
        assert_eq!(a.checksum.failures, 0, "{name}: CRC32c");

        let acc = &a.accounting;
        assert_eq!(acc.total(), a.frames, "{name}: accounting must add up");
        assert_eq!(
            acc.sctp + acc.sctp_truncated + acc.sctp_malformed + acc.sctp_untracked,
            t.sctp_frames,
            "{name}: SCTP frames"
        );
        for (&ty, &n) in &t.chunks {
            assert_eq!(
                a.counters.chunks.get(ty),
                n,
                "{name}: {} chunks",
                chunk_type::name(ty)
            );
        }
        assert_eq!(
            a.counters.chunks.total(),
            t.chunks.values().sum::<u64>(),
            "{name}: total chunks"
        );

        let mut asconf = Vec::new();
        let mut asconf_ack = Vec::new();
        let mut hb_ack = Vec::new();
        for e in &a.events {
            match &e.kind {
                EventKind::Asconf { serial, .. } => asconf.push((e.frame, *serial)),
                EventKind::AsconfAck { serial, .. } => asconf_ack.push((e.frame, *serial)),
                EventKind::HeartbeatAck { .. } => hb_ack.push(e.frame),
                _ => {}
            }
        }
        assert_eq!(asconf, t.asconf, "{name}: ASCONF frames and serials");
        assert_eq!(
            asconf_ack, t.asconf_ack,
            "{name}: ASCONF-ACK frames and serials"
        );
        assert_eq!(
            hb_ack, t.heartbeat_ack_frames,
            "{name}: HEARTBEAT ACK frames"
        );

        // tshark flags a TSN as retransmitted only if it saw the TSN before;
        // docs/metrics.md also counts TSNs first captured below the highest
        // TSN (their first copy was lost before the capture point).
        let (retransmitted, first_seen_below): (u64, u64) = a
            .associations
            .iter()
            .flat_map(|x| x.directions.iter())
            .fold((0, 0), |(r, b), d| {
                (
                    r + d.counters().retransmitted_chunks,
                    b + d.counters().first_seen_below_highest,
                )
            });
        assert_eq!(
            retransmitted - first_seen_below,
            t.retransmissions,
            "{name}: retransmissions"
        );
    }
}
