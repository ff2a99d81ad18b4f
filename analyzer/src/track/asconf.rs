//! ASCONF / ASCONF-ACK matching and the RFC 5061 reading of the results.

use super::assoc::{PendingAsconf, SentAsconf};
use super::{Ctx, Tracker};
use crate::events::{
    AddressSource, AsconfOutcome, AsconfRequestEvent, AsconfResultEvent, EventKind, EventSink,
    PathId,
};
use crate::wire::sctp_chunk::{AsconfAckChunk, AsconfChunk};
use crate::wire::sctp_param::{cause_code, AsconfOp, AsconfRequestRepr, AsconfResponseRepr};
use crate::wire::serial::serial_le;

/// Outstanding ASCONFs remembered per association for matching; the
/// oldest is forgotten beyond this.
const MAX_PENDING_ASCONFS: usize = 64;

impl Tracker {
    pub(super) fn asconf(
        &mut self,
        ctx: &Ctx,
        chunk: &AsconfChunk<'_>,
        bytes: usize,
        sink: &mut dyn EventSink,
    ) -> Result<(), &'static str> {
        let mut requests = Vec::new();
        for param in chunk.requests() {
            let Ok(param) = param else {
                return Err("ASCONF parameter length runs past the chunk");
            };
            match AsconfRequestRepr::parse(&param) {
                Ok(Some(r)) => requests.push(AsconfRequestEvent {
                    op: r.op,
                    correlation_id: r.correlation_id,
                    address: if r.is_wildcard() { ctx.src } else { r.address },
                    wildcard: r.is_wildcard(),
                }),
                Ok(None) => {}
                Err(_) => return Err("ASCONF request parameter malformed"),
            }
        }
        let serial = chunk.serial();
        let a = &mut self.associations[ctx.assoc];
        // A serial at or below the sender's latest is a copy sent again
        // (RFC 5061 §5.1, T-4 timer): the first transmission is the one
        // remembered, if it is that latest serial.
        let sent = &mut a.sent_asconf.get_or_insert_with(Box::default)[ctx.sender];
        // Whether an ASCONF-ACK answered the serial before this copy: a
        // sender moves on to a new serial only once the previous one is
        // answered (RFC 5061 §5.1), so a copy of an older serial is one
        // of an answered request unless its request is still outstanding.
        let (transmission, first_frame, answered) = match sent {
            Some(s) if s.serial == serial => {
                s.transmissions = s.transmissions.saturating_add(1);
                (s.transmissions, Some(s.first_frame), s.answer_seen)
            }
            Some(s) if serial_le(serial, s.serial) => (2, None, true),
            _ => {
                *sent = Some(SentAsconf {
                    serial,
                    first_frame: ctx.frame,
                    transmissions: 1,
                    acknowledged: false,
                    answer_seen: false,
                    forgotten_unanswered: false,
                });
                (1, Some(ctx.frame), false)
            }
        };
        let retransmission = transmission > 1;
        // One outstanding request per serial: a copy moves it to the
        // latest transmission (an ASCONF-ACK answers the copy before it).
        let existing = a
            .pending_asconfs
            .iter()
            .position(|p| p.serial == serial && p.sender == ctx.sender);
        let earlier = existing.map(|i| a.pending_asconfs.remove(i));
        let sent = a.sent_asconf.as_mut().and_then(|s| s[ctx.sender].as_mut());
        if let Some(s) = sent.filter(|s| s.serial == serial && earlier.is_none()) {
            // A copy of a request forgotten unanswered: outstanding again,
            // counted there and no longer among the forgotten.
            if std::mem::take(&mut s.forgotten_unanswered) {
                a.unanswered_asconfs_forgotten = a.unanswered_asconfs_forgotten.saturating_sub(1);
            }
        }
        if a.pending_asconfs.len() == MAX_PENDING_ASCONFS {
            let forgotten = a.pending_asconfs.remove(0);
            if !forgotten.answered {
                a.unanswered_asconfs_forgotten += 1;
                let sent = a
                    .sent_asconf
                    .as_mut()
                    .and_then(|s| s[forgotten.sender].as_mut());
                if let Some(s) = sent.filter(|s| s.serial == forgotten.serial) {
                    s.forgotten_unanswered = true;
                }
            }
        }
        a.pending_asconfs.push(PendingAsconf {
            serial,
            sender: ctx.sender,
            first_frame: earlier
                .as_ref()
                .map(|e| e.first_frame)
                .or(first_frame)
                .unwrap_or(ctx.frame),
            frame: ctx.frame,
            time: ctx.time,
            requests: requests.clone(),
            answered: earlier.map_or(answered, |e| e.answered),
        });
        sink.emit(ctx.event(EventKind::Asconf {
            path: ctx.path,
            sender: ctx.sender,
            serial,
            retransmission,
            transmission,
            first_frame,
            bytes,
            requests,
        }));
        Ok(())
    }

    pub(super) fn asconf_ack(
        &mut self,
        ctx: &Ctx,
        chunk: &AsconfAckChunk<'_>,
        bytes: usize,
        sink: &mut dyn EventSink,
    ) -> Result<(), &'static str> {
        let serial = chunk.serial();
        let mut responses: Vec<AsconfResponseRepr> = Vec::new();
        for param in chunk.responses() {
            let Ok(param) = param else {
                return Err("ASCONF-ACK parameter length runs past the chunk");
            };
            match AsconfResponseRepr::parse(&param) {
                Ok(Some(r)) => responses.push(r),
                Ok(None) => {}
                Err(_) => return Err("ASCONF-ACK response parameter malformed"),
            }
        }
        let requester = ctx.receiver();
        let a = &mut self.associations[ctx.assoc];
        let found = a
            .pending_asconfs
            .iter()
            .position(|p| p.serial == serial && p.sender == requester);
        let Some(i) = found else {
            // The answer to a request forgotten unanswered (only the
            // sender's latest serial is remembered): answered after all.
            let sent = a.sent_asconf.as_mut().and_then(|s| s[requester].as_mut());
            if let Some(s) = sent.filter(|s| s.serial == serial) {
                s.answer_seen = true;
                if std::mem::take(&mut s.forgotten_unanswered) {
                    a.unanswered_asconfs_forgotten =
                        a.unanswered_asconfs_forgotten.saturating_sub(1);
                }
            }
            self.counters.asconf_acks_unmatched += 1;
            sink.emit(ctx.event(EventKind::AsconfAck {
                path: ctx.path,
                serial,
                bytes,
                request_frame: None,
                rtt_ms: None,
                repeated: false,
                results: Vec::new(),
            }));
            return Ok(());
        };
        let request = a.pending_asconfs.remove(i);
        let results = asconf_results(&request.requests, &responses);
        // A second answer to the same serial (to a copy sent again after
        // the first answer, which the requester did not get) changes
        // nothing at the peer: its results took effect with the first.
        let repeated = match a.sent_asconf.as_mut().and_then(|s| s[requester].as_mut()) {
            Some(s) if s.serial == serial => {
                s.answer_seen = true;
                std::mem::replace(&mut s.acknowledged, true)
            }
            _ => false,
        };
        let mut follow_ups = Vec::new();
        for r in results.iter().filter(|_| !repeated) {
            if !matches!(
                r.outcome,
                AsconfOutcome::Success | AsconfOutcome::ImpliedSuccess
            ) {
                continue;
            }
            match r.op {
                AsconfOp::AddIp => {
                    // Linux's sctp_process_asconf_param adds the address
                    // with sctp_assoc_add_peer(SCTP_UNCONFIRMED), which
                    // returns a transport the peer already has unchanged;
                    // a new one is unconfirmed until a HEARTBEAT ACK (RFC
                    // 9260 §5.4), and one added again after a DELETE-IP is
                    // new (the old one was freed).
                    let a = &self.associations[ctx.assoc];
                    let deleted = a.endpoints[requester]
                        .addresses
                        .iter()
                        .find(|x| x.address == r.address)
                        .and_then(|x| x.deleted_frame);
                    let in_use = a.in_use_at_peer(requester, r.address, request.first_frame);
                    let learned = self.learn(
                        ctx.assoc,
                        requester,
                        r.address,
                        AddressSource::Asconf,
                        ctx.frame,
                    );
                    let a = &mut self.associations[ctx.assoc];
                    if !in_use {
                        a.renew_transport(requester, r.address, deleted);
                    }
                    a.sync_confirmation(requester, r.address);
                    if learned {
                        follow_ups.push(EventKind::AddressLearned {
                            endpoint: requester,
                            address: r.address,
                            how: AddressSource::Asconf,
                        });
                    }
                }
                AsconfOp::DeleteIp => {
                    let window = self.config.limits.tsn_window;
                    let a = &mut self.associations[ctx.assoc];
                    if let Some(info) = a.endpoints[requester].address_mut(r.address) {
                        info.deleted_frame = Some(ctx.frame);
                    }
                    // The answering endpoint's DATA to the address loses its
                    // destination (SFR-CACC; Linux's sctp_assoc_rm_peer).
                    // A deleted primary or active path is replaced by the
                    // first transport of the peer's list, whatever its
                    // state: the first address added that is not deleted.
                    // Its path is the sender's latest to it (the transport
                    // is per destination, a path per source too); the Lua
                    // core's destination_deleted chooses alike.
                    let successor = a.endpoints[requester].first_transport();
                    let paths = &a.paths;
                    let successor_path = paths
                        .iter()
                        .filter(|p| p.sender == ctx.sender && Some(p.dst) == successor)
                        .max_by_key(|p| p.last_frame)
                        .map(|p| p.id);
                    let destination_of = |p: PathId| paths.get(usize::from(p)).map(|s| s.dst);
                    a.directions[ctx.sender].ledger(window).destination_deleted(
                        r.address,
                        successor,
                        successor_path,
                        &destination_of,
                    );
                    follow_ups.push(EventKind::AddressDeleted {
                        endpoint: requester,
                        address: r.address,
                    });
                }
                AsconfOp::SetPrimary => {
                    let window = self.config.limits.tsn_window;
                    let a = &mut self.associations[ctx.assoc];
                    a.endpoints[ctx.sender].primary_destination = Some(r.address);
                    // The answering endpoint now sends to the new primary.
                    let paths = &a.paths;
                    let destination_of = |p: PathId| paths.get(usize::from(p)).map(|s| s.dst);
                    a.directions[ctx.sender]
                        .ledger(window)
                        .set_primary(r.address, &destination_of);
                    follow_ups.push(EventKind::PeerPrimarySet {
                        requester,
                        address: r.address,
                    });
                }
            }
        }
        sink.emit(ctx.event(EventKind::AsconfAck {
            path: ctx.path,
            serial,
            bytes,
            request_frame: Some(request.frame),
            rtt_ms: Some(ctx.time.since(request.time).as_millis_f64()),
            repeated,
            results,
        }));
        for kind in follow_ups {
            sink.emit(ctx.event(kind));
        }
        Ok(())
    }
}

