//! Handover components on real kernel captures, checked against the
//! harness's ground truth (events.jsonl) and tshark frame listings.

mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions, FileAnalysis};
use sctp_handover::events::EventKind;
use sctp_handover::handover::{anchors, SwitchClass, WindowEnd};
use sctp_handover::time::{Nanos, Timestamp};
use sctp_handover::track::path::PathStatus;
use sctp_handover::wire::sctp_param::AsconfOp;

fn analyse(name: &str, side: &str, rto_ms: Option<i64>) -> FileAnalysis {
    let mut options = AnalysisOptions::default();
    let events = common::repo_root()
        .join("sample-captures")
        .join(name)
        .join("events.jsonl");
    options.handover.anchors = anchors::load(&events).expect("events.jsonl");
    // Analysed with the kernel's Path.Max.Retrans and potentially-failed
    // state, from the run's meta.json.
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(events.with_file_name("meta.json")).expect("meta.json"),
    )
    .expect("meta.json is JSON");
    let sctp = &meta["sctp"];
    options.track.path_max_retrans = sctp["path_max_retrans"].as_u64().expect("pmr") as u32;
    options.track.pf_retrans = (sctp["pf_enable"] == true)
        .then(|| sctp["pf_retrans"].as_u64().expect("pf_retrans") as u32);
    if let Some(r) = rto_ms {
        options.track.rto.min = Nanos::from_millis(r);
        options.track.rto.max = Nanos::from_millis(r);
        options.handover.rto_max = Some(Nanos::from_millis(r));
    }
    analyze_file(&common::sample(name, side), &options).expect("analysable")
}

/// (time, time_after) of the first ground-truth record of `kind`.
fn truth(name: &str, kind: &str) -> (Timestamp, Option<Timestamp>) {
    common::ground_truth(name)
        .into_iter()
        .find(|t| t.kind == kind)
        .map(|t| (t.time, t.time_after))
        .expect("record present")
}

#[test]
fn bokor_failover_pmr_rto_and_detection() {
    // RTO.min = RTO.max = 200 ms, Path.Max.Retrans = 2, pf_enable = 0.
    let a = analyse("bokor-failover", "cn", Some(200));
    assert_eq!(a.handovers.len(), 1);
    let h = &a.handovers[0];
    assert_eq!(h.class, SwitchClass::Failover);
    assert_eq!(
        (h.from_dst.to_string(), h.to_dst.to_string()),
        ("198.51.100.101".into(), "198.51.100.102".into())
    );
    let f = h.failover.as_ref().expect("failover details");
    // PMR + 1 = 3 T3 expiries before new DATA moves (RFC 9260 §8.2).
    assert_eq!(f.expiries.len(), 3);
    assert_eq!(f.observed_pmr, Some(2));
    // The configured RTO, to within the UML kernel's 10 ms tick (HZ = 100).
    let rto = f.rto_estimate_ms.expect("RTO estimate");
    assert!((200.0..=210.0).contains(&rto), "RTO estimate {rto} ms");
    for r in &f.implied_rto_ms {
        assert!((200.0..=210.0).contains(r), "implied RTO {r} ms");
    }
    // Eq. (4): after the first expiry the T3 timer runs PMR x RTO more
    // (within one tick per run) ...
    let timing_out: f64 = f.implied_rto_ms.iter().sum();
    assert!(
        (400.0..=420.0).contains(&timing_out),
        "T3 running time {timing_out} ms"
    );
    // ... and each run starts only when the next DATA goes out on the failed
    // path, at most one 50 ms message interval after the expiry.
    let span = f.expiries[2].time.since(f.expiries[0].time).as_millis_f64();
    assert!(
        span >= timing_out && span <= timing_out + 2.0 * 50.0,
        "expiry span {span} ms"
    );
    let fixed_rto = f.predicted_fixed_rto_ms.expect("PMR × RTO");
    assert!((fixed_rto - 2.0 * rto).abs() < 1e-9);
    // Detection starts at the logged link_down.
    let (down, _) = truth("bokor-failover", "link_down");
    let det = f.detection.from.expect("start");
    assert_eq!((det.frame, det.time), (None, down));
    // ... and ends at the first retransmission on the alternate path: the
    // first expiry (tshark: frame 57, TSN 3740425277 to .102).
    assert_eq!(f.detection.to.expect("end").frame, Some(57));
    assert_eq!(f.expiries[0].frame, 57);
    assert_eq!(f.failover_time.to.expect("end").frame, Some(h.switch_frame));
    // The interrupt is negative: the alternate carried retransmissions
    // before the primary's last new DATA (make-before-break, signed).
    assert!(h.data_interrupt.ms.expect("interrupt") < 0.0);
}

