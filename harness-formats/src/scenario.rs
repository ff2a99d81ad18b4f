//! scenario.toml: topology, SCTP parameters, traffic and a timeline of
//! actions (docs/harness.md). A run directory's copy is the scenario after
//! `--set`, written by the harness with [`Scenario::to_toml`].

use serde::{Deserialize, Serialize};

/// A scenario: topology, SCTP parameters, traffic and a timeline of
/// actions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Its name: the run directories' first level (`OUT/<name>/…`).
    pub name: String,
    /// What it replays, in words.
    #[serde(default)]
    pub description: String,
    /// Seconds of traffic after the association is up.
    pub duration_s: f64,
    /// The nodes and links.
    pub topology: Topology,
    /// The kernels' SCTP parameters.
    #[serde(default)]
    pub sctp: SctpParams,
    /// The messages both endpoints send.
    #[serde(default)]
    pub traffic: Traffic,
    /// The scripted actions.
    #[serde(default)]
    pub timeline: Vec<Action>,
}

/// The correspondent node (one interface) and the mobile node (one or two).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// IPv6 addresses (else IPv4).
    #[serde(default)]
    pub ipv6: bool,
    /// The correspondent node's address (one interface).
    pub cn_address: String,
    /// The CN's SCTP port.
    pub port: u16,
    /// The mobile node's interfaces; each is its own path to the CN.
    pub mn_interfaces: Vec<Interface>,
    /// Addresses the MN binds before connecting (must be configured).
    pub mn_bind: Vec<String>,
}

/// One MN interface and the link behind it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interface {
    /// Its name in the MN's namespace (`eth1`, `wlan0`).
    pub name: String,
    /// Addresses configured at start (may be empty: added by the timeline).
    #[serde(default)]
    pub addresses: Vec<String>,
    /// One-way delay in each direction, applied on the link's own bridge
    /// ports (never on an endpoint), so RTT ≈ 2 × delay.
    #[serde(default)]
    pub delay_ms: f64,
    /// netem's jitter of that delay.
    #[serde(default)]
    pub jitter_ms: f64,
    /// netem's loss, percent.
    #[serde(default)]
    pub loss_pct: f64,
    /// e.g. "2mbit"; empty for unlimited.
    #[serde(default)]
    pub rate: String,
}

/// Kernel SCTP parameters, applied per network namespace by sysctl
/// (net.sctp.*) and on each socket by SCTP_RTOINFO, SCTP_PEER_ADDR_PARAMS
/// and SCTP_DELAYED_SACK.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SctpParams {
    /// RTO.Initial (RFC 9260 §16).
    pub rto_initial_ms: u32,
    /// RTO.Min.
    pub rto_min_ms: u32,
    /// RTO.Max.
    pub rto_max_ms: u32,
    /// Path.Max.Retrans (RFC 9260 §8.2).
    pub path_max_retrans: u32,
    /// HB.interval (RFC 9260 §8.3).
    pub hb_interval_ms: u32,
    /// The delayed SACK's delay (RFC 9260 §6.2).
    pub sack_delay_ms: u32,
    /// SCTP_DELAYED_SACK's sack_freq: a SACK at the latest every this many
    /// packets (2, the RFC 9260 default); 1 switches delayed SACK off
    /// (`--set sack_delay=off`).
    pub sack_freq: u32,
    /// RFC 7829 potentially-failed state; Linux enables it by default.
    pub pf_enable: bool,
    /// Its threshold (PFMR, `net.sctp.pf_retrans`): a path is potentially
    /// failed once its error count exceeds it; Linux's default 0.
    pub pf_retrans: u32,
    /// `net.sctp.addip_enable`'s automatic ASCONF: the kernel sends
    /// ADD-IP / DELETE-IP for addresses configured / removed (RFC 5061 §4).
    pub auto_asconf: bool,
}

impl Default for SctpParams {
    fn default() -> Self {
        // Linux 6.1 defaults, except ADD-IP which scenarios need.
        SctpParams {
            rto_initial_ms: 3000,
            rto_min_ms: 1000,
            rto_max_ms: 60000,
            path_max_retrans: 5,
            hb_interval_ms: 30000,
            sack_delay_ms: 200,
            sack_freq: 2,
            pf_enable: true,
            pf_retrans: 0,
            auto_asconf: false,
        }
    }
}

