//! Concrete values on real kernel captures from the harness, checked by
//! hand against tshark listings and against the ground-truth event log.

mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions, FileAnalysis};
use sctp_handover::events::AssociationEndReason;
use sctp_handover::events::{AddressSource, AsconfOutcome, EventKind};
use sctp_handover::wire::sctp_param::AsconfOp;
use std::net::IpAddr;

fn ip(s: &str) -> IpAddr {
    s.parse().expect("address literal")
}

fn analyse(name: &str, side: &str) -> FileAnalysis {
    analyze_file(&common::sample(name, side), &AnalysisOptions::default()).expect("analysable")
}

#[test]
fn koh_kim_1_mobile_node_capture() {
    let a = analyse("koh-kim-1", "mn");
    assert_eq!(a.frames, 197);
    assert_eq!(a.accounting.sctp, 164);
    assert_eq!(a.accounting.not_sctp, 33, "IPv6 neighbour discovery frames");
    assert_eq!(a.associations.len(), 1);
    let assoc = &a.associations[0];
    assert_eq!(assoc.first_frame, 10);
    assert_eq!(assoc.end, Some(AssociationEndReason::ShutdownComplete));
    assert_eq!(assoc.end_frame, Some(197));

    // The MN's address set: the old address deleted by the acknowledged
    // DELETE-IP (frame 134), the new one added by ADD-IP (ack frame 77) and
    // confirmed by the HEARTBEAT ACK in frame 79.
    let mn = &assoc.endpoints[0];
    assert_eq!(mn.addresses.len(), 2);
    assert_eq!(mn.addresses[0].address, ip("198.51.100.101"));
    assert_eq!(mn.addresses[0].deleted_frame, Some(134));
    assert_eq!(mn.addresses[1].address, ip("198.51.100.102"));
    assert!(mn.addresses[1]
        .learned_from
        .contains(&AddressSource::Asconf));
    assert_eq!(mn.addresses[1].confirmed_frame, Some(79));
    assert_eq!(
        assoc.endpoints[1].primary_destination,
        Some(ip("198.51.100.102"))
    );

    // Four paths: each MN address to and from the CN.
    let paths: Vec<(IpAddr, IpAddr)> = assoc.paths.iter().map(|p| (p.src, p.dst)).collect();
    assert_eq!(
        paths,
        vec![
            (ip("198.51.100.101"), ip("198.51.100.100")),
            (ip("198.51.100.100"), ip("198.51.100.101")),
            (ip("198.51.100.100"), ip("198.51.100.102")),
            (ip("198.51.100.102"), ip("198.51.100.100")),
        ]
    );
    assert_eq!(
        (assoc.reverse_of(0), assoc.reverse_of(2)),
        (Some(1), Some(3))
    );
    assert_eq!(assoc.paths[0].data_new, 40);
    assert_eq!(assoc.paths[3].data_new, 30);
    assert_eq!(assoc.paths[1].data_new, 31);
    assert_eq!(assoc.paths[2].data_new, 40);

    // ASCONF / ASCONF-ACK pairs (tshark: frames 74/77, 104/107, 131/134).
    let mut pairs = Vec::new();
    for e in &a.events {
        if let EventKind::AsconfAck {
            request_frame,
            rtt_ms,
            results,
            ..
        } = &e.kind
        {
            let r = &results[0];
            pairs.push((
                request_frame.expect("matched"),
                e.frame,
                r.op,
                r.address,
                r.outcome,
                *rtt_ms,
            ));
        }
    }
    assert_eq!(pairs.len(), 3);
    let expected = [
        (74, 77, AsconfOp::AddIp, "198.51.100.102"),
        (104, 107, AsconfOp::SetPrimary, "198.51.100.102"),
        (131, 134, AsconfOp::DeleteIp, "198.51.100.101"),
    ];
    for (got, want) in pairs.iter().zip(expected) {
        assert_eq!(
            (got.0, got.1, got.2, got.3),
            (want.0, want.1, want.2, ip(want.3))
        );
        // A successful ASCONF-ACK from Linux carries no parameters.
        assert_eq!(got.4, AsconfOutcome::ImpliedSuccess);
        // Two 5 ms one-way delays, HZ=100 kernel: 10.0–10.2 ms.
        let rtt = got.5.expect("rtt");
        assert!((10.0..10.2).contains(&rtt), "ASCONF RTT {rtt}");
    }

    // The CN probes the new address (frame 78); the MN answers from its
    // old address (frame 79): the RTT belongs to the probed path 2.
    let hb = a
        .events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::HeartbeatAck {
                path,
                reply_path,
                request_frame,
                ..
            } => Some((e.frame, path, reply_path, request_frame)),
            _ => None,
        })
        .expect("one heartbeat ack");
    assert_eq!(hb, (79, 2, 0, Some(78)));
    // tshark: frame 79 at .259229, frame 78 at .259218.
    let p2 = &assoc.paths[2];
    assert_eq!(p2.hb_rtt.samples, 1);
    assert_eq!(p2.hb_rtt.min, Some(sctp_handover::time::Nanos(11_000)));
    assert_eq!(assoc.paths[2].confirmed_frame, Some(79));

    // New DATA moves: CN -> MN after SET-PRIMARY, MN -> CN after DELETE-IP.
    let moves: Vec<(u64, usize, Option<u16>, u16)> = a
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::DataPathChange {
                sender,
                from_path: Some(f),
                to_path,
                ..
            } => Some((e.frame, sender, Some(f), to_path)),
            _ => None,
        })
        .collect();
    assert_eq!(moves, vec![(109, 1, Some(1), 2), (132, 0, Some(0), 3)]);
    let d = &assoc.directions;
    assert_eq!(
        (d[0].counters().new_chunks, d[1].counters().new_chunks),
        (70, 71)
    );
    assert_eq!(
        d[0].counters().retransmitted_chunks + d[1].counters().retransmitted_chunks,
        0
    );
}

