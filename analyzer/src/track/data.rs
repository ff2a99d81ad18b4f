//! DATA / I-DATA and SACK handling: TSN ledger, retransmissions and data-path changes.

use super::assoc::{Association, DataSegment, Start};
use super::path::{Cleared, PathState};
use super::tsn::DataClass;
use super::{Ctx, Tracker};
use crate::events::{EndpointId, EventKind, EventSink, Observation, PathId};
use std::net::IpAddr;

impl Association {
    /// The primary destination of `sender`'s DATA after the handshake
    /// (see [`super::tsn::TsnLedger::seed_primary`]): the INIT's
    /// destination for the INIT's sender, its source for the receiver.
    /// The association's first path is its INIT's, or, when only that was
    /// captured, its INIT ACK's, which goes the other way (to the INIT's
    /// source, from the address it was sent to): either way its sender's
    /// primary is its destination. None from mid-stream.
    pub(crate) fn handshake_primary(&self, sender: EndpointId) -> Option<IpAddr> {
        handshake_primary(&self.paths, self.start, sender)
    }
}

/// [`Association::handshake_primary`] from the association's paths and
/// start (borrowed apart from its directions).
fn handshake_primary(paths: &[PathState], start: Start, sender: EndpointId) -> Option<IpAddr> {
    let first = paths.first()?;
    if start == Start::MidStream {
        return None;
    }
    Some(if sender == first.sender {
        first.dst
    } else {
        first.src
    })
}

impl Tracker {
    pub(super) fn data(
        &mut self,
        ctx: &Ctx,
        tsn: u32,
        user_bytes: usize,
        sink: &mut dyn EventSink,
    ) {
        let thresholds = self.config.thresholds();
        let rto_max = self.config.rto.max;
        let window = self.config.limits.tsn_window;
        let a = &mut self.associations[ctx.assoc];
        let (paths, start) = (&a.paths, a.start);
        let ledger = a.directions[ctx.sender].ledger(window);
        if !ledger.primary_seeded() {
            ledger.seed_primary(handshake_primary(paths, start, ctx.sender));
        }
        let class = ledger.on_data(tsn, ctx.frame, ctx.time, ctx.path, user_bytes);
        let forgotten = ledger.take_forgotten();
        self.counters.limits.tsn_window.record(ctx.frame, forgotten);
        let (new, already_acked, previous, timeout_of) = match class {
            DataClass::New => (true, false, None, None),
            DataClass::Retransmission {
                previous_path,
                already_acked,
                fast,
                ..
            } => (
                false,
                already_acked,
                previous_path,
                previous_path.filter(|_| !fast && !already_acked),
            ),
        };
        // A timeout-driven retransmission charges the path the TSN was last
        // sent on, once per T3 expiry.
        let charge = match (class, timeout_of) {
            (DataClass::Retransmission { previous_time, .. }, Some(pp)) => {
                let p = &mut a.paths[usize::from(pp)];
                let (new_expiry, t) =
                    p.record_timeout((ctx.frame, ctx.time), previous_time, rto_max, thresholds);
                // The failover's count goes on past the inactive state the
                // analysis inferred from its own Path.Max.Retrans: the
                // sender's may be higher (its observed PMR).
                let (expiry_frame, errors) = (p.last_expiry_frame, p.errors_since_clear);
                // Only a first retransmission can show its expiry spurious:
                // with two copies out, a duplicate report says both arrived.
                let expired = p.dst;
                let paths = &a.paths;
                let destination_of = |p: PathId| paths.get(usize::from(p)).map(|s| s.dst);
                let d = &mut a.directions[ctx.sender];
                if new_expiry {
                    d.ledger(window)
                        .on_t3_expiry(Some(expired), &destination_of);
                }
                let first = d.ledger(window).transmissions(tsn) == Some(2);
                d.note_timeout_copy(tsn, pp, expiry_frame, first);
                Some((pp, t, new_expiry, errors))
            }
            (DataClass::Retransmission { .. }, None) => {
                a.directions[ctx.sender].forget_timeout_copy(tsn);
                None
            }
            _ => None,
        };
        sink.observe(&Observation::Data {
            frame: ctx.frame,
            time: ctx.time,
            association: ctx.assoc,
            sender: ctx.sender,
            path: ctx.path,
            tsn,
            new,
            already_acked,
            previous_path: previous,
            timeout_of,
            new_expiry: charge.is_some_and(|(_, _, new, _)| new),
            error_count: charge.map(|(_, _, _, n)| n),
        });
        match class {
            DataClass::New => {
                a.paths[usize::from(ctx.path)].data_new += 1;
                let dir = &mut a.directions[ctx.sender];
                let previous = dir.new_data_paths.last().map(|s| s.path);
                match dir.new_data_paths.last_mut() {
                    Some(seg) if seg.path == ctx.path => {
                        seg.last_frame = ctx.frame;
                        seg.last_time = ctx.time;
                        seg.new_chunks += 1;
                    }
                    _ => {
                        dir.start_segment(DataSegment {
                            path: ctx.path,
                            first_frame: ctx.frame,
                            first_time: ctx.time,
                            last_frame: ctx.frame,
                            last_time: ctx.time,
                            new_chunks: 1,
                        });
                        sink.emit(ctx.event(EventKind::DataPathChange {
                            sender: ctx.sender,
                            from_path: previous,
                            to_path: ctx.path,
                            tsn,
                        }));
                    }
                }
            }
            DataClass::Retransmission {
                previous_frame,
                previous_path,
                already_acked,
                fast,
                ..
            } => {
                let p = &mut a.paths[usize::from(ctx.path)];
                p.data_retransmitted += 1;
                if already_acked {
                    p.data_retransmitted_after_ack += 1;
                }
                sink.emit(ctx.event(EventKind::Retransmission {
                    sender: ctx.sender,
                    path: ctx.path,
                    tsn,
                    previous_frame,
                    previous_path,
                    already_acked,
                    fast,
                    t3_expiry: charge.is_some_and(|(_, _, new, _)| new),
                }));
                if let Some((pp, t, _, _)) = charge {
                    self.transition(ctx, pp, t, sink);
                }
            }
        }
    }

