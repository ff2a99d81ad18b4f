//! The latency components as the report shows them: the analyzer's
//! descriptors ([`sctp_handover::handover::COMPONENTS`]) in the order of a
//! handover's time line ([`ComponentDescriptor::timeline`]), and the counts
//! compared beside them.

use sctp_handover::handover::{ComponentDescriptor, COMPONENTS};

/// Every component, in the order of a handover's time line (Honda's
/// latency elements first).
pub fn latency() -> &'static [&'static ComponentDescriptor] {
    static ORDERED: std::sync::OnceLock<Vec<&'static ComponentDescriptor>> =
        std::sync::OnceLock::new();
    ORDERED.get_or_init(|| {
        let mut all: Vec<&'static ComponentDescriptor> = COMPONENTS.iter().collect();
        all.sort_by_key(|c| c.timeline);
        all
    })
}

/// Counts and sizes of a handover compared beside the latencies:
/// (column, label, unit).
pub const COUNTS: [(&str, &str, &str); 6] = [
    ("dar_overhead_bytes", "DAR overhead", "bytes"),
    ("asconf_exchanges", "ASCONF exchanges", ""),
    (
        "window_retransmissions",
        "retransmissions in the handover window",
        "",
    ),
    ("window_dup_tsns_reported", "duplicate TSNs reported", ""),
    ("window_lost_in_switch", "lost in the switch", ""),
    ("failover_expiries", "T3 expiries", ""),
];

/// The label of the component named `name` (a column stem).
pub fn label_of(name: &str) -> Option<&'static str> {
    ComponentDescriptor::by_name(name).map(|c| c.label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_line_starts_with_the_network_and_ends_with_recognition() {
        let names: Vec<&str> = latency().iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "network_disconnection",
                "addip_sent",
                "setprim_sent",
                "path_confirmation",
                "sender_recovery",
                "data_interrupt",
                "new_data_gap",
                "transport_latency",
                "total_handover_latency",
                "failover_detection",
                "failover_time",
                "recognition_link_up_to_heartbeat",
                "recognition_heartbeat_to_data",
                "recognition_link_up_to_data",
            ]
        );
    }
}