#[test]
fn honda_dad_network_layer_and_addip_sent_time() {
    let a = analyse("honda-dad", "mn", None);
    let (removed, _) = truth("honda-dad", "addr_down");
    let (usable, _) = truth("honda-dad", "addr_up");
    let (bindx, bindx_after) = truth("honda-dad", "bindx_add");
    let h = a
        .handovers
        .iter()
        .find(|h| h.sender == 1)
        .expect("CN -> MN switch");
    // The MN sent ADD-IP but never SET-PRIMARY (it is not in the
    // capture, nor in the CN's kernel log): the CN's DATA moves to the new
    // address only after its old path timed out, which is a failover
    // (docs/metrics.md, "Data path switch").
    assert_eq!(h.class, SwitchClass::Failover, "{}", h.class_reason);
    assert!(h.class_reason.contains("T3 expir"), "{}", h.class_reason);
    // Network-layer disconnection: old address removed -> DAD done.
    assert_eq!(h.network_disconnection.nanos, Some(usable.since(removed)));
    assert!(
        h.network_disconnection.nanos.expect("value") > Nanos::from_millis(1000),
        "DAD takes over a second"
    );
    // ADDIP sent time: addr_up -> the ADD-IP ASCONF, which the kernel
    // sends inside the logged bindx call (MN-side capture).
    let addip = &h.addip_sent;
    let sent = addip.to.expect("ASCONF").time;
    assert!(
        bindx <= sent && sent <= bindx_after.expect("after"),
        "ASCONF at {sent}"
    );
    assert_eq!(addip.nanos, Some(sent.since(usable)));
}

#[test]
fn bokor_return_link_availability_recognition() {
    let a = analyse("bokor-return", "cn", Some(200));
    let classes: Vec<SwitchClass> = a.handovers.iter().map(|h| h.class).collect();
    assert_eq!(classes, vec![SwitchClass::Failover, SwitchClass::Return]);
    let back = &a.handovers[1];
    let r = back.recognition.as_ref().expect("recognition");
    let (up, _) = truth("bokor-return", "link_up");
    assert_eq!(r.link_up_to_heartbeat.from.expect("link_up").time, up);
    // tshark: the first HEARTBEAT to 198.51.100.101 after the link came
    // back is frame 130, the first DATA to it frame 132.
    assert_eq!(r.link_up_to_heartbeat.to.expect("HB").frame, Some(130));
    assert_eq!(r.heartbeat_to_data.to.expect("DATA").frame, Some(132));
    // Eq. (1): the next heartbeat comes within RTO + 1.5 x HB.Interval.
    let hb = r.link_up_to_heartbeat.ms.expect("value");
    assert!(hb <= 200.0 + 1.5 * 500.0, "{hb} ms");
}

