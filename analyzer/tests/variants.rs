//! One real capture, re-encapsulated and re-packaged the ways users bring
//! captures: every variant must give the same reconstruction, and damaged
//! input must be counted, never lost.

mod common;

use common::{PcapFrame, RawFrame};
use sctp_handover::analysis::{analyze_file, AnalysisOptions, FileAnalysis};
use sctp_handover::capture::CaptureError;
use sctp_handover::events::EventKind;
use std::path::{Path, PathBuf};

/// What must not change between encapsulations of the same packets.
fn signature(a: &FileAnalysis) -> String {
    let mut s = format!(
        "chunks {:?}\n",
        a.counters.chunks.iter().collect::<Vec<_>>()
    );
    for assoc in &a.associations {
        s += &format!(
            "assoc {} ports {:?} end {:?}\n",
            assoc.id,
            assoc.ports(),
            assoc.end.map(|e| e.as_str())
        );
        for p in &assoc.paths {
            s += &format!(
                "  path {} {}->{} pkts {} new {} rt {} hb {}/{}\n",
                p.id,
                p.src,
                p.dst,
                p.packets,
                p.data_new,
                p.data_retransmitted,
                p.heartbeats_sent,
                p.heartbeats_acked
            );
        }
    }
    for e in &a.events {
        match &e.kind {
            EventKind::Asconf { serial, .. } => s += &format!("asconf {} {}\n", e.frame, serial),
            EventKind::AsconfAck { request_frame, .. } => {
                s += &format!("ack {} {:?}\n", e.frame, request_frame)
            }
            EventKind::HeartbeatAck { request_frame, .. } => {
                s += &format!("hback {} {:?}\n", e.frame, request_frame)
            }
            EventKind::DataPathChange { to_path, .. } => {
                s += &format!("move {} {}\n", e.frame, to_path)
            }
            _ => {}
        }
    }
    s
}

fn analyse(path: &Path) -> FileAnalysis {
    analyze_file(path, &AnalysisOptions::default()).expect("analysable")
}

fn base_frames(name: &str) -> (PathBuf, Vec<RawFrame>) {
    let p = common::sample(name, "mn");
    let frames = common::read_frames(&p);
    (p, frames)
}

/// (name, link type, nanosecond pcap, big-endian, frames)
type Variant<'a> = (&'a str, u32, bool, bool, Vec<(i64, Vec<u8>)>);

fn rewrap(frames: &[RawFrame], wrap: impl Fn(&[u8]) -> Vec<u8>) -> Vec<(i64, Vec<u8>)> {
    frames
        .iter()
        .map(|f| {
            let (ip, _) = common::sll2_to_ip(f);
            (f.ts_ns, wrap(&ip))
        })
        .collect()
}

#[test]
fn link_layers_and_file_formats_give_the_same_reconstruction() {
    let dir = common::tempdir("encaps");
    for scenario in ["koh-kim-1", "koh-kim-1-ipv6"] {
        let (original, frames) = base_frames(scenario);
        let want = signature(&analyse(&original));
        let variants: Vec<Variant<'_>> = vec![
            (
                "ethernet-qinq",
                1,
                false,
                false,
                rewrap(&frames, |ip| {
                    common::ethernet(ip, &[(0x88a8, 100), (0x8100, 10)])
                }),
            ),
            (
                "ethernet-dot1q-be",
                1,
                false,
                true,
                rewrap(&frames, |ip| common::ethernet(ip, &[(0x8100, 42)])),
            ),
            ("sll1-ns", 113, true, true, rewrap(&frames, common::sll1)),
            (
                "raw-101",
                101,
                true,
                false,
                rewrap(&frames, |ip| ip.to_vec()),
            ),
            (
                "raw-12",
                12,
                false,
                false,
                rewrap(&frames, |ip| ip.to_vec()),
            ),
            (
                "null",
                0,
                false,
                false,
                rewrap(&frames, common::null_loopback),
            ),
        ];
        for (name, link, nanos, be, data) in variants {
            let path = dir.join(format!("{scenario}-{name}.pcap"));
            common::write_frames(&path, link, nanos, be, &data);
            let got = analyse(&path);
            assert_eq!(got.frames, frames.len() as u64, "{scenario} {name}");
            assert_eq!(got.accounting.total(), got.frames);
            assert_eq!(signature(&got), want, "{scenario} {name}");
        }
        // LINKTYPE_IPV4 / LINKTYPE_IPV6 (228/229).
        let (link, raw) = if scenario.ends_with("ipv6") {
            (229, "raw-229")
        } else {
            (228, "raw-228")
        };
        let path = dir.join(format!("{scenario}-{raw}.pcap"));
        common::write_frames(
            &path,
            link,
            false,
            false,
            &rewrap(&frames, |ip| ip.to_vec()),
        );
        assert_eq!(signature(&analyse(&path)), want, "{scenario} {raw}");
    }
}

