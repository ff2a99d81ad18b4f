//! The two endpoints, each a process inside its namespace. The mobile
//! node (MN) connects, sends and receives, and executes the timeline,
//! logging CLOCK_REALTIME immediately before and after each syscall; the
//! correspondent node (CN) accepts and exchanges traffic. Both log their
//! kernel's view of the association (crate::kernel).

use crate::eventlog::{epoch_string, now_ns, EventLog, Record};
use crate::kernel::{self, Sampler};
use crate::netlink::{self, Netlink, IFA_F_NODAD};
use crate::scenario::{ActionKind, Scenario};
use crate::sctp_sys::SctpSocket;
use crate::topology::{link_ns, prefix};
use anyhow::{bail, Context};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long an IPv6 address may stay tentative (DAD) before giving up.
const DAD_LIMIT: Duration = Duration::from_secs(10);

/// The real-time priority (SCHED_FIFO, 1–99) of the message senders in the
/// guest. The guest has one CPU for both endpoints' threads, their
/// kernel-log readers and samplers, and both tcpdumps; a sender of the
/// default class that falls due while one of them runs waits for it. The
/// handover itself wakes them: in koh-kim-1-lan (delay=0.1 r02 of the
/// reproduction) the SET-PRIMARY reached the correspondent 0.23 ms after
/// the MN's call, the correspondent's reader logged the made_primary
/// notification at +1.33 ms, and the first message to the new address,
/// due at about +0.9 ms, left at +1.70 ms, 8.65 ms after the one before
/// it (the MN's interrupt: 9.18 ms for an 8 ms period). A SCHED_FIFO
/// sender runs when its timer fires, as soon as the guest kernel (not
/// preemptible: CONFIG_PREEMPT_NONE) returns to user space, and sleeps
/// without timer slack.
const SENDER_PRIORITY: libc::c_int = 10;

/// Puts the calling thread in SCHED_FIFO at `priority`.
fn make_realtime(priority: libc::c_int) -> std::io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: param is a valid sched_param; pid 0 is the calling thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// CLOCK_MONOTONIC now.
fn monotonic_now() -> libc::timespec {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: now is a valid timespec to write; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now
}

