//! The scenario format (TOML): topology, SCTP parameters, traffic and a
//! timeline of actions. See docs/harness.md.

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Seconds of traffic after the association is up.
    pub duration_s: f64,
    pub topology: Topology,
    #[serde(default)]
    pub sctp: SctpParams,
    #[serde(default)]
    pub traffic: Traffic,
    #[serde(default)]
    pub timeline: Vec<Action>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    #[serde(default)]
    pub ipv6: bool,
    /// The correspondent node's address (one interface).
    pub cn_address: String,
    pub port: u16,
    /// The mobile node's interfaces; each is its own path to the CN.
    pub mn_interfaces: Vec<Interface>,
    /// Addresses the MN binds before connecting (must be configured).
    pub mn_bind: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interface {
    pub name: String,
    /// Addresses configured at start (may be empty: added by the timeline).
    #[serde(default)]
    pub addresses: Vec<String>,
    /// One-way delay in each direction, applied on the link's own bridge
    /// ports (never on an endpoint), so RTT ≈ 2 × delay.
    #[serde(default)]
    pub delay_ms: f64,
    #[serde(default)]
    pub jitter_ms: f64,
    #[serde(default)]
    pub loss_pct: f64,
    /// e.g. "2mbit"; empty for unlimited.
    #[serde(default)]
    pub rate: String,
}

/// Kernel SCTP parameters, applied per network namespace by sysctl
/// (net.sctp.*) and on each socket by SCTP_RTOINFO, SCTP_PEER_ADDR_PARAMS
/// and SCTP_DELAYED_SACK.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SctpParams {
    pub rto_initial_ms: u32,
    pub rto_min_ms: u32,
    pub rto_max_ms: u32,
    pub path_max_retrans: u32,
    pub hb_interval_ms: u32,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Traffic {
    pub message_bytes: usize,
    pub interval_ms: u64,
    pub mn_to_cn: bool,
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

/// (No `deny_unknown_fields` here: serde does not support it together with
/// `flatten`; the inner enum rejects unknown fields.)
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Action {
    /// Milliseconds after the association came up.
    pub at_ms: u64,
    #[serde(flatten)]
    pub kind: ActionKind,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum ActionKind {
    /// Configure an address on an MN interface (optionally with IPv6 DAD:
    /// `addr_up` is logged when the address becomes usable).
    AddAddress {
        interface: String,
        address: String,
        #[serde(default)]
        dad: bool,
    },
    RemoveAddress {
        interface: String,
        address: String,
    },
    /// sctp_bindx(SCTP_BINDX_ADD_ADDR): the kernel sends ADD-IP.
    BindxAdd {
        address: String,
    },
    /// sctp_bindx(SCTP_BINDX_REM_ADDR): the kernel sends DELETE-IP.
    BindxRemove {
        address: String,
    },
    /// SCTP_SET_PEER_PRIMARY_ADDR: ask the CN to send to this MN address.
    SetPeerPrimary {
        address: String,
    },
    /// SCTP_PRIMARY_ADDR: the MN sends to this CN address.
    SetPrimary {
        address: String,
    },
    /// The MN interface loses / regains its link (carrier): the MN's
    /// kernel stops routing over it, as when a radio link drops.
    LinkDown {
        interface: String,
    },
    LinkUp {
        interface: String,
    },
    /// A silent cut in the network behind the MN interface (both
    /// directions); the MN's kernel does not notice.
    PathCut {
        interface: String,
    },
    PathRestore {
        interface: String,
    },
}

impl Scenario {
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read scenario {}", path.display()))?;
        let s: Scenario = toml::from_str(&text)
            .with_context(|| format!("invalid scenario {}", path.display()))?;
        s.validate()
            .with_context(|| format!("invalid scenario {}", path.display()))?;
        Ok(s)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        if self.topology.mn_interfaces.is_empty() || self.topology.mn_interfaces.len() > 2 {
            bail!("the mobile node needs one or two interfaces");
        }
        if self.sctp.sack_freq == 0 {
            bail!("sack_freq must be at least 1 (1: no delayed SACK)");
        }
        if self.sctp.sack_delay_ms < 10 || self.sctp.sack_delay_ms > 500 {
            bail!("sack_delay_ms must be within 10..=500 (Linux net.sctp.sack_timeout)");
        }
        for a in &self.timeline {
            let iface = match &a.kind {
                ActionKind::AddAddress { interface, .. }
                | ActionKind::RemoveAddress { interface, .. }
                | ActionKind::LinkDown { interface }
                | ActionKind::LinkUp { interface }
                | ActionKind::PathCut { interface }
                | ActionKind::PathRestore { interface } => Some(interface),
                _ => None,
            };
            if let Some(i) = iface {
                if !self.topology.mn_interfaces.iter().any(|m| &m.name == i) {
                    bail!("timeline names unknown interface {i}");
                }
            }
        }
        Ok(())
    }

    /// Applies one `--set key=value` override.
    pub fn set(&mut self, key: &str, value: &str) -> anyhow::Result<()> {
        let num = || -> anyhow::Result<u32> {
            value
                .parse()
                .with_context(|| format!("{key} needs a whole number, got {value}"))
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
                let d: f64 = value
                    .parse()
                    .with_context(|| format!("delay needs a number, got {value}"))?;
                if !(0.0..=10_000.0).contains(&d) {
                    bail!("delay must be within 0..=10000 ms, got {value}");
                }
                for i in &mut self.topology.mn_interfaces {
                    i.delay_ms = d;
                }
            }
            "duration_s" => {
                self.duration_s = value
                    .parse()
                    .with_context(|| format!("duration_s needs a number, got {value}"))?
            }
            other => bail!("unknown parameter {other} (see docs/harness.md for --set keys)"),
        }
        self.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn koh_kim() -> Scenario {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/koh-kim-1.toml");
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
        let back: Scenario = toml::from_str(&toml::to_string(&s).expect("toml")).expect("parse");
        assert_eq!(back.sctp.sack_freq, 2);
        assert_eq!(back.topology.mn_interfaces[1].delay_ms, 50.0);
    }
}
