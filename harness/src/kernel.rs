//! The kernel's own view of each association, logged as ground truth in
//! events.jsonl: every SCTP_PEER_ADDR_CHANGE notification the endpoint
//! receives (`kernel_addr_change`), and SCTP_STATUS with the error counters
//! sctp_diag reports, SCTP_GET_PEER_ADDR_INFO and the namespace's SCTP MIB
//! counters sampled every 10 ms, written only when something that matters
//! changes (`kernel_status`, `kernel_paddr`, `kernel_mib`). Format:
//! docs/harness.md.

use crate::eventlog::{epoch_string, now_ns, EventLog};
use crate::netlink::SctpDiag;
use crate::sctp_sys::{
    addr_change_name, assoc_state_name, parse_addr_change, path_state_name, sn_error_name,
    PeerAddrInfo, SctpSocket,
};
use serde::Serialize;
use std::collections::HashMap;
use std::fs::File;
use std::net::SocketAddr;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sampling period of SCTP_STATUS and SCTP_GET_PEER_ADDR_INFO.
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(10);

/// The guest kernel's timer frequency: SCTP keeps SRTT in jiffies and
/// reports it unconverted in `spinfo_srtt` (RTO is converted to ms).
const KERNEL_HZ: u32 = 100;

#[derive(Serialize)]
struct AddrChangeRecord<'a> {
    time: String,
    node: &'a str,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    state: &'static str,
    spc_error: &'static str,
}

#[derive(Serialize)]
struct PaddrRecord<'a> {
    time: String,
    node: &'a str,
    kind: &'static str,
    address: String,
    state: &'static str,
    rto_ms: u32,
    srtt_ms: u32,
    cwnd: u32,
}

#[derive(Serialize)]
struct StatusRecord<'a> {
    time: String,
    node: &'a str,
    kind: &'static str,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    primary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    primary_state: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rto_ms: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    srtt_ms: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwnd: Option<u32>,
    unacked: u16,
    pending: u16,
    /// The primary path's error counter and the association's (sctp_diag).
    #[serde(skip_serializing_if = "Option::is_none")]
    primary_error_count: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overall_error_count: Option<u32>,
}

/// The timer counters of /proc/net/sctp/snmp (per network namespace, and
/// each endpoint has its own namespace with one association).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
struct Mib {
    /// SctpT3RtxExpireds: T3-rtx timer expiries, all paths together.
    t3_rtx_expireds: u64,
    /// SctpT3Retransmits: retransmission rounds started by them.
    t3_retransmits: u64,
    /// SctpFastRetransmits.
    fast_retransmits: u64,
}

#[derive(Serialize)]
struct MibRecord<'a> {
    time: String,
    node: &'a str,
    kind: &'static str,
    #[serde(flatten)]
    mib: Mib,
}

fn parse_mib(text: &str) -> Mib {
    let mut m = Mib::default();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let (Some(name), Some(value)) = (f.next(), f.next()) else {
            continue;
        };
        let Ok(v) = value.parse() else {
            continue;
        };
        match name {
            "SctpT3RtxExpireds" => m.t3_rtx_expireds = v,
            "SctpT3Retransmits" => m.t3_retransmits = v,
            "SctpFastRetransmits" => m.fast_retransmits = v,
            _ => {}
        }
    }
    m
}

/// Reads /proc/net/sctp/snmp again from the start (kept open).
fn read_mib(file: &File, buf: &mut [u8]) -> Option<Mib> {
    let n = file.read_at(buf, 0).ok()?;
    Some(parse_mib(std::str::from_utf8(&buf[..n]).ok()?))
}

fn srtt_ms(info: &PeerAddrInfo) -> u32 {
    info.srtt_jiffies.saturating_mul(1000 / KERNEL_HZ)
}

/// Logs a notification read at `at_ns` (MSG_NOTIFICATION set); other
/// notification types are not subscribed to and are ignored.
pub fn log_notification(log: &EventLog, node: &str, at_ns: i64, bytes: &[u8]) {
    if let Some(n) = parse_addr_change(bytes) {
        log.write_json(&AddrChangeRecord {
            time: epoch_string(at_ns),
            node,
            kind: "kernel_addr_change",
            address: n.address.map(|a| a.ip().to_string()),
            state: addr_change_name(n.state),
            spc_error: sn_error_name(n.error),
        });
    }
}

