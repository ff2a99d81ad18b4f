//! Data path switch detection and classification: on each switch, gathers
//! what the switch rests on and builds its [`Handover`] record.

use super::latency;
use super::mark::Mark;
use super::model::{
    AsconfExchange, CapturePoint, Component, Handover, HandoverWindow, ReceiverSilence, SwitchClass,
};
use super::state::{Association, HeartbeatRecord, PathData, Pending};
use super::{failover, recognition, HandoverEngine};
use crate::events::{EndpointId, Event, PathId};
use crate::time::Nanos;
use crate::wire::sctp_param::AsconfOp;
use crate::wire::serial::serial_lt;
use std::net::IpAddr;

impl HandoverEngine {
    pub(super) fn on_switch(
        &mut self,
        e: &Event,
        sender: EndpointId,
        from: Option<PathId>,
        to: PathId,
        tsn: u32,
    ) {
        let id = e.association;
        let Some(old) = from else {
            // First new DATA of the direction: a segment starts.
            let d = &mut self.assoc(id).directions[sender];
            d.current = Some(to);
            d.segment_start_frame = e.frame;
            return;
        };
        let switch = Mark {
            frame: e.frame,
            time: e.time,
        };
        self.assoc(id);
        let HandoverEngine {
            config,
            associations,
            latest,
            ..
        } = self;
        let a = associations.get_mut(id).expect("created above");
        let addr = |p: PathId, a: &Association| a.paths.get(usize::from(p)).copied();
        let (Some((old_src, old_dst)), Some((new_src, new_dst))) = (addr(old, a), addr(to, a))
        else {
            return;
        };
        let mobile = a.mobile;
        let d = &mut a.directions[sender];
        let old_data = d.path(old).clone();
        let new_data = d.path(to).clone();
        let (expiries, first_unanswered) = d.charged_expiries(old, &old_data);
        let returning = d.abandoned.contains(&to);
        let failed = d.failed.clone();
        let segment_first_tsn = d.segment_first_tsn.unwrap_or(tsn);
        let since = d.segment_start_frame;
        let segment_lowest = d.segment_lowest_retransmitted;

        // Data interrupt: last DATA on the old path before the switch → the
        // first DATA on the new path since the old segment began.
        let last_old = old_data
            .last_data
            .map(|m| m.point("last DATA on the old path"));
        let first_new = new_data
            .first_in_segment
            .map(|m| m.point("first DATA on the new path"));
        let data_interrupt = Component::from_points(
            last_old,
            first_new,
            "no DATA on the old path before the switch",
        );
        let new_data_gap = Component::from_points(
            old_data
                .last_new
                .map(|m| m.point("last new DATA on the old path")),
            Some(switch.point("first new DATA on the new path")),
            "no new DATA on the old path",
        );

        // Which endpoint moves, and between which of its addresses.
        let (old_addr, new_addr) = match mobile {
            Some(m) if m == sender => (Some(old_src), Some(new_src)),
            Some(_) => (Some(old_dst), Some(new_dst)),
            None => (None, None),
        };
        let moved = old_addr != new_addr;

        // The exchanges of this handover: those of the segment the switch
        // ends (an association that moves back and forth would otherwise
        // list its whole past with every handover).
        let of_segment = |x: &&AsconfExchange| x.frame >= since;
        // The request that took effect: the latest acknowledged one for
        // the address, else the latest sent (its components are timed
        // from its first transmission).
        let asconf_for = |op: AsconfOp, address: Option<IpAddr>| {
            let mut candidates = a
                .asconfs
                .iter()
                .filter(of_segment)
                .filter(|x| x.time <= switch.time || x.frame <= switch.frame)
                .filter(|x| x.ops.iter().any(|(o, ad)| *o == op && Some(*ad) == address));
            let latest = candidates.clone().next_back();
            candidates
                .rfind(|x| x.ack_frame.is_some_and(|f| f < switch.frame))
                .or(latest)
                .cloned()
        };
        let addip = asconf_for(AsconfOp::AddIp, new_addr);
        let setprim = asconf_for(AsconfOp::SetPrimary, new_addr);
        let planned = moved && (addip.is_some() || setprim.is_some())
            || a.asconfs.iter().filter(of_segment).any(|x| {
                x.frame < switch.frame
                    && x.ops.iter().any(|(o, ad)| {
                        matches!(o, AsconfOp::AddIp | AsconfOp::SetPrimary)
                            && (*ad == new_src || *ad == new_dst)
                    })
            });
        // A path that failed earlier (left by a failover, or inferred
        // inactive) and now carries new DATA again has recovered: that
        // is a return, whatever ASCONFs came before (an earlier
        // SET-PRIMARY for it does not make the return planned).
        let failed_earlier = failed.contains(&to) || a.has_failed(to);
        // What makes a switch planned even when the old path also timed
        // out: a SET-PRIMARY for the new address (the peer moves because
        // it was asked), or the mobile sender moving its own source after
        // ADD-IP. An ADD-IP alone does not move the peer's DATA: when the
        // old path then times out, the switch is a failover.
        let asked_to_move =
            setprim.is_some() || (moved && mobile == Some(sender) && addip.is_some());
        // The old path's silence, when that is what makes the switch a
        // failover (the receiver's capture).
        let mut receiver_silence = None;
        // A receiver's capture holds no T3 expiry, so an old path that fell
        // silent stands for them: an ADD-IP alone, without a request to
        // move, does not make such a switch planned. (koh-kim-2-lan with
        // SET-PRIMARY 250 ms after the cut: the first DATA the MN gets on
        // the new path is the CN's T3 retransmission to its alternate
        // destination, RFC 9260 §6.4.1, before any SET-PRIMARY.)
        // Only where the capture may be the receiver's: in the sender's
        // own capture its timeouts would be there, and a silence is only
        // a pause of its traffic.
        let silence = fell_silent(&old_data, &new_data)
            .filter(|_| !captured_at_sender(config.capture_point, mobile, sender));
        let (class, class_reason) = if let Some(first) = expiries.first().filter(|_| !asked_to_move)
        {
            let why = format!(
                "{} T3 expir{} on the old path from frame {}",
                expiries.len(),
                if expiries.len() == 1 { "y" } else { "ies" },
                first.frame
            );
            (SwitchClass::Failover, why)
        } else if failed_earlier {
            let why = "back to a path that failed earlier in the association".to_owned();
            (SwitchClass::Return, why)
        } else if planned && (asked_to_move || silence.is_none()) {
            let why = match (&addip, &setprim) {
                (_, Some(x)) | (Some(x), None) => {
                    format!(
                        "ASCONF serial {} at frame {} for the new address",
                        x.serial, x.frame
                    )
                }
                _ => "an earlier ASCONF of this segment added or made primary a new-path address"
                    .to_owned(),
            };
            (SwitchClass::Planned, why)
        } else if let Some(s) = silence {
            receiver_silence = Some(s);
            let why = format!(
                "{} ({:.3} ms over {} DATA); the sender's timeouts are not in this capture",
                s.summary(),
                s.interval.as_millis_f64(),
                s.data
            );
            (SwitchClass::Failover, why)
        } else if returning {
            let why = "back to a path this direction left earlier".to_owned();
            (SwitchClass::Return, why)
        } else {
            let why = "no ASCONF, T3 expiry or silence of the old path explains it".to_owned();
            (SwitchClass::Other, why)
        };

        let asconf: Vec<AsconfExchange> = a
            .asconfs
            .iter()
            .filter(of_segment)
            .filter(|x| x.frame < switch.frame)
            .filter(|x| {
                x.ops
                    .iter()
                    .any(|(_, ad)| Some(*ad) == new_addr || Some(*ad) == old_addr)
            })
            .cloned()
            .collect();
        let dar_overhead_bytes = asconf.iter().map(|x| x.bytes + x.ack_bytes).sum();

        let path_confirmation = latency::path_confirmation(&a.heartbeats, to, switch);

        let network_disconnection =
            latency::network_disconnection(a, config, switch, mobile, old_addr, new_addr, moved);

        let addip_sent = latency::addip_sent(config, addip.as_ref(), new_addr);
        let addip_ack = latency::addip_ack(addip.as_ref());
        let setprim_sent = latency::setprim_sent(setprim.as_ref(), addip_ack);
        let first_new_data = switch.point("first new DATA on the new path");
        let sender_recovery =
            latency::sender_recovery(mobile, sender, addip_ack, setprim.as_ref(), first_new_data);

        let failover = (!expiries.is_empty()).then(|| {
            let seen = failover::Seen {
                old_state: a.status(old),
                clears: a.health.as_ref().map_or(&[][..], |h| &h.clears),
                spurious: a.health.as_ref().map_or(&[][..], |h| &h.spurious),
            };
            failover::failover(
                &expiries,
                first_unanswered,
                config,
                switch,
                &new_data,
                first_new_data,
                old,
                seen,
            )
        });
        let class_reason = match &failover {
            Some(f) if class == SwitchClass::Failover => {
                format!("{class_reason}{}", failover::reason_suffix(f))
            }
            _ => class_reason,
        };

        let recognition = (class == SwitchClass::Return).then(|| {
            recognition::recognition(
                config,
                &a.heartbeats,
                to,
                &old_data,
                &new_data,
                switch,
                first_new_data,
            )
        });

        let handover = Handover {
            association: id,
            sender,
            from_path: old,
            to_path: to,
            from_src: old_src,
            from_dst: old_dst,
            to_src: new_src,
            to_dst: new_dst,
            class,
            class_reason,
            receiver_silence,
            switch_frame: switch.frame,
            switch_time: switch.time,
            switch_tsn: tsn,
            data_interrupt,
            new_data_gap,
            sequence_gap_tsn: tsn,
            total_handover_latency: Component::missing(
                "the TSNs around the sequence gap were not both acknowledged in the capture",
            ),
            network_disconnection,
            transport_latency: Component::missing(
                "needs the total handover latency and the network-layer disconnection",
            ),
            addip_transmissions: addip.as_ref().map(|x| x.transmissions),
            addip_sent,
            setprim_transmissions: setprim.as_ref().map(|x| x.transmissions),
            setprim_sent,
            sender_recovery,
            path_confirmation,
            asconf,
            dar_overhead_bytes,
            // Filled by `open_window` below.
            window: HandoverWindow::default(),
            failover,
            recognition,
        };
        *latest = Some(handover.clone());
        let a = associations.get_mut(id).expect("created above");
        let index = a.handed_on + a.handovers.len();
        a.handovers.push(Some(Box::new(handover)));
        let d = &mut a.directions[sender];
        d.open_window(&mut a.handovers, a.handed_on, index, switch, tsn);
        d.pending.push(Pending {
            index,
            switch_tsn: tsn,
            segment_first_tsn,
            lowest_retransmitted: segment_lowest.filter(|&l| serial_lt(l, tsn)),
        });
        // A new segment starts on the new path.
        if !d.abandoned.contains(&old) {
            d.abandoned.push(old);
        }
        if class == SwitchClass::Failover && !d.failed.contains(&old) {
            d.failed.push(old);
        }
        d.current = Some(to);
        d.segment_first_tsn = Some(tsn);
        d.segment_start_frame = switch.frame;
        d.segment_lowest_retransmitted = None;
        d.at_last_new = d.counters;
        for p in &mut d.paths {
            p.first_in_segment = None;
            p.in_segment = 0;
        }
        // The switch DATA itself is the new segment's first on `to`.
        let to_data = d.path(to);
        to_data.first_in_segment = Some(switch);
        to_data.in_segment = 1;
        // Exchanges older than every direction's segment are in no future
        // handover: the list stays as short as the association's present.
        if let Some(begin) = a.directions.segments_begin() {
            // (By the last transmission: a request still being sent
            // again keeps its exchange.)
            a.asconfs.retain(|x| x.last_frame >= begin);
            a.prune_health(begin);
            prune_heartbeats(&mut a.heartbeats, begin);
        }
        self.resolve_pending(id, sender);
    }
}

