//! Hostile and broken input: files cut at every offset, bytes flipped,
//! snaplen cuts, concatenated captures, empty and foreign files, and
//! crafted packets that lie (chunk lengths past the packet, ASCONF
//! parameters whose lengths lie, an INIT listing thousands of addresses, a
//! SACK claiming 65 535 gap blocks, tens of thousands of associations that
//! never end). For each: no panic, every frame in exactly one accounting
//! category, and a message naming the file, the frame and the reason.
//!
//! Time and memory per case are measured by `scripts/hostile-figures.sh`
//! (which keeps the crafted files: `SCTPHO_HOSTILE_OUT=DIR`), never
//! asserted here.

mod common;

use common::Rng;

use common::PcapFrame;
use sctp_handover::analysis::{analyze_file, AnalysisOptions, FileAnalysis};
use sctp_handover::capture::link_type;
use std::path::{Path, PathBuf};

/// Where crafted files go: kept in `$SCTPHO_HOSTILE_OUT` when set.
fn out_dir(name: &str) -> common::Scratch {
    match std::env::var_os("SCTPHO_HOSTILE_OUT") {
        Some(d) => common::Scratch::kept(PathBuf::from(d)),
        None => common::tempdir(name),
    }
}

/// The analysis of a file that must open: every frame accounted for.
fn accounted(path: &Path, options: &AnalysisOptions) -> FileAnalysis {
    let a = analyze_file(path, options).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(a.accounting.total(), a.frames, "{}", path.display());
    a
}

/// The analysis of any bytes: Ok with every frame accounted for, or an
/// error that names the file.
fn survives(path: &Path, options: &AnalysisOptions) -> Option<FileAnalysis> {
    match analyze_file(path, options) {
        Ok(a) => {
            assert_eq!(a.accounting.total(), a.frames, "{}", path.display());
            Some(a)
        }
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains(&path.display().to_string()),
                "the error names the file: {text}"
            );
            None
        }
    }
}

#[test]
fn cut_at_every_offset_of_the_first_kilobytes_and_at_later_samples() {
    let source = common::sample("koh-kim-1", "mn");
    let bytes = std::fs::read(&source).expect("sample");
    let whole = accounted(&source, &AnalysisOptions::default());
    let dir = common::tempdir("hostile-cuts");
    let path = dir.join("cut.pcap");
    let options = AnalysisOptions::default();
    let mut rng = Rng(0x00c0_ffee);
    let offsets: Vec<usize> = (0..4096.min(bytes.len()))
        .chain((0..200).map(|_| rng.below(bytes.len())))
        .collect();
    for cut in offsets {
        std::fs::write(&path, &bytes[..cut]).expect("write");
        match survives(&path, &options) {
            Some(a) => {
                assert!(a.frames <= whole.frames, "cut {cut}");
                // A record cut short is reported; a cut between records
                // is indistinguishable from a shorter capture.
                if let Some(w) = &a.warning {
                    assert!(
                        w.contains("frame") || w.contains("record"),
                        "cut {cut}: {w}"
                    );
                }
            }
            None => assert!(
                cut < 24,
                "only a cut global header fails the file (cut {cut})"
            ),
        }
    }
}

#[test]
fn flipped_bytes_anywhere_in_the_file() {
    let dir = common::tempdir("hostile-flips");
    let mut rng = Rng(0x5eed_f11b);
    for name in ["koh-kim-1", "bokor-failover", "honda-dad"] {
        let bytes = std::fs::read(common::sample(name, "cn")).expect("sample");
        for round in 0..60 {
            let mut b = bytes.clone();
            for _ in 0..=rng.below(16) {
                let i = rng.below(b.len());
                b[i] ^= (rng.next() as u8) | 1;
            }
            let path = dir.join(format!("{name}-{round}.pcap"));
            std::fs::write(&path, &b).expect("write");
            survives(&path, &AnalysisOptions::default());
        }
    }
}