/// RFC 5061 §5.3 rules for reading an ASCONF-ACK: explicit Success
/// Indications; an error for its correlation id; requests with no response
/// are successful if they come before the first error and not processed
/// after it.
fn asconf_results(
    requests: &[AsconfRequestEvent],
    responses: &[AsconfResponseRepr],
) -> Vec<AsconfResultEvent> {
    let mut seen_error = false;
    requests
        .iter()
        .map(|req| {
            let response = responses
                .iter()
                .find(|r| r.correlation_id == req.correlation_id);
            let (outcome, error_cause) = match response {
                Some(AsconfResponseRepr {
                    error_cause: None, ..
                }) => (AsconfOutcome::Success, None),
                Some(AsconfResponseRepr {
                    error_cause: Some(code),
                    ..
                }) => {
                    seen_error = true;
                    (AsconfOutcome::Error, Some(cause_code::name(*code)))
                }
                None if seen_error => (AsconfOutcome::NotProcessed, None),
                None => (AsconfOutcome::ImpliedSuccess, None),
            };
            AsconfResultEvent {
                op: req.op,
                correlation_id: req.correlation_id,
                address: req.address,
                outcome,
                error_cause,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::script::{self, Script, ADD_IP, DELETE_IP};
    use super::super::TrackConfig;
    use crate::events::{EventKind, PathId};
    use crate::handover::HandoverConfig;
    use crate::track::path::PathStatus;
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("address literal")
    }

    /// The mobile node's A1 (the handshake's), A2 and A3 (listed in its
    /// INIT), the correspondent's C.
    fn addresses() -> (IpAddr, IpAddr, IpAddr, IpAddr) {
        (
            ip("10.0.0.1"),
            ip("10.0.0.2"),
            ip("10.0.0.3"),
            ip("10.0.1.1"),
        )
    }

    fn no_pf() -> TrackConfig {
        TrackConfig {
            pf_retrans: None,
            ..TrackConfig::default()
        }
    }

    #[test]
    fn a_deleted_active_destination_is_replaced_by_the_first_address_added() {
        // The correspondent's list of the mobile node's addresses is A1,
        // A2, A3 (the INIT's source, then its listed addresses); its paths
        // to them were first used in the order A1, A3, A2. DATA 500 is
        // outstanding to A1 when a DELETE-IP removes it: Linux's
        // sctp_assoc_rm_peer moves it to the first transport left, A2,
        // whose error counter the SACK for 500 then clears (the first path
        // to an address not deleted, C -> A3, used to get the credit).
        let (a1, a2, a3, c) = addresses();
        let mut s = Script::new(no_pf(), HandoverConfig::new());
        s.handshake(a1, &[a1, a2, a3], c);
        let mut us = 10_000;
        for (to, tag) in [(a3, b'3'), (a2, b'2')] {
            // Confirmed, then one HEARTBEAT unanswered: error count 1.
            s.send(us, 1, (c, to), &[script::heartbeat(false, &[tag, 0])]);
            s.send(us + 100, 0, (to, c), &[script::heartbeat(true, &[tag, 0])]);
            s.send(
                us + 1000,
                1,
                (c, to),
                &[script::heartbeat(false, &[tag, 1])],
            );
            s.send(
                us + 2000,
                1,
                (c, to),
                &[script::heartbeat(false, &[tag, 2])],
            );
            us += 10_000;
        }
        s.send(us, 1, (c, a1), &[script::data(500)]);
        s.send(
            us + 100,
            0,
            (a2, c),
            &[script::asconf(1, a2, &[(DELETE_IP, a1)])],
        );
        s.send(us + 200, 1, (c, a2), &[script::asconf_ack(1)]);
        let sack = s.send(us + 300, 0, (a2, c), &[script::sack(500)]);
        let a = s.tracker.association(0).expect("the association");
        let path_to = |d: IpAddr| {
            a.paths
                .iter()
                .find(|p| p.sender == 1 && p.dst == d)
                .map(|p| p.id)
                .expect("path")
        };
        let (to_a2, to_a3) = (path_to(a2), path_to(a3));
        assert!(to_a3 < to_a2, "the path to A3 came first");
        assert_eq!(a.paths[usize::from(to_a2)].error_count, 0);
        assert_eq!(a.paths[usize::from(to_a3)].error_count, 1);
        let (events, _) = s.finish();
        let cleared: Vec<(u64, PathId)> = events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::ErrorCounterCleared { path, .. } => Some((e.frame, path)),
                _ => None,
            })
            .collect();
        assert_eq!(cleared, vec![(sack, to_a2)]);
    }

    #[test]
    fn an_address_added_again_is_a_new_transport() {
        // C -> A2 goes inactive (Path.Max.Retrans 1: two unanswered
        // HEARTBEATs after a third), A2 is deleted and added again: Linux
        // frees the transport and makes a new one, active, unconfirmed,
        // error count 0, and the HEARTBEAT outstanding before the deletion
        // is no error of the new one.
        let (a1, a2, _, c) = addresses();
        let track = TrackConfig {
            path_max_retrans: 1,
            ..no_pf()
        };
        let mut s = Script::new(track, HandoverConfig::new());
        s.handshake(a1, &[a1, a2], c);
        s.send(10_000, 1, (c, a2), &[script::heartbeat(false, b"h0")]);
        s.send(10_100, 0, (a2, c), &[script::heartbeat(true, b"h0")]);
        for (i, us) in [(1u8, 20_000), (2, 30_000), (3, 40_000)] {
            s.send(us, 1, (c, a2), &[script::heartbeat(false, &[b'h', i])]);
        }
        let to_a2 = {
            let a = s.tracker.association(0).expect("the association");
            let p = a.paths.iter().find(|p| p.dst == a2 && p.sender == 1);
            let p = p.expect("path to A2");
            assert_eq!((p.status(), p.error_count), (PathStatus::Inactive, 2));
            p.id
        };
        s.send(
            50_000,
            0,
            (a1, c),
            &[script::asconf(1, a1, &[(DELETE_IP, a2)])],
        );
        s.send(50_100, 1, (c, a1), &[script::asconf_ack(1)]);
        s.send(
            60_000,
            0,
            (a1, c),
            &[script::asconf(2, a1, &[(ADD_IP, a2)])],
        );
        s.send(60_100, 1, (c, a1), &[script::asconf_ack(2)]);
        let a = s.tracker.association(0).expect("the association");
        let p = &a.paths[usize::from(to_a2)];
        assert_eq!((p.status(), p.error_count), (PathStatus::Active, 0));
        assert!(p.unconfirmed);
        let info = a.endpoints[0].addresses.iter().find(|x| x.address == a2);
        assert!(info.is_some_and(|x| x.unconfirmed && x.confirmed_frame.is_none()));
        // Its first HEARTBEAT finds no earlier one outstanding.
        s.send(70_000, 1, (c, a2), &[script::heartbeat(false, b"h4")]);
        let a = s.tracker.association(0).expect("the association");
        assert_eq!(a.paths[usize::from(to_a2)].error_count, 0);
    }

    #[test]
    fn an_add_ip_of_an_address_in_use_leaves_it_confirmed() {
        // From mid-stream: the correspondent sends DATA to A1 and A2, both
        // in use (taken as confirmed). An ADD-IP of A2 finds the
        // transport there: Linux's sctp_assoc_add_peer returns it
        // unchanged, still confirmed. An ADD-IP of A3, until then only the
        // source of the mobile node's ASCONF, makes a new, unconfirmed one.
        let (a1, a2, a3, c) = addresses();
        let mut s = Script::new(no_pf(), HandoverConfig::new());
        s.send(0, 0, (a1, c), &[script::data(100)]);
        s.send(1000, 1, (c, a1), &[script::sack(100), script::data(500)]);
        s.send(2000, 0, (a1, c), &[script::sack(500)]);
        s.send(3000, 1, (c, a2), &[script::data(501)]);
        s.send(4000, 0, (a2, c), &[script::sack(501)]);
        // (Linux answers an ASCONF from an address it has no transport for
        // on its active path.)
        s.send(5000, 0, (a3, c), &[script::asconf(1, a3, &[(ADD_IP, a2)])]);
        s.send(5100, 1, (c, a2), &[script::asconf_ack(1)]);
        s.send(6000, 0, (a3, c), &[script::asconf(2, a3, &[(ADD_IP, a3)])]);
        s.send(6100, 1, (c, a3), &[script::asconf_ack(2)]);
        let a = s.tracker.association(0).expect("the association");
        let unconfirmed = |x: IpAddr| a.endpoints[0].unconfirmed(x);
        assert!(!unconfirmed(a2), "A2 was in use");
        assert!(unconfirmed(a3), "A3 is new to the correspondent");
        let path = |d: IpAddr| a.paths.iter().find(|p| p.sender == 1 && p.dst == d);
        assert!(path(a2).is_some_and(|p| !p.unconfirmed));
        assert!(path(a3).is_some_and(|p| p.unconfirmed));
    }
}
