//! Latency components of a switch: total handover latency (resolved once
//! the TSNs around the sequence gap are acknowledged), network-layer
//! disconnection, transport-layer latency, ADDIP and SETPRIM sent times,
//! sender recovery and path confirmation.

use super::anchors::AnchorKind;
use super::mark::Mark;
use super::model::{AsconfExchange, Component, Handover, Point};
use super::state::{Association, Direction, HeartbeatRecord};
use super::{HandoverConfig, HandoverEngine};
use crate::events::{AssocId, EndpointId, PathId};
use crate::time::Nanos;
use crate::wire::serial::{serial_ge, serial_lt};
use std::net::IpAddr;

impl Direction {
    /// A retransmission of `tsn`: a candidate for L+1 of the current
    /// segment and of the switches still waiting for their total latency.
    pub(super) fn note_retransmission(&mut self, tsn: u32, already_acked: bool) {
        let in_segment = self
            .segment_first_tsn
            .is_some_and(|first| serial_ge(tsn, first));
        if in_segment && !already_acked {
            self.segment_lowest_retransmitted =
                Some(self.segment_lowest_retransmitted.map_or(tsn, |l| {
                    if serial_lt(tsn, l) {
                        tsn
                    } else {
                        l
                    }
                }));
        }
        for p in &mut self.pending {
            let below_switch = serial_lt(tsn, p.switch_tsn);
            let in_range = serial_ge(tsn, p.segment_first_tsn);
            if below_switch && in_range && !already_acked {
                p.lowest_retransmitted = Some(p.lowest_retransmitted.map_or(tsn, |l| {
                    if serial_lt(tsn, l) {
                        tsn
                    } else {
                        l
                    }
                }));
            }
        }
    }
}

impl Direction {
    /// The switch waiting at `i` of `pending` has its total latency: it
    /// settles unless its window is still open.
    fn resolved(&mut self, i: usize) {
        let p = self.pending.remove(i);
        self.settle_if_done(p.index);
    }
}

/// Transport-layer latency = total handover latency − network-layer
/// disconnection, once both are known (the latter is fixed at the switch).
fn transport_latency(h: &Handover) -> Component {
    match (
        h.total_handover_latency.nanos,
        h.network_disconnection.nanos,
    ) {
        (Some(total), Some(net)) => {
            let d = Nanos(total.0 - net.0);
            Component {
                ms: Some(d.as_millis_f64()),
                nanos: Some(d),
                from: None,
                to: None,
                missing: None,
            }
        }
        _ => h.transport_latency.clone(),
    }
}

/// The handover in slot `index`, still held (its total latency or its
/// window not yet settled).
/// `index` counts from the association's first switch; `handed_on` slots
/// have left the list.
pub(super) fn waiting(
    handovers: &mut [Option<Box<Handover>>],
    handed_on: usize,
    index: usize,
) -> Option<&mut Handover> {
    index
        .checked_sub(handed_on)
        .and_then(|i| handovers.get_mut(i))
        .and_then(|h| h.as_deref_mut())
}

impl HandoverEngine {
    /// Total handover latency (Honda): effective transmission of L+1 minus
    /// that of L, once both are acknowledged.
    pub(super) fn resolve_pending(&mut self, id: AssocId, sender: EndpointId) {
        let Some(Association {
            directions,
            handovers,
            handed_on,
            ..
        }) = self.associations.get_mut(id)
        else {
            return;
        };
        let d = &mut directions[sender];
        let mut i = 0;
        while i < d.pending.len() {
            let p = &d.pending[i];
            let gap = p.lowest_retransmitted.unwrap_or(p.switch_tsn);
            let before = gap.wrapping_sub(1);
            let acked = |t: u32| d.tsn(t).and_then(|x| x.effective);
            // Every TSN up to the switch must be acknowledged before the
            // lowest lost one is known for sure.
            let switch_acked = acked(p.switch_tsn).is_some();
            match (acked(before), acked(gap), switch_acked) {
                (Some(l), Some(l1), true) => {
                    // A waiting handover is never handed on (`take_part`).
                    if let Some(h) = waiting(handovers, *handed_on, p.index) {
                        h.sequence_gap_tsn = gap;
                        h.total_handover_latency = Component::between(
                            l.point("effective transmission of L"),
                            l1.point("effective transmission of L+1"),
                        );
                        h.transport_latency = transport_latency(h);
                    }
                    d.resolved(i);
                }
                (None, _, true) if d.tsn(before).is_none() => {
                    if let Some(h) = waiting(handovers, *handed_on, p.index) {
                        h.sequence_gap_tsn = gap;
                        h.total_handover_latency =
                            Component::missing("TSN L (before the sequence gap) was not captured");
                    }
                    d.resolved(i);
                }
                _ => i += 1,
            }
        }
    }
}