#[test]
fn bokor_failover_counter_cleared_between_expiries() {
    // A sweep run (RTO 200 ms, PMR 2) with five T3 expiries charged to the
    // cut primary. TSN 24, timed out on the alternate, is resent on the
    // primary (frame 58); the SACK for it (frame 59, acknowledging its
    // copy on the alternate) clears the primary's counter; the primary's
    // second expiry, which came before (TSNs 25-26 sent at frames 50/52,
    // 200 ms earlier), only shows after it (frames 60-61). The kernel
    // counts the last three (the harness test kernel_truth reads its
    // counter): PMR 2, not 4.
    let capture =
        common::repo_root().join("sample-sweeps/bokor-failover/rto=200,pmr=2/r01/cn.pcap");
    let mut options = AnalysisOptions::default();
    options.track.path_max_retrans = 2;
    options.track.rto.min = Nanos::from_millis(200);
    options.track.rto.max = Nanos::from_millis(200);
    options.handover.rto_max = Some(Nanos::from_millis(200));
    let a = analyze_file(&capture, &options).expect("analysable");
    let f = a.handovers[0].failover.as_ref().expect("failover");
    let counts: Vec<(u64, u32)> = f
        .expiries
        .iter()
        .map(|e| (e.frame, e.error_count))
        .collect();
    assert_eq!(counts, vec![(46, 1), (60, 0), (62, 1), (64, 2), (67, 3)]);
    assert_eq!(f.observed_pmr, Some(2));
    // The expiries from the third on retransmit on the primary itself,
    // which restarts its T3 timer: each later expiry comes one RTO (and a
    // tick) after. The second, seen late, implies 237 ms; the median is
    // the configured 200 ms within a tick.
    let implied: Vec<i64> = f.implied_rto_ms.iter().map(|x| x.round() as i64).collect();
    assert_eq!(implied, vec![237, 210, 210, 210]);
    let rto = f.rto_estimate_ms.expect("RTO estimate");
    assert!((200.0..=210.5).contains(&rto), "RTO estimate {rto} ms");
    let inactive_at = |a: &FileAnalysis| -> Vec<u64> {
        a.events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::PathInactive { path: 1, .. }))
            .map(|e| e.frame)
            .collect()
    };
    assert_eq!(inactive_at(&a), vec![67]);
    // Without the sender's RTO.Max the held-back expiry counts after the
    // clear: one too many, so the primary is inferred inactive one expiry
    // early (frame 64). The path's counter then stops (Linux counts no
    // error of an inactive path), but the failover's expiries go on
    // counting, as a sender with a higher Path.Max.Retrans would: the
    // observed PMR is 3, one too many, as the expiry itself.
    options.track.rto.max = Nanos::from_millis(60_000);
    let a = analyze_file(&capture, &options).expect("analysable");
    let f = a.handovers[0].failover.as_ref().expect("failover");
    let counts: Vec<(u64, u32)> = f
        .expiries
        .iter()
        .map(|e| (e.frame, e.error_count))
        .collect();
    assert_eq!(counts, vec![(46, 1), (60, 1), (62, 2), (64, 3), (67, 4)]);
    assert_eq!(f.observed_pmr, Some(3));
    assert_eq!(inactive_at(&a), vec![64]);
}

#[test]
fn receiver_side_failover_from_the_old_paths_silence() {
    // At the mobile node the correspondent's T3 retransmissions on the cut
    // path never arrive: the switch is a failover by the old path's silence.
    // tshark: the last DATA to 198.51.100.101 is frame 58 (1.129919 s), the
    // first to 198.51.100.102 frame 64 (1.580087 s); 20 DATA to .101 from
    // frame 8 at a 50 ms pace.
    let a = analyse("bokor-failover", "mn", None);
    assert_eq!(a.handovers.len(), 1);
    let h = &a.handovers[0];
    assert_eq!(h.class, SwitchClass::Failover);
    assert!(h.failover.is_none(), "no expiry is in this capture");
    assert_eq!(h.data_interrupt.from.expect("last old").frame, Some(58));
    assert_eq!(h.data_interrupt.to.expect("first new").frame, Some(64));
    assert!(
        h.class_reason.contains("fell silent for 450.168 ms")
            && h.class_reason.contains("over 20 DATA"),
        "{}",
        h.class_reason
    );
    // The link went down inside the silence.
    let (down, _) = truth("bokor-failover", "link_down");
    assert!(h.data_interrupt.to.expect("first new").time > down);

    // The return to the primary is not a silence: the alternate path
    // carried DATA up to the switch.
    let a = analyse("bokor-return", "mn", None);
    let classes: Vec<SwitchClass> = a.handovers.iter().map(|h| h.class).collect();
    assert_eq!(classes, vec![SwitchClass::Failover, SwitchClass::Return]);

    // With the sender's capture the expiries decide, and say so.
    let a = analyse("bokor-failover", "cn", Some(200));
    assert!(a.handovers[0].class_reason.starts_with("3 T3 expiries"));
}

