//! ASCONF / ASCONF-ACK matching and the RFC 5061 reading of the results.

use super::assoc::{PendingAsconf, SentAsconf};
use super::tsn::serial_le;
use super::{Ctx, Tracker};
use crate::events::{
    AddressSource, AsconfOutcome, AsconfRequestEvent, AsconfResultEvent, EventKind, EventSink,
    PathId,
};
use crate::wire::sctp_chunk::{AsconfAckChunk, AsconfChunk};
use crate::wire::sctp_param::{cause_code, AsconfOp, AsconfRequestRepr, AsconfResponseRepr};

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
        let (transmission, first_frame) = match sent {
            Some(s) if s.serial == serial => {
                s.transmissions = s.transmissions.saturating_add(1);
                (s.transmissions, Some(s.first_frame))
            }
            Some(s) if serial_le(serial, s.serial) => (2, None),
            _ => {
                *sent = Some(SentAsconf {
                    serial,
                    first_frame: ctx.frame,
                    transmissions: 1,
                    acknowledged: false,
                });
                (1, Some(ctx.frame))
            }
        };
        let retransmission = transmission > 1;
        // One outstanding request per serial: a copy moves it to the
        // latest transmission (an ASCONF-ACK answers the copy before it).
        let existing = a
            .pending_asconfs
            .iter()
            .position(|p| p.serial == serial && p.sender == ctx.sender);
        if let Some(i) = existing {
            a.pending_asconfs.remove(i);
        }
        if a.pending_asconfs.len() == MAX_PENDING_ASCONFS {
            a.pending_asconfs.remove(0);
        }
        a.pending_asconfs.push(PendingAsconf {
            serial,
            sender: ctx.sender,
            frame: ctx.frame,
            time: ctx.time,
            requests: requests.clone(),
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
            Some(s) if s.serial == serial => std::mem::replace(&mut s.acknowledged, true),
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
                    let learned = self.learn(
                        ctx.assoc,
                        requester,
                        r.address,
                        AddressSource::Asconf,
                        ctx.frame,
                    );
                    // Added: unconfirmed until a HEARTBEAT ACK (RFC 9260
                    // §5.4 for a new address; Linux's
                    // sctp_process_asconf_param adds it SCTP_UNCONFIRMED).
                    self.associations[ctx.assoc].sync_confirmation(requester, r.address);
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
                    // destination (SFR-CACC; Linux's sctp_assoc_rm_peer):
                    // its first path to an address not deleted stands in
                    // for Linux's first transport, the new primary and
                    // active path when the deleted address was either (as
                    // the Lua core's destination_deleted).
                    let requester_endpoint = &a.endpoints[requester];
                    let paths = &a.paths;
                    let successor_path = paths.iter().find(|p| {
                        p.sender == ctx.sender
                            && p.dst != r.address
                            && requester_endpoint
                                .addresses
                                .iter()
                                .all(|x| x.address != p.dst || x.deleted_frame.is_none())
                    });
                    let successor = successor_path.map(|p| p.dst);
                    let successor_path = successor_path.map(|p| p.id);
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
