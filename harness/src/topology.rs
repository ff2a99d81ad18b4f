//! Builds the network inside the guest (not timed, so plain `ip`/`tc`/
//! `sysctl`/`ethtool` commands):
//!
//! ```text
//!  mn:ethK ── lkK:[lmn ─ bridge lbr ─ lcore] ── core:[plK ─ bridge cbr ─ pcn] ── cn:eth0
//! ```
//!
//! Delay, jitter, loss and rate sit on lkK's two ports (lmn toward the MN, lcore
//! toward the core), never on an endpoint's own interface: netem on an
//! endpoint would delay packets before that endpoint's tcpdump sees them.
//! `path_cut` detaches `lmn` from its bridge: both directions stop, carriers
//! and neighbour entries stay, and the sender still captures what it sent.
//! `link_down` sets `lmn` down, so the MN's interface loses carrier and,
//! with `ignore_routes_with_linkdown`, the MN routes around it.

use crate::scenario::{ActionKind, Scenario};
use anyhow::{bail, Context};
use std::net::IpAddr;
use std::process::Command;

pub const MN: &str = "mn";
pub const CN: &str = "cn";
pub const CORE: &str = "core";

pub fn link_ns(index: usize) -> String {
    format!("lk{}", index + 1)
}

pub fn mn_mac(index: usize) -> String {
    format!("02:00:00:00:01:{:02x}", index + 1)
}

pub const CN_MAC: &str = "02:00:00:00:00:01";

pub fn prefix(addr: IpAddr) -> u8 {
    if addr.is_ipv4() {
        24
    } else {
        64
    }
}