#[test]
fn honda_nodad_asconf_sent_again_is_one_exchange_timed_from_its_first() {
    // The MN sends its ADD-IP from the removed address and the CN's answer
    // never reaches it: the kernel resends the same serial (RFC 5061 §5.1,
    // T-4). tshark: ASCONF chunks in frames 55, 70, 89, 257, 282 and 307.
    let a = analyse("honda-nodad", "mn", None);
    let asconfs: Vec<(u64, bool, u32, Option<u64>)> = a
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Asconf {
                retransmission,
                transmission,
                first_frame,
                ..
            } => Some((e.frame, *retransmission, *transmission, *first_frame)),
            _ => None,
        })
        .collect();
    assert_eq!(
        asconfs,
        vec![
            (55, false, 1, Some(55)),
            (70, true, 2, Some(55)),
            (89, true, 3, Some(55)),
            (257, true, 4, Some(55)),
            (282, true, 5, Some(55)),
            (307, true, 6, Some(55)),
        ]
    );
    // Every answer after the first (frame 58) answers a copy: repeated.
    let repeated: Vec<(u64, Option<u64>, bool)> = a
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::AsconfAck {
                request_frame,
                repeated,
                ..
            } => Some((e.frame, *request_frame, *repeated)),
            _ => None,
        })
        .collect();
    assert_eq!(repeated[0], (58, Some(55), false));
    assert!(repeated[1..].iter().all(|r| r.2), "{repeated:?}");
    // The switch (frame 94) comes after three transmissions; ADDIP sent is
    // timed from the first, the addr_up event's address.
    let h = &a.handovers[0];
    assert_eq!(h.switch_frame, 94);
    assert_eq!(h.addip_transmissions, Some(3));
    assert_eq!(h.addip_sent.to.expect("ASCONF").frame, Some(55));
    let x = &h.asconf[0];
    assert_eq!(
        (x.frame, x.transmissions, x.last_frame, x.ack_frame),
        (55, 3, 89, Some(90))
    );
}

