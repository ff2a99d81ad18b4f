//! ICMP errors quoting SCTP packets, matched to their association and path.

use super::Tracker;
use crate::decode::IcmpQuote;
use crate::events::{Event, EventKind, EventSink};
use crate::time::Timestamp;

impl Tracker {
    /// An ICMP error quoting one of our packets: counted on its path.
    pub fn icmp(&mut self, frame: u64, time: Timestamp, q: &IcmpQuote, sink: &mut dyn EventSink) {
        let located = self
            .by_tag
            .get(&(q.src_port, q.dst_port, q.verification_tag))
            .copied();
        let Some((id, _, _)) = located else {
            self.counters.icmp_errors_unmatched += 1;
            return;
        };
        self.counters.icmp_errors_matched += 1;
        let a = &mut self.associations[id];
        let path = a.path(q.src, q.dst);
        if let Some(p) = path {
            a.paths[usize::from(p)].icmp_errors += 1;
        }
        sink.emit(Event {
            frame,
            time,
            association: id,
            kind: EventKind::IcmpError {
                path,
                reporter: q.reporter,
                icmp_type: q.icmp_type,
                icmp_code: q.icmp_code,
            },
        });
    }
}
