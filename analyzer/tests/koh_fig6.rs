//! Koh & Kim (2005), Fig. 6, rebuilt packet by packet from the listing in
//! ../shared/seeds/003_2353ba2cead002bd.txt: the 93 ms handover between
//! frame 12 (last DATA to the old address) and frame 21 (first DATA to the
//! new one), with frame 11 stamped before frame 10.

mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use sctp_handover::handover::SwitchClass;
use sctp_handover::time::Nanos;
use sctp_handover::wire::sctp::Packet as SctpPacket;

const FS: [u8; 4] = [192, 168, 0, 100];
const MT_OLD: [u8; 4] = [192, 168, 0, 101];
const MT_NEW: [u8; 4] = [192, 168, 0, 102];
const TAG_MT: u32 = 0x1111_1111;
const TAG_FS: u32 = 0x2222_2222;

fn chunk(kind: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let mut c = vec![kind, flags];
    c.extend_from_slice(&((4 + value.len()) as u16).to_be_bytes());
    c.extend_from_slice(value);
    c.resize((c.len() + 3) & !3, 0);
    c
}

fn be(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}

fn data(tsn: u32) -> Vec<u8> {
    let mut v = be(tsn).to_vec();
    v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, b'd', b'a', b't', b'a']);
    chunk(0, 3, &v)
}

fn sack(cum: u32) -> Vec<u8> {
    let mut v = be(cum).to_vec();
    v.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    chunk(3, 0, &v)
}

fn init(kind: u8, tag: u32, tsn: u32) -> Vec<u8> {
    let mut v = be(tag).to_vec();
    v.extend_from_slice(&[0, 1, 0, 0, 0, 10, 0, 10]);
    v.extend_from_slice(&be(tsn));
    if kind == 2 {
        // State cookie parameter.
        v.extend_from_slice(&[0, 7, 0, 8, 0xc0, 0x0c, 0x1e, 0x00]);
    }
    chunk(kind, 0, &v)
}

fn addr_param(a: [u8; 4]) -> Vec<u8> {
    let mut v = vec![0, 5, 0, 8];
    v.extend_from_slice(&a);
    v
}

/// ASCONF with one request (0xc001 ADD-IP, 0xc002 DELETE-IP, 0xc004
/// SET-PRIMARY) about `address`, sent from `lookup`.
fn asconf(serial: u32, lookup: [u8; 4], request: u16, address: [u8; 4]) -> Vec<u8> {
    let mut v = be(serial).to_vec();
    v.extend_from_slice(&addr_param(lookup));
    v.extend_from_slice(&request.to_be_bytes());
    v.extend_from_slice(&16u16.to_be_bytes());
    v.extend_from_slice(&be(serial));
    v.extend_from_slice(&addr_param(address));
    chunk(0xc1, 0, &v)
}