#[test]
fn koh_kim_2_window_holds_the_retransmissions_after_the_switch() {
    // CN side: new DATA moves to 198.51.100.102 at frame 71 (TSN 23 in
    // tshark's relative numbering); TSNs 21 and 22, first sent on the old
    // path, are retransmitted to .102 at frames 80 and 82 (tshark's TSN
    // analysis marks both); the SACK of frame 87 is the first whose
    // cumulative TSN ack covers TSN 22.
    let a = analyse("koh-kim-2", "cn", None);
    let h = a
        .handovers
        .iter()
        .find(|h| h.sender == 1)
        .expect("CN -> MN switch");
    assert_eq!(h.switch_frame, 71);
    assert_eq!(h.window.until_tsn, h.switch_tsn.wrapping_sub(1));
    assert_eq!(h.window.retransmissions, 2);
    assert_eq!(h.window.lost_in_switch, 2);
    assert_eq!(h.window.end_reason, WindowEnd::CumulativeAck);
    assert_eq!(h.window.end.and_then(|p| p.frame), Some(87));
    // Both by one T3 expiry of the old path (the kernel's SctpT3RtxExpireds:
    // 1, SctpFastRetransmits: 0): after SET-PRIMARY, SFR-CACC gives TSNs
    // left on the old path no miss indications (docs/metrics.md).
    let copies: Vec<(u64, bool, bool)> = a
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Retransmission {
                fast, t3_expiry, ..
            } => Some((e.frame, fast, t3_expiry)),
            _ => None,
        })
        .collect();
    assert_eq!(copies, vec![(80, false, true), (82, false, false)]);
    // Every sample's handovers say where their window ended.
    for name in [
        "koh-kim-1",
        "koh-kim-1-ipv6",
        "koh-kim-2",
        "honda-dad",
        "honda-nodad",
        "bokor-failover",
        "bokor-return",
        "eklund-sack-delay",
    ] {
        for side in ["mn", "cn"] {
            for h in analyse(name, side, None).handovers {
                assert_eq!(
                    h.window.end_reason,
                    WindowEnd::CumulativeAck,
                    "{name} {side} switch at frame {}",
                    h.switch_frame
                );
                let end = h.window.end.and_then(|p| p.frame).expect("end frame");
                assert!(end > h.switch_frame, "{name} {side}: {end}");
            }
        }
    }
}

#[test]
fn bokor_failover_spurious_alternate_expiry_and_eklund_counter_reset() {
    // bokor-failover, CN: RTO 200 ms is below the alternate path's RTT
    // plus delayed SACK (180 + 50 ms). tshark: TSN 3740425286 goes to .102
    // in frame 77 (new DATA, the switch) and again in frame 83, inside the
    // alternate path's expiry that began at frame 81; the SACK of frame 96
    // reports it as a duplicate TSN: both copies arrived, that expiry was
    // spurious.
    let a = analyse("bokor-failover", "cn", Some(200));
    let spurious: Vec<(u64, u16, u64, u32)> = a
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SpuriousExpiry {
                path,
                expiry_frame,
                tsn,
                ..
            } => Some((e.frame, *path, *expiry_frame, *tsn)),
            _ => None,
        })
        .collect();
    assert_eq!(spurious, vec![(96, 2, 81, 3740425286)]);
    // eklund-sack-delay, CN: a SACK (frame 52) clears the failing
    // primary's error counter between its expiries, so the failover takes
    // four expiries with Path.Max.Retrans 2; the record says so.
    let a = analyse("eklund-sack-delay", "cn", Some(200));
    let h = &a.handovers[0];
    let f = h.failover.as_ref().expect("failover");
    assert_eq!(f.expiries.len(), 4);
    assert_eq!(
        f.counter_resets.iter().map(|p| p.frame).collect::<Vec<_>>(),
        vec![Some(52)]
    );
    assert_eq!(f.old_path_state, PathStatus::Inactive);
    assert!(
        h.class_reason.contains("cleared in frame 52"),
        "{}",
        h.class_reason
    );
    assert!(a.events.iter().any(|e| e.frame == 52
        && matches!(
            e.kind,
            EventKind::ErrorCounterCleared {
                path: 1,
                error_count: 1,
                by: "sack"
            }
        )));
}