/// Path confirmation: the last answered HEARTBEAT on the new path
/// before the switch. `latest_answered` is the frame of the latest
/// answered HEARTBEAT on `to` (none: no HEARTBEAT on it was answered).
pub(super) fn path_confirmation(
    heartbeats: &[HeartbeatRecord],
    latest_answered: Option<u64>,
    to: PathId,
    switch: Mark,
) -> Component {
    // The HEARTBEATs are in frame order: a binary search finds the latest
    // answered one on `to` (or, were it not before the switch, where the
    // walk back begins) instead of walking back over every one kept.
    let end = match latest_answered {
        None => 0,
        Some(frame) if frame < switch.frame => heartbeats.partition_point(|h| h.frame <= frame),
        Some(_) => heartbeats.partition_point(|h| h.frame < switch.frame),
    };
    heartbeats[..end]
        .iter()
        .rev()
        .filter(|h| h.path == to)
        .find_map(|h| h.ack.map(|ack| (h, ack)))
        .map(|(h, ack)| {
            Component::between(
                Point::frame(h.frame, h.time, "HEARTBEAT on the new path"),
                ack.point("HEARTBEAT ACK"),
            )
        })
        .unwrap_or_else(|| {
            Component::missing("no answered HEARTBEAT on the new path before the switch")
        })
}

/// Network-layer disconnection of the mobile endpoint.
pub(super) fn network_disconnection(
    a: &Association,
    config: &HandoverConfig,
    switch: Mark,
    mobile: Option<EndpointId>,
    old_addr: Option<IpAddr>,
    new_addr: Option<IpAddr>,
    moved: bool,
) -> Component {
    let debut = match (mobile, new_addr) {
        (Some(m), Some(n)) => a.sources.debut(m, n),
        _ => None,
    };
    let anchors = &config.anchors;
    let down = anchors
        .iter()
        .filter(|x| {
            matches!(x.kind, AnchorKind::LinkDown | AnchorKind::AddrDown) && x.time <= switch.time
        })
        .rfind(|x| x.kind == AnchorKind::LinkDown || x.address == old_addr);
    let up = anchors.iter().rfind(|x| {
        x.kind == AnchorKind::AddrUp
            && x.address.is_some()
            && x.address == new_addr
            && x.time <= switch.time
    });
    let net_from = down
        .map(|x| {
            Point::anchor(
                x.time,
                if x.kind == AnchorKind::LinkDown {
                    "link_down event"
                } else {
                    "addr_down event"
                },
            )
        })
        .or_else(|| {
            debut
                .and_then(|(_, before)| before)
                .map(|m| m.point("last packet of the mobile endpoint from its old address"))
        });
    let net_to = up
        .map(|x| Point::anchor(x.time, "addr_up event"))
        .or_else(|| {
            debut.map(|(first, _)| {
                first.point("first packet of the mobile endpoint from its new address")
            })
        });
    if mobile.is_none() {
        Component::missing("no endpoint changed its addresses by ASCONF")
    } else if !moved {
        Component::missing("the mobile endpoint's address did not change in this switch")
    } else {
        Component::from_points(
            net_from,
            net_to,
            "the mobile endpoint had not sent from both its old and its new address by this switch",
        )
    }
}