#[test]
fn pcapng_with_two_interfaces_and_gzip() {
    let dir = common::tempdir("pcapng");
    let (original, frames) = base_frames("koh-kim-1");
    let want = analyse(&original);
    // Even frames on an Ethernet interface with µs stamps, odd ones on an
    // SLL2 interface with ns stamps; an unknown block type in between.
    let data: Vec<(u32, i64, Vec<u8>)> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (ip, ifindex) = common::sll2_to_ip(f);
            if i % 2 == 0 {
                (0, f.ts_ns, common::ethernet(&ip, &[]))
            } else {
                (1, f.ts_ns, common::sll2(&ip, ifindex))
            }
        })
        .collect();
    let epbs: Vec<(u32, PcapFrame<'_>)> = data
        .iter()
        .map(|(i, t, d)| {
            (
                *i,
                PcapFrame {
                    ts_ns: *t,
                    data: d,
                    original_len: d.len() as u32,
                },
            )
        })
        .collect();
    let path = dir.join("two-interfaces.pcapng");
    common::write_pcapng(&path, &[(1, 6), (276, 9)], &epbs);
    let got = analyse(&path);
    assert_eq!(signature(&got), signature(&want));
    assert_eq!(got.link_types, vec![1, 276]);
    // Every event keeps its absolute time (the source is µs-resolution).
    let times: Vec<_> = got.events.iter().map(|e| e.time).collect();
    let want_times: Vec<_> = want.events.iter().map(|e| e.time).collect();
    assert_eq!(times, want_times);
    // tshark reads the file we wrote the same way.
    let out = common::tshark(&[
        "-r",
        path.to_str().expect("utf-8"),
        "-Y",
        "sctp.chunk_type == 193",
        "-T",
        "fields",
        "-e",
        "frame.number",
    ]);
    assert_eq!(out.lines().collect::<Vec<_>>(), vec!["74", "104", "131"]);

    let gz = dir.join("two-interfaces.pcapng.gz");
    common::gzip(&path, &gz);
    let unzipped = analyse(&gz);
    assert!(unzipped.compressed);
    assert_eq!(signature(&unzipped), signature(&want));
}

#[test]
fn truncated_file_yields_everything_before_the_cut() {
    let dir = common::tempdir("truncated");
    let original = common::sample("koh-kim-1", "mn");
    let bytes = std::fs::read(&original).expect("read");
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 30]).expect("write");
    let a = analyse(&cut);
    let full = analyse(&original);
    assert_eq!(a.frames, full.frames - 1);
    let warning = a.warning.clone().expect("a warning");
    assert!(warning.contains("record 197"), "{warning}");
    assert!(warning.contains("byte offset"), "{warning}");
    assert_eq!(a.accounting.total(), a.frames);
    assert_eq!(a.associations[0].packets, full.associations[0].packets - 1);

    // The same cut inside a gzip stream.
    let gz = dir.join("cut.pcap.gz");
    common::gzip(&original, &gz);
    let zipped = std::fs::read(&gz).expect("read gz");
    std::fs::write(&gz, &zipped[..zipped.len() * 2 / 3]).expect("write");
    let a = analyse(&gz);
    assert!(a.warning.is_some());
    assert!(a.frames > 0 && a.frames < full.frames);
    assert_eq!(a.accounting.total(), a.frames);
}

#[test]
fn snaplen_cut_frames_are_counted_and_still_analysed() {
    let dir = common::tempdir("snaplen");
    let (_, frames) = base_frames("koh-kim-1");
    let snaplen = 120;
    let data: Vec<Vec<u8>> = frames
        .iter()
        .map(|f| f.data[..f.data.len().min(snaplen)].to_vec())
        .collect();
    let path = dir.join("snaplen.pcap");
    common::write_altered_sll2(&path, &frames, &data);
    let a = analyse(&path);
    assert_eq!(a.accounting.total(), a.frames);
    assert_eq!(
        a.accounting.sctp_malformed, 0,
        "a snaplen cut is not malformation"
    );
    // DATA packets (1000-byte messages) are cut; small control packets fit.
    assert!(a.accounting.sctp_truncated > 100);
    assert_eq!(a.accounting.sctp + a.accounting.sctp_truncated, 164);
    // ASCONF (76 bytes of SCTP) fit in 120 bytes with SLL2 and IPv4 headers.
    let asconfs = a
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Asconf { .. }))
        .count();
    assert_eq!(asconfs, 3);
    assert_eq!(a.associations.len(), 1);
}