#[test]
fn every_packet_cut_to_a_small_snaplen() {
    let dir = common::tempdir("hostile-snaplen");
    let frames = common::read_frames(&common::sample("koh-kim-2", "mn"));
    for snaplen in [64usize, 96, 128] {
        let cut: Vec<Vec<u8>> = frames
            .iter()
            .map(|f| f.data[..f.data.len().min(snaplen)].to_vec())
            .collect();
        let pf: Vec<PcapFrame<'_>> = frames
            .iter()
            .zip(&cut)
            .map(|(f, d)| PcapFrame {
                ts_ns: f.ts_ns,
                data: d,
                original_len: f.original_len,
            })
            .collect();
        let path = dir.join(format!("snap{snaplen}.pcap"));
        common::write_pcap(&path, link_type::LINUX_SLL2, false, false, &pf);
        let a = accounted(&path, &AnalysisOptions::default());
        assert_eq!(a.frames, frames.len() as u64);
        // Cut packets are analysed as far as they go, never called broken.
        assert_eq!(
            a.accounting.malformed + a.accounting.sctp_malformed,
            0,
            "snaplen {snaplen}"
        );
        assert!(a.accounting.sctp_truncated > 0, "snaplen {snaplen}");
    }
}

#[test]
fn two_captures_concatenated_and_files_that_are_not_captures() {
    let dir = common::tempdir("hostile-files");
    let a = std::fs::read(common::sample("koh-kim-1", "mn")).expect("sample");
    let b = std::fs::read(common::sample("koh-kim-2", "mn")).expect("sample");
    let first = accounted(
        &common::sample("koh-kim-1", "mn"),
        &AnalysisOptions::default(),
    );
    let path = dir.join("two.pcap");
    std::fs::write(&path, [a.as_slice(), b.as_slice()].concat()).expect("write");
    let two = accounted(&path, &AnalysisOptions::default());
    // The second file's header is read as a record header: at least the
    // whole first capture is analysed, and what follows is reported.
    assert!(two.frames >= first.frames);
    let w = two.warning.clone().unwrap_or_default();
    assert!(
        !w.is_empty(),
        "the junk after the first capture is reported"
    );

    for (name, bytes) in [
        ("empty.pcap", &b""[..]),
        ("text.pcap", &b"hello, not a capture\n"[..]),
        ("short.pcap", &a[..10]),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, bytes).expect("write");
        assert!(
            survives(&p, &AnalysisOptions::default()).is_none(),
            "{name}"
        );
    }
}

#[test]
fn timestamps_going_backwards_are_reported() {
    let dir = common::tempdir("hostile-time");
    let mut frames = common::read_frames(&common::sample("koh-kim-1", "mn"));
    frames.swap(10, 11);
    frames.swap(40, 45);
    let data: Vec<Vec<u8>> = frames.iter().map(|f| f.data.clone()).collect();
    let path = dir.join("backwards.pcap");
    common::write_altered_sll2(&path, &frames, &data);
    let a = accounted(&path, &AnalysisOptions::default());
    // Frame 12 comes before 11; 41..46 run 45, 41, 42, 43, 44, 40: two.
    assert_eq!(a.time_order.regressions, 3);
    assert_eq!(a.time_order.first_regression_frame, Some(12));
}

// ---- crafted packets ----

fn chunk(kind: u8, flags: u8, body: &[u8]) -> Vec<u8> {
    let len = 4 + body.len();
    let mut c = vec![kind, flags, (len >> 8) as u8, len as u8];
    c.extend_from_slice(body);
    c.resize(c.len().div_ceil(4) * 4, 0);
    c
}

fn sctp(sport: u16, dport: u16, vtag: u32, chunks: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(12 + chunks.len());
    p.extend_from_slice(&sport.to_be_bytes());
    p.extend_from_slice(&dport.to_be_bytes());
    p.extend_from_slice(&vtag.to_be_bytes());
    p.extend_from_slice(&[0; 4]);
    p.extend_from_slice(chunks);
    p
}

fn ipv4(src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let total = 20 + payload.len();
    assert!(total <= 65_535);
    let mut ip = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0x40,
        0,
        64,
        132,
        0,
        0,
    ];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let sum = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum::<u32>();
    let folded = !((sum & 0xffff) + (sum >> 16)) as u16;
    ip[10..12].copy_from_slice(&folded.to_be_bytes());
    ip.extend_from_slice(payload);
    ip
}

fn init(tag: u32, tsn: u32, params: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&tag.to_be_bytes());
    body.extend_from_slice(&65_535u32.to_be_bytes());
    body.extend_from_slice(&10u16.to_be_bytes());
    body.extend_from_slice(&10u16.to_be_bytes());
    body.extend_from_slice(&tsn.to_be_bytes());
    body.extend_from_slice(params);
    chunk(1, 0, &body)
}

