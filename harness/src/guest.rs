//! Runs inside the UML guest: builds the topology, starts one tcpdump per
//! endpoint namespace, runs the CN and MN endpoints, and stops everything,
//! writing meta.json. Any failure is reported in meta.json and the exit
//! status; whether the scripted actions took effect is checked from the
//! event log (`valid`, `invalid_reasons`; sctp_handover_harness_check).

use crate::scenario::Scenario;
use crate::topology::{self, CN, MN};
use anyhow::{bail, Context};
use sctp_handover_harness_check::check_run_dir;
use sctp_handover_harness_formats::{Meta, TcpdumpDropped};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Extra time allowed beyond the scenario's duration for the MN to finish.
const MN_GRACE: Duration = Duration::from_secs(20);

fn load_modules(modroot: &Path) -> anyhow::Result<()> {
    // hmac: SCTP signs its state cookies with HMAC-SHA1 by default;
    // sctp_diag: the endpoints read their association's error counters.
    for m in ["sctp", "sctp_diag", "hmac", "veth", "sch_netem", "bridge"] {
        topology::run(&["modprobe", "-d", &modroot.to_string_lossy(), m])
            .with_context(|| format!("loading kernel module {m}"))?;
    }
    Ok(())
}

struct Capture {
    child: Child,
    stderr_lines: std::sync::mpsc::Receiver<String>,
}

fn start_capture(ns: &str, file: &Path) -> anyhow::Result<Capture> {
    let mut child = Command::new("ip")
        // --immediate-mode: with TPACKET_V3 block timeouts, packets still in an
        // unretired block are lost when tcpdump is interrupted. -s 2048: ring
        // slots are sized by the snaplen; with -s 0 (256 KiB) the default
        // buffer holds ~8 packets and a briefly starved tcpdump (UML has one
        // CPU) drops. Links have a 1500-byte MTU and GSO is off, so 2048
        // bytes hold every packet whole.
        .args([
            "netns",
            "exec",
            ns,
            "tcpdump",
            "--immediate-mode",
            "-i",
            "any",
            "-s",
            "2048",
            "-U",
            "-n",
            "-w",
        ])
        .arg(file)
        .args(["sctp", "or", "icmp", "or", "icmp6"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start tcpdump")?;
    let stderr = child.stderr.take().context("tcpdump stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // tcpdump says "listening on any" once its socket is live.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(line) if line.contains("listening on") => break,
            Ok(_) => {}
            Err(_) if Instant::now() > deadline => bail!("tcpdump in {ns} did not start"),
            Err(_) => {
                if let Some(status) = child.try_wait()? {
                    bail!("tcpdump in {ns} exited early: {status}");
                }
            }
        }
    }
    Ok(Capture {
        child,
        stderr_lines: rx,
    })
}

/// `sctp-handover watch` on the MN (`replay --watch`): every interface of
/// the MN's namespace (`-i any`, as its tcpdump) with tcpdump's filter, so
/// that it numbers the frames as they are numbered in mn.pcap; its JSON
/// lines go to watch.jsonl, its messages (summary, drop counts) to
/// watch.log.
struct Watch {
    child: Child,
    stderr_lines: std::sync::mpsc::Receiver<String>,
}

/// tcpdump's filter in the guest, shared by the watch.
const CAPTURE_FILTER: &str = "sctp or icmp or icmp6";

fn start_watch(watch: &Path, run_dir: &Path) -> anyhow::Result<Watch> {
    let out = std::fs::File::create(run_dir.join("watch.jsonl"))?;
    let mut child = Command::new("ip")
        .args(["netns", "exec", MN])
        .arg(watch)
        .args([
            "watch",
            "-i",
            "any",
            "--filter",
            CAPTURE_FILTER,
            "--format",
            "jsonl",
            "--capture-point",
            "mn",
            // As tcpdump's -s 2048 (see start_capture): small ring slots,
            // many of them.
            "--snaplen",
            "2048",
            "--quiet",
        ])
        .stdout(out)
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start sctp-handover watch")?;
    let stderr = child.stderr.take().context("watch stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // The watch says "capturing on any" once its capture is live.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut said = String::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(line) if line.contains("capturing on") => break,
            Ok(line) => {
                said.push_str(&line);
                said.push('\n');
            }
            Err(_) if Instant::now() > deadline => bail!("the watch did not start: {said}"),
            Err(_) => {
                if let Some(status) = child.try_wait()? {
                    bail!("the watch exited early ({status}): {said}");
                }
            }
        }
    }
    Ok(Watch {
        child,
        stderr_lines: rx,
    })
}