/// ADDIP sent time: the `addr_up` event for the new address → the ASCONF
/// carrying ADD-IP for it.
pub(super) fn addip_sent(
    config: &HandoverConfig,
    addip: Option<&AsconfExchange>,
    new_addr: Option<IpAddr>,
) -> Component {
    match (addip, new_addr) {
        (Some(x), Some(n)) => {
            match config.anchors.iter().rfind(|an| {
                an.kind == AnchorKind::AddrUp && an.address == Some(n) && an.time <= x.time
            }) {
                Some(an) => Component::between(
                    Point::anchor(an.time, "addr_up event"),
                    Point::frame(x.frame, x.time, "ASCONF ADD-IP"),
                ),
                None => Component::missing(format!("no addr_up event for {n} (give --events)")),
            }
        }
        _ => Component::missing("no ASCONF ADD-IP for the new address"),
    }
}

/// The ASCONF-ACK that acknowledged the ADD-IP, if any.
pub(super) fn addip_ack(addip: Option<&AsconfExchange>) -> Option<Point> {
    addip.and_then(|x| {
        Some(Point::frame(
            x.ack_frame?,
            x.ack_time?,
            "ASCONF-ACK for ADD-IP",
        ))
    })
}

/// SETPRIM sent time: the ASCONF-ACK for the ADD-IP → the SET-PRIMARY.
pub(super) fn setprim_sent(
    setprim: Option<&AsconfExchange>,
    addip_ack: Option<Point>,
) -> Component {
    match (setprim, addip_ack) {
        (Some(x), Some(ack)) => {
            Component::between(ack, Point::frame(x.frame, x.time, "ASCONF SET-PRIMARY"))
        }
        (None, _) => Component::missing("no ASCONF SET-PRIMARY for the new address"),
        (_, None) => Component::missing("ADD-IP for the new address not acknowledged"),
    }
}