fn data(tsn: u32, payload: &[u8]) -> Vec<u8> {
    let mut body = tsn.to_be_bytes().to_vec();
    body.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    body.extend_from_slice(payload);
    chunk(0, 0x03, &body)
}

const A: [u8; 4] = [192, 0, 2, 1];
const B: [u8; 4] = [192, 0, 2, 2];

/// Frames as raw IPv4 (LINKTYPE_RAW), 1 ms apart.
fn write_raw(path: &Path, packets: &[Vec<u8>]) {
    let frames: Vec<PcapFrame<'_>> = packets
        .iter()
        .enumerate()
        .map(|(i, p)| PcapFrame {
            ts_ns: 1_700_000_000_000_000_000 + i as i64 * 1_000_000,
            data: p,
            original_len: p.len() as u32,
        })
        .collect();
    common::write_pcap(path, link_type::RAW, false, false, &frames);
}

#[test]
fn packets_that_lie_about_their_lengths_are_malformed_with_a_reason() {
    let dir = out_dir("hostile-lies");
    let mut packets = vec![ipv4(A, B, &sctp(5000, 5000, 0, &init(7, 100, &[])))];
    // A DATA chunk whose length runs 2000 bytes past the packet.
    let mut overrun = data(100, b"hello");
    overrun[2..4].copy_from_slice(&2000u16.to_be_bytes());
    packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &overrun)));
    // An ASCONF whose ADD-IP parameter claims 300 bytes.
    let mut asconf = 1u32.to_be_bytes().to_vec();
    asconf.extend_from_slice(&[0x00, 0x05, 0x00, 0x08, 192, 0, 2, 1]);
    asconf.extend_from_slice(&[0xc0, 0x01, 0x01, 0x2c, 0, 0, 0, 1]);
    asconf.extend_from_slice(&[0x00, 0x05, 0x00, 0x08, 192, 0, 2, 9]);
    packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &chunk(0xc1, 0, &asconf))));
    // A SACK claiming 65 535 gap blocks and carrying two.
    let mut sack = 99u32.to_be_bytes().to_vec();
    sack.extend_from_slice(&65_535u32.to_be_bytes());
    sack.extend_from_slice(&65_535u16.to_be_bytes());
    sack.extend_from_slice(&0u16.to_be_bytes());
    sack.extend_from_slice(&[0, 2, 0, 3, 0, 5, 0xff, 0xff]);
    packets.push(ipv4(B, A, &sctp(5000, 5000, 7, &chunk(3, 0, &sack))));
    let path = dir.join("lies.pcap");
    write_raw(&path, &packets);
    let a = accounted(&path, &AnalysisOptions::default());
    assert_eq!(a.frames, 4);
    assert_eq!(a.accounting.sctp, 1, "the INIT");
    assert_eq!(a.accounting.sctp_malformed, 3);
    let reasons: Vec<(u64, &str)> = a
        .problems
        .iter()
        .map(|p| (p.frame, p.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert_eq!(reasons[0], (2, "chunk length runs past the packet"));
    assert_eq!(reasons[1].0, 3);
    assert_eq!(reasons[2].0, 4);
    assert!(reasons.iter().all(|(_, r)| !r.is_empty()));
}

#[test]
fn a_sack_with_huge_gap_blocks_costs_no_more_than_the_window() {
    // 16 000 gap blocks, each claiming 65 535 TSNs past a cumulative ack
    // far below the data: handled by clipping to the window (a scan would
    // be 10^9 steps).
    let dir = out_dir("hostile-gaps");
    let mut packets = vec![ipv4(A, B, &sctp(5000, 5000, 0, &init(7, 1000, &[])))];
    for tsn in 1000..1010 {
        packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &data(tsn, b"x"))));
    }
    let blocks = 16_000u16;
    let mut sack = 999u32.to_be_bytes().to_vec();
    sack.extend_from_slice(&65_535u32.to_be_bytes());
    sack.extend_from_slice(&blocks.to_be_bytes());
    sack.extend_from_slice(&0u16.to_be_bytes());
    for _ in 0..blocks {
        sack.extend_from_slice(&[0, 2, 0xff, 0xff]);
    }
    packets.push(ipv4(B, A, &sctp(5000, 5000, 7, &chunk(3, 0, &sack))));
    let path = dir.join("gaps.pcap");
    write_raw(&path, &packets);
    let a = accounted(&path, &AnalysisOptions::default());
    assert_eq!(a.accounting.sctp, 12);
    let gap_blocks: u64 = a.associations[0]
        .directions
        .iter()
        .map(|d| d.counters().gap_blocks)
        .sum();
    assert_eq!(gap_blocks, u64::from(blocks));
}

