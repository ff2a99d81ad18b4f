//! The handover's latency components, described once: the list every
//! output iterates (the `handovers` table's columns and rows, the report's
//! time lines and comparisons, the terminal summary, `watch`'s lines and
//! the Wireshark plugins' fields). Adding a component is a field of
//! [`Handover`] (or of its failover or recognition), one entry here and
//! its definition in docs/metrics.md.
//!
//! [`COMPONENTS`] is in the order of docs/metrics.md, which is the order of
//! the `handovers` table's columns; an output that shows them in another
//! order sorts by a field of the descriptor (the report's time line by
//! [`ComponentDescriptor::timeline`]) rather than keeping a list of its own.

use super::model::{Component, Handover};
use crate::names::output_names;

/// Which part of a handover a component belongs to: the handover's own are
/// always there (as a value or as the reason there is none), the failover
/// details only for a switch with T3 expiries on the old path, the link
/// availability recognition only for a `return` switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentGroup {
    /// Every handover's.
    Handover,
    /// A failover's ([`super::Failover`]).
    Failover,
    /// A return's link availability recognition ([`super::Recognition`]).
    Recognition,
}

output_names!(ComponentGroup, "component group" {
    Handover => "handover",
    Failover => "failover",
    Recognition => "recognition",
});

/// One latency component of a handover (docs/metrics.md, "Handover
/// latency components").
#[derive(Debug, Clone, Copy)]
pub struct ComponentDescriptor {
    /// Its name: the stem of its columns in the `handovers` table
    /// (`<name>_ms`, `<name>_from_frame`, `<name>_to_frame`,
    /// `<name>_missing`) and what `report --metric` takes.
    pub name: &'static str,
    /// Where it is in a handover's JSON record (`--format json`, `watch
    /// --format jsonl`): dot-separated field names.
    pub json_path: &'static str,
    /// For people: the report's and `watch`'s words for it.
    pub label: &'static str,
    /// The unit of its value (`Component::ms`).
    pub unit: &'static str,
    /// What it measures, from where to where, in one sentence (the
    /// definition is docs/metrics.md's).
    pub description: &'static str,
    /// The part of the handover it belongs to.
    pub group: ComponentGroup,
    /// The component of a handover; `None` when its group is absent (not
    /// a failover, no recognition).
    pub get: fn(&Handover) -> Option<&Component>,
    /// Transmissions of the request the component is timed from (the
    /// first of them), for a component timed from an ASCONF.
    pub transmissions: Option<fn(&Handover) -> Option<u32>>,
    /// Its place on a handover's time line (the report's order: the
    /// network's part first, then the transport's, Honda's latency
    /// elements first), 0 first.
    pub timeline: u8,
    /// The heading of its column in the terminal summary's handover
    /// table; `None`: not shown there.
    pub summary_heading: Option<&'static str>,
    /// Shown in `watch`'s line for a handover.
    pub in_watch_line: bool,
}

impl ComponentDescriptor {
    /// The component's value in [`Self::unit`], when its group is there
    /// and it could be computed.
    pub fn value(&self, h: &Handover) -> Option<f64> {
        (self.get)(h)?.ms
    }

    /// The transmissions of the request it is timed from, when it is timed
    /// from one that was sent.
    pub fn transmissions_of(&self, h: &Handover) -> Option<u32> {
        self.transmissions.and_then(|t| t(h))
    }

    /// The descriptor of the component named `name` ([`Self::name`]).
    pub fn by_name(name: &str) -> Option<&'static ComponentDescriptor> {
        COMPONENTS.iter().find(|c| c.name == name)
    }
}