/// Runs one command, failing with its output when it fails.
pub fn run(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .with_context(|| format!("cannot run {}", args[0]))?;
    if !out.status.success() {
        bail!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn sh(line: &str) -> anyhow::Result<()> {
    let args: Vec<&str> = line.split_whitespace().collect();
    run(&args)
}

fn netem_args(iface: &crate::scenario::Interface) -> String {
    let mut s = format!("delay {}ms", iface.delay_ms);
    if iface.jitter_ms > 0.0 {
        s += &format!(" {}ms", iface.jitter_ms);
    }
    if iface.loss_pct > 0.0 {
        s += &format!(" loss {}%", iface.loss_pct);
    }
    if !iface.rate.is_empty() {
        s += &format!(" rate {}", iface.rate);
    }
    s
}

/// Every MN address the scenario will ever use, with its interface index.
pub fn mn_addresses(s: &Scenario) -> anyhow::Result<Vec<(usize, IpAddr)>> {
    let mut out = Vec::new();
    for (i, iface) in s.topology.mn_interfaces.iter().enumerate() {
        for a in &iface.addresses {
            out.push((i, a.parse().with_context(|| format!("bad address {a}"))?));
        }
    }
    for action in &s.timeline {
        if let ActionKind::AddAddress {
            interface, address, ..
        } = &action.kind
        {
            let i = s
                .topology
                .mn_interfaces
                .iter()
                .position(|m| &m.name == interface)
                .context("unknown interface")?;
            let a: IpAddr = address
                .parse()
                .with_context(|| format!("bad address {address}"))?;
            if !out.contains(&(i, a)) {
                out.push((i, a));
            }
        }
    }
    Ok(out)
}

pub fn build(s: &Scenario) -> anyhow::Result<()> {
    let v6 = s.topology.ipv6;
    let cn: IpAddr = s.topology.cn_address.parse().context("bad cn_address")?;
    for ns in [MN, CN, CORE] {
        sh(&format!("ip netns add {ns}"))?;
        sh(&format!("ip -n {ns} link set lo up"))?;
    }
    // Routes over a carrier-less interface are unusable (as on a host whose
    // radio link dropped); set before the interfaces exist so `default`
    // applies to them.
    for family in ["ipv4", "ipv6"] {
        for scope in ["all", "default"] {
            sh(&format!(
                "ip netns exec {MN} sysctl -q -w net.{family}.conf.{scope}.ignore_routes_with_linkdown=1"
            ))?;
        }
    }
    sh(&format!("ip -n {CORE} link add cbr type bridge"))?;
    sh(&format!(
        "ip link add eth0 netns {CN} address {CN_MAC} type veth peer name pcn netns {CORE}"
    ))?;
    sh(&format!("ip -n {CORE} link set pcn master cbr"))?;
    sh(&format!("ip -n {CORE} link set pcn up"))?;
    sh(&format!("ip -n {CORE} link set cbr up"))?;
    for (i, iface) in s.topology.mn_interfaces.iter().enumerate() {
        let lk = link_ns(i);
        sh(&format!("ip netns add {lk}"))?;
        sh(&format!(
            "ip link add {} netns {MN} address {} type veth peer name lmn netns {lk}",
            iface.name,
            mn_mac(i)
        ))?;
        sh(&format!(
            "ip link add lcore netns {lk} type veth peer name pl{} netns {CORE}",
            i + 1
        ))?;
        sh(&format!("ip -n {lk} link add lbr type bridge"))?;
        for port in ["lmn", "lcore"] {
            sh(&format!("ip -n {lk} link set {port} master lbr"))?;
            sh(&format!("ip -n {lk} link set {port} up"))?;
            sh(&format!(
                "ip netns exec {lk} tc qdisc add dev {port} root netem {}",
                netem_args(iface)
            ))?;
        }
        sh(&format!("ip -n {lk} link set lbr up"))?;
        sh(&format!("ip -n {CORE} link set pl{} master cbr", i + 1))?;
        sh(&format!("ip -n {CORE} link set pl{} up", i + 1))?;
        sh(&format!("ip -n {MN} link set {} up", iface.name))?;
    }
    // Endpoint interfaces: real checksums, no segmentation offload, so the
    // capture shows what the wire would carry.
    let mut endpoint_ifaces: Vec<(&str, &str)> = vec![(CN, "eth0")];
    for iface in &s.topology.mn_interfaces {
        endpoint_ifaces.push((MN, &iface.name));
    }
    for (ns, dev) in &endpoint_ifaces {
        sh(&format!(
            "ip netns exec {ns} ethtool -K {dev} tx-checksum-sctp off tx-sctp-segmentation off gso off tso off"
        ))?;
    }
    let nodad = if v6 { " nodad" } else { "" };
    sh(&format!(
        "ip -n {CN} addr add {cn}/{} dev eth0{nodad}",
        prefix(cn)
    ))?;
    sh(&format!("ip -n {CN} link set eth0 up"))?;
    for iface in &s.topology.mn_interfaces {
        for a in &iface.addresses {
            let a: IpAddr = a.parse()?;
            sh(&format!(
                "ip -n {MN} addr add {a}/{} dev {}{nodad}",
                prefix(a),
                iface.name
            ))?;
        }
    }
    // Source-address routing: each MN address leaves by its own interface.
    let family = if v6 { "-6" } else { "-4" };
    for (k, (i, a)) in mn_addresses(s)?.into_iter().enumerate() {
        let table = 100 + k;
        let dev = &s.topology.mn_interfaces[i].name;
        sh(&format!(
            "ip {family} -n {MN} rule add from {a} table {table}"
        ))?;
        sh(&format!(
            "ip {family} -n {MN} route add {cn} dev {dev} table {table}"
        ))?;
        // Static neighbours: no ARP/ND traffic, and a cut link cannot make
        // neighbour resolution swallow packets before the capture.
        sh(&format!(
            "ip -n {CN} neigh replace {a} lladdr {} dev eth0 nud permanent",
            mn_mac(i)
        ))?;
    }
    for iface in &s.topology.mn_interfaces {
        sh(&format!(
            "ip -n {MN} neigh replace {cn} lladdr {CN_MAC} dev {} nud permanent",
            iface.name
        ))?;
    }
    let p = &s.sctp;
    for ns in [MN, CN] {
        for (key, value) in [
            ("net.sctp.addip_enable", "1".to_string()),
            ("net.sctp.addip_noauth_enable", "1".to_string()),
            ("net.sctp.rto_initial", p.rto_initial_ms.to_string()),
            ("net.sctp.rto_min", p.rto_min_ms.to_string()),
            ("net.sctp.rto_max", p.rto_max_ms.to_string()),
            ("net.sctp.path_max_retrans", p.path_max_retrans.to_string()),
            ("net.sctp.hb_interval", p.hb_interval_ms.to_string()),
            ("net.sctp.sack_timeout", p.sack_delay_ms.to_string()),
            ("net.sctp.pf_enable", u8::from(p.pf_enable).to_string()),
            ("net.sctp.pf_retrans", p.pf_retrans.to_string()),
            // 2 (enabled): the kernel notifies SCTP_ADDR_POTENTIALLY_FAILED
            // (its default 0 keeps the state from notifications), which
            // the ground truth logs as `kernel_addr_change`.
            ("net.sctp.pf_expose", "2".to_string()),
            (
                "net.sctp.default_auto_asconf",
                u8::from(p.auto_asconf).to_string(),
            ),
        ] {
            sh(&format!("ip netns exec {ns} sysctl -q -w {key}={value}"))?;
        }
    }
    Ok(())
}