/// The sampling thread of one endpoint.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Sampler {
    /// Starts sampling `sock`'s association (the only one in this
    /// namespace) every [`SAMPLE_PERIOD`].
    pub fn start(
        sock: &SctpSocket,
        v6: bool,
        log: Arc<EventLog>,
        node: &'static str,
    ) -> anyhow::Result<Self> {
        let sock = sock.try_clone()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut last = Last::default();
            let mib = File::open("/proc/net/sctp/snmp").ok();
            let mut diag = SctpDiag::open(v6).ok();
            let mut buf = vec![0u8; 8192];
            let start = Instant::now();
            let mut n: u32 = 0;
            while !stop2.load(Ordering::Relaxed) {
                let at = now_ns();
                if let Some(m) = mib.as_ref().and_then(|f| read_mib(f, &mut buf)) {
                    if last.mib != Some(m) {
                        last.mib = Some(m);
                        log.write_json(&MibRecord {
                            time: epoch_string(at),
                            node,
                            kind: "kernel_mib",
                            mib: m,
                        });
                    }
                }
                sample(&sock, diag.as_mut(), &log, node, &mut last);
                n += 1;
                let next = start + SAMPLE_PERIOD * n;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
        });
        Ok(Sampler { stop, thread })
    }

    /// Stops and joins the thread (which holds a descriptor of the socket:
    /// call this before closing it).
    pub fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// What was last logged.
#[derive(Default)]
struct Last {
    /// State, primary, its error count and the association's.
    status: Option<StatusKey>,
    /// State, RTO and cwnd per peer address.
    paddr: HashMap<SocketAddr, (i32, u32, u32)>,
    mib: Option<Mib>,
}

type StatusKey = (i32, Option<SocketAddr>, Option<u16>, Option<u32>);

/// One sampling round: a `kernel_status` line when the association state,
/// the primary path or an error counter changed, a `kernel_paddr` line per
/// peer address that is new or whose state or RTO changed or whose cwnd
/// fell (a T3 expiry sets it to one MTU).
fn sample(
    sock: &SctpSocket,
    diag: Option<&mut SctpDiag>,
    log: &EventLog,
    node: &str,
    last: &mut Last,
) {
    let at = now_ns();
    let info = diag
        .and_then(|d| d.associations().ok())
        .and_then(|all| all.into_iter().find(|i| i.tag != 0));
    if let Ok(s) = sock.status() {
        let key = (
            s.state,
            s.primary.map(|p| p.address),
            info.map(|i| i.p_error),
            info.map(|i| i.overall_error),
        );
        if last.status != Some(key) {
            last.status = Some(key);
            log.write_json(&StatusRecord {
                time: epoch_string(at),
                node,
                kind: "kernel_status",
                state: assoc_state_name(s.state),
                primary: s.primary.map(|p| p.address.ip().to_string()),
                primary_state: s.primary.map(|p| path_state_name(p.state)),
                rto_ms: s.primary.map(|p| p.rto_ms),
                srtt_ms: s.primary.as_ref().map(srtt_ms),
                cwnd: s.primary.map(|p| p.cwnd),
                unacked: s.unackdata,
                pending: s.penddata,
                primary_error_count: key.2,
                overall_error_count: key.3,
            });
        }
    }
    let Ok(peers) = sock.peer_addrs() else {
        return;
    };
    for peer in peers {
        let at = now_ns();
        let Ok(info) = sock.peer_addr_info(peer) else {
            continue;
        };
        let now = (info.state, info.rto_ms, info.cwnd);
        let changed = match last.paddr.insert(peer, now) {
            None => true,
            Some((state, rto, cwnd)) => state != now.0 || rto != now.1 || now.2 < cwnd,
        };
        if changed {
            log.write_json(&PaddrRecord {
                time: epoch_string(at),
                node,
                kind: "kernel_paddr",
                address: peer.ip().to_string(),
                state: path_state_name(info.state),
                rto_ms: info.rto_ms,
                srtt_ms: srtt_ms(&info),
                cwnd: info.cwnd,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mib_counters_parse() {
        let text = "SctpCurrEstab                   \t1\nSctpT3RtxExpireds               \t5\nSctpT3Retransmits               \t5\nSctpFastRetransmits             \t0\n";
        assert_eq!(
            parse_mib(text),
            Mib {
                t3_rtx_expireds: 5,
                t3_retransmits: 5,
                fast_retransmits: 0
            }
        );
        let line = serde_json::to_string(&MibRecord {
            time: "1.000000000".into(),
            node: "cn",
            kind: "kernel_mib",
            mib: parse_mib(text),
        })
        .unwrap();
        assert_eq!(
            line,
            r#"{"time":"1.000000000","node":"cn","kind":"kernel_mib","t3_rtx_expireds":5,"t3_retransmits":5,"fast_retransmits":0}"#
        );
    }
}