/// `start` + `ns` nanoseconds.
fn timespec_after(start: libc::timespec, ns: u64) -> libc::timespec {
    const NS_PER_S: u64 = 1_000_000_000;
    let total_ns = start.tv_nsec as u64 + ns % NS_PER_S;
    libc::timespec {
        tv_sec: start.tv_sec + (ns / NS_PER_S + total_ns / NS_PER_S) as libc::time_t,
        tv_nsec: (total_ns % NS_PER_S) as libc::c_long,
    }
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline` (returns at
/// once when it has passed). Absolute (TIMER_ABSTIME), so that nothing that
/// runs between reading the clock and going to sleep lengthens the sleep.
fn sleep_until(deadline: &libc::timespec) {
    loop {
        // SAFETY: deadline is a valid timespec; no remainder is asked for
        // (TIMER_ABSTIME retries with the same deadline).
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                deadline,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

struct Traffic {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

/// Sends (when `send`) and receives on `sock`; the receiver also reads the
/// kernel's notifications and logs them as `node`'s.
fn start_traffic(
    sock: &SctpSocket,
    send: bool,
    bytes: usize,
    interval_ms: u64,
    log: Arc<EventLog>,
    node: &'static str,
) -> anyhow::Result<Traffic> {
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    if send {
        let tx = sock.try_clone()?;
        let (stop, sent) = (stop.clone(), sent.clone());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        threads.push(std::thread::spawn(move || {
            let ready = make_realtime(SENDER_PRIORITY);
            let ok = ready.is_ok();
            let _ = ready_tx.send(ready);
            if !ok {
                return;
            }
            let mut message = vec![0u8; bytes];
            let start = monotonic_now();
            let interval_ns = interval_ms.saturating_mul(1_000_000);
            let mut n: u64 = 0;
            while !stop.load(Ordering::Relaxed) {
                // A sequence number at the start makes messages distinct.
                let k = 8.min(bytes);
                message[..k].copy_from_slice(&n.to_be_bytes()[..k]);
                if tx.send(&message).is_ok() {
                    sent.fetch_add(1, Ordering::Relaxed);
                }
                n += 1;
                // Message n is due at start + n periods whenever the one
                // before it left: a late send does not move the next.
                sleep_until(&timespec_after(start, interval_ns.saturating_mul(n)));
            }
        }));
        ready_rx
            .recv()
            .context("the sender thread ended before it started")?
            .with_context(|| format!("{node}: SCHED_FIFO for the sender"))?;
    }
    let rx = sock.try_clone()?;
    rx.set_recv_timeout_ms(100)?;
    let (stop2, received2) = (stop.clone(), received.clone());
    threads.push(std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        while !stop2.load(Ordering::Relaxed) {
            match rx.recvmsg(&mut buf) {
                Ok((0, _)) => break,
                Ok((n, true)) => kernel::log_notification(&log, node, now_ns(), &buf[..n]),
                Ok((_, false)) => {
                    received2.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }));
    Ok(Traffic {
        stop,
        sent,
        received,
        threads,
    })
}

impl Traffic {
    fn finish(self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
        (
            self.sent.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
        )
    }
}

/// Applies the scenario's SCTP parameters to a socket (the sysctls set the
/// same values as namespace defaults).
fn apply_params(sock: &SctpSocket, s: &Scenario) -> anyhow::Result<()> {
    let p = &s.sctp;
    sock.set_rto(p.rto_initial_ms, p.rto_min_ms, p.rto_max_ms)
        .context("SCTP_RTOINFO")?;
    let pmr = u16::try_from(p.path_max_retrans).context("path_max_retrans above 65535")?;
    sock.set_path_params(p.hb_interval_ms, pmr)
        .context("SCTP_PEER_ADDR_PARAMS")?;
    sock.set_sack_delay(p.sack_delay_ms, p.sack_freq)
        .context("SCTP_DELAYED_SACK")?;
    Ok(())
}

pub fn run_cn(s: &Scenario, run_dir: &Path) -> anyhow::Result<()> {
    let log = Arc::new(EventLog::append(&run_dir.join("events.jsonl"))?);
    let cn: IpAddr = s.topology.cn_address.parse()?;
    let listener = SctpSocket::new(s.topology.ipv6).context("CN socket")?;
    listener.set_reuseaddr().context("CN SO_REUSEADDR")?;
    apply_params(&listener, s)?;
    // The accepted association inherits the subscription.
    listener.subscribe_addr_change().context("CN SCTP_EVENT")?;
    listener
        .bind(SocketAddr::new(cn, s.topology.port))
        .context("CN bind")?;
    listener.listen().context("CN listen")?;
    println!("CN-READY");
    let sock = listener.accept().context("CN accept")?;
    sock.set_nodelay()?;
    let sampler = Sampler::start(&sock, s.topology.ipv6, log.clone(), "cn")?;
    let t = &s.traffic;
    let traffic = start_traffic(&sock, t.cn_to_mn, t.message_bytes, t.interval_ms, log, "cn")?;
    // Runs until the MN shuts the association down (receiver sees EOF) or
    // the guest driver kills this process.
    while !traffic.threads.last().is_some_and(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (sent, received) = traffic.finish();
    sampler.finish();
    std::fs::write(
        run_dir.join("cn-stats.json"),
        format!("{{\"messages_sent\": {sent}, \"messages_received\": {received}}}\n"),
    )?;
    Ok(())
}

/// if_nametoindex(3) in this process's own namespace.
fn local_ifindex(name: &str) -> anyhow::Result<u32> {
    let c = std::ffi::CString::new(name)?;
    // SAFETY: c is a valid C string.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        0 => Err(std::io::Error::last_os_error()).with_context(|| format!("no interface {name}")),
        i => Ok(i),
    }
}

fn socket_addr(a: &str, port: u16) -> anyhow::Result<SocketAddr> {
    Ok(SocketAddr::new(
        a.parse().with_context(|| format!("bad address {a}"))?,
        port,
    ))
}

/// Waits until `addr` can be bound (an IPv6 address is unusable while DAD
/// keeps it tentative); returns when it became usable.
fn wait_usable(addr: IpAddr, v6: bool) -> anyhow::Result<i64> {
    let deadline = Instant::now() + DAD_LIMIT;
    loop {
        let probe = SctpSocket::new(v6)?;
        if probe.bind(SocketAddr::new(addr, 0)).is_ok() {
            return Ok(now_ns());
        }
        if Instant::now() > deadline {
            bail!("{addr} still not usable after {DAD_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

pub fn run_mn(s: &Scenario, run_dir: &Path) -> anyhow::Result<()> {
    let log = Arc::new(EventLog::append(&run_dir.join("events.jsonl"))?);
    let v6 = s.topology.ipv6;
    let port = s.topology.port;
    let cn = socket_addr(&s.topology.cn_address, port)?;
    let ifaces = &s.topology.mn_interfaces;
    // Netlink sockets for every namespace the timeline touches, opened now
    // so that actions cost one request each.
    let mut mn_nl = Netlink::open().context("netlink in mn")?;
    let mut link_nl = Vec::new();
    for i in 0..ifaces.len() {
        let ns = link_ns(i);
        let nl = Netlink::open_in(&ns).with_context(|| format!("netlink in {ns}"))?;
        let port_index = netlink::ifindex_in(&ns, "lmn")?;
        let bridge_index = netlink::ifindex_in(&ns, "lbr")?;
        link_nl.push((nl, port_index, bridge_index));
    }
    let iface_index = |name: &str| ifaces.iter().position(|m| m.name == name);

    let sock = SctpSocket::new(v6)?;
    apply_params(&sock, s)?;
    sock.subscribe_addr_change().context("MN SCTP_EVENT")?;
    let mut binds = s.topology.mn_bind.iter();
    let first = binds.next().context("mn_bind is empty")?;
    sock.bind(socket_addr(first, port)?).context("MN bind")?;
    let rest: Vec<SocketAddr> = binds
        .map(|a| socket_addr(a, port))
        .collect::<anyhow::Result<_>>()?;
    if !rest.is_empty() {
        sock.bindx(&rest, true).context("MN bindx before connect")?;
    }
    let before = now_ns();
    sock.connect(cn).context("MN connect")?;
    let up = now_ns();
    log.write(&Record {
        time: epoch_string(before),
        time_after: Some(epoch_string(up)),
        kind: "assoc_up",
        interface: None,
        address: None,
        ok: true,
        error: None,
    });
    sock.set_nodelay()?;
    let sampler = Sampler::start(&sock, v6, log.clone(), "mn")?;
    let t = &s.traffic;
    let traffic = start_traffic(
        &sock,
        t.mn_to_cn,
        t.message_bytes,
        t.interval_ms,
        log.clone(),
        "mn",
    )?;
    let origin = Instant::now();

    let mut timeline = s.timeline.clone();
    timeline.sort_by_key(|a| a.at_ms);
    for action in &timeline {
        let due = origin + Duration::from_millis(action.at_ms);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let (kind, interface, address): (&str, Option<&str>, Option<&str>) = match &action.kind {
            ActionKind::AddAddress {
                interface, address, ..
            } => ("add_address", Some(interface), Some(address)),
            ActionKind::RemoveAddress { interface, address } => {
                ("addr_down", Some(interface), Some(address))
            }
            ActionKind::BindxAdd { address } => ("bindx_add", None, Some(address)),
            ActionKind::BindxRemove { address } => ("bindx_remove", None, Some(address)),
            ActionKind::SetPeerPrimary { address } => ("set_peer_primary", None, Some(address)),
            ActionKind::SetPrimary { address } => ("set_primary", None, Some(address)),
            ActionKind::LinkDown { interface } => ("link_down", Some(interface), None),
            ActionKind::LinkUp { interface } => ("link_up", Some(interface), None),
            ActionKind::PathCut { interface } => ("path_cut", Some(interface), None),
            ActionKind::PathRestore { interface } => ("path_restore", Some(interface), None),
        };
        let before = now_ns();
        let result: anyhow::Result<()> = (|| {
            match &action.kind {
                ActionKind::AddAddress {
                    interface,
                    address,
                    dad,
                } => {
                    let a: IpAddr = address.parse()?;
                    let idx = local_ifindex(interface)?;
                    let flags = if a.is_ipv6() && !dad { IFA_F_NODAD } else { 0 };
                    mn_nl.address(true, idx, a, prefix(a), flags)?;
                }
                ActionKind::RemoveAddress { interface, address } => {
                    let a: IpAddr = address.parse()?;
                    let idx = local_ifindex(interface)?;
                    mn_nl.address(false, idx, a, prefix(a), 0)?;
                }
                ActionKind::BindxAdd { address } => {
                    sock.bindx(&[socket_addr(address, port)?], true)?
                }
                ActionKind::BindxRemove { address } => {
                    sock.bindx(&[socket_addr(address, port)?], false)?
                }
                ActionKind::SetPeerPrimary { address } => {
                    sock.set_peer_primary(address.parse()?, port)?
                }
                ActionKind::SetPrimary { address } => sock.set_primary(address.parse()?, port)?,
                ActionKind::LinkDown { interface } | ActionKind::LinkUp { interface } => {
                    // Taking the far end of the MN's veth down drops the
                    // MN's carrier.
                    let i = iface_index(interface).context("unknown interface")?;
                    let (nl, port_index, _) = &mut link_nl[i];
                    nl.set_up(
                        *port_index,
                        matches!(action.kind, ActionKind::LinkUp { .. }),
                    )?;
                }
                ActionKind::PathCut { interface } | ActionKind::PathRestore { interface } => {
                    let i = iface_index(interface).context("unknown interface")?;
                    let (nl, port_index, bridge_index) = &mut link_nl[i];
                    let master = if matches!(action.kind, ActionKind::PathRestore { .. }) {
                        *bridge_index
                    } else {
                        0
                    };
                    nl.set_master(*port_index, master)?;
                }
            }
            Ok(())
        })();
        let after = now_ns();
        log.write(&Record {
            time: epoch_string(before),
            time_after: Some(epoch_string(after)),
            kind,
            interface,
            address,
            ok: result.is_ok(),
            error: result.as_ref().err().map(|e| format!("{e:#}")),
        });
        if let (ActionKind::AddAddress { address, .. }, Ok(())) = (&action.kind, &result) {
            let usable = wait_usable(address.parse()?, v6)?;
            log.mark("addr_up", interface, Some(address), usable);
        }
    }
    let end = origin + Duration::from_secs_f64(s.duration_s);
    if let Some(wait) = end.checked_duration_since(Instant::now()) {
        std::thread::sleep(wait);
    }
    let (sent, received) = traffic.finish();
    log.mark("traffic_end", None, None, now_ns());
    sampler.finish();
    drop(sock); // close(2): graceful SHUTDOWN
    std::fs::write(
        run_dir.join("mn-stats.json"),
        format!("{{\"messages_sent\": {sent}, \"messages_received\": {received}}}\n"),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_carry_nanoseconds_into_seconds() {
        let start = libc::timespec {
            tv_sec: 100,
            tv_nsec: 999_000_000,
        };
        // Message 1 of an 8 ms period crosses the second.
        let d = timespec_after(start, 8_000_000);
        assert_eq!((d.tv_sec, d.tv_nsec), (101, 7_000_000));
        // Message 440 (3.52 s): whole seconds and the carry together.
        let d = timespec_after(start, 440 * 8_000_000);
        assert_eq!((d.tv_sec, d.tv_nsec), (104, 519_000_000));
        assert_eq!(timespec_after(start, 0).tv_nsec, 999_000_000);
    }

    #[test]
    fn sleeps_until_an_absolute_deadline() {
        let start = monotonic_now();
        let begun = Instant::now();
        std::thread::sleep(Duration::from_millis(5));
        // Due 20 ms after start, 5 of them already past: a relative sleep
        // of the deadline's value would last as long as the uptime, an
        // early return less than 20 ms.
        sleep_until(&timespec_after(start, 20_000_000));
        let slept = begun.elapsed();
        assert!(slept >= Duration::from_millis(20), "{slept:?}");
        assert!(slept < Duration::from_secs(10), "{slept:?}");
    }
}