fn ip_sctp(src: [u8; 4], dst: [u8; 4], vtag: u32, chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut sctp = vec![0x13, 0x88, 0x13, 0x88];
    sctp.extend_from_slice(&be(vtag));
    sctp.extend_from_slice(&[0; 4]);
    for c in chunks {
        sctp.extend_from_slice(c);
    }
    let crc = SctpPacket::new_checked(&sctp[..])
        .expect("header")
        .compute_checksum();
    sctp[8..12].copy_from_slice(&crc.to_le_bytes());
    let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 132, 0, 0];
    ip[2..4].copy_from_slice(&((20 + sctp.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    ip.extend_from_slice(&sctp);
    ip
}

/// The 39 frames of Fig. 6: (time in µs, source, destination, chunks).
fn figure_6() -> Vec<(i64, Vec<u8>)> {
    let to_fs = |src, chunks: &[Vec<u8>]| ip_sctp(src, FS, TAG_FS, chunks);
    let to_mt = |dst, chunks: &[Vec<u8>]| ip_sctp(FS, dst, TAG_MT, chunks);
    vec![
        (0, ip_sctp(MT_OLD, FS, 0, &[init(1, TAG_MT, 100)])),
        (310, to_mt(MT_OLD, &[init(2, TAG_FS, 500)])),
        (
            465,
            to_fs(MT_OLD, &[chunk(10, 0, &[0xc0, 0x0c, 0x1e, 0x00])]),
        ),
        (577, to_mt(MT_OLD, &[chunk(11, 0, &[])])),
        (1136, to_fs(MT_OLD, &[data(100)])),
        (1304, to_mt(MT_OLD, &[sack(100)])),
        (1797, to_mt(MT_OLD, &[data(500)])),
        (1885, to_fs(MT_OLD, &[sack(500)])),
        (2189, to_mt(MT_OLD, &[data(501)])),
        (2600, to_fs(MT_OLD, &[asconf(1, MT_OLD, 0xc001, MT_NEW)])),
        (2081, to_mt(MT_OLD, &[chunk(0x80, 0, &be(1))])),
        (11279, to_mt(MT_OLD, &[data(502)])),
        (11398, to_fs(MT_OLD, &[sack(502)])),
        (103424, to_fs(MT_NEW, &[data(101)])),
        (103567, to_fs(MT_NEW, &[sack(502)])),
        (103649, to_fs(MT_NEW, &[data(102)])),
        (103721, to_fs(MT_NEW, &[asconf(2, MT_NEW, 0xc004, MT_NEW)])),
        (103893, to_mt(MT_NEW, &[sack(102)])),
        (103901, to_fs(MT_NEW, &[data(103)])),
        (103932, to_mt(MT_NEW, &[chunk(0x80, 0, &be(2))])),
        (104939, to_mt(MT_NEW, &[data(503)])),
        (105250, to_mt(MT_NEW, &[data(504)])),
        (105319, to_fs(MT_NEW, &[sack(504)])),
        (105370, to_mt(MT_NEW, &[data(505)])),
        (108309, to_fs(MT_NEW, &[data(104)])),
        (108411, to_fs(MT_NEW, &[asconf(3, MT_NEW, 0xc002, MT_OLD)])),
        (108532, to_mt(MT_NEW, &[sack(104)])),
        (108581, to_mt(MT_NEW, &[chunk(0x80, 0, &be(3))])),
        (108678, to_fs(MT_NEW, &[data(105)])),
        (108847, to_fs(MT_NEW, &[sack(505)])),
        (108975, to_fs(MT_NEW, &[data(106)])),
        (109120, to_mt(MT_NEW, &[sack(106)])),
        (113401, to_mt(MT_NEW, &[data(506)])),
        (113784, to_fs(MT_NEW, &[data(107)])),
        (313062, to_mt(MT_NEW, &[sack(107)])),
        (313718, to_fs(MT_NEW, &[sack(506)])),
        (313882, to_mt(MT_NEW, &[chunk(7, 0, &be(107))])),
        (313930, to_fs(MT_NEW, &[chunk(8, 0, &[])])),
        (316055, to_mt(MT_NEW, &[chunk(14, 0, &[])])),
    ]
}

#[test]
fn koh_kim_figure_6_handover_is_93_ms() {
    let dir = common::tempdir("fig6");
    let base: i64 = 1_100_000_000 * 1_000_000_000;
    let frames = figure_6();
    assert_eq!(frames.len(), 39);
    let encoded: Vec<(i64, Vec<u8>)> = frames
        .iter()
        .map(|(us, ip)| (base + us * 1000, common::ethernet(ip, &[])))
        .collect();
    let path = dir.join("koh-kim-fig6.pcap");
    common::write_frames(&path, 1, false, false, &encoded);

    // tshark reads our rebuilt figure as the listing shows it.
    let listing = common::tshark(&[
        "-r",
        path.to_str().expect("utf-8"),
        "-T",
        "fields",
        "-e",
        "sctp.chunk_type",
    ]);
    let types: Vec<&str> = listing.lines().collect();
    assert_eq!(
        (types[9], types[10], types[16], types[20]),
        ("193", "128", "193", "0")
    );

    let a = analyze_file(&path, &AnalysisOptions::default()).expect("analysable");
    assert_eq!(a.accounting.sctp, 39);
    // Frame 11 is stamped 0.519 ms before frame 10: reported, not fatal.
    assert_eq!(a.time_order.regressions, 1);
    assert_eq!(a.time_order.first_regression_frame, Some(11));
    assert_eq!(a.time_order.largest_regression, Nanos(519_000));

    assert_eq!(a.handovers.len(), 2);
    // FS -> MT: last DATA to the old address in frame 12, first DATA to the
    // new one in frame 21: 0.104939 - 0.011279 = 93.660 ms.
    let fs = a
        .handovers
        .iter()
        .find(|h| h.sender == 1)
        .expect("FS -> MT switch");
    assert_eq!(fs.switch_frame, 21);
    assert_eq!(fs.class, SwitchClass::Planned);
    let i = &fs.data_interrupt;
    assert_eq!(i.from.expect("from").frame, Some(12));
    assert_eq!(i.to.expect("to").frame, Some(21));
    assert_eq!(i.nanos, Some(Nanos(93_660_000)));
    // SET-PRIMARY (frame 17) -> first DATA to the new primary (frame 21).
    assert_eq!(
        fs.sender_recovery.nanos,
        Some(Nanos(104_939_000 - 103_721_000))
    );
    // Total handover latency: TSN 502 (frame 12) -> 503 (frame 21), both
    // acknowledged; no DATA was lost, so it equals the interrupt.
    assert_eq!(fs.sequence_gap_tsn, 503);
    assert_eq!(fs.total_handover_latency.nanos, Some(Nanos(93_660_000)));

    // MT -> FS: the MT's own DATA moves to its new address at frame 14
    // (from frame 5): 0.103424 - 0.001136.
    let mt = a
        .handovers
        .iter()
        .find(|h| h.sender == 0)
        .expect("MT -> FS switch");
    assert_eq!(mt.switch_frame, 14);
    assert_eq!(mt.class, SwitchClass::Planned);
    assert_eq!(
        mt.data_interrupt.nanos,
        Some(Nanos(103_424_000 - 1_136_000))
    );
    // ASCONF-ACK for ADD-IP (frame 11) -> first new DATA from the new
    // address (frame 14); frame 11's early stamp makes this 101.343 ms.
    assert_eq!(
        mt.sender_recovery.nanos,
        Some(Nanos(103_424_000 - 2_081_000))
    );
    // Network-layer disconnection of the MT: its last packet from .101
    // (frame 13) -> its first from .102 (frame 14).
    assert_eq!(
        mt.network_disconnection.nanos,
        Some(Nanos(103_424_000 - 11_398_000))
    );
    // The ADD-IP round trip is negative because of frame 11's stamp:
    // reported signed, not clamped.
    let add_ip = &mt.asconf[0];
    assert_eq!((add_ip.frame, add_ip.ack_frame), (10, Some(11)));
    assert!((add_ip.rtt_ms.expect("rtt") + 0.519).abs() < 1e-9);
    assert_eq!(
        mt.dar_overhead_bytes, 40,
        "one 32-byte ASCONF and its 8-byte ACK"
    );
}
