//! The latency components of docs/metrics.md as the report names them: the
//! column stem in the `handovers` table, a label for people, and how to get
//! the component from an analysed handover.

use sctp_handover::handover::{Component, Handover};

#[derive(Debug, Clone, Copy)]
pub struct ComponentDef {
    /// Column stem: `<key>_ms`, `<key>_from_frame`, … in `handovers`.
    pub key: &'static str,
    pub label: &'static str,
}

/// In the order of a handover's time line (Honda's latency elements first).
pub const LATENCY: [ComponentDef; 14] = [
    ComponentDef {
        key: "network_disconnection",
        label: "network-layer disconnection",
    },
    ComponentDef {
        key: "addip_sent",
        label: "ADDIP sent",
    },
    ComponentDef {
        key: "setprim_sent",
        label: "SETPRIM sent",
    },
    ComponentDef {
        key: "path_confirmation",
        label: "path confirmation",
    },
    ComponentDef {
        key: "sender_recovery",
        label: "sender sequence recovery",
    },
    ComponentDef {
        key: "data_interrupt",
        label: "data interrupt",
    },
    ComponentDef {
        key: "new_data_gap",
        label: "new-data gap",
    },
    ComponentDef {
        key: "transport_latency",
        label: "transport-layer latency",
    },
    ComponentDef {
        key: "total_handover_latency",
        label: "total handover latency",
    },
    ComponentDef {
        key: "failover_detection",
        label: "failover detection",
    },
    ComponentDef {
        key: "failover_time",
        label: "failover time",
    },
    ComponentDef {
        key: "recognition_link_up_to_heartbeat",
        label: "link up → HEARTBEAT",
    },
    ComponentDef {
        key: "recognition_heartbeat_to_data",
        label: "HEARTBEAT → DATA",
    },
    ComponentDef {
        key: "recognition_link_up_to_data",
        label: "link up → DATA",
    },
];

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

pub fn label_of(key: &str) -> Option<&'static str> {
    LATENCY.iter().find(|c| c.key == key).map(|c| c.label)
}

pub fn of<'h>(h: &'h Handover, key: &str) -> Option<&'h Component> {
    Some(match key {
        "network_disconnection" => &h.network_disconnection,
        "addip_sent" => &h.addip_sent,
        "setprim_sent" => &h.setprim_sent,
        "path_confirmation" => &h.path_confirmation,
        "sender_recovery" => &h.sender_recovery,
        "data_interrupt" => &h.data_interrupt,
        "new_data_gap" => &h.new_data_gap,
        "transport_latency" => &h.transport_latency,
        "total_handover_latency" => &h.total_handover_latency,
        "failover_detection" => &h.failover.as_ref()?.detection,
        "failover_time" => &h.failover.as_ref()?.failover_time,
        "recognition_link_up_to_heartbeat" => &h.recognition.as_ref()?.link_up_to_heartbeat,
        "recognition_heartbeat_to_data" => &h.recognition.as_ref()?.heartbeat_to_data,
        "recognition_link_up_to_data" => &h.recognition.as_ref()?.link_up_to_data,
        _ => return None,
    })
}