    pub(super) fn sack<I: Iterator<Item = u32>>(
        &mut self,
        ctx: &Ctx,
        cumulative: u32,
        gaps: impl Iterator<Item = (u16, u16)>,
        (dup_tsns, duplicates): (u16, impl FnOnce() -> I),
        sink: &mut dyn EventSink,
    ) {
        // A SACK from `sender` acknowledges the peer's DATA.
        let data_sender = ctx.receiver();
        let window = self.config.limits.tsn_window;
        let a = &mut self.associations[ctx.assoc];
        let paths = &a.paths;
        let destination_of = |p: PathId| paths.get(usize::from(p)).map(|s| s.dst);
        let ledger = a.directions[data_sender].ledger(window);
        ledger.swap_buffers(&mut self.ack_buffers);
        ledger.on_sack_counters(u64::from(dup_tsns));
        let sample = ledger.on_sack(cumulative, gaps, ctx.time, &destination_of);
        sink.observe(&Observation::Sack {
            frame: ctx.frame,
            time: ctx.time,
            association: ctx.assoc,
            data_sender,
            cumulative_tsn: cumulative,
            dup_tsns,
        });
        for acked in ledger.newly_acked() {
            sink.observe(&Observation::Acked {
                frame: ctx.frame,
                time: ctx.time,
                association: ctx.assoc,
                data_sender,
                tsn: acked.tsn,
                effective_frame: acked.last_frame,
                effective_time: acked.last_time,
                path: acked.path,
            });
        }
        if let Some(s) = sample {
            let p = &mut a.paths[usize::from(s.path)];
            p.data_rtt.add(s.rtt);
            p.rto.update(s.rtt);
        }
        // A TSN reported received twice whose last copy was a timeout's:
        // its first transmission had arrived, so that expiry was spurious.
        if dup_tsns > 0 {
            for (path, expiry_frame, tsn) in a.directions[data_sender].spurious(duplicates()) {
                sink.emit(ctx.event(EventKind::SpuriousExpiry {
                    sender: data_sender,
                    path,
                    expiry_frame,
                    tsn,
                }));
            }
        }
        // Only the paths whose counter was not zero or whose state changes
        // have anything to say (almost never): they are kept, no others.
        let mut changed: [(PathId, Cleared); 8] = [(0, Cleared::default()); 8];
        let mut n = 0;
        for &path in a.directions[data_sender].ledger(window).newly_acked_paths() {
            let c = a.paths[usize::from(path)].record_success(ctx.time);
            if c != Cleared::default() && n < changed.len() {
                changed[n] = (path, c);
                n += 1;
            }
        }
        a.directions[data_sender]
            .ledger(window)
            .swap_buffers(&mut self.ack_buffers);
        for &(path, c) in &changed[..n] {
            self.cleared(ctx, path, c, "sack", sink);
        }
    }
}