/// Every latency component of a handover, in the order of docs/metrics.md
/// and of the `handovers` table's columns.
pub const COMPONENTS: &[ComponentDescriptor] = &[
    ComponentDescriptor {
        name: "data_interrupt",
        json_path: "data_interrupt",
        label: "data interrupt",
        unit: "ms",
        description: "last DATA on the old path before the switch → first DATA, new or retransmitted, on the new path (negative: make-before-break)",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.data_interrupt),
        transmissions: None,
        timeline: 5,
        summary_heading: Some("interrupt"),
        in_watch_line: true,
    },
    ComponentDescriptor {
        name: "new_data_gap",
        json_path: "new_data_gap",
        label: "new-data gap",
        unit: "ms",
        description: "last new DATA on the old path → the switch frame (first new DATA on the new path)",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.new_data_gap),
        transmissions: None,
        timeline: 6,
        summary_heading: None,
        in_watch_line: true,
    },
    ComponentDescriptor {
        name: "total_handover_latency",
        json_path: "total_handover_latency",
        label: "total handover latency",
        unit: "ms",
        description: "effective transmission of TSN L → that of L+1, the first TSN the receiver got only after the interruption (Honda)",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.total_handover_latency),
        transmissions: None,
        timeline: 8,
        summary_heading: Some("total"),
        in_watch_line: true,
    },
    ComponentDescriptor {
        name: "network_disconnection",
        json_path: "network_disconnection",
        label: "network-layer disconnection",
        unit: "ms",
        description: "link_down (or the old address's last use) → addr_up for the new address (or its first use)",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.network_disconnection),
        transmissions: None,
        timeline: 0,
        summary_heading: Some("network"),
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "transport_latency",
        json_path: "transport_latency",
        label: "transport-layer latency",
        unit: "ms",
        description: "total handover latency − network-layer disconnection",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.transport_latency),
        transmissions: None,
        timeline: 7,
        summary_heading: Some("transport"),
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "addip_sent",
        json_path: "addip_sent",
        label: "ADDIP sent",
        unit: "ms",
        description: "addr_up for the new address → first transmission of the ASCONF adding it",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.addip_sent),
        transmissions: Some(|h| h.addip_transmissions),
        timeline: 1,
        summary_heading: Some("ADDIP"),
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "setprim_sent",
        json_path: "setprim_sent",
        label: "SETPRIM sent",
        unit: "ms",
        description: "the ASCONF-ACK of the ADD-IP → first transmission of the ASCONF setting the new address primary",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.setprim_sent),
        transmissions: Some(|h| h.setprim_transmissions),
        timeline: 2,
        summary_heading: Some("SETPRIM"),
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "sender_recovery",
        json_path: "sender_recovery",
        label: "sender sequence recovery",
        unit: "ms",
        description: "the ADD-IP's ASCONF-ACK (mobile sender) or the SET-PRIMARY ASCONF (its peer) → the switch frame",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.sender_recovery),
        transmissions: None,
        timeline: 4,
        summary_heading: Some("recovery"),
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "path_confirmation",
        json_path: "path_confirmation",
        label: "path confirmation",
        unit: "ms",
        description: "the last answered HEARTBEAT on the new path before the switch → its HEARTBEAT ACK",
        group: ComponentGroup::Handover,
        get: |h| Some(&h.path_confirmation),
        transmissions: None,
        timeline: 3,
        summary_heading: None,
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "failover_detection",
        json_path: "failover.detection",
        label: "failover detection",
        unit: "ms",
        description: "failure start (link_down, else the first unanswered transmission) → first DATA, new or retransmitted, on the alternate path",
        group: ComponentGroup::Failover,
        get: |h| h.failover.as_ref().map(|f| &f.detection),
        transmissions: None,
        timeline: 9,
        summary_heading: None,
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "failover_time",
        json_path: "failover.failover_time",
        label: "failover time",
        unit: "ms",
        description: "failure start → first new DATA on the alternate path (the switch frame)",
        group: ComponentGroup::Failover,
        get: |h| h.failover.as_ref().map(|f| &f.failover_time),
        transmissions: None,
        timeline: 10,
        summary_heading: Some("failover"),
        in_watch_line: true,
    },
    ComponentDescriptor {
        name: "recognition_link_up_to_heartbeat",
        json_path: "recognition.link_up_to_heartbeat",
        label: "link up → HEARTBEAT",
        unit: "ms",
        description: "link_up on the returned-to path → the first HEARTBEAT on it after",
        group: ComponentGroup::Recognition,
        get: |h| h.recognition.as_ref().map(|r| &r.link_up_to_heartbeat),
        transmissions: None,
        timeline: 11,
        summary_heading: None,
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "recognition_heartbeat_to_data",
        json_path: "recognition.heartbeat_to_data",
        label: "HEARTBEAT → DATA",
        unit: "ms",
        description: "that HEARTBEAT → the first DATA on the returned-to path",
        group: ComponentGroup::Recognition,
        get: |h| h.recognition.as_ref().map(|r| &r.heartbeat_to_data),
        transmissions: None,
        timeline: 12,
        summary_heading: None,
        in_watch_line: false,
    },
    ComponentDescriptor {
        name: "recognition_link_up_to_data",
        json_path: "recognition.link_up_to_data",
        label: "link up → DATA",
        unit: "ms",
        description: "link_up on the returned-to path → the first DATA on it",
        group: ComponentGroup::Recognition,
        get: |h| h.recognition.as_ref().map(|r| &r.link_up_to_data),
        transmissions: None,
        timeline: 13,
        summary_heading: None,
        in_watch_line: false,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_time_line_orders_every_component_once() {
        let mut names: Vec<&str> = COMPONENTS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMPONENTS.len());
        let mut ranks: Vec<u8> = COMPONENTS.iter().map(|c| c.timeline).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, (0..COMPONENTS.len() as u8).collect::<Vec<_>>());
    }

    #[test]
    fn a_component_of_a_group_is_named_after_its_group() {
        for c in COMPONENTS {
            match c.group {
                ComponentGroup::Handover => assert!(!c.json_path.contains('.'), "{}", c.name),
                g => {
                    let field = c.json_path.strip_prefix(&format!("{}.", g.as_str()));
                    assert!(field.is_some(), "{}: {}", c.name, c.json_path);
                    assert!(c.name.starts_with(g.as_str()), "{}", c.name);
                }
            }
        }
    }
}