/// The application's messages, on an absolute schedule.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Traffic {
    /// Bytes of each message.
    pub message_bytes: usize,
    /// A message every this many ms.
    pub interval_ms: u64,
    /// The MN sends.
    pub mn_to_cn: bool,
    /// The CN sends.
    pub cn_to_mn: bool,
}

impl Default for Traffic {
    fn default() -> Self {
        // Honda's testbed: 1408-byte messages every 50 ms.
        Traffic {
            message_bytes: 1408,
            interval_ms: 50,
            mn_to_cn: true,
            cn_to_mn: true,
        }
    }
}

/// One entry of the timeline.
///
/// (No `deny_unknown_fields` here: serde does not support it together with
/// `flatten`; the inner enum rejects unknown fields.)
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Action {
    /// Milliseconds after the association came up.
    pub at_ms: u64,
    /// What is done.
    #[serde(flatten)]
    pub kind: ActionKind,
}

/// An action and its target (`action = "…"` in the TOML).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum ActionKind {
    /// Configure an address on an MN interface (optionally with IPv6 DAD:
    /// `addr_up` is logged when the address becomes usable).
    AddAddress {
        /// The MN interface.
        interface: String,
        /// The address.
        address: String,
        /// Whether IPv6 duplicate address detection runs first.
        #[serde(default)]
        dad: bool,
    },
    /// Remove an address from an MN interface (logged as `addr_down`).
    RemoveAddress {
        /// The MN interface.
        interface: String,
        /// The address.
        address: String,
    },
    /// sctp_bindx(SCTP_BINDX_ADD_ADDR): the kernel sends ADD-IP.
    BindxAdd {
        /// The MN's address.
        address: String,
    },
    /// sctp_bindx(SCTP_BINDX_REM_ADDR): the kernel sends DELETE-IP.
    BindxRemove {
        /// The MN's address.
        address: String,
    },
    /// SCTP_SET_PEER_PRIMARY_ADDR: ask the CN to send to this MN address.
    SetPeerPrimary {
        /// The MN's address.
        address: String,
    },
    /// SCTP_PRIMARY_ADDR: the MN sends to this CN address.
    SetPrimary {
        /// The CN's address.
        address: String,
    },
    /// The MN interface loses its link (carrier): the MN's kernel stops
    /// routing over it, as when a radio link drops.
    LinkDown {
        /// The MN interface.
        interface: String,
    },
    /// It regains its link.
    LinkUp {
        /// The MN interface.
        interface: String,
    },
    /// A silent cut in the network behind the MN interface (both
    /// directions); the MN's kernel does not notice.
    PathCut {
        /// The MN interface.
        interface: String,
    },
    /// The cut healed.
    PathRestore {
        /// The MN interface.
        interface: String,
    },
}

impl ActionKind {
    /// The action's name in the TOML (`action = "bindx_add"`), which is
    /// also the `kind` events.jsonl logs it under (but `remove_address`,
    /// logged as `addr_down`).
    pub fn name(&self) -> &'static str {
        match self {
            ActionKind::AddAddress { .. } => "add_address",
            ActionKind::RemoveAddress { .. } => "remove_address",
            ActionKind::BindxAdd { .. } => "bindx_add",
            ActionKind::BindxRemove { .. } => "bindx_remove",
            ActionKind::SetPeerPrimary { .. } => "set_peer_primary",
            ActionKind::SetPrimary { .. } => "set_primary",
            ActionKind::LinkDown { .. } => "link_down",
            ActionKind::LinkUp { .. } => "link_up",
            ActionKind::PathCut { .. } => "path_cut",
            ActionKind::PathRestore { .. } => "path_restore",
        }
    }

    /// The MN interface it acts on, for the actions that name one.
    pub fn interface(&self) -> Option<&str> {
        match self {
            ActionKind::AddAddress { interface, .. }
            | ActionKind::RemoveAddress { interface, .. }
            | ActionKind::LinkDown { interface }
            | ActionKind::LinkUp { interface }
            | ActionKind::PathCut { interface }
            | ActionKind::PathRestore { interface } => Some(interface),
            _ => None,
        }
    }

    /// Its address, for the actions that name one.
    pub fn address(&self) -> Option<&str> {
        match self {
            ActionKind::AddAddress { address, .. }
            | ActionKind::RemoveAddress { address, .. }
            | ActionKind::BindxAdd { address }
            | ActionKind::BindxRemove { address }
            | ActionKind::SetPeerPrimary { address }
            | ActionKind::SetPrimary { address } => Some(address),
            _ => None,
        }
    }
}

