//! Address confirmation (RFC 9260 §5.4) on real captures, as Linux keeps
//! it (docs/metrics.md, "Heartbeats and confirmation"): the handshake's
//! addresses confirmed implicitly and without an event, an address listed
//! in an INIT or added by ASCONF confirmed by its first HEARTBEAT ACK, and
//! a destination never confirmed never potentially failed or inactive.

mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions, FileAnalysis};
use sctp_handover::events::EventKind;
use std::net::IpAddr;

fn ip(s: &str) -> IpAddr {
    s.parse().expect("address literal")
}

fn confirmations(a: &FileAnalysis) -> Vec<(u64, IpAddr)> {
    a.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PathConfirmed { address, .. } => Some((e.frame, address)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_handshake_confirms_without_an_event_a_listed_address_at_its_heartbeat_ack() {
    // bokor-failover at the CN: the MN's INIT (frame 3) comes from
    // 198.51.100.101 and lists .101 and .102; the INIT ACK (frame 4) comes
    // from the CN's 198.51.100.100. The CN's first HEARTBEAT to .102 is
    // answered in frame 21 (the kernel notifies SCTP_ADDR_CONFIRMED for it
    // in every harness run); the MN's HEARTBEAT to .100, answered in frame
    // 40, confirms nothing new (the kernel notifies nothing).
    let capture = common::sample("bokor-failover", "cn");
    let a = analyze_file(&capture, &AnalysisOptions::default()).expect("analysable");
    assert_eq!(confirmations(&a), vec![(21, ip("198.51.100.102"))]);
    let assoc = &a.associations[0];
    let mn = &assoc.endpoints[0];
    let used = mn
        .addresses
        .iter()
        .find(|x| x.address == ip("198.51.100.101"));
    let listed = mn
        .addresses
        .iter()
        .find(|x| x.address == ip("198.51.100.102"));
    let (Some(used), Some(listed)) = (used, listed) else {
        panic!("the MN's two addresses: {:?}", mn.addresses);
    };
    assert!(used.handshake && !used.unconfirmed);
    assert!(!listed.handshake && !listed.unconfirmed);
    assert_eq!(listed.confirmed_frame, Some(21));
    let cn = &assoc.endpoints[1].addresses[0];
    assert_eq!(cn.address, ip("198.51.100.100"));
    assert!(cn.handshake);
    assert_eq!(cn.confirmed_frame, Some(40), "its first HEARTBEAT ACK");
    assert!(assoc.paths.iter().all(|p| !p.unconfirmed));
}

#[test]
fn an_address_added_by_asconf_is_confirmed_by_its_heartbeat_ack() {
    // koh-kim-1 at the MN: ADD-IP of 198.51.100.102 acknowledged in frame
    // 77, the CN's HEARTBEAT to it answered in frame 79.
    let capture = common::sample("koh-kim-1", "mn");
    let a = analyze_file(&capture, &AnalysisOptions::default()).expect("analysable");
    assert_eq!(confirmations(&a), vec![(79, ip("198.51.100.102"))]);
}

#[test]
fn a_destination_never_confirmed_is_never_potentially_failed() {
    // orion-belt/tempo pfcp_fail.pcap: the INIT (frame 21) from
    // 192.168.74.198 also lists 192.168.75.198, which never answers: the
    // peer's three HEARTBEATs to it (frames 57, 70, 77) go unanswered.
    // Two errors counted, no state change (Linux leaves it UNCONFIRMED
    // without a notification); with the defaults (PFMR 0) the analyzer
    // used to infer it potentially failed at frame 70.
    let Some(dir) = common::public_captures_if_present() else {
        return;
    };
    let capture = dir.join("files/orion-belt__tempo__pfcp_fail.pcap");
    let a = analyze_file(&capture, &AnalysisOptions::default()).expect("analysable");
    let assoc = &a.associations[0];
    let path = assoc
        .paths
        .iter()
        .find(|p| p.dst == ip("192.168.75.198"))
        .expect("the path to the listed address");
    assert_eq!(path.id, 2);
    assert!(path.unconfirmed);
    assert_eq!((path.heartbeats_sent, path.heartbeats_unanswered), (3, 2));
    assert_eq!(path.error_count, 2);
    assert_eq!(path.status().as_str(), "active");
    assert!(!a.events.iter().any(|e| matches!(
        e.kind,
        EventKind::PathPotentiallyFailed { .. } | EventKind::PathInactive { .. }
    )));
    let listed = assoc.endpoints[0]
        .addresses
        .iter()
        .find(|x| x.address == ip("192.168.75.198"))
        .expect("listed in the INIT");
    assert!(listed.unconfirmed && !listed.handshake);
    assert_eq!(confirmations(&a), vec![]);
}