/// Forgets the HEARTBEATs sent before `begin` (where every direction's
/// current segment began) that no later switch can use: a switch's link
/// availability recognition looks only inside its segment, and its path
/// confirmation only at the last answered HEARTBEAT of its new path. Kept
/// per path: that one, and the last sent, which an answer may still match
/// (the tracker pairs an answer with the last HEARTBEAT of its path).
fn prune_heartbeats(heartbeats: &mut Vec<HeartbeatRecord>, begin: u64) {
    let before = heartbeats.partition_point(|h| h.frame < begin);
    let mut keep = vec![false; before];
    let mut last_sent: Vec<PathId> = Vec::new();
    let mut last_answered: Vec<PathId> = Vec::new();
    for (i, h) in heartbeats[..before].iter().enumerate().rev() {
        if !last_sent.contains(&h.path) {
            last_sent.push(h.path);
            keep[i] = true;
        }
        if h.ack.is_some() && !last_answered.contains(&h.path) {
            last_answered.push(h.path);
            keep[i] = true;
        }
    }
    let mut i = 0;
    heartbeats.retain(|_| {
        let kept = keep.get(i).copied().unwrap_or(true);
        i += 1;
        kept
    });
}

/// Whether the capture was taken at `sender`, the DATA's sender: at the
/// mobile node (`--capture-point mn`) when the mobile endpoint sends, at
/// the correspondent (`cn`) when its peer does. Not known without a
/// capture point at either end or a mobile endpoint (no ASCONF ADD-IP or
/// DELETE-IP tells which endpoint moves).
fn captured_at_sender(point: CapturePoint, mobile: Option<EndpointId>, sender: EndpointId) -> bool {
    match (point, mobile) {
        (CapturePoint::Mn, Some(m)) => m == sender,
        (CapturePoint::Cn, Some(m)) => m != sender,
        _ => false,
    }
}

