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
                    d.pending.remove(i);
                }
                (None, _, true) if d.tsn(before).is_none() => {
                    if let Some(h) = waiting(handovers, *handed_on, p.index) {
                        h.sequence_gap_tsn = gap;
                        h.total_handover_latency =
                            Component::missing("TSN L (before the sequence gap) was not captured");
                    }
                    d.pending.remove(i);
                }
                _ => i += 1,
            }
        }
    }
}

/// Path confirmation: the last answered HEARTBEAT on the new path
/// before the switch.
pub(super) fn path_confirmation(
    heartbeats: &[HeartbeatRecord],
    to: PathId,
    switch: Mark,
) -> Component {
    heartbeats
        .iter()
        .filter(|h| h.path == to && h.frame < switch.frame)
        .filter_map(|h| h.ack.map(|ack| (h, ack)))
        .next_back()
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