#[test]
fn asconf_capture_times_fall_inside_the_logged_syscalls() {
    // The kernel sends the ASCONF inside the setsockopt call, so its
    // capture time (MN side) lies between the logged before/after times.
    for scenario in ["koh-kim-1", "koh-kim-1-ipv6", "koh-kim-2"] {
        let a = analyse(scenario, "mn");
        let truth = common::ground_truth(scenario);
        let mut windows = truth
            .iter()
            .filter(|t| {
                matches!(
                    t.kind.as_str(),
                    "bindx_add" | "set_peer_primary" | "bindx_remove"
                )
            })
            .map(|t| (&t.kind, &t.time, &t.time_after));
        for e in &a.events {
            if let EventKind::Asconf {
                retransmission: false,
                requests,
                ..
            } = &e.kind
            {
                let (kind, before, after) = windows.next().expect("one logged action per ASCONF");
                let op = requests[0].op;
                let expected_kind = match op {
                    AsconfOp::AddIp => "bindx_add",
                    AsconfOp::SetPrimary => "set_peer_primary",
                    AsconfOp::DeleteIp => "bindx_remove",
                };
                assert_eq!(kind, expected_kind, "{scenario} frame {}", e.frame);
                let after = after.expect("time_after");
                assert!(
                    *before <= e.time && e.time <= after,
                    "{scenario}: ASCONF frame {} at {} outside [{before}, {after}]",
                    e.frame,
                    e.time
                );
            }
        }
        assert!(
            windows.next().is_none(),
            "{scenario}: every action produced an ASCONF"
        );
    }
}