/// Why a scenario is not one the harness can replay, or a `--set` was
/// refused.
#[derive(Debug, thiserror::Error)]
pub enum InvalidScenario {
    /// Not a scenario: TOML syntax, a missing or unknown field.
    #[cfg(feature = "toml")]
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A rule of the format broken (the interfaces, SACK settings, an
    /// unknown interface in the timeline), or an unknown `--set` key.
    #[error("{0}")]
    Rule(String),
    /// A `--set` value that does not parse.
    #[error("{what}")]
    Value {
        /// Which key needs what, and the value given.
        what: String,
        /// The parser's complaint.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Why [`Scenario::load`] failed.
#[cfg(feature = "toml")]
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario {}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// It is not a valid scenario.
    #[error("invalid scenario {}", path.display())]
    Invalid {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: InvalidScenario,
    },
}

fn rule(text: impl Into<String>) -> InvalidScenario {
    InvalidScenario::Rule(text.into())
}

#[cfg(feature = "toml")]
impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: &std::path::Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.to_owned(),
            source,
        })?;
        let invalid = |source| ScenarioError::Invalid {
            path: path.to_owned(),
            source,
        };
        let s = Scenario::from_toml(&text).map_err(invalid)?;
        s.validate().map_err(invalid)?;
        Ok(s)
    }

    /// Parses a scenario's text, without [`Scenario::validate`]: a run
    /// directory's scenario.toml is read as recorded.
    pub fn from_toml(text: &str) -> Result<Self, InvalidScenario> {
        Ok(toml::from_str(text)?)
    }

    /// The text the harness writes into a run directory.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(self)
    }
}

impl Scenario {
    /// The rules a scenario must follow to be replayed.
    pub fn validate(&self) -> Result<(), InvalidScenario> {
        if self.topology.mn_interfaces.is_empty() || self.topology.mn_interfaces.len() > 2 {
            return Err(rule("the mobile node needs one or two interfaces"));
        }
        if self.sctp.sack_freq == 0 {
            return Err(rule("sack_freq must be at least 1 (1: no delayed SACK)"));
        }
        if self.sctp.sack_delay_ms < 10 || self.sctp.sack_delay_ms > 500 {
            return Err(rule(
                "sack_delay_ms must be within 10..=500 (Linux net.sctp.sack_timeout)",
            ));
        }
        for a in &self.timeline {
            if let Some(i) = a.kind.interface() {
                if !self.topology.mn_interfaces.iter().any(|m| m.name == i) {
                    return Err(rule(format!("timeline names unknown interface {i}")));
                }
            }
        }
        Ok(())
    }