#[test]
fn any_interface_duplicates_are_not_retransmissions() {
    let dir = common::tempdir("dups");
    let (original, frames) = base_frames("koh-kim-1");
    let want = analyse(&original);
    // Each packet seen twice, 0 s apart, on two interfaces (tcpdump -i any
    // on a host that forwards it).
    let mut data = Vec::new();
    for f in &frames {
        let (ip, _) = common::sll2_to_ip(f);
        data.push((f.ts_ns, common::sll2(&ip, 3)));
        data.push((f.ts_ns, common::sll2(&ip, 4)));
    }
    let path = dir.join("dups.pcap");
    common::write_frames(&path, 276, false, false, &data);
    let a = analyse(&path);
    assert_eq!(a.accounting.capture_duplicates, 164);
    assert_eq!(a.accounting.sctp, 164);
    assert_eq!(a.counters.chunks.total(), want.counters.chunks.total());
    let d = &a.associations[0].directions;
    assert_eq!(
        d[0].counters().retransmitted_chunks + d[1].counters().retransmitted_chunks,
        0
    );
}

/// Splits an IPv4 datagram into two fragments at `at` bytes of payload.
fn fragment_v4(ip: &[u8], at: usize, ident: u16) -> (Vec<u8>, Vec<u8>) {
    let hl = usize::from(ip[0] & 0x0f) * 4;
    let payload = &ip[hl..];
    let mk = |part: &[u8], offset: usize, more: bool| {
        let mut h = ip[..hl].to_vec();
        h[2..4].copy_from_slice(&((hl + part.len()) as u16).to_be_bytes());
        h[4..6].copy_from_slice(&ident.to_be_bytes());
        let flags: u16 = if more { 0x2000 } else { 0 };
        h[6..8].copy_from_slice(&(flags | (offset / 8) as u16).to_be_bytes());
        h.extend_from_slice(part);
        h
    };
    (mk(&payload[..at], 0, true), mk(&payload[at..], at, false))
}

#[test]
fn ip_fragments_udp_encapsulation_and_icmp_quotes() {
    let dir = common::tempdir("fragments");
    let (original, frames) = base_frames("koh-kim-1");
    let want = analyse(&original);
    let mut data = Vec::new();
    let mut fragmented = 0;
    for (i, f) in frames.iter().enumerate() {
        let (ip, _) = common::sll2_to_ip(f);
        if ip[0] >> 4 == 4 && ip.len() > 600 {
            // Second fragment first: reassembly must not depend on order.
            let (a, b) = fragment_v4(&ip, 504, i as u16);
            data.push((f.ts_ns, common::ethernet(&b, &[])));
            data.push((f.ts_ns, common::ethernet(&a, &[])));
            fragmented += 1;
        } else {
            data.push((f.ts_ns, common::ethernet(&ip, &[])));
        }
    }
    let path = dir.join("fragments.pcap");
    common::write_frames(&path, 1, false, false, &data);
    let a = analyse(&path);
    assert!(fragmented > 100);
    assert_eq!(a.accounting.ip_fragments, fragmented);
    assert_eq!(a.accounting.sctp, 164);
    assert_eq!(
        a.counters.chunks.iter().collect::<Vec<_>>(),
        want.counters.chunks.iter().collect::<Vec<_>>()
    );

    // SCTP over UDP (RFC 6951): port 9899 by default, others on request.
    for (port, extra) in [(9899u16, None), (4000u16, Some(4000u16))] {
        let data: Vec<(i64, Vec<u8>)> = frames
            .iter()
            .map(|f| {
                let (ip, _) = common::sll2_to_ip(f);
                if ip[0] >> 4 != 4 {
                    // IPv6 neighbour discovery frames pass through as they are.
                    return (f.ts_ns, common::ethernet(&ip, &[]));
                }
                let hl = usize::from(ip[0] & 0x0f) * 4;
                let sctp = &ip[hl..];
                let mut out = ip[..hl].to_vec();
                out[9] = 17;
                out[2..4].copy_from_slice(&((hl + 8 + sctp.len()) as u16).to_be_bytes());
                out.extend_from_slice(&port.to_be_bytes());
                out.extend_from_slice(&port.to_be_bytes());
                out.extend_from_slice(&((8 + sctp.len()) as u16).to_be_bytes());
                out.extend_from_slice(&[0, 0]);
                out.extend_from_slice(sctp);
                (f.ts_ns, common::ethernet(&out, &[]))
            })
            .collect();
        let path = dir.join(format!("udp-{port}.pcap"));
        common::write_frames(&path, 1, false, false, &data);
        let mut options = AnalysisOptions::default();
        let plain = analyze_file(&path, &options).expect("analysable");
        if let Some(p) = extra {
            assert_eq!(
                plain.accounting.sctp, 0,
                "port {port} is not SCTP unless asked"
            );
            options.decode.udp_encapsulation_ports.push(p);
        }
        let a = analyze_file(&path, &options).expect("analysable");
        assert_eq!(a.accounting.sctp, 164, "UDP port {port}");
        assert_eq!(signature(&a), signature(&want));
    }

    // An ICMP "port unreachable" quoting the first DATA packet of the MN:
    // counted, attributed to its path, but not traffic.
    let mut data = rewrap(&frames, |ip| common::ethernet(ip, &[]));
    // Quote the MN's first DATA packet (IPv4, SCTP, first chunk DATA).
    let first_data = frames
        .iter()
        .position(|f| {
            let (ip, _) = common::sll2_to_ip(f);
            ip[0] == 0x45
                && ip[9] == 132
                && ip.get(32) == Some(&0)
                && ip[12..16] == [198, 51, 100, 101]
        })
        .expect("a DATA packet from the MN");
    let (quoted, _) = common::sll2_to_ip(&frames[first_data]);
    let mut icmp_ip = vec![
        0x45, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0, 198, 51, 100, 100, 198, 51, 100, 101,
    ];
    let body_len = 8 + 28 + 8;
    let total = (20 + body_len) as u16;
    icmp_ip[2..4].copy_from_slice(&total.to_be_bytes());
    icmp_ip.extend_from_slice(&[3, 3, 0, 0, 0, 0, 0, 0]);
    icmp_ip.extend_from_slice(&quoted[..28]);
    icmp_ip.extend_from_slice(&[0; 8]);
    data.insert(
        first_data + 1,
        (frames[first_data].ts_ns, common::ethernet(&icmp_ip, &[])),
    );
    let path = dir.join("icmp.pcap");
    common::write_frames(&path, 1, false, false, &data);
    let a = analyse(&path);
    assert_eq!(a.accounting.icmp_about_sctp, 1);
    assert_eq!(a.counters.icmp_errors_matched, 1);
    assert_eq!(
        a.associations[0].paths.len(),
        want.associations[0].paths.len()
    );
    assert_eq!(a.associations[0].paths[0].icmp_errors, 1);
    assert_eq!(a.counters.chunks.total(), want.counters.chunks.total());
}

