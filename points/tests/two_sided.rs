//! The two-sided handover record on every sample run (sample-captures/:
//! both captures of one harness run, one clock): it exists for every
//! handover both points saw, matched by the DATA it rests on whatever the
//! time between the two switches; each side's parts add up exactly to the
//! interrupt that side's analysis measured, loss and endpoint never
//! negative, or are null with the reason when the interrupt is no wait
//! (negative); and the moving ASCONF's one-way delay is the netem delay of
//! the link it took. Concrete values were checked by hand with tshark
//! (docs/metrics.md, "Two capture points").

mod common;
use common::{link_delays, run_dir};
use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use sctp_handover::handover::Handover;
use sctp_handover_points::two_sided::{analyze_two_sided, TwoSided, TwoSidedHandover, PARTS};
use sctp_handover_points::{PointInput, PointsOptions};
use std::path::Path;

const RUNS: [&str; 10] = [
    "bokor-failover",
    "bokor-failover-pf",
    "bokor-return",
    "eklund-sack-delay",
    "honda-dad",
    "honda-nodad",
    "koh-kim-1",
    "koh-kim-1-ack-lost",
    "koh-kim-1-ipv6",
    "koh-kim-2",
];

fn handovers(capture: &Path) -> Vec<Handover> {
    analyze_file(capture, &AnalysisOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", capture.display()))
        .handovers
}

fn inputs(name: &str) -> [PointInput; 2] {
    let dir = run_dir(name);
    [
        PointInput {
            name: "mn".into(),
            path: dir.join("mn.pcap"),
        },
        PointInput {
            name: "cn".into(),
            path: dir.join("cn.pcap"),
        },
    ]
}

fn analyze(inputs: &[PointInput; 2], options: &PointsOptions) -> (TwoSided, [usize; 2]) {
    let mn = handovers(&inputs[0].path);
    let cn = handovers(&inputs[1].path);
    let (_, two) = analyze_two_sided(inputs, options, [&mn, &cn], &mut ())
        .unwrap_or_else(|e| panic!("{}: {e}", inputs[0].path.display()));
    (two, [mn.len(), cn.len()])
}

pub fn two_sided_of(name: &str) -> (Vec<TwoSidedHandover>, [usize; 2]) {
    let (two, counts) = analyze(&inputs(name), &PointsOptions::default());
    assert!(two.one_sided.is_empty(), "{name}: {:?}", two.one_sided);
    (two.records, counts)
}

fn ms(v: Option<i64>) -> String {
    v.map_or("null".into(), |n| format!("{:.3}", n as f64 / 1e6))
}

#[test]
fn every_sample_handover_has_a_two_sided_record_whose_parts_add_up() {
    // (run, the sender's switch frame, the side's point): a negative
    // interrupt, not split. Linux's failovers send the first DATA on the
    // new path (a T3 retransmission) before the last on the old one (new
    // DATA still to the failing primary); in honda-nodad the MN's capture
    // also still sees the CN's DATA to its removed address.
    let expected_undecomposed = [
        ("bokor-failover", 77, "cn"),
        ("bokor-return", 76, "cn"),
        ("eklund-sack-delay", 66, "cn"),
        ("honda-nodad", 94, "cn"),
        ("honda-nodad", 94, "mn"),
    ];
    let mut undecomposed = Vec::new();
    for name in RUNS {
        let (records, counts) = two_sided_of(name);
        let delays = link_delays(name);
        // Each point's analysis sees both data directions' handovers; every
        // one is in exactly one record.
        assert_eq!(counts[0], counts[1], "{name}: {counts:?}");
        assert_eq!(records.len(), counts[0], "{name}");
        for t in &records {
            for side in [&t.sender, &t.receiver] {
                let parts: Vec<String> = PARTS.iter().map(|p| ms((p.get)(side))).collect();
                println!(
                    "{name}: {}→{} {} switch {}/{}: {} side {} (interrupt, owd, loss, endpoint){}",
                    t.sender_point,
                    t.receiver_point,
                    t.sender_class,
                    t.sender_switch_frame,
                    t.receiver_switch_frame,
                    side.point,
                    parts.join(" "),
                    side.missing
                        .as_deref()
                        .map(|m| format!(" missing: {m}"))
                        .unwrap_or_default()
                );
                match (
                    side.interrupt_ns,
                    side.one_way_delay_ns,
                    side.loss_ns,
                    side.endpoint_ns,
                ) {
                    (Some(i), Some(o), Some(l), Some(e)) => {
                        assert_eq!(o + l + e, i, "{name}: {side:?}");
                        assert!(l >= 0 && e >= 0, "{name}: {side:?}");
                        if side.point == t.sender_point {
                            assert_eq!(o, 0, "{name}: {side:?}");
                        }
                    }
                    // No wait to split: the parts are null together, with
                    // the reason.
                    (Some(i), None, None, None) => {
                        assert!(i < 0, "{name}: {side:?}");
                        assert!(
                            side.missing.as_deref().is_some_and(
                                |m| m.ends_with("the paths overlapped, no wait to split")
                            ),
                            "{name}: {side:?}"
                        );
                        undecomposed.push((name, t.sender_switch_frame, side.point.clone()));
                    }
                    _ => panic!("{name}: {side:?}"),
                }
            }
            if let Some(a) = &t.asconf {
                let mn_address = if t.sender_point == "mn" { a.src } else { a.dst };
                let mn_address = if a.requester_point == "mn" {
                    a.src
                } else {
                    mn_address
                };
                let delay = delays
                    .get(&mn_address)
                    .or_else(|| delays.get(&a.dst))
                    .copied();
                println!(
                    "  asconf {} from {} {}→{}: one-way {} ms (netem {delay:?}), peer processing {}, ack one-way {}, peer to first new DATA {}",
                    a.requests,
                    a.requester_point,
                    a.src,
                    a.dst,
                    ms(Some(a.one_way_delay_ns)),
                    ms(a.peer_processing_ns),
                    ms(a.ack_one_way_delay_ns),
                    ms(a.peer_to_first_new_data_ns)
                );
                let delay = delay.expect("the ASCONF's link");
                assert!(
                    (a.one_way_delay_ns as f64 / 1e6 - delay).abs() < 1.0,
                    "{name}: {a:?}"
                );
            }
        }
    }
    let expected: Vec<(&str, u64, String)> = expected_undecomposed
        .iter()
        .map(|&(n, f, p)| (n, f, p.to_owned()))
        .collect();
    assert_eq!(undecomposed, expected);
}

fn cn_to_mn(records: &[TwoSidedHandover], class: &str) -> TwoSidedHandover {
    records
        .iter()
        .find(|t| t.sender_point == "cn" && t.sender_class.as_str() == class)
        .unwrap_or_else(|| panic!("a CN → MN {class}: {records:?}"))
        .clone()
}

/// Values checked by hand with tshark (docs/metrics.md, "Two capture
/// points"; TSNs relative, as tshark shows them).
#[test]
fn the_decomposition_says_where_the_time_went() {
    // koh-kim-2, CN → MN: the MN's last DATA on the old path is CN frame
    // 57 (TSN 20); the CN's next DATA, frame 63 (50.011 ms later: its
    // pacing), and frame 66 went into the cut path; its first DATA on the
    // new path, frame 71, came 100.069 ms after frame 63. The CN's own
    // interrupt (frame 66 → 71) is pacing.
    let (records, _) = two_sided_of("koh-kim-2");
    let t = cn_to_mn(&records, "planned");
    assert_eq!((t.sender_switch_frame, t.receiver_switch_frame), (71, 81));
    assert_eq!(t.receiver.interrupt_ns, Some(150_098_000));
    assert_eq!(t.receiver.one_way_delay_ns, Some(18_000));
    assert_eq!(t.receiver.endpoint_ns, Some(50_011_000));
    assert_eq!(t.receiver.loss_ns, Some(100_069_000));
    assert_eq!(t.sender.interrupt_ns, Some(50_022_000));
    assert_eq!(t.sender.loss_ns, Some(0));
    assert_eq!(t.sender.endpoint_ns, Some(50_022_000));

    // bokor-failover: the CN retransmitted TSN 20 (first sent at CN frame
    // 50, lost in the cut path) to the alternate path at frame 57, and went
    // on sending new DATA (TSN 25–28) to the cut primary until frame 72:
    // its interrupt is negative, not split. The MN waited 450.168 ms: the
    // 90 ms path against the 5 ms one (85.170 ms), the CN's pacing from
    // TSN 19 (frame 47) to TSN 20 (50.072 ms), and TSN 20's T3 wait
    // (314.926 ms).
    let (records, _) = two_sided_of("bokor-failover");
    let t = cn_to_mn(&records, "failover");
    assert_eq!((t.sender_switch_frame, t.receiver_switch_frame), (77, 64));
    assert_eq!(
        (t.sender.from_frame, t.sender.to_frame),
        (Some(72), Some(57))
    );
    assert_eq!(t.sender.interrupt_ns, Some(-235_031_000));
    assert_eq!(
        (
            t.sender.one_way_delay_ns,
            t.sender.loss_ns,
            t.sender.endpoint_ns
        ),
        (None, None, None)
    );
    assert_eq!(
        t.sender.missing.as_deref(),
        Some("the sender sent DATA on the new path (cn frame 57) 235.031 ms before its last DATA on the old path (cn frame 72): the paths overlapped, no wait to split")
    );
    assert_eq!(t.receiver.interrupt_ns, Some(450_168_000));
    assert_eq!(t.receiver.one_way_delay_ns, Some(85_170_000));
    assert_eq!(t.receiver.endpoint_ns, Some(50_072_000));
    assert_eq!(t.receiver.loss_ns, Some(314_926_000));

    // bokor-failover-pf: the CN's first DATA on the new path (frame 55)
    // retransmits TSN 20, first sent at frame 46, before its last DATA on
    // the old path (frame 53): its whole interrupt is that wait.
    let (records, _) = two_sided_of("bokor-failover-pf");
    let t = cn_to_mn(&records, "failover");
    assert_eq!(
        (t.sender.from_frame, t.sender.to_frame),
        (Some(53), Some(55))
    );
    assert_eq!(t.sender.interrupt_ns, Some(63_332_000));
    assert_eq!(t.sender.loss_ns, Some(63_332_000));
    assert_eq!(t.sender.endpoint_ns, Some(0));
    assert_eq!(t.receiver.interrupt_ns, Some(348_642_000));
    assert_eq!(t.receiver.one_way_delay_ns, Some(35_440_000));
    assert_eq!(t.receiver.endpoint_ns, Some(49_866_000));
    assert_eq!(t.receiver.loss_ns, Some(263_336_000));

    // eklund-sack-delay: TSN 15 (CN frame 43, 99.979 ms after the MN's
    // last on the old path, TSN 14 at frame 41) was lost and sent again
    // with TSN 16 and 17 to the alternate path at frame 48, 200.164 ms
    // later.
    let (records, _) = two_sided_of("eklund-sack-delay");
    let t = cn_to_mn(&records, "failover");
    assert_eq!(t.receiver.interrupt_ns, Some(330_228_000));
    assert_eq!(t.receiver.one_way_delay_ns, Some(30_085_000));
    assert_eq!(t.receiver.endpoint_ns, Some(99_979_000));
    assert_eq!(t.receiver.loss_ns, Some(200_164_000));

    // bokor-return, back to the 5 ms path: the MN's last DATA on the 90 ms
    // path before the switch is TSN 59 (CN frame 127); TSN 60 (frame 129)
    // went on that path too and arrived after TSN 61 (frame 132), the
    // first on the 5 ms path: nothing was lost, the new path is 85.006 ms
    // faster, and the CN sent TSN 61 99.958 ms after TSN 59.
    let (records, _) = two_sided_of("bokor-return");
    let back = cn_to_mn(&records, "return");
    assert_eq!(back.receiver.interrupt_ns, Some(14_952_000));
    assert_eq!(back.receiver.one_way_delay_ns, Some(-85_006_000));
    assert_eq!(back.receiver.loss_ns, Some(0));
    assert_eq!(back.receiver.endpoint_ns, Some(99_958_000));
    assert_eq!(back.sender.endpoint_ns, Some(49_989_000));
}

/// A failover's two switches are matched through the DATA they rest on,
/// not by their times: the MN's switch is the CN's T3 retransmission to the
/// alternate path, the CN's its first new DATA there once the primary is
/// inactive, 394.959 ms later in bokor-failover and 959.759 ms in
/// eklund-sack-delay. With a pairing window of 200 ms, shorter than either,
/// both are still one two-sided record.
#[test]
fn a_failovers_switches_far_apart_are_one_handover() {
    let options = PointsOptions {
        window_ns: 200_000_000,
    };
    for (name, apart_ns) in [
        ("bokor-failover", 394_959_000),
        ("eklund-sack-delay", 959_759_000),
    ] {
        let (two, counts) = analyze(&inputs(name), &options);
        assert!(two.one_sided.is_empty(), "{name}: {:?}", two.one_sided);
        assert_eq!(two.records.len(), counts[0], "{name}");
        let t = cn_to_mn(&two.records, "failover");
        // One clock: the offset estimate is within a few µs of zero.
        let apart = t.sender_switch_ns - t.receiver_switch_ns;
        assert!((apart - apart_ns).abs() < 20_000, "{name}: {apart}");
    }
}

/// A handover whose other point's capture ends first is one-sided, with
/// the reason: bokor-return with either capture cut after frame 100
/// (`editcap -r … 1-100`), before the return to the first path (CN frame
/// 132, MN frame 136).
#[test]
fn a_handover_the_other_capture_missed_says_what_was_looked_for() {
    let dir = std::env::temp_dir().join(format!("sctp-two-sided-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for (cut_point, expected) in [
        (
            "mn",
            (
                "cn",
                132,
                "no handover of mn's analysis traces to this one (by the DATA it rests on, as cn sent it); its first DATA on the new path (cn frame 132) was not seen at mn",
            ),
        ),
        (
            "cn",
            (
                "mn",
                136,
                "none of the DATA it rests on (first DATA on the new path, mn frame 136; last DATA on the old path, mn frame 135) was seen at cn, where it was sent",
            ),
        ),
    ] {
        let mut points = inputs("bokor-return");
        let i = usize::from(cut_point == "cn");
        let cut = dir.join(format!("{cut_point}-cut.pcap"));
        let status = std::process::Command::new("editcap")
            .arg("-r")
            .arg(&points[i].path)
            .arg(&cut)
            .arg("1-100")
            .status()
            .expect("editcap runs (Wireshark's tools are a dependency)");
        assert!(status.success());
        points[i].path = cut;
        let (two, _) = analyze(&points, &PointsOptions::default());
        // The failover is before the cut: still two-sided.
        assert_eq!(two.records.len(), 1, "{cut_point}: {:?}", two.records);
        assert_eq!(two.records[0].sender_switch_frame, 76);
        assert_eq!(two.one_sided.len(), 1, "{cut_point}: {:?}", two.one_sided);
        let o = &two.one_sided[0];
        assert_eq!(
            (o.point.as_str(), o.switch_frame, o.reason.as_str()),
            expected,
            "{cut_point}"
        );
        assert_eq!(o.at_data_sender, Some(o.point == "cn"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