/// Sender sequence recovery time: the mobile sender's acknowledged ADD-IP,
/// else the SET-PRIMARY, → the first new DATA on the new path.
pub(super) fn sender_recovery(
    mobile: Option<EndpointId>,
    sender: EndpointId,
    addip_ack: Option<Point>,
    setprim: Option<&AsconfExchange>,
    first_new_data: Point,
) -> Component {
    if mobile == Some(sender) {
        match addip_ack {
            Some(ack) => Component::between(ack, first_new_data),
            None => Component::missing("no acknowledged ADD-IP for the new address"),
        }
    } else {
        match setprim {
            Some(x) => Component::between(
                Point::frame(x.frame, x.time, "ASCONF SET-PRIMARY"),
                first_new_data,
            ),
            None => Component::missing("no SET-PRIMARY for the new primary address"),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The latency components (docs/metrics.md, "Handover latency
    //! components"): the functions with their own inputs, and the total
    //! handover latency through the engine ([`Feed`]).
    use super::super::anchors::{Anchor, AnchorKind};
    use super::super::mark::Mark;
    use super::super::state::HeartbeatRecord;
    use super::super::switch::tests::{at, ip, only, Feed, CN, MN};
    use super::*;
    use crate::time::Timestamp;
    use crate::wire::sctp_param::AsconfOp;

    fn anchor(ms: i64, kind: AnchorKind, address: Option<IpAddr>) -> Anchor {
        Anchor {
            time: Timestamp(ms * 1_000_000),
            kind,
            address,
            interface: None,
        }
    }

    /// An exchange of `op` for `address`, first sent in frame `frame` at
    /// `ms`, answered in `ack` (frame, ms).
    fn exchange(
        frame: u64,
        ms: i64,
        op: AsconfOp,
        address: IpAddr,
        ack: Option<(u64, i64)>,
    ) -> AsconfExchange {
        AsconfExchange {
            serial: 1,
            sender: MN,
            ops: vec![(op, address)],
            frame,
            time: Timestamp(ms * 1_000_000),
            transmissions: 1,
            last_frame: frame,
            last_time: Timestamp(ms * 1_000_000),
            ack_frame: ack.map(|a| a.0),
            ack_time: ack.map(|a| Timestamp(a.1 * 1_000_000)),
            rtt_ms: None,
            bytes: 20,
            ack_bytes: 8,
        }
    }

    fn ms(c: &Component) -> Option<i64> {
        c.nanos.map(|n| n.0 / 1_000_000)
    }

    #[test]
    fn path_confirmation_is_the_last_answered_heartbeat_on_the_new_path_before_the_switch() {
        let hb = |path: PathId, frame: u64, ms: i64, ack: Option<Mark>| HeartbeatRecord {
            path,
            frame,
            time: Timestamp(ms * 1_000_000),
            ack,
            latest_time: Timestamp(ms * 1_000_000),
        };
        let heartbeats = [
            hb(1, 10, 100, Some(at(11, 130))),
            // The last answered one on path 1: 200 → 245 ms.
            hb(1, 20, 200, Some(at(21, 245))),
            // Unanswered, and another path's.
            hb(1, 30, 300, None),
            hb(0, 31, 310, Some(at(32, 311))),
            // After the switch (frame 40).
            hb(1, 41, 400, Some(at(42, 401))),
        ];
        // Path 1's latest answered is after the switch: the walk back
        // starts at the switch.
        let c = path_confirmation(&heartbeats, Some(41), 1, at(40, 350));
        assert_eq!(ms(&c), Some(45));
        assert_eq!(c.from.and_then(|p| p.frame), Some(20));
        assert_eq!(c.to.and_then(|p| p.frame), Some(21));
        // Before it: found by its frame.
        let c = path_confirmation(&heartbeats[..4], Some(20), 1, at(40, 350));
        assert_eq!(c.from.and_then(|p| p.frame), Some(20));
        assert_eq!(c.to.and_then(|p| p.frame), Some(21));
        let none = path_confirmation(&heartbeats[2..], Some(41), 1, at(40, 350));
        assert_eq!(none.ms, None);
        assert!(none.missing.is_some());
        let none = path_confirmation(&heartbeats[..4], None, 1, at(40, 350));
        assert!(none.missing.is_some());
    }

    #[test]
    fn addip_sent_runs_from_the_addr_up_event_to_the_first_add_ip() {
        let (a2, a3) = (ip("10.0.0.2"), ip("10.0.0.3"));
        let config = HandoverConfig {
            anchors: vec![
                anchor(100, AnchorKind::AddrUp, Some(a2)),
                // Another address's, and one after the ASCONF: not it.
                anchor(150, AnchorKind::AddrUp, Some(a3)),
                anchor(400, AnchorKind::AddrUp, Some(a2)),
            ],
            ..HandoverConfig::new()
        };
        let add = exchange(7, 191, AsconfOp::AddIp, a2, None);
        // 191 − 100 = 91 ms.
        let c = addip_sent(&config, Some(&add), Some(a2));
        assert_eq!(c.nanos, Some(Nanos(91_000_000)));
        // Without an addr_up event: not inferred.
        let c = addip_sent(&HandoverConfig::new(), Some(&add), Some(a2));
        assert_eq!(
            (c.ms, c.missing.as_deref()),
            (None, Some("no addr_up event for 10.0.0.2 (give --events)"))
        );
    }

    #[test]
    fn setprim_sent_runs_from_the_add_ips_asconf_ack_to_the_set_primary() {
        let a2 = ip("10.0.0.2");
        let add = exchange(7, 100, AsconfOp::AddIp, a2, Some((8, 130)));
        let setprim = exchange(9, 180, AsconfOp::SetPrimary, a2, None);
        let ack = addip_ack(Some(&add));
        assert_eq!(ack.and_then(|p| p.frame), Some(8));
        // 180 − 130 = 50 ms.
        assert_eq!(ms(&setprim_sent(Some(&setprim), ack)), Some(50));
        let unanswered = exchange(7, 100, AsconfOp::AddIp, a2, None);
        assert_eq!(addip_ack(Some(&unanswered)).map(|p| p.time), None);
        assert_eq!(
            setprim_sent(Some(&setprim), None).missing.as_deref(),
            Some("ADD-IP for the new address not acknowledged")
        );
    }

    #[test]
    fn sender_recovery_is_timed_from_the_add_ip_ack_for_a_mobile_sender_else_from_the_set_primary()
    {
        let a2 = ip("10.0.0.2");
        let add = exchange(7, 100, AsconfOp::AddIp, a2, Some((8, 130)));
        let setprim = exchange(9, 180, AsconfOp::SetPrimary, a2, None);
        let switch = at(12, 221).point("first new DATA on the new path");
        let ack = addip_ack(Some(&add));
        // The MN sends: ASCONF-ACK 130 → switch 221 = 91 ms.
        let mobile = sender_recovery(Some(MN), MN, ack, Some(&setprim), switch);
        assert_eq!(ms(&mobile), Some(91));
        // The CN sends: SET-PRIMARY 180 → switch 221 = 41 ms.
        let peer = sender_recovery(Some(MN), CN, ack, Some(&setprim), switch);
        assert_eq!(ms(&peer), Some(41));
        assert_eq!(sender_recovery(Some(MN), CN, ack, None, switch).ms, None);
    }

    /// The CN sends 500, 501, 502 on C → A1 (10, 20, 30 ms), switches
    /// with 503 to C → A2 at 40 ms; the MN, at `anchors`' addresses, has
    /// added A2 (36, 37 ms). Then `after` runs.
    fn total_latency(anchors: Vec<Anchor>, after: impl FnOnce(&mut Feed, [PathId; 4])) -> Handover {
        let config = HandoverConfig {
            anchors,
            ..HandoverConfig::new()
        };
        let (mut f, paths) = Feed::two_homed(config);
        let [c_a1, c_a2, _, a2_c] = paths;
        let a2 = f.addr(c_a2).1;
        for (k, tsn) in (500..503).enumerate() {
            f.new_data(10_000 * (k as i64 + 1), CN, c_a1, tsn);
        }
        let add = f.asconf(36_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(37_000, CN, c_a2, 1, add);
        f.new_data(40_000, CN, c_a2, 503);
        after(&mut f, paths);
        only(f.finish())
    }

    #[test]
    fn without_loss_the_total_handover_latency_is_the_switch_tsns_effective_transmission_minus_the_one_before(
    ) {
        // L + 1 = 503 (the switch TSN), L = 502: 40 − 30 = 10 ms.
        let h = total_latency(Vec::new(), |f, [_, _, _, a2_c]| {
            f.sack(60_000, a2_c, CN, 503, 0);
        });
        assert_eq!(h.sequence_gap_tsn, 503);
        assert_eq!(ms(&h.total_handover_latency), Some(10));
    }

    #[test]
    fn a_tsn_lost_in_the_switch_is_l_plus_1_and_its_retransmission_its_effective_transmission() {
        // 500 acknowledged; 501 and 502, lost on C → A1, sent again on
        // C → A2 at 300 and 301 ms: L + 1 = 501 (effective at 300 ms),
        // L = 500 (10 ms): 290 ms. Network-layer disconnection:
        // link_down 25 ms → addr_up of A2 35 ms = 10 ms; transport-layer
        // latency 290 − 10 = 280 ms.
        let a2 = ip("10.0.0.2");
        let anchors = vec![
            anchor(25, AnchorKind::LinkDown, None),
            anchor(35, AnchorKind::AddrUp, Some(a2)),
        ];
        let h = total_latency(anchors, |f, [_, c_a2, _, a2_c]| {
            f.sack(50_000, a2_c, CN, 500, 0);
            f.retransmit(300_000, CN, c_a2, 501, None);
            f.retransmit(301_000, CN, c_a2, 502, None);
            f.sack(320_000, a2_c, CN, 503, 0);
        });
        assert_eq!(h.sequence_gap_tsn, 501);
        assert_eq!(ms(&h.total_handover_latency), Some(290));
        assert_eq!(ms(&h.network_disconnection), Some(10));
        assert_eq!(ms(&h.transport_latency), Some(280));
    }

    #[test]
    fn the_total_handover_latency_waits_for_the_switch_tsn_to_be_acknowledged() {
        // 500..502 acknowledged, the switch TSN 503 never.
        let h = total_latency(Vec::new(), |f, [_, _, _, a2_c]| {
            f.sack(60_000, a2_c, CN, 502, 0);
        });
        assert_eq!(h.total_handover_latency.ms, None);
        assert_eq!(
            h.total_handover_latency.missing.as_deref(),
            Some("the TSNs around the sequence gap were not both acknowledged in the capture")
        );
        assert_eq!(h.transport_latency.ms, None);
    }

    #[test]
    fn without_events_the_network_disconnection_runs_between_the_mobile_endpoints_packets() {
        // The MN's last packet from A1 is its SACK at 20 ms, its first
        // from A2 the ADD-IP at 36 ms: 16 ms.
        let (mut f, [c_a1, c_a2, a1_c, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        f.new_data(10_000, CN, c_a1, 500);
        f.sack(20_000, a1_c, CN, 500, 0);
        f.new_data(30_000, CN, c_a1, 501);
        let add = f.asconf(36_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(37_000, CN, c_a2, 1, add);
        f.new_data(40_000, CN, c_a2, 502);
        let h = only(f.finish());
        assert_eq!(ms(&h.network_disconnection), Some(16));
        assert_eq!(h.network_disconnection.to.and_then(|p| p.frame), Some(add));
    }

    #[test]
    fn the_network_disconnection_is_negative_when_the_new_address_was_up_before_the_old_went_down()
    {
        // addr_up of A2 at 35 ms, addr_down of A1 at 38 ms: −3 ms. An
        // addr_down of another address is not the old one's.
        let (a1, a2, a3) = (ip("10.0.0.1"), ip("10.0.0.2"), ip("10.0.0.3"));
        let anchors = vec![
            anchor(35, AnchorKind::AddrUp, Some(a2)),
            anchor(38, AnchorKind::AddrDown, Some(a1)),
            anchor(39, AnchorKind::AddrDown, Some(a3)),
        ];
        let h = total_latency(anchors, |_, _| {});
        assert_eq!(h.network_disconnection.nanos, Some(Nanos(-3_000_000)));
    }

    #[test]
    fn the_network_disconnection_needs_a_mobile_endpoint() {
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        f.new_data(10_000, CN, c_a1, 500);
        f.new_data(20_000, CN, c_a2, 501);
        let h = only(f.finish());
        assert_eq!(
            h.network_disconnection.missing.as_deref(),
            Some("no endpoint changed its addresses by ASCONF")
        );
    }

    #[test]
    fn a_switchs_path_confirmation_is_its_new_paths_last_answered_heartbeat() {
        // The CN's HEARTBEAT to A2 at 20 ms, answered from A1 at 32.5 ms
        // (Linux answers from its primary): 12.5 ms.
        let (mut f, [c_a1, c_a2, a1_c, _]) = Feed::two_homed(HandoverConfig::new());
        f.new_data(10_000, CN, c_a1, 500);
        let hb = f.heartbeat(20_000, CN, c_a2);
        f.heartbeat_ack(32_500, MN, a1_c, c_a2, hb);
        f.new_data(40_000, CN, c_a2, 501);
        let h = only(f.finish());
        assert_eq!(h.path_confirmation.nanos, Some(Nanos(12_500_000)));
    }
}