/// A SACK with one gap block (TSN `cumulative` + `end`, `start`..`end`).
fn sack(cumulative: u32, start: u16, end: u16) -> Vec<u8> {
    let mut body = cumulative.to_be_bytes().to_vec();
    body.extend_from_slice(&65_535u32.to_be_bytes());
    body.extend_from_slice(&1u16.to_be_bytes());
    body.extend_from_slice(&0u16.to_be_bytes());
    body.extend_from_slice(&start.to_be_bytes());
    body.extend_from_slice(&end.to_be_bytes());
    chunk(3, 0, &body)
}

#[test]
fn t3_expiries_over_a_wide_range_reported_missing_cost_nothing_per_tsn() {
    // 20 000 TSNs, one SACK reporting 19 998 of them missing once, then
    // 2 000 copies of TSN 1001 (T3 expiries of the one path): each
    // expiry sets the others' indications to 0 (Linux's
    // sctp_retransmit_mark), read when they are next counted, not
    // written over the range 2 000 times. Three new TSNs and SACKs then
    // give 1002 and 1003 two indications (1003's copy is no fast
    // retransmission: without the reset it would be its third) and 1002
    // a third (its copy is one).
    let dir = out_dir("hostile-t3-range");
    let n = 20_000u32;
    let expiries = 2_000u32;
    let mut packets = vec![ipv4(A, B, &sctp(5000, 5000, 0, &init(7, 1000, &[])))];
    for tsn in 1000..1000 + n {
        packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &data(tsn, b"x"))));
    }
    let last = (n - 1) as u16;
    packets.push(ipv4(B, A, &sctp(5000, 5000, 7, &sack(1000, last, last))));
    for _ in 0..expiries {
        packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &data(1001, b"x"))));
    }
    for k in 0..3u16 {
        let tsn = 1000 + n + u32::from(k);
        packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &data(tsn, b"x"))));
        packets.push(ipv4(
            B,
            A,
            &sctp(5000, 5000, 7, &sack(1000, last, last + 1 + k)),
        ));
        if k == 1 {
            packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &data(1003, b"x"))));
        }
    }
    packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &data(1002, b"x"))));
    let path = dir.join("t3-range.pcap");
    write_raw(&path, &packets);
    let a = accounted(&path, &AnalysisOptions::default());
    let total = |f: fn(&sctp_handover::track::tsn::DirectionCounters) -> u64| -> u64 {
        a.associations[0]
            .directions
            .iter()
            .map(|d| f(d.counters()))
            .sum()
    };
    assert_eq!(total(|c| c.retransmitted_chunks), u64::from(expiries) + 2);
    assert_eq!(total(|c| c.fast_retransmissions), 1);
}

#[test]
fn an_init_with_thousands_of_addresses_is_capped_and_said() {
    let dir = out_dir("hostile-addresses");
    let mut params = Vec::new();
    for i in 0..5000u32 {
        params.extend_from_slice(&[0x00, 0x05, 0x00, 0x08]);
        params.extend_from_slice(&(0x0a00_0000 + i).to_be_bytes());
    }
    let packets = vec![ipv4(A, B, &sctp(5000, 5000, 0, &init(7, 1, &params)))];
    let path = dir.join("addresses.pcap");
    write_raw(&path, &packets);
    let a = accounted(&path, &AnalysisOptions::default());
    assert_eq!(a.accounting.sctp, 1);
    let learned = a.associations[0].endpoints[0].addresses.len();
    assert_eq!(learned, 64, "the default cap");
    assert_eq!(a.counters.limits.addresses.first_frame, Some(1));
    assert!(
        a.limits
            .iter()
            .any(|l| l.contains("more than 64 addresses") && l.contains("frame 1")),
        "{:?}",
        a.limits
    );
}

