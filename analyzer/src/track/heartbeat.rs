//! HEARTBEAT / HEARTBEAT ACK matching: path probing, confirmation and RTT.

use super::assoc::PendingHeartbeat;
use super::{fnv1a, Ctx, Tracker, FNV_OFFSET};
use crate::events::{EventKind, EventSink};

/// Outstanding HEARTBEATs remembered per association for matching; the
/// oldest is forgotten beyond this.
const MAX_PENDING_HEARTBEATS: usize = 256;

fn hash_bytes(bytes: &[u8]) -> u64 {
    fnv1a(FNV_OFFSET, bytes) ^ (bytes.len() as u64).rotate_left(32)
}

impl Tracker {
    pub(super) fn heartbeat(&mut self, ctx: &Ctx, info: &[u8], sink: &mut dyn EventSink) {
        let thresholds = self.config.thresholds();
        let a = &mut self.associations[ctx.assoc];
        let unanswered = a
            .pending_heartbeats
            .iter()
            .position(|h| h.path == ctx.path && h.sender == ctx.sender);
        let previous_unanswered = unanswered.is_some();
        let mut transition = None;
        if let Some(i) = unanswered {
            a.pending_heartbeats.remove(i);
            let p = &mut a.paths[usize::from(ctx.path)];
            p.heartbeats_unanswered += 1;
            transition = p.record_error(thresholds);
        }
        if a.pending_heartbeats.len() == MAX_PENDING_HEARTBEATS {
            a.pending_heartbeats.remove(0);
        }
        a.pending_heartbeats.push(PendingHeartbeat {
            info_hash: hash_bytes(info),
            sender: ctx.sender,
            frame: ctx.frame,
            time: ctx.time,
            path: ctx.path,
        });
        a.paths[usize::from(ctx.path)].heartbeats_sent += 1;
        sink.emit(ctx.event(EventKind::Heartbeat {
            path: ctx.path,
            previous_unanswered,
        }));
        self.transition(ctx, ctx.path, transition, sink);
    }

    pub(super) fn heartbeat_ack(&mut self, ctx: &Ctx, info: &[u8], sink: &mut dyn EventSink) {
        let hash = hash_bytes(info);
        let a = &mut self.associations[ctx.assoc];
        let found = a
            .pending_heartbeats
            .iter()
            .rposition(|h| h.info_hash == hash && h.sender == ctx.receiver());
        let Some(i) = found else {
            self.counters.heartbeat_acks_unmatched += 1;
            sink.emit(ctx.event(EventKind::HeartbeatAck {
                path: ctx.path,
                reply_path: ctx.path,
                request_frame: None,
                rtt_ms: None,
            }));
            return;
        };
        let hb = a.pending_heartbeats.remove(i);
        let rtt = ctx.time.since(hb.time);
        let p = &mut a.paths[usize::from(hb.path)];
        p.heartbeats_acked += 1;
        p.hb_rtt.add(rtt);
        p.rto.update(rtt);
        let first_confirmation = p.confirmed_frame.is_none();
        if first_confirmation {
            p.confirmed_frame = Some(ctx.frame);
            p.confirmed_time = Some(ctx.time);
        }
        let probed = p.dst;
        let cleared = p.record_success(ctx.time);
        // The probed address belongs to the endpoint answering (`sender`).
        // A HEARTBEAT ACK matching its HEARTBEAT's information (Linux
        // checks the random nonce in it) confirms it (RFC 9260 §5.4), as
        // Linux notifies SCTP_ADDR_CONFIRMED; the handshake's addresses
        // were confirmed without a notification.
        let mut newly_confirmed = false;
        if let Some(info) = a.endpoints[ctx.sender].address_mut(probed) {
            if info.confirmed_frame.is_none() {
                info.confirmed_frame = Some(ctx.frame);
                newly_confirmed = !info.handshake;
            }
            info.unconfirmed = false;
        }
        a.sync_confirmation(ctx.sender, probed);
        sink.emit(ctx.event(EventKind::HeartbeatAck {
            path: hb.path,
            reply_path: ctx.path,
            request_frame: Some(hb.frame),
            rtt_ms: Some(rtt.as_millis_f64()),
        }));
        if newly_confirmed {
            sink.emit(ctx.event(EventKind::PathConfirmed {
                path: hb.path,
                address: probed,
            }));
        }
        self.cleared(ctx, hb.path, cleared, "heartbeat_ack", sink);
    }
}