/// Stops the watch with SIGINT (it finishes the associations alive and
/// prints its summary) and returns the kernel's drop count it reported.
fn stop_watch(mut w: Watch, log: &Path) -> anyhow::Result<u64> {
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(w.child.id() as i32, libc::SIGINT);
    }
    let status = w.child.wait()?;
    let mut text = String::new();
    let mut dropped = None;
    while let Ok(line) = w.stderr_lines.recv_timeout(Duration::from_millis(500)) {
        // "sctp-handover: any: 412 received by the filter, 0 dropped by the kernel, 0 by the interface"
        if let Some((_, rest)) = line.split_once(" received by the filter, ") {
            dropped = rest
                .split_once(" dropped by the kernel")
                .and_then(|(n, _)| n.trim().parse::<u64>().ok());
        }
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::write(log, &text)?;
    if !status.success() {
        bail!("the watch failed ({status}): {text}");
    }
    dropped.with_context(|| format!("the watch did not report its drop count: {text}"))
}

/// Stops tcpdump with SIGINT and returns its "dropped by kernel" count;
/// its messages are kept in `log`.
fn stop_capture(mut c: Capture, log: &Path) -> anyhow::Result<u64> {
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(c.child.id() as i32, libc::SIGINT);
    }
    c.child.wait()?;
    let mut dropped = None;
    let mut text = String::new();
    while let Ok(line) = c.stderr_lines.recv_timeout(Duration::from_millis(500)) {
        text.push_str(&line);
        text.push('\n');
        // "1 packet dropped by kernel" / "8 packets dropped by kernel"
        if let Some(n) = line
            .strip_suffix(" packets dropped by kernel")
            .or_else(|| line.strip_suffix(" packet dropped by kernel"))
        {
            dropped = n.trim().parse().ok();
        }
    }
    std::fs::write(log, text)?;
    dropped.context("tcpdump did not report its drop count")
}

fn endpoint(bin: &Path, ns: &str, role: &str, run_dir: &Path) -> anyhow::Result<Child> {
    Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(bin)
        .args(["endpoint", "--role", role, "--run-dir"])
        .arg(run_dir)
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start the {role} endpoint"))
}

fn wait_line(child: &mut Child, want: &str) -> anyhow::Result<()> {
    let out = child.stdout.take().context("endpoint stdout")?;
    let mut lines = BufReader::new(out).lines();
    match lines.next() {
        Some(Ok(l)) if l.trim() == want => Ok(()),
        other => bail!("endpoint did not report {want}: {other:?}"),
    }
}

fn wait_timeout(child: &mut Child, limit: Duration) -> anyhow::Result<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            bail!("endpoint did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Where the guest writes a run's files while it runs: below /run, the
/// guest-private tmpfs of guest-init.sh.
const GUEST_WORK_DIR: &str = "/run/sctp-harness-run";

/// Copies the files the run wrote (everything but scenario.toml, which
/// came from the run directory) into the run directory; also after a
/// failure, so that its logs are kept.
fn copy_run_files(work: &Path, run_dir: &Path) -> anyhow::Result<()> {
    let entries = match std::fs::read_dir(work) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", work.display())),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        if name == "scenario.toml" || !entry.file_type()?.is_file() {
            continue;
        }
        let to = run_dir.join(&name);
        std::fs::copy(entry.path(), &to)
            .with_context(|| format!("copying {} to {}", entry.path().display(), to.display()))?;
    }
    Ok(())
}

/// What the captures dropped: tcpdump on the MN and the CN, the watch.
struct Drops {
    mn: u64,
    cn: u64,
    watch: Option<u64>,
}