#[test]
fn bokor_failover_correspondent_capture() {
    let a = analyse("bokor-failover", "cn");
    let assoc = &a.associations[0];
    // Both MN addresses come from the INIT (bound before connect).
    let mn = &assoc.endpoints[0];
    assert!(mn
        .addresses
        .iter()
        .all(|x| x.learned_from.contains(&AddressSource::Init)));
    assert_eq!(mn.addresses.len(), 2);
    let to_primary = assoc
        .path(ip("198.51.100.100"), ip("198.51.100.101"))
        .expect("path to primary");
    let to_alternate = assoc
        .path(ip("198.51.100.100"), ip("198.51.100.102"))
        .expect("path to alternate");
    let primary = &assoc.paths[usize::from(to_primary)];
    let alternate = &assoc.paths[usize::from(to_alternate)];
    // The cut primary path: three T3 expiries (one error each, RFC 9260
    // §8.2, however many packets each retransmits) and two unanswered
    // HEARTBEATs (frames 95 and 134, each found unanswered by the next:
    // 134, 161) make five errors, never cleared: inactive with the
    // sender's Path.Max.Retrans (2, at the third expiry, frame 75), not
    // with the RFC default 5 (five errors do not exceed it). The alternate
    // (90 ms one way) is confirmed and carries the rest.
    assert!(primary.active);
    assert_eq!((primary.max_error_count, primary.error_count), (5, 5));
    assert_eq!(primary.heartbeats_unanswered, 2);
    assert_eq!(primary.heartbeats_acked, 0);
    let mut options = AnalysisOptions::default();
    options.track.path_max_retrans = 2;
    let with_pmr_2 =
        analyze_file(&common::sample("bokor-failover", "cn"), &options).expect("analysable");
    let inactive: Vec<(u64, u32)> = with_pmr_2
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PathInactive { path, error_count } if path == to_primary => {
                Some((e.frame, error_count))
            }
            _ => None,
        })
        .collect();
    assert_eq!(inactive, vec![(75, 3)]);
    assert!(alternate.active);
    assert!(alternate.confirmed_frame.is_some());
    // Before the cut the MN answers the probe of .102 (90 ms one way) from
    // its primary .101 (5 ms): 95 ms. After the cut the answer returns over
    // .102 itself: 180 ms. Both samples belong to the probed path.
    assert_eq!(alternate.hb_rtt.samples, 2);
    let min = alternate.hb_rtt.min.expect("HB RTT").as_millis_f64();
    let max = alternate.hb_rtt.max.expect("HB RTT").as_millis_f64();
    assert!(
        (95.0..96.0).contains(&min),
        "HB RTT via the primary {min} ms"
    );
    assert!(
        (180.0..181.5).contains(&max),
        "HB RTT via the alternate {max} ms"
    );
    // 14 DATA retransmissions (tshark agrees), all sent on the alternate path.
    let dir = &assoc.directions[1];
    assert_eq!(dir.counters().retransmitted_chunks, 14);
    assert_eq!(alternate.data_retransmitted, 14);
    // New DATA: first on the primary, then on the alternate.
    let segments: Vec<u16> = dir.new_data_paths.iter().map(|s| s.path).collect();
    assert_eq!(segments, vec![to_primary, to_alternate]);
}

/// Unanswered ASCONFs are the tracker's: requests by sender and serial no
/// ASCONF-ACK in the capture answered, a copy counted with its request.
/// koh-kim-1-ack-lost's correspondent capture (tshark): ASCONF 55 answered
/// by 56, the copy 65 (same serial, the answer was lost before the mobile
/// node) answered again by 66, then ASCONFs 109 and 131 answered by 110
/// and 132. The summary shows the same count.
#[test]
fn unanswered_asconfs_with_answers_left_out() {
    let dir = common::tempdir("unanswered-asconfs");
    let src = common::sample("koh-kim-1-ack-lost", "cn");
    for (drop, unanswered) in [
        (&[][..], 0),
        // The copy's answer missing: its request was answered before it.
        (&[66][..], 0),
        // The first answer missing: the copy's answer answers the request.
        (&[56][..], 0),
        (&[56, 66][..], 1),
        (&[56, 66, 110, 132][..], 3),
        (&[110][..], 1),
    ] {
        let path = dir.join(format!("without-{drop:?}.pcap"));
        common::write_without(&path, &src, drop);
        let a = analyze_file(&path, &AnalysisOptions::default()).expect("analysable");
        assert_eq!(a.associations.len(), 1);
        assert_eq!(
            a.associations[0].unanswered_asconfs(),
            unanswered,
            "without frames {drop:?}"
        );
        let mut summary = Vec::new();
        sctp_handover::output::summary::write(&mut summary, &a).expect("summary");
        let summary = String::from_utf8(summary).expect("utf-8");
        let anomalies = summary
            .lines()
            .find_map(|l| l.trim().strip_prefix("anomalies: "))
            .unwrap_or("");
        let said = match unanswered {
            0 => "",
            1 => "1 unanswered ASCONF",
            3 => "3 unanswered ASCONFs",
            n => unreachable!("no case with {n}"),
        };
        assert_eq!(anomalies, said, "without frames {drop:?}: {summary}");
    }
}