/// How much longer than its usual pace the old path's silence before a
/// switch must be to count as a failover seen by the receiver. A sender
/// that merely changes path leaves a gap of about one DATA interval (two
/// when it bundles a message with the next); one that fails over first
/// waits for its T3 timer (at least RTO.Min, RFC 9260 §6.3.3) and its
/// retransmissions on the old path are lost. Three intervals still catch
/// low-intensity traffic (eklund-sack-delay: 3.3 intervals of 100 ms);
/// a stream sparser than RTO.Min leaves no such trace (docs/metrics.md).
const SILENCE_FACTOR: i64 = 3;

/// A failover as the receiver sees it (the sender's T3 expiries are not in
/// its capture: their retransmissions were lost on the old path): the
/// old path carried a paced stream of DATA in its segment (at least three
/// chunks), then nothing until DATA came on the new path at least
/// [`SILENCE_FACTOR`] mean intervals later (docs/metrics.md, "Data path
/// switch").
fn fell_silent(old: &PathData, new: &PathData) -> Option<ReceiverSilence> {
    let (first, last) = (old.first_in_segment?, old.last_data?);
    let resumed = new.first_in_segment?;
    if old.in_segment < 3 {
        return None;
    }
    let interval = Nanos(last.time.since(first.time).0 / i64::from(old.in_segment - 1));
    let silence = resumed.time.since(last.time);
    (interval.0 > 0 && silence.0 >= SILENCE_FACTOR * interval.0).then_some(ReceiverSilence {
        silence,
        interval,
        data: old.in_segment,
    })
}

