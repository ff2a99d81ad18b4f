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

    /// The report's order is the descriptors' time line: every component
    /// once, ranks strictly rising (a tie would leave the order to the
    /// sort), Honda's elements first and recognition last.
    #[test]
    fn the_time_line_starts_with_the_network_and_ends_with_recognition() {
        use sctp_handover::handover::ComponentGroup;
        let shown = latency();
        let mut names: Vec<&str> = shown.iter().map(|c| c.name).collect();
        assert_eq!(names.first(), Some(&"network_disconnection"));
        let ranks: Vec<u8> = shown.iter().map(|c| c.timeline).collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
        let group_rank = |g: ComponentGroup| ComponentGroup::ALL.iter().position(|&x| x == g);
        let groups: Vec<_> = shown.iter().map(|c| group_rank(c.group)).collect();
        assert!(groups.windows(2).all(|w| w[0] <= w[1]), "{names:?}");
        assert_eq!(
            shown.last().map(|c| c.group),
            Some(ComponentGroup::Recognition)
        );
        names.sort_unstable();
        let mut all: Vec<&str> = COMPONENTS.iter().map(|c| c.name).collect();
        all.sort_unstable();
        assert_eq!(names, all, "every component once");
    }
}
