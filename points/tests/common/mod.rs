//! What both test files read from a sample run's files.

use sctp_handover_harness_formats::Scenario;
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// A sample scenario's run folder (sample-captures/NAME).
pub fn run_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-captures")
        .join(name)
}

/// The netem one-way delay of each MN address's link (scenario.toml:
/// addresses configured at start and added by the timeline).
pub fn link_delays(name: &str) -> HashMap<IpAddr, f64> {
    let text = std::fs::read_to_string(run_dir(name).join("scenario.toml")).expect("scenario");
    let s = Scenario::from_toml(&text).expect("scenario.toml");
    let mut by_interface = HashMap::new();
    let mut delays = HashMap::new();
    for i in &s.topology.mn_interfaces {
        by_interface.insert(i.name.as_str(), i.delay_ms);
        for a in &i.addresses {
            delays.insert(a.parse().expect("ip"), i.delay_ms);
        }
    }
    for step in &s.timeline {
        if step.kind.name() == "add_address" {
            let delay = by_interface[step.kind.interface().expect("interface")];
            let a = step.kind.address().expect("address").parse().expect("ip");
            delays.insert(a, delay);
        }
    }
    delays
}