#[test]
fn koh_kim_1_ack_lost_is_one_exchange_of_two_transmissions() {
    // The ADD-IP's ASCONF-ACK is lost once (eth1's link detached while it
    // is on the way back). tshark: ASCONF in MN frames 63 and 72, its one
    // ASCONF-ACK in frame 79; at the CN, ASCONF 55 and 65, each answered
    // (56, 66).
    let asconfs = |a: &FileAnalysis| -> Vec<(u64, bool, u32, Option<u64>)> {
        a.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Asconf {
                    retransmission,
                    transmission,
                    first_frame,
                    requests,
                    ..
                } if requests.iter().any(|r| r.op == AsconfOp::AddIp) => {
                    Some((e.frame, *retransmission, *transmission, *first_frame))
                }
                _ => None,
            })
            .collect()
    };
    let acks = |a: &FileAnalysis| -> Vec<(u64, Option<u64>, bool)> {
        a.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::AsconfAck {
                    request_frame,
                    repeated,
                    results,
                    ..
                } if results.iter().any(|r| r.op == AsconfOp::AddIp) => {
                    Some((e.frame, *request_frame, *repeated))
                }
                _ => None,
            })
            .collect()
    };
    let mn = analyse("koh-kim-1-ack-lost", "mn", None);
    assert_eq!(
        asconfs(&mn),
        vec![(63, false, 1, Some(63)), (72, true, 2, Some(63))]
    );
    assert_eq!(acks(&mn), vec![(79, Some(72), false)]);
    let cn = analyse("koh-kim-1-ack-lost", "cn", None);
    assert_eq!(
        asconfs(&cn),
        vec![(55, false, 1, Some(55)), (65, true, 2, Some(55))]
    );
    assert_eq!(acks(&cn), vec![(56, Some(55), false), (66, Some(65), true)]);
    // ADDIP sent from the first transmission, at both capture points, in
    // every handover; one exchange of two transmissions.
    for (a, first) in [(&mn, 63), (&cn, 55)] {
        for h in &a.handovers {
            assert_eq!(h.addip_transmissions, Some(2));
            assert_eq!(h.addip_sent.to.and_then(|p| p.frame), Some(first));
            let x = h
                .asconf
                .iter()
                .find(|x| x.ops.iter().any(|(op, _)| *op == AsconfOp::AddIp))
                .expect("the ADD-IP exchange");
            assert_eq!((x.frame, x.transmissions), (first, 2));
        }
    }
}

#[test]
fn bokor_failover_pf_fails_over_at_the_potentially_failed_state() {
    // The kernel's defaults (pf_enable 1, pf_retrans 0) with PMR 5: the
    // CN's kernel notified SCTP_ADDR_POTENTIALLY_FAILED for the primary at
    // its first T3 expiry and moved new DATA at once (events.jsonl;
    // harness/tests/kernel_agreement.rs compares the times).
    let a = analyse("bokor-failover-pf", "cn", Some(200));
    let pf: Vec<(u64, u16, u32)> = a
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PathPotentiallyFailed { path, error_count } => {
                Some((e.frame, path, error_count))
            }
            _ => None,
        })
        .collect();
    assert_eq!(pf, vec![(55, 1, 1)]);
    let h = &a.handovers[0];
    assert_eq!(h.class, SwitchClass::Failover);
    let f = h.failover.as_ref().expect("failover");
    assert_eq!(f.old_path_state, PathStatus::PotentiallyFailed);
    assert_eq!((f.observed_pf_retrans, f.observed_pmr), (Some(0), None));
    assert_eq!(f.expiries.len(), 1);
    assert!(
        h.class_reason.contains("potentially failed (RFC 7829)"),
        "{}",
        h.class_reason
    );
    // Within 15 ms of the kernel's SCTP_ADDR_POTENTIALLY_FAILED.
    let log = std::fs::read_to_string(
        common::repo_root().join("sample-captures/bokor-failover-pf/events.jsonl"),
    )
    .expect("events.jsonl");
    let kernel_pf = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line"))
        .find(|v| v["kind"] == "kernel_addr_change" && v["state"] == "potentially_failed")
        .and_then(|v| anchors::parse_time(v["time"].as_str()?))
        .expect("the kernel's notification");
    let ours = a
        .events
        .iter()
        .find(|e| e.frame == 55)
        .expect("frame 55")
        .time;
    assert!(
        ours.since(kernel_pf).0.abs() <= 15_000_000,
        "{} ms from the kernel's",
        ours.since(kernel_pf).as_millis_f64()
    );
}