#[test]
fn out_of_order_timestamps_are_reported() {
    let dir = common::tempdir("order");
    let (_, frames) = base_frames("koh-kim-1");
    let mut data = rewrap(&frames, |ip| ip.to_vec());
    // Like frame 11 of Koh & Kim's Fig. 6: stamped before its predecessor.
    data[10].0 = data[9].0 - 500_000;
    let path = dir.join("order.pcap");
    common::write_frames(&path, 101, false, false, &data);
    let a = analyse(&path);
    assert_eq!(a.time_order.regressions, 1);
    assert_eq!(a.time_order.first_regression_frame, Some(11));
    assert_eq!(a.accounting.sctp, 164);
}

#[test]
fn bad_files_get_clear_errors() {
    let dir = common::tempdir("bad");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "hello, not a capture\n").expect("write");
    let err = analyze_file(&text, &AnalysisOptions::default()).expect_err("not a capture");
    let msg = err.to_string();
    assert!(matches!(err, CaptureError::NotACapture { .. }));
    assert!(
        msg.contains("notes.txt") && msg.contains("68 65 6c 6c"),
        "{msg}"
    );

    let empty = dir.join("empty.pcap");
    std::fs::write(&empty, b"").expect("write");
    assert!(matches!(
        analyze_file(&empty, &AnalysisOptions::default()),
        Err(CaptureError::Empty { .. })
    ));

    let missing = dir.join("missing.pcap");
    let msg = analyze_file(&missing, &AnalysisOptions::default())
        .expect_err("missing")
        .to_string();
    assert!(
        msg.contains("missing.pcap") && msg.contains("cannot open"),
        "{msg}"
    );

    // A frame with a link type we do not decode, and garbage where an IP
    // header should be: counted, listed, never fatal.
    let frames = [PcapFrame {
        ts_ns: 1,
        data: &[0u8; 40],
        original_len: 40,
    }];
    let odd = dir.join("usb.pcap");
    common::write_pcap(&odd, 189, false, false, &frames);
    let a = analyse(&odd);
    assert_eq!(a.accounting.unsupported_link_type, 1);
    assert_eq!(a.problems[0].frame, 1);
    let garbage = dir.join("garbage.pcap");
    let bytes = [0x45u8, 0, 0, 10];
    common::write_pcap(
        &garbage,
        101,
        false,
        false,
        &[PcapFrame {
            ts_ns: 1,
            data: &bytes,
            original_len: 4,
        }],
    );
    let a = analyse(&garbage);
    assert_eq!(a.accounting.malformed, 1);
    assert_eq!(a.accounting.total(), 1);
}