    /// Applies one `--set key=value` override (the keys of docs/harness.md;
    /// a sweep's group directory is named by them, `rto=200,pmr=1`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), InvalidScenario> {
        let num = || -> Result<u32, InvalidScenario> {
            value.parse().map_err(|e| InvalidScenario::Value {
                what: format!("{key} needs a whole number, got {value}"),
                source: Box::new(e),
            })
        };
        let s = &mut self.sctp;
        match key {
            "rto_initial" | "rto_initial_ms" => s.rto_initial_ms = num()?,
            "rto_min" | "rto_min_ms" => s.rto_min_ms = num()?,
            "rto_max" | "rto_max_ms" => s.rto_max_ms = num()?,
            "rto" => {
                s.rto_min_ms = num()?;
                s.rto_max_ms = num()?;
                s.rto_initial_ms = num()?;
            }
            "pmr" | "path_max_retrans" => s.path_max_retrans = num()?,
            "hb_interval" | "hb_interval_ms" => s.hb_interval_ms = num()?,
            // `off`: SACK every packet (sack_freq 1); the namespace's
            // sack_timeout keeps the scenario's value, which is not used.
            "sack_delay" | "sack_delay_ms" if value == "off" => s.sack_freq = 1,
            "sack_delay" | "sack_delay_ms" => {
                s.sack_delay_ms = num()?;
                s.sack_freq = s.sack_freq.max(2);
            }
            "sack_freq" => s.sack_freq = num()?,
            "pf_enable" => s.pf_enable = value == "1" || value == "true",
            "pf_retrans" => s.pf_retrans = num()?,
            "auto_asconf" => s.auto_asconf = value == "1" || value == "true",
            // One-way delay of every MN link (RTT ≈ 2 × delay).
            "delay" | "delay_ms" => {
                let d: f64 = value.parse().map_err(|e| InvalidScenario::Value {
                    what: format!("delay needs a number, got {value}"),
                    source: Box::new(e),
                })?;
                if !(0.0..=10_000.0).contains(&d) {
                    return Err(rule(format!(
                        "delay must be within 0..=10000 ms, got {value}"
                    )));
                }
                for i in &mut self.topology.mn_interfaces {
                    i.delay_ms = d;
                }
            }
            "duration_s" => {
                self.duration_s = value.parse().map_err(|e| InvalidScenario::Value {
                    what: format!("duration_s needs a number, got {value}"),
                    source: Box::new(e),
                })?
            }
            other => {
                return Err(rule(format!(
                    "unknown parameter {other} (see docs/harness.md for --set keys)"
                )))
            }
        }
        self.validate()
    }
}

#[cfg(all(test, feature = "toml"))]
mod tests {
    use super::*;
    use std::path::Path;

    fn koh_kim() -> Scenario {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/scenarios/koh-kim-1.toml");
        Scenario::load(&path).expect("koh-kim-1 loads")
    }

    #[test]
    fn delay_sets_every_link_and_sack_delay_off_sets_sack_freq_one() {
        let mut s = koh_kim();
        assert_eq!(s.sctp.sack_freq, 2, "the RFC 9260 default when not given");
        s.set("delay", "50").expect("delay");
        let delays: Vec<f64> = s
            .topology
            .mn_interfaces
            .iter()
            .map(|i| i.delay_ms)
            .collect();
        assert_eq!(delays, [50.0, 50.0]);
        s.set("sack_delay", "off").expect("off");
        assert_eq!((s.sctp.sack_freq, s.sctp.sack_delay_ms), (1, 50));
        s.set("sack_delay", "20")
            .expect("a delay switches it back on");
        assert_eq!((s.sctp.sack_freq, s.sctp.sack_delay_ms), (2, 20));
        assert!(s.clone().set("delay", "-1").is_err());
        assert!(s.clone().set("sack_freq", "0").is_err());
        // The written scenario.toml reads back with the same values.
        let back = Scenario::from_toml(&s.to_toml().expect("toml")).expect("parse");
        assert_eq!(back.sctp.sack_freq, 2);
        assert_eq!(back.topology.mn_interfaces[1].delay_ms, 50.0);
    }

    #[test]
    fn errors_say_what_and_where() {
        let mut s = koh_kim();
        let e = s.set("rto", "fast").expect_err("not a number");
        assert_eq!(e.to_string(), "rto needs a whole number, got fast");
        assert_eq!(
            std::error::Error::source(&e).map(|c| c.to_string()),
            Some("invalid digit found in string".into())
        );
        let e = s.set("rtx", "1").expect_err("unknown");
        assert_eq!(
            e.to_string(),
            "unknown parameter rtx (see docs/harness.md for --set keys)"
        );
        let e = Scenario::load(Path::new("/nonexistent/s.toml")).expect_err("missing");
        assert_eq!(e.to_string(), "cannot read scenario /nonexistent/s.toml");
    }

    #[test]
    fn action_names_are_the_toml_tags() {
        for (toml, name) in [
            ("action = \"bindx_add\"\naddress = \"a\"", "bindx_add"),
            (
                "action = \"remove_address\"\ninterface = \"i\"\naddress = \"a\"",
                "remove_address",
            ),
            (
                "action = \"path_restore\"\ninterface = \"i\"",
                "path_restore",
            ),
        ] {
            let a: ActionKind = toml::from_str(toml).expect(name);
            assert_eq!(a.name(), name);
        }
    }
}