#[test]
fn associations_that_never_end_are_tracked_up_to_the_cap_and_counted_beyond() {
    let dir = out_dir("hostile-many");
    let n = 30_000u32;
    let packets: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let port = 1024 + (i % 60_000) as u16;
            let tag = 1 + i;
            ipv4(A, B, &sctp(port, 2905, 0, &init(tag, i, &[])))
        })
        .collect();
    let path = dir.join("many.pcap");
    write_raw(&path, &packets);

    let all = accounted(&path, &AnalysisOptions::default());
    assert_eq!(all.associations.len(), n as usize);
    assert!(all.limits.is_empty(), "{:?}", all.limits);

    let mut capped = AnalysisOptions::default();
    capped.track.limits.associations = 1000;
    let a = accounted(&path, &capped);
    assert_eq!(a.associations.len(), 1000);
    assert_eq!(a.accounting.sctp, 1000);
    assert_eq!(a.accounting.sctp_untracked, u64::from(n) - 1000);
    assert_eq!(a.counters.limits.associations.first_frame, Some(1001));
    assert!(
        a.limits[0].contains("more than 1000 associations") && a.limits[0].contains("frame 1001"),
        "{:?}",
        a.limits
    );
}

#[test]
fn one_direction_only_forgets_tsns_past_the_window_and_says_so() {
    let dir = out_dir("hostile-window");
    let mut packets = vec![ipv4(A, B, &sctp(5000, 5000, 0, &init(7, 0, &[])))];
    for tsn in 0..3000u32 {
        packets.push(ipv4(A, B, &sctp(5000, 5000, 7, &data(tsn, b"x"))));
    }
    let path = dir.join("window.pcap");
    write_raw(&path, &packets);
    let mut options = AnalysisOptions::default();
    options.track.limits.tsn_window = 1000;
    let a = accounted(&path, &options);
    assert_eq!(a.counters.limits.tsn_window.count, 2000);
    assert_eq!(a.counters.limits.tsn_window.first_frame, Some(1002));
    let new: u64 = a.associations[0]
        .directions
        .iter()
        .map(|d| d.counters().new_chunks)
        .sum();
    assert_eq!(new, 3000);
}

/// An ASCONF (RFC 5061 §4.1.1) from `from` with one request per
/// `(parameter type, address)`.
fn asconf(serial: u32, from: [u8; 4], requests: &[(u16, [u8; 4])]) -> Vec<u8> {
    let address = |a: [u8; 4]| [&[0, 5, 0, 8][..], &a[..]].concat();
    let mut body = serial.to_be_bytes().to_vec();
    body.extend_from_slice(&address(from));
    for (i, (kind, a)) in requests.iter().enumerate() {
        body.extend_from_slice(&kind.to_be_bytes());
        body.extend_from_slice(&16u16.to_be_bytes());
        body.extend_from_slice(&(serial * 8 + i as u32).to_be_bytes());
        body.extend_from_slice(&address(*a));
    }
    chunk(0xC1, 0, &body)
}

