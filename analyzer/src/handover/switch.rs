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

        let path_confirmation = latency::path_confirmation(
            &a.heartbeats,
            a.latest_answered_heartbeat
                .get(usize::from(to))
                .copied()
                .flatten(),
            to,
            switch,
        );

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
        if handover.failover.is_some() {
            let latest = a.held_failovers.values().next_back().map(|&(_, l)| l);
            let latest = latest.map_or(switch.time, |l| l.max(switch.time));
            a.held_failovers.insert(index, (switch.time, latest));
        }
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
    // Amortised: once pruned, the part before `begin` holds only keepers,
    // so a switch whose segments began where the last prune stopped (a
    // direction whose switch never settles) walks that short front, never
    // the HEARTBEATs kept after it.
    if keep.iter().all(|&k| k) {
        return;
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
pub(super) mod tests {
    //! The switch classes and the components computed at the switch, from
    //! the engine's own input: the tracker's events and observations, fed
    //! in the tracker's order by [`Feed`] (also used by the tests of
    //! `latency.rs`, `window.rs` and `failover.rs`).
    use crate::events::PathId;
    use crate::events::{AsconfRequestEvent, EndpointId, Event, EventKind, EventSink, Observation};
    use crate::handover::{
        CapturePoint, Handover, HandoverConfig, HandoverEngine, ReceiverSilence, SwitchClass,
        RECEIVER_FAILOVER,
    };
    use crate::time::{Nanos, Timestamp};
    use crate::track::script::{self, Script, ADD_IP};
    use crate::track::TrackConfig;
    use crate::wire::sctp_param::AsconfOp;
    use std::collections::BTreeMap;
    use std::net::IpAddr;

    pub(in crate::handover) fn ip(s: &str) -> IpAddr {
        s.parse().expect("address literal")
    }

    /// The mobile node (endpoint 0) and the correspondent (endpoint 1).
    pub(in crate::handover) const MN: EndpointId = 0;
    pub(in crate::handover) const CN: EndpointId = 1;
    /// Chunk bytes of every ASCONF and ASCONF-ACK the feed sends.
    pub(in crate::handover) const ASCONF_BYTES: usize = 20;
    pub(in crate::handover) const ASCONF_ACK_BYTES: usize = 8;

    /// The handover engine of association 0, fed what the tracker would
    /// emit for each packet, in its order (a DATA chunk's observation
    /// before its `data_path_change`, a SACK's observation before its
    /// acknowledged TSNs). Times are in µs.
    pub(in crate::handover) struct Feed {
        pub(in crate::handover) engine: HandoverEngine,
        frame: u64,
        last_time: Timestamp,
        paths: Vec<(IpAddr, IpAddr)>,
        current: [Option<PathId>; 2],
        /// Per sender, each TSN not yet acknowledged with its last
        /// transmission (its effective one when a SACK covers it).
        unacked: [BTreeMap<u32, (u64, Timestamp, PathId)>; 2],
        /// Per sender, the ASCONF serials sent and their transmissions.
        serials: [BTreeMap<u32, u32>; 2],
    }

    impl Feed {
        pub(in crate::handover) fn new(config: HandoverConfig) -> Self {
            Feed {
                engine: HandoverEngine::new(config),
                frame: 0,
                last_time: Timestamp(0),
                paths: Vec::new(),
                current: [None, None],
                unacked: [BTreeMap::new(), BTreeMap::new()],
                serials: [BTreeMap::new(), BTreeMap::new()],
            }
        }

        /// The MN at A1 and A2, the CN at C, and the four paths between
        /// them: C → A1, C → A2, A1 → C, A2 → C.
        pub(in crate::handover) fn two_homed(config: HandoverConfig) -> (Feed, [PathId; 4]) {
            let (a1, a2, c) = (ip("10.0.0.1"), ip("10.0.0.2"), ip("10.0.1.1"));
            let mut f = Feed::new(config);
            let paths = [f.path(c, a1), f.path(c, a2), f.path(a1, c), f.path(a2, c)];
            (f, paths)
        }

        pub(in crate::handover) fn addr(&self, path: PathId) -> (IpAddr, IpAddr) {
            self.paths[usize::from(path)]
        }

        fn emit(&mut self, time: Timestamp, kind: EventKind) {
            self.engine.emit(Event {
                frame: self.frame,
                time,
                association: 0,
                kind,
            });
        }

        /// A new packet from `sender` on `path` at `us`.
        fn packet(&mut self, us: i64, sender: EndpointId, path: PathId) -> (u64, Timestamp) {
            self.frame += 1;
            let time = Timestamp(us * 1000);
            self.last_time = time;
            let (src, dst) = self.addr(path);
            self.engine.observe(&Observation::Packet {
                frame: self.frame,
                time,
                association: 0,
                sender,
                path,
                src,
                dst,
                handshake: false,
            });
            (self.frame, time)
        }

        pub(in crate::handover) fn path(&mut self, src: IpAddr, dst: IpAddr) -> PathId {
            let path = PathId::try_from(self.paths.len()).expect("few paths");
            self.paths.push((src, dst));
            self.emit(Timestamp(0), EventKind::PathSeen { path, src, dst });
            path
        }

        /// New DATA `tsn`; returns its frame.
        pub(in crate::handover) fn new_data(
            &mut self,
            us: i64,
            sender: EndpointId,
            path: PathId,
            tsn: u32,
        ) -> u64 {
            let (frame, time) = self.packet(us, sender, path);
            self.engine.observe(&Observation::Data {
                frame,
                time,
                association: 0,
                sender,
                path,
                tsn,
                new: true,
                already_acked: false,
                previous_path: None,
                timeout_of: None,
                new_expiry: false,
                error_count: None,
            });
            self.unacked[sender].insert(tsn, (frame, time, path));
            if self.current[sender] != Some(path) {
                let from_path = self.current[sender].replace(path);
                self.emit(
                    time,
                    EventKind::DataPathChange {
                        sender,
                        from_path,
                        to_path: path,
                        tsn,
                    },
                );
            }
            frame
        }

        /// DATA `tsn` sent again, not acknowledged before; `t3`: a
        /// timeout-driven copy of DATA last sent on that path, whether it
        /// starts a new expiry, and the path's error count after it.
        pub(in crate::handover) fn retransmit(
            &mut self,
            us: i64,
            sender: EndpointId,
            path: PathId,
            tsn: u32,
            t3: Option<(PathId, bool, u32)>,
        ) -> u64 {
            let (frame, time) = self.packet(us, sender, path);
            let previous = self.unacked[sender].get(&tsn).map(|x| x.2);
            self.engine.observe(&Observation::Data {
                frame,
                time,
                association: 0,
                sender,
                path,
                tsn,
                new: false,
                already_acked: false,
                previous_path: previous,
                timeout_of: t3.map(|(p, _, _)| p),
                new_expiry: t3.is_some_and(|(_, new, _)| new),
                error_count: t3.map(|(_, _, n)| n),
            });
            self.unacked[sender].insert(tsn, (frame, time, path));
            frame
        }

        /// DATA `tsn` sent again after a SACK acknowledged it.
        pub(in crate::handover) fn retransmit_acknowledged(
            &mut self,
            us: i64,
            sender: EndpointId,
            path: PathId,
            tsn: u32,
        ) -> u64 {
            let (frame, time) = self.packet(us, sender, path);
            self.engine.observe(&Observation::Data {
                frame,
                time,
                association: 0,
                sender,
                path,
                tsn,
                new: false,
                already_acked: true,
                previous_path: Some(path),
                timeout_of: None,
                new_expiry: false,
                error_count: None,
            });
            frame
        }

        /// A SACK on `path` for `data_sender`'s DATA up to `cumulative`,
        /// reporting `dup_tsns` duplicates; returns its frame.
        pub(in crate::handover) fn sack(
            &mut self,
            us: i64,
            path: PathId,
            data_sender: EndpointId,
            cumulative: u32,
            dup_tsns: u16,
        ) -> u64 {
            let (frame, time) = self.packet(us, 1 - data_sender, path);
            self.engine.observe(&Observation::Sack {
                frame,
                time,
                association: 0,
                data_sender,
                cumulative_tsn: cumulative,
                dup_tsns,
            });
            let covered: Vec<u32> = self.unacked[data_sender]
                .range(..=cumulative)
                .map(|(t, _)| *t)
                .collect();
            for tsn in covered {
                if let Some((f, t, p)) = self.unacked[data_sender].remove(&tsn) {
                    self.engine.observe(&Observation::Acked {
                        frame,
                        time,
                        association: 0,
                        data_sender,
                        tsn,
                        effective_frame: f,
                        effective_time: t,
                        path: p,
                    });
                }
            }
            frame
        }

        /// An ASCONF (sent again when its serial was); returns its frame.
        pub(in crate::handover) fn asconf(
            &mut self,
            us: i64,
            sender: EndpointId,
            path: PathId,
            serial: u32,
            ops: &[(AsconfOp, IpAddr)],
        ) -> u64 {
            let (frame, time) = self.packet(us, sender, path);
            let transmission = {
                let n = self.serials[sender].entry(serial).or_insert(0);
                *n += 1;
                *n
            };
            let requests = ops
                .iter()
                .zip(1..)
                .map(|(&(op, address), correlation_id)| AsconfRequestEvent {
                    op,
                    correlation_id,
                    address,
                    wildcard: false,
                })
                .collect();
            self.emit(
                time,
                EventKind::Asconf {
                    path,
                    sender,
                    serial,
                    retransmission: transmission > 1,
                    transmission,
                    first_frame: None,
                    bytes: ASCONF_BYTES,
                    requests,
                },
            );
            frame
        }

        /// The ASCONF-ACK for `serial`, answering the copy in `request`.
        pub(in crate::handover) fn asconf_ack(
            &mut self,
            us: i64,
            sender: EndpointId,
            path: PathId,
            serial: u32,
            request: u64,
        ) -> u64 {
            let (frame, time) = self.packet(us, sender, path);
            self.emit(
                time,
                EventKind::AsconfAck {
                    path,
                    serial,
                    bytes: ASCONF_ACK_BYTES,
                    request_frame: Some(request),
                    rtt_ms: None,
                    repeated: false,
                    results: Vec::new(),
                },
            );
            frame
        }

        pub(in crate::handover) fn heartbeat(
            &mut self,
            us: i64,
            sender: EndpointId,
            path: PathId,
        ) -> u64 {
            let (_, time) = self.packet(us, sender, path);
            self.emit(
                time,
                EventKind::Heartbeat {
                    path,
                    previous_unanswered: false,
                },
            );
            self.frame
        }

        /// The HEARTBEAT ACK on `reply_path` answering `request` on `path`.
        pub(in crate::handover) fn heartbeat_ack(
            &mut self,
            us: i64,
            sender: EndpointId,
            reply_path: PathId,
            path: PathId,
            request: u64,
        ) -> u64 {
            let (_, time) = self.packet(us, sender, reply_path);
            self.emit(
                time,
                EventKind::HeartbeatAck {
                    path,
                    reply_path,
                    request_frame: Some(request),
                    rtt_ms: None,
                },
            );
            self.frame
        }

        /// A path event of the tracker in the latest frame.
        pub(in crate::handover) fn event(&mut self, kind: EventKind) {
            self.emit(self.last_time, kind);
        }

        pub(in crate::handover) fn finish(self) -> Vec<Handover> {
            self.engine.finish().1
        }
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

    /// The one handover of a feed.
    /// A frame's mark at `ms` milliseconds.
    pub(in crate::handover) fn at(frame: u64, ms: i64) -> crate::handover::mark::Mark {
        crate::handover::mark::Mark {
            frame,
            time: crate::time::Timestamp(ms * 1_000_000),
        }
    }

    pub(in crate::handover) fn only(handovers: Vec<Handover>) -> Handover {
        let [h] =
            <[Handover; 1]>::try_from(handovers).unwrap_or_else(|h| panic!("one handover: {h:?}"));
        h
    }

    /// The CN's new DATA 500.. on C → A1 every 10 ms from 10 ms, `n` of
    /// them (the last at n × 10 ms).
    fn paced(f: &mut Feed, c_a1: PathId, n: u32) {
        for k in 0..n {
            f.new_data(10_000 * (i64::from(k) + 1), CN, c_a1, 500 + k);
        }
    }

    #[test]
    fn a_switch_after_t3_expiries_of_the_old_path_is_a_failover() {
        // DATA 501 to A1 times out: its T3 copy goes to A2 (RFC 9260
        // §6.4), then new DATA 502 does.
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        paced(&mut f, c_a1, 2);
        let expiry = f.retransmit(1_020_000, CN, c_a2, 501, Some((c_a1, true, 1)));
        f.new_data(1_030_000, CN, c_a2, 502);
        let h = only(f.finish());
        assert_eq!(h.class, SwitchClass::Failover);
        assert_eq!(
            h.class_reason,
            format!("1 T3 expiry on the old path from frame {expiry}")
        );
        assert_eq!(h.failover.map(|x| x.expiries.len()), Some(1));
    }

    #[test]
    fn an_add_ip_alone_does_not_make_a_switch_after_expiries_planned() {
        // honda-dad: the MN added A2, sent no SET-PRIMARY; the CN's DATA
        // moved only after its path to A1 timed out.
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        paced(&mut f, c_a1, 2);
        let add = f.asconf(25_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(26_000, CN, c_a2, 1, add);
        f.retransmit(1_020_000, CN, c_a2, 501, Some((c_a1, true, 1)));
        f.new_data(1_030_000, CN, c_a2, 502);
        assert_eq!(only(f.finish()).class, SwitchClass::Failover);
    }

    #[test]
    fn a_set_primary_for_the_new_address_makes_a_switch_after_expiries_planned() {
        // The same with a SET-PRIMARY for A2 before the switch: the CN
        // was asked to move.
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        paced(&mut f, c_a1, 2);
        let add = f.asconf(25_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(26_000, CN, c_a2, 1, add);
        f.retransmit(1_020_000, CN, c_a2, 501, Some((c_a1, true, 1)));
        let setprim = f.asconf(1_025_000, MN, a2_c, 2, &[(AsconfOp::SetPrimary, a2)]);
        f.new_data(1_030_000, CN, c_a2, 502);
        let h = only(f.finish());
        assert_eq!(h.class, SwitchClass::Planned);
        assert_eq!(
            h.class_reason,
            format!("ASCONF serial 2 at frame {setprim} for the new address")
        );
        // The expiries are still described.
        assert!(h.failover.is_some());
    }

    #[test]
    fn the_mobile_sender_moving_its_source_after_its_add_ip_is_planned_despite_expiries() {
        // The MN sends: DATA 100 from A1 times out, the MN adds A2 and
        // sends from it after the ASCONF-ACK.
        let (mut f, [c_a1, c_a2, a1_c, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        f.new_data(10_000, MN, a1_c, 100);
        f.new_data(20_000, MN, a1_c, 101);
        f.retransmit(1_020_000, MN, a2_c, 101, Some((a1_c, true, 1)));
        let add = f.asconf(1_021_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(1_022_000, CN, c_a1, 1, add);
        f.new_data(1_030_000, MN, a2_c, 102);
        assert_eq!(only(f.finish()).class, SwitchClass::Planned);
    }

    #[test]
    fn a_switch_back_to_a_path_a_failover_left_is_a_return() {
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        paced(&mut f, c_a1, 2);
        f.retransmit(1_020_000, CN, c_a2, 501, Some((c_a1, true, 1)));
        f.new_data(1_030_000, CN, c_a2, 502);
        f.new_data(1_040_000, CN, c_a2, 503);
        let back = f.new_data(1_050_000, CN, c_a1, 504);
        let handovers = f.finish();
        let classes: Vec<(SwitchClass, &str)> = handovers
            .iter()
            .map(|h| (h.class, h.class_reason.as_str()))
            .collect();
        assert_eq!(
            classes[1],
            (
                SwitchClass::Return,
                "back to a path that failed earlier in the association"
            )
        );
        assert_eq!(handovers[1].switch_frame, back);
        // Only a return has its link availability recognition.
        assert!(handovers[0].recognition.is_none());
        assert!(handovers[1].recognition.is_some());
    }

    /// C → A2 inferred inactive, then active again, then a SET-PRIMARY
    /// for A2 and the CN's switch there: its class.
    fn switch_to_a_path_that(failed: bool) -> SwitchClass {
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        paced(&mut f, c_a1, 2);
        if failed {
            f.heartbeat(22_000, CN, c_a2);
            f.event(EventKind::PathInactive {
                path: c_a2,
                error_count: 6,
            });
            f.event(EventKind::PathActive { path: c_a2 });
        }
        f.asconf(25_000, MN, a2_c, 1, &[(AsconfOp::SetPrimary, a2)]);
        f.new_data(30_000, CN, c_a2, 502);
        only(f.finish()).class
    }

    #[test]
    fn a_switch_to_a_path_inferred_inactive_earlier_is_a_return_even_after_a_set_primary_for_it() {
        assert_eq!(switch_to_a_path_that(true), SwitchClass::Return);
        // The SET-PRIMARY alone makes it planned.
        assert_eq!(switch_to_a_path_that(false), SwitchClass::Planned);
    }

    #[test]
    fn an_add_ip_for_the_new_address_in_the_segment_makes_the_switch_planned() {
        // Paced DATA every 10 ms, the switch 10 ms after the last: no
        // silence.
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        paced(&mut f, c_a1, 4);
        let add = f.asconf(41_000, MN, a2_c, 7, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(42_000, CN, c_a2, 7, add);
        f.new_data(50_000, CN, c_a2, 504);
        let h = only(f.finish());
        assert_eq!(h.class, SwitchClass::Planned);
        assert_eq!(
            h.class_reason,
            format!("ASCONF serial 7 at frame {add} for the new address")
        );
    }

    #[test]
    fn an_add_ip_before_the_segment_began_does_not_make_the_switch_planned() {
        // The ADD-IP comes before the direction's first new DATA: it is
        // in no segment of this direction.
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        let add = f.asconf(1_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(2_000, CN, c_a2, 1, add);
        paced(&mut f, c_a1, 4);
        f.new_data(50_000, CN, c_a2, 504);
        let h = only(f.finish());
        assert_eq!(
            (h.class, h.class_reason.as_str()),
            (
                SwitchClass::Other,
                "no ASCONF, T3 expiry or silence of the old path explains it"
            )
        );
        assert!(h.asconf.is_empty());
    }

    /// Four DATA on C → A1 at 10, 20, 30, 40 ms, then new DATA on C → A2
    /// at `resumed_us`: the switch.
    fn after_four_paced_data(resumed_us: i64) -> Handover {
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        paced(&mut f, c_a1, 4);
        f.new_data(resumed_us, CN, c_a2, 504);
        only(f.finish())
    }

    #[test]
    fn an_old_path_silent_for_three_mean_intervals_is_a_failover_seen_by_the_receiver() {
        // Mean interval (40 − 10) / 3 = 10 ms; silence 70 − 40 = 30 ms =
        // 3 intervals: a failover.
        let h = after_four_paced_data(70_000);
        assert_eq!(h.class, SwitchClass::Failover);
        assert_eq!(
            h.receiver_silence,
            Some(ReceiverSilence {
                silence: Nanos(30_000_000),
                interval: Nanos(10_000_000),
                data: 4,
            })
        );
        assert!(
            h.class_reason.starts_with(RECEIVER_FAILOVER),
            "{}",
            h.class_reason
        );
        assert!(h.failover.is_none());
        // 1 µs short of three intervals: nothing explains the switch.
        let h = after_four_paced_data(69_999);
        assert_eq!((h.class, h.receiver_silence), (SwitchClass::Other, None));
    }

    #[test]
    fn fewer_than_three_data_on_the_old_path_never_fell_silent() {
        // Two DATA, 10 ms apart, then 1 s of silence: no pace to judge.
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        paced(&mut f, c_a1, 2);
        f.new_data(1_020_000, CN, c_a2, 502);
        assert_eq!(only(f.finish()).class, SwitchClass::Other);
    }

    #[test]
    fn a_set_primary_keeps_a_switch_after_a_silence_planned() {
        // As `class_at` above with a SET-PRIMARY for A2 too: the CN was
        // asked to move, the silence does not make it a failover.
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        paced(&mut f, c_a1, 4);
        let add = f.asconf(41_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(42_000, CN, c_a2, 1, add);
        f.asconf(43_000, MN, a2_c, 2, &[(AsconfOp::SetPrimary, a2)]);
        f.new_data(240_000, CN, c_a2, 504);
        let h = only(f.finish());
        assert_eq!((h.class, h.receiver_silence), (SwitchClass::Planned, None));
    }

    #[test]
    fn a_switch_back_to_a_path_left_earlier_without_a_failure_is_a_return() {
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        paced(&mut f, c_a1, 2);
        f.new_data(30_000, CN, c_a2, 502);
        f.new_data(40_000, CN, c_a1, 503);
        let classes: Vec<(SwitchClass, String)> = f
            .finish()
            .into_iter()
            .map(|h| (h.class, h.class_reason))
            .collect();
        assert_eq!(
            classes,
            [
                (
                    SwitchClass::Other,
                    "no ASCONF, T3 expiry or silence of the old path explains it".to_owned()
                ),
                (
                    SwitchClass::Return,
                    "back to a path this direction left earlier".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn the_data_interrupt_runs_from_the_last_data_on_the_old_path_to_the_first_on_the_new() {
        // The last DATA on C → A1 is the retransmission of 500 at 20 ms
        // (retransmissions count), the last new DATA 501 at 15 ms; the
        // first DATA on C → A2, the switch, at 55 ms.
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        f.new_data(10_000, CN, c_a1, 500);
        f.new_data(15_000, CN, c_a1, 501);
        f.retransmit(20_000, CN, c_a1, 500, None);
        f.new_data(55_000, CN, c_a2, 502);
        let h = only(f.finish());
        // Interrupt: 55 − 20 = 35 ms; new-data gap: 55 − 15 = 40 ms.
        assert_eq!(h.data_interrupt.nanos, Some(Nanos(35_000_000)));
        assert_eq!(h.new_data_gap.nanos, Some(Nanos(40_000_000)));
    }

    #[test]
    fn the_data_interrupt_is_negative_when_the_new_path_carried_data_before_the_old_fell_silent() {
        // Linux at the sender of a failover: the T3 copy of 500 goes to
        // A2 at 1010 ms while new DATA 502 still goes to A1 at 1020 ms;
        // the switch, 503 to A2, at 1030 ms. Interrupt 1010 − 1020 =
        // −10 ms; new-data gap 1030 − 1020 = 10 ms.
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        f.new_data(10_000, CN, c_a1, 500);
        f.new_data(60_000, CN, c_a1, 501);
        f.retransmit(1_010_000, CN, c_a2, 500, Some((c_a1, true, 1)));
        f.new_data(1_020_000, CN, c_a1, 502);
        f.new_data(1_030_000, CN, c_a2, 503);
        let h = only(f.finish());
        assert_eq!(h.data_interrupt.nanos, Some(Nanos(-10_000_000)));
        assert_eq!(h.data_interrupt.ms, Some(-10.0));
        assert_eq!(h.new_data_gap.nanos, Some(Nanos(10_000_000)));
    }

    #[test]
    fn the_dar_overhead_counts_every_transmission_and_answer_of_the_segments_exchanges() {
        // ADD-IP sent twice, answered once; a SET-PRIMARY sent once,
        // answered once: 3 × 20 + 2 × 8 = 76 bytes over two exchanges.
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        let a2 = f.addr(c_a2).1;
        paced(&mut f, c_a1, 4);
        f.asconf(41_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        let again = f.asconf(42_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
        f.asconf_ack(43_000, CN, c_a2, 1, again);
        let setprim = f.asconf(44_000, MN, a2_c, 2, &[(AsconfOp::SetPrimary, a2)]);
        f.asconf_ack(45_000, CN, c_a2, 2, setprim);
        f.new_data(50_000, CN, c_a2, 504);
        let h = only(f.finish());
        assert_eq!(3 * ASCONF_BYTES + 2 * ASCONF_ACK_BYTES, 76);
        assert_eq!(h.dar_overhead_bytes, 76);
        let serials: Vec<(u32, u32)> = h
            .asconf
            .iter()
            .map(|x| (x.serial, x.transmissions))
            .collect();
        assert_eq!(serials, [(1, 2), (2, 1)]);
        assert_eq!(
            (h.addip_transmissions, h.setprim_transmissions),
            (Some(2), Some(1))
        );
    }

    #[test]
    fn fell_silent_compares_the_silence_with_the_mean_interval() {
        use super::super::mark::Mark;
        use super::super::state::PathData;
        let at = |frame: u64, ms: i64| Mark {
            frame,
            time: Timestamp(ms * 1_000_000),
        };
        // Three DATA from 0 to 100 ms: interval 50 ms; resumed 150 ms
        // after the last: exactly 3 intervals.
        let old = PathData {
            last_data: Some(at(3, 100)),
            last_new: Some(at(3, 100)),
            first_in_segment: Some(at(1, 0)),
            in_segment: 3,
        };
        let new = |ms| PathData {
            first_in_segment: Some(at(4, ms)),
            ..PathData::default()
        };
        assert_eq!(
            super::fell_silent(&old, &new(250)),
            Some(ReceiverSilence {
                silence: Nanos(150_000_000),
                interval: Nanos(50_000_000),
                data: 3
            })
        );
        assert_eq!(super::fell_silent(&old, &new(249)), None);
        // Three DATA at one instant have no pace.
        let bunched = PathData {
            last_data: Some(at(3, 0)),
            ..old.clone()
        };
        assert_eq!(super::fell_silent(&bunched, &new(250)), None);
    }

    #[test]
    fn the_capture_is_the_senders_at_the_mobile_node_when_it_sends_and_at_the_correspondent_otherwise(
    ) {
        use super::captured_at_sender;
        assert!(captured_at_sender(CapturePoint::Mn, Some(MN), MN));
        assert!(!captured_at_sender(CapturePoint::Mn, Some(MN), CN));
        assert!(captured_at_sender(CapturePoint::Cn, Some(MN), CN));
        assert!(!captured_at_sender(CapturePoint::Cn, Some(MN), MN));
        // Without a mobile endpoint, or in the middle, not known.
        assert!(!captured_at_sender(CapturePoint::Cn, None, CN));
        assert!(!captured_at_sender(CapturePoint::Middle, Some(MN), CN));
    }

    #[test]
    fn the_add_ip_a_switch_rests_on_is_the_latest_acknowledged_before_it_else_the_latest_sent() {
        // addr_up of A2 at 30 ms; ADD-IP serial 1 at 41 ms, answered;
        // serial 2 at 44 ms, unanswered. ADDIP sent is timed from serial
        // 1: 41 − 30 = 11 ms; without the answer, from serial 2: 14 ms.
        let run = |answered: bool| {
            let a2 = ip("10.0.0.2");
            let config = HandoverConfig {
                anchors: vec![crate::handover::anchors::Anchor {
                    time: Timestamp(30_000_000),
                    kind: crate::handover::anchors::AnchorKind::AddrUp,
                    address: Some(a2),
                    interface: None,
                }],
                ..HandoverConfig::new()
            };
            let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(config);
            paced(&mut f, c_a1, 4);
            let first = f.asconf(41_000, MN, a2_c, 1, &[(AsconfOp::AddIp, a2)]);
            if answered {
                f.asconf_ack(42_000, CN, c_a2, 1, first);
            }
            f.asconf(44_000, MN, a2_c, 2, &[(AsconfOp::AddIp, a2)]);
            f.new_data(50_000, CN, c_a2, 504);
            only(f.finish()).addip_sent.nanos
        };
        assert_eq!(run(true), Some(Nanos(11_000_000)));
        assert_eq!(run(false), Some(Nanos(14_000_000)));
    }
}