pub fn run(run_dir: &Path, modroot: &Path, watch: Option<&Path>) -> anyhow::Result<()> {
    let started = Instant::now();
    let scenario = Scenario::load(&run_dir.join("scenario.toml"))?;
    let bin = std::env::current_exe()?;
    // Every file of the run is written in the guest's own tmpfs and copied
    // to the run directory afterwards: a write to the run directory (hostfs)
    // is a host system call that stalls the guest's one CPU, and the
    // handover's own event-log lines then delay the next message by up to
    // a millisecond (Koh & Kim at LAN terms, docs/reproduction.md).
    let work = Path::new(GUEST_WORK_DIR);
    let result = std::fs::create_dir_all(work)
        .and_then(|()| std::fs::copy(run_dir.join("scenario.toml"), work.join("scenario.toml")))
        .context("preparing the guest's work directory")
        .and_then(|_| run_inner(&scenario, &bin, work, modroot, watch));
    let copied = copy_run_files(work, run_dir);
    let result = result.and_then(|d| copied.map(|()| d));
    let (ok, error, drops) = match &result {
        Ok(d) => (true, None, Some(d)),
        Err(e) => (false, Some(format!("{e:#}")), None),
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    // Whether the script happened, from the kernel's view the endpoints
    // logged (both have exited: the log is complete). A log that cannot
    // be read or parsed makes the run invalid, never valid.
    let (valid, invalid_reasons) = match check_run_dir(run_dir) {
        Ok(v) => (v.valid(), v.reasons().to_vec()),
        Err(e) => (
            Some(false),
            vec![format!("the check could not be made: {e}")],
        ),
    };
    let meta = Meta {
        scenario: Some(scenario.name.clone()),
        ok: Some(ok),
        error,
        valid: Some(valid),
        invalid_reasons,
        kernel: Some(kernel.trim().to_owned()),
        kernel_hz: Some(100),
        tcpdump_dropped: drops.map(|d| TcpdumpDropped { mn: d.mn, cn: d.cn }),
        // replay --watch: what the watch's capture dropped (null without).
        watch_dropped: drops.and_then(|d| d.watch),
        guest_seconds: Some(started.elapsed().as_secs_f64()),
        sctp: Some(scenario.sctp.clone()),
    };
    std::fs::write(run_dir.join("meta.json"), meta.to_json()?)?;
    result.map(|_| ())
}

fn run_inner(
    s: &Scenario,
    bin: &Path,
    run_dir: &Path,
    modroot: &Path,
    watch: Option<&Path>,
) -> anyhow::Result<Drops> {
    load_modules(modroot)?;
    topology::build(s).context("building the topology")?;
    let mn_cap = start_capture(MN, &run_dir.join("mn.pcap"))?;
    let cn_cap = start_capture(CN, &run_dir.join("cn.pcap"))?;
    let watcher = match watch {
        Some(w) => Some(start_watch(w, run_dir)?),
        None => None,
    };
    let mut cn = endpoint(bin, CN, "cn", run_dir)?;
    wait_line(&mut cn, "CN-READY")?;
    let mut mn = endpoint(bin, MN, "mn", run_dir)?;
    let mn_status = wait_timeout(&mut mn, Duration::from_secs_f64(s.duration_s) + MN_GRACE);
    // Let the SHUTDOWN exchange finish before stopping the captures.
    let cn_status = wait_timeout(&mut cn, Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(300));
    // The watch first; a failure of it is reported once the captures
    // are stopped.
    let watch_drops = watcher.map(|w| stop_watch(w, &run_dir.join("watch.log")));
    let mn_drops = stop_capture(mn_cap, &run_dir.join("tcpdump-mn.log"))?;
    let cn_drops = stop_capture(cn_cap, &run_dir.join("tcpdump-cn.log"))?;
    let watch_drops = watch_drops.transpose()?;
    let mn_status = mn_status?;
    if !mn_status.success() {
        bail!("the MN endpoint failed ({mn_status})");
    }
    if let Ok(st) = cn_status {
        if !st.success() {
            bail!("the CN endpoint failed ({st})");
        }
    }
    if mn_drops > 0 || cn_drops > 0 {
        bail!("tcpdump dropped packets (mn {mn_drops}, cn {cn_drops}): the capture is incomplete");
    }
    Ok(Drops {
        mn: mn_drops,
        cn: cn_drops,
        watch: watch_drops,
    })
}