#[test]
fn an_association_that_renumbers_back_and_forth_lists_only_each_handovers_own_exchanges() {
    // RFC 5061 §4.2.1/§4.2.2/§4.2.4 parameter types.
    const ADD_IP: u16 = 0xC001;
    const DELETE_IP: u16 = 0xC002;
    const SET_PRIMARY: u16 = 0xC004;
    let (mn, cn) = (0x1111_1111u32, 0x2222_2222u32);
    let addr = [[192, 0, 2, 1], [192, 0, 2, 3]];
    let init_ack = |tag: u32| {
        let mut c = init(tag, 1, &[]);
        c[0] = 2;
        c
    };
    let mut packets = vec![
        ipv4(addr[0], B, &sctp(5000, 6000, 0, &init(mn, 1, &[]))),
        ipv4(B, addr[0], &sctp(6000, 5000, mn, &init_ack(cn))),
    ];
    let mut tsn = 1u32;
    let renumberings = 50u32;
    for i in 0..renumberings {
        let (old, new) = (addr[(i % 2) as usize], addr[((i + 1) % 2) as usize]);
        for _ in 0..3 {
            packets.push(ipv4(B, old, &sctp(6000, 5000, mn, &data(tsn, b"x"))));
            tsn += 1;
        }
        let request = asconf(2 * i, old, &[(ADD_IP, new), (SET_PRIMARY, new)]);
        packets.push(ipv4(old, B, &sctp(5000, 6000, cn, &request)));
        let ack = chunk(0x80, 0, &(2 * i).to_be_bytes());
        packets.push(ipv4(B, old, &sctp(6000, 5000, mn, &ack)));
        packets.push(ipv4(B, new, &sctp(6000, 5000, mn, &data(tsn, b"x"))));
        tsn += 1;
        let delete = asconf(2 * i + 1, new, &[(DELETE_IP, old)]);
        packets.push(ipv4(new, B, &sctp(5000, 6000, cn, &delete)));
        let ack = chunk(0x80, 0, &(2 * i + 1).to_be_bytes());
        packets.push(ipv4(B, new, &sctp(6000, 5000, mn, &ack)));
    }
    let dir = out_dir("hostile-renumbering");
    let path = dir.join("renumbering.pcap");
    write_raw(&path, &packets);

    let a = accounted(&path, &AnalysisOptions::default());
    assert_eq!(a.handovers.len(), renumberings as usize);
    for (i, h) in a.handovers.iter().enumerate() {
        assert_eq!(
            h.class,
            sctp_handover::handover::SwitchClass::Planned,
            "{i}"
        );
        // Its own ADD-IP + SET-PRIMARY, and (after the first) the previous
        // handover's DELETE-IP of the address it now returns to — never
        // the exchanges of earlier renumberings.
        let serials: Vec<u32> = h.asconf.iter().map(|x| x.serial).collect();
        let i = i as u32;
        let expected = if i == 0 {
            vec![0]
        } else {
            vec![2 * i - 1, 2 * i]
        };
        assert_eq!(serials, expected, "handover {i}");
    }
    // The text summary lists the first 200 of its 250 event lines (two
    // ASCONFs, two ASCONF-ACKs and a path switch per renumbering) and says
    // how many more there are; the handover table has all 50 rows.
    let mut text = Vec::new();
    sctp_handover::output::summary::write(&mut text, &a).expect("write the summary");
    let text = String::from_utf8(text).expect("UTF-8");
    let event_lines = text.lines().filter(|l| l.starts_with("  frame ")).count();
    assert_eq!(event_lines, 200, "{text}");
    assert!(
        text.contains("  … and 50 more events (--format jsonl and --out list every one)"),
        "{text}"
    );
    let planned_rows = text.lines().filter(|l| l.contains(" planned ")).count();
    assert_eq!(planned_rows, renumberings as usize, "{text}");
}

/// More outstanding ASCONFs than the tracker remembers (64): the ones it
/// forgets stay counted unanswered, once, until a copy brings one back
/// (outstanding again, not counted twice) or an answer to it comes.
#[test]
fn unanswered_asconfs_beyond_the_cap_are_counted_once() {
    let dir = common::tempdir("asconf-cap");
    let (tag_a, tag_b) = (0x1111, 0x2222);
    let mut base = vec![
        ipv4(A, B, &sctp(1000, 2000, 0, &init(tag_a, 1, &[]))),
        ipv4(
            B,
            A,
            &sctp(2000, 1000, tag_a, &{
                let mut c = init(tag_b, 1, &[]);
                c[0] = 2; // INIT ACK
                c
            }),
        ),
        ipv4(A, B, &sctp(1000, 2000, tag_b, &chunk(10, 0, b"cook"))),
        ipv4(B, A, &sctp(2000, 1000, tag_a, &chunk(11, 0, &[]))),
        // A's serial 1, then B's serials 100..=163: 65 requests, the
        // first forgotten when B's 64th arrives.
        ipv4(A, B, &sctp(1000, 2000, tag_b, &asconf(1, A, &[]))),
    ];
    for serial in 100..164 {
        base.push(ipv4(
            B,
            A,
            &sctp(2000, 1000, tag_a, &asconf(serial, B, &[])),
        ));
    }
    let copy = ipv4(A, B, &sctp(1000, 2000, tag_b, &asconf(1, A, &[])));
    let answer = ipv4(
        B,
        A,
        &sctp(2000, 1000, tag_a, &chunk(0x80, 0, &1u32.to_be_bytes())),
    );
    for (name, extra, unanswered) in [
        ("none", vec![], 65),
        // The copy is outstanding again: the same 65 requests.
        ("copy", vec![copy.clone()], 65),
        // An answer to the forgotten request (unmatched: it was
        // forgotten) still answers it.
        ("answer", vec![answer.clone()], 64),
        ("answer-then-copy", vec![answer, copy], 64),
    ] {
        let path = dir.join(format!("{name}.pcap"));
        let mut packets = base.clone();
        packets.extend(extra);
        write_raw(&path, &packets);
        let a = analyze_file(&path, &AnalysisOptions::default()).expect("analysable");
        assert_eq!(a.associations.len(), 1, "{name}");
        assert_eq!(a.associations[0].unanswered_asconfs(), unanswered, "{name}");
    }
}