#[cfg(test)]
mod tests {
    use crate::handover::{CapturePoint, HandoverConfig, SwitchClass};
    use crate::track::script::{self, Script, ADD_IP};
    use crate::track::TrackConfig;
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("address literal")
    }

    /// The mobile node (endpoint 0) adds A2, asks nothing more; the
    /// correspondent's DATA to A1 every 10 ms stops for 200 ms, then goes
    /// to A2 without a T3 expiry: the class of that switch where the
    /// capture was taken at `point`.
    fn class_at(point: CapturePoint) -> SwitchClass {
        let (a1, a2, c) = (ip("10.0.0.1"), ip("10.0.0.2"), ip("10.0.1.1"));
        let handover = HandoverConfig {
            capture_point: point,
            ..HandoverConfig::new()
        };
        let mut s = Script::new(TrackConfig::default(), handover);
        s.handshake(a1, &[a1], c);
        for k in 0..4 {
            s.send(
                10_000 + 10_000 * k,
                1,
                (c, a1),
                &[script::data(500 + k as u32)],
            );
        }
        // (Within the segment of new DATA on A1.)
        s.send(
            45_000,
            0,
            (a2, c),
            &[script::asconf(1, a2, &[(ADD_IP, a2)])],
        );
        s.send(45_100, 1, (c, a1), &[script::asconf_ack(1)]);
        s.send(240_000, 1, (c, a2), &[script::data(504)]);
        let (_, handovers) = s.finish();
        let [h] = &handovers[..] else {
            panic!("one handover: {handovers:?}");
        };
        h.class
    }

    #[test]
    fn the_receiver_silence_rule_is_not_applied_in_the_senders_own_capture() {
        // At the correspondent, the DATA's sender: its timeouts would be in
        // its capture, so the silence is a pause and the ADD-IP makes the
        // switch planned.
        assert_eq!(class_at(CapturePoint::Cn), SwitchClass::Planned);
        // At the mobile node, the receiver, or where not said: the
        // silence stands for the sender's timeouts.
        assert_eq!(class_at(CapturePoint::Mn), SwitchClass::Failover);
        assert_eq!(class_at(CapturePoint::Unknown), SwitchClass::Failover);
    }
}
