//! The analyzer against the kernel on every shipped scenario: each file of
//! harness/scenarios/ replayed once on the real kernel SCTP stack, both
//! captures analysed with the run's own SCTP settings (meta.json: RTO,
//! Path.Max.Retrans, the potentially-failed state), and what the analyzer
//! infers set beside what the kernels logged (events.jsonl, docs/harness.md):
//!
//! - the peer's address additions, deletions and primary changes
//!   (`kernel_addr_change` `added`, `removed`, `made_primary`);
//! - path states: potentially failed, inactive, active again, confirmed
//!   (`kernel_addr_change` of the data sender), and nothing inferred that
//!   the kernel did not notify (no failure of a destination never
//!   confirmed, no confirmation of the handshake's addresses);
//! - T3 expiries (`kernel_mib` SctpT3RtxExpireds of the data sender);
//! - the primary path's error counter (`kernel_status`
//!   `primary_error_count`) at the kernel's sample after each expiry the
//!   analyzer charges to it.
//!
//! Times agree within [`TOLERANCE`] (the kernel's 10 ms samples, a timer
//! tick of its HZ = 100, scheduling); a notification's logged time is when
//! it was read, so the analyzer may come up to [`READ_LATENCY`] before it. What one capture point cannot know
//! is printed, not asserted, and listed in docs/metrics.md ("Checked
//! against the kernel"): the peer's decisions seen from the other end
//! arrive one one-way delay later, or later still when an answer was lost.
//!
//! The comparison is printed (`make kernel-check`, or `cargo test -p
//! sctp-handover-harness --test kernel_agreement -- --ignored
//! --nocapture`). `SCTP_KERNEL_AGREEMENT_RUNS=DIR` compares every run
//! found below DIR instead (the harness's layout, or `make reproduce`'s run
//! directory). `make test` replays the two scenarios whose fresh replays
//! used to vary ([`the_scenarios_that_varied_agree_with_the_kernel`]).

use sctp_handover::analysis::{analyze_file, AnalysisOptions, FileAnalysis};
use sctp_handover::events::{AsconfOutcome, EventKind, PathId};
use sctp_handover::handover::{anchors, CapturePoint, Expiry};
use sctp_handover::time::{Nanos, Timestamp};
use sctp_handover::wire::sctp_param::AsconfOp;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How far apart the analyzer's inference and the kernel's log may be.
const TOLERANCE: Nanos = Nanos(15_000_000);

/// A notification's time is when the endpoint's receiving thread read it,
/// which on a loaded machine comes later than the kernel's decision (up to
/// 37 ms in `make reproduce`'s runs, made two at a time beside builds): the
/// analyzer may be this much earlier than a `kernel_addr_change` line.
const READ_LATENCY: Nanos = Nanos(50_000_000);

/// Whether an inference `d` after a notification was read agrees with it.
fn near_notification(d: Nanos) -> bool {
    d.0 >= -READ_LATENCY.0 && d.0 <= TOLERANCE.0
}

/// Replays every shipped scenario, two at a time (2 cores; a run is mostly
/// the guest's real time), into a fresh directory.
/// (`tag` tells apart the directories of two tests of one process.)
fn replay_all(scenarios: &[PathBuf], tag: &str) -> PathBuf {
    let out = std::env::temp_dir().join(format!(
        "sctp-kernel-agreement-{tag}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("the replays' directory");
    replay_into(&out, scenarios);
    out
}

/// Replays `scenarios` two at a time, each into `out/NAME`.
fn replay_into(out: &Path, scenarios: &[PathBuf]) {
    for pair in scenarios.chunks(2) {
        let children: Vec<_> = pair
            .iter()
            .map(|s| {
                // Each into a directory of its own: two replays creating
                // the same output tree race (EEXIST).
                let name = s.file_stem().expect("scenario name");
                Command::new(env!("CARGO_BIN_EXE_sctp-harness"))
                    .arg("replay")
                    .arg(s)
                    .arg("--out")
                    .arg(out.join(name))
                    .args(["--timeout-s", "90", "--allow-invalid"])
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .expect("sctp-harness runs")
            })
            .collect();
        for (mut child, s) in children.into_iter().zip(pair) {
            let status = child.wait().expect("sctp-harness ends");
            assert!(status.success(), "replay of {} failed", s.display());
        }
    }
}

/// Why the run in `run` is invalid (its scripted actions did not take
/// effect, by the harness's own check in meta.json), or None when valid.
fn invalid_reasons(run: &Path) -> Option<String> {
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("meta.json")).expect("meta.json of the run"),
    )
    .expect("meta.json");
    let reasons = meta["invalid_reasons"].as_array()?;
    (!reasons.is_empty()).then(|| {
        reasons
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// Every run directory below `dir` (the harness's layout, or `make
/// reproduce`'s: one with both captures and the kernel's log).
fn run_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    let has = |f: &str| dir.join(f).is_file();
    if has("events.jsonl") && has("meta.json") && has("cn.pcap") && has("mn.pcap") {
        out.push(dir.to_path_buf());
        return;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.filter_map(Result::ok) {
            if e.path().is_dir() {
                run_dirs(&e.path(), out);
            }
        }
    }
}

fn shipped_scenarios() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("harness/scenarios")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    assert!(v.len() >= 11, "the shipped scenarios: {v:?}");
    v
}

fn time(v: &Value) -> Timestamp {
    anchors::parse_time(v["time"].as_str().expect("time")).expect("epoch time")
}

fn shift(t: Timestamp, d: Nanos) -> Timestamp {
    Timestamp(t.0 + d.0)
}

fn ms(d: Nanos) -> String {
    format!("{:+.1} ms", d.as_millis_f64())
}

/// Whether an analyzer event is the one a kernel record calls for.
type EventTest = Box<dyn Fn(&EventKind) -> bool>;

/// One line of the comparison.
struct Row {
    scenario: String,
    point: &'static str,
    what: String,
    kernel: String,
    analyzer: String,
    /// Must agree (else printed only: one capture point cannot know).
    asserted: bool,
    agrees: bool,
}

/// A run: its scenario, settings and the kernel's records.
struct Run {
    name: String,
    dir: PathBuf,
    log: Vec<Value>,
    meta: Value,
    scenario: toml::Value,
}

impl Run {
    fn load(dir: PathBuf) -> Run {
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect(f);
        let log = read("events.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
        let meta: Value = serde_json::from_str(&read("meta.json")).expect("meta.json");
        let scenario: toml::Value = toml::from_str(&read("scenario.toml")).expect("TOML");
        let name = meta["scenario"].as_str().expect("scenario").to_owned();
        Run {
            name,
            dir,
            log,
            meta,
            scenario,
        }
    }

    fn of(&self, node: &str, kind: &str) -> Vec<&Value> {
        let mut v: Vec<&Value> = self
            .log
            .iter()
            .filter(|r| r["kind"] == kind && r["node"] == node)
            .collect();
        v.sort_by_key(|r| time(r));
        v
    }

    fn cn(&self) -> IpAddr {
        self.scenario["topology"]["cn_address"]
            .as_str()
            .and_then(|a| a.parse().ok())
            .expect("cn_address")
    }

    /// The longest one-way delay of the MN's links (netem, each way).
    fn one_way(&self) -> Nanos {
        let worst = self.scenario["topology"]["mn_interfaces"]
            .as_array()
            .expect("interfaces")
            .iter()
            .filter_map(|i| i.get("delay_ms").and_then(toml_number))
            .fold(0.0, f64::max);
        Nanos((worst * 1e6) as i64)
    }

    /// The analyzer, told the run's own settings.
    fn analyse(&self, point: &str) -> FileAnalysis {
        let sctp = &self.meta["sctp"];
        let n = |k: &str| {
            sctp[k]
                .as_u64()
                .unwrap_or_else(|| panic!("meta.json sctp.{k}"))
        };
        let mut o = AnalysisOptions::default();
        o.track.rto.initial = Nanos::from_millis(n("rto_initial_ms") as i64);
        o.track.rto.min = Nanos::from_millis(n("rto_min_ms") as i64);
        o.track.rto.max = Nanos::from_millis(n("rto_max_ms") as i64);
        o.track.path_max_retrans = n("path_max_retrans") as u32;
        o.track.pf_retrans =
            (sctp["pf_enable"] == true).then(|| sctp["pf_retrans"].as_u64().unwrap_or(0) as u32);
        o.handover.rto_max = Some(o.track.rto.max);
        o.handover.capture_point = if point == "mn" {
            CapturePoint::Mn
        } else {
            CapturePoint::Cn
        };
        o.handover.anchors = anchors::load(&self.dir.join("events.jsonl")).expect("anchors");
        analyze_file(&self.dir.join(format!("{point}.pcap")), &o).expect("analysable")
    }
}

/// When the capture's SACK chunks were captured (real tshark).
fn sack_times(capture: &Path) -> Vec<Timestamp> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(capture)
        .args([
            "-Y",
            "sctp.chunk_type == 3",
            "-T",
            "fields",
            "-e",
            "frame.time_epoch",
        ])
        .output()
        .expect("tshark runs (make setup installs it)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| anchors::parse_time(l.trim()))
        .collect()
}

/// An expiry is seen at its first retransmission, which the congestion
/// window can hold back until the next SACK opens it (docs/metrics.md,
/// "Inferred path state"): an inference later than the kernel's by more
/// than the tolerance agrees when it came right after a SACK (within a
/// millisecond, the sender's own processing) and within one round trip
/// of the slowest path plus the delayed-SACK timer.
fn held_back(delta: Nanos, at: Timestamp, sacks: &[Timestamp], run: &Run) -> bool {
    let sack_delay = run.meta["sctp"]["sack_delay_ms"].as_u64().unwrap_or(200) as i64;
    let bound = 2 * run.one_way().0 + Nanos::from_millis(sack_delay).0 + TOLERANCE.0;
    delta.0 > 0
        && delta.0 <= bound
        && sacks
            .iter()
            .any(|s| *s <= at && at.since(*s) <= Nanos::from_millis(1))
}

fn toml_number(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

/// The ASCONF-ACKs (time, frame) whose results say the peer did `state`
/// for `address` (an added address, a deleted one, a new primary): where
/// the capture shows the peer's decision, answers to copies included.
fn analyzer_address_events(a: &FileAnalysis, state: &str, address: &str) -> Vec<Timestamp> {
    analyzer_address_events_all(a, state)
        .into_iter()
        .filter(|(_, x)| x == address)
        .map(|(t, _)| t)
        .collect()
}

fn analyzer_address_events_all(a: &FileAnalysis, state: &str) -> Vec<(Timestamp, String)> {
    let op = match state {
        "added" => AsconfOp::AddIp,
        "removed" => AsconfOp::DeleteIp,
        _ => AsconfOp::SetPrimary,
    };
    let mut v: Vec<(Timestamp, String)> = Vec::new();
    for e in &a.events {
        // Each change once: its first answer (a repeated one answers a
        // copy sent again).
        let EventKind::AsconfAck {
            results,
            repeated: false,
            ..
        } = &e.kind
        else {
            continue;
        };
        for r in results {
            let took = matches!(
                r.outcome,
                AsconfOutcome::Success | AsconfOutcome::ImpliedSuccess
            );
            if r.op == op && took {
                v.push((e.time, r.address.to_string()));
            }
        }
    }
    v
}

/// Whether the ASCONF-ACK that made the analyzer learn an address change
/// at `t` answered a copy sent again (the first answer was lost before
/// this capture point).
fn answered_a_copy(a: &FileAnalysis, t: Timestamp) -> bool {
    let acks: Vec<u64> = a
        .events
        .iter()
        .filter(|e| e.time == t)
        .filter_map(|e| match e.kind {
            EventKind::AsconfAck {
                request_frame: Some(r),
                ..
            } => Some(r),
            _ => None,
        })
        .collect();
    a.events.iter().any(|e| {
        acks.contains(&e.frame)
            && matches!(
                e.kind,
                EventKind::Asconf {
                    retransmission: true,
                    ..
                }
            )
    })
}

/// The peer's address additions, deletions and primary changes: the CN's
/// kernel notifies them when it processes the ASCONF and answers at once,
/// so its capture shows the answer within the tolerance; the MN's shows
/// it one one-way delay later (more when an answer was lost).
fn asconf_effects(run: &Run, point: &'static str, a: &FileAnalysis, rows: &mut Vec<Row>) {
    let one_way = run.one_way();
    for state in ["added", "made_primary", "removed"] {
        let kernel: Vec<(Timestamp, String)> = run
            .of("cn", "kernel_addr_change")
            .into_iter()
            .filter(|r| r["state"] == state)
            .map(|r| (time(r), r["address"].as_str().expect("address").to_owned()))
            .collect();
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (t, address) in &kernel {
            let i = seen.entry(address).or_default();
            let found = analyzer_address_events(a, state, address).get(*i).copied();
            *i += 1;
            let delta = found.map(|f| f.since(*t));
            let late = if point == "cn" { Nanos(0) } else { one_way };
            let within =
                delta.is_some_and(|d| d.0 >= -READ_LATENCY.0 && d.0 <= late.0 + TOLERANCE.0);
            let lost_answer = point == "mn" && found.is_some_and(|f| answered_a_copy(a, f));
            rows.push(Row {
                scenario: run.name.clone(),
                point,
                what: format!("peer {state} {address}"),
                kernel: format!("kernel_addr_change {state} at the cn"),
                analyzer: match delta {
                    Some(d) => format!(
                        "ASCONF-ACK with its {} ({}){}",
                        match state {
                            "added" => "ADD-IP",
                            "removed" => "DELETE-IP",
                            _ => "SET-PRIMARY",
                        },
                        ms(d),
                        if lost_answer {
                            ", from the answer to a copy sent again"
                        } else {
                            ""
                        }
                    ),
                    None => "not inferred".into(),
                },
                // Never before the kernel; at the MN no later than the
                // answer's trip unless that answer was lost.
                asserted: !lost_answer,
                agrees: within,
            });
        }
        // And nothing the kernel did not do.
        let extra = analyzer_address_events_all(a, state)
            .into_iter()
            .filter(|(_, address)| !kernel.iter().any(|(_, k)| k == address))
            .count();
        if extra > 0 {
            rows.push(Row {
                scenario: run.name.clone(),
                point,
                what: format!("peer {state}: inferred without the kernel"),
                kernel: "none".into(),
                analyzer: format!("{extra} event(s)"),
                asserted: true,
                agrees: false,
            });
        }
    }
}

/// The CN's view of its paths to the MN's addresses: the CN sends on them,
/// so its own capture shows every retransmission and answer the kernel
/// acted on. The MN's capture misses what was lost on the way: printed.
fn path_states(run: &Run, point: &'static str, a: &FileAnalysis, rows: &mut Vec<Row>) {
    let cn = run.cn();
    let Some(assoc) = a.associations.first() else {
        return;
    };
    let path_of = |address: &str| {
        assoc
            .paths
            .iter()
            .find(|p| p.src == cn && p.dst.to_string() == address)
            .map(|p| p.id)
    };
    let sacks = sack_times(&run.dir.join(format!("{point}.pcap")));
    let mut previous: BTreeMap<String, String> = BTreeMap::new();
    for r in run.of("cn", "kernel_addr_change") {
        let state = r["state"].as_str().expect("state");
        let address = r["address"].as_str().expect("address").to_owned();
        let before = previous.insert(address.clone(), state.to_owned());
        let t = time(r);
        let Some(path) = path_of(&address) else {
            continue;
        };
        // `available` after `added` or `confirmed` is a new address becoming
        // usable; only a recovery from a failure is the analyzer's
        // path_active.
        let recovery = matches!(
            before.as_deref(),
            Some("potentially_failed" | "unreachable")
        );
        let wanted: Option<(&str, EventTest)> = match state {
            "potentially_failed" => Some((
                "path_potentially_failed",
                Box::new(
                    move |k| matches!(k, EventKind::PathPotentiallyFailed { path: p, .. } if *p == path),
                ),
            )),
            "unreachable" => Some((
                "path_inactive",
                Box::new(
                    move |k| matches!(k, EventKind::PathInactive { path: p, .. } if *p == path),
                ),
            )),
            "available" if recovery => Some((
                "path_active",
                Box::new(move |k| matches!(k, EventKind::PathActive { path: p } if *p == path)),
            )),
            "confirmed" => Some((
                "path_confirmed",
                Box::new(
                    move |k| matches!(k, EventKind::PathConfirmed { path: p, .. } if *p == path),
                ),
            )),
            _ => None,
        };
        let Some((name, is)) = wanted else {
            continue;
        };
        let nearest = a
            .events
            .iter()
            .filter(|e| is(&e.kind))
            .map(|e| (e.time.since(t), e.time))
            .min_by_key(|(d, _)| d.0.abs());
        let late =
            nearest.is_some_and(|(d, at)| !near_notification(d) && held_back(d, at, &sacks, run));
        rows.push(Row {
            scenario: run.name.clone(),
            point,
            what: format!("path to {address} {state}"),
            kernel: format!("kernel_addr_change {state} at the cn ({})", r["spc_error"]),
            analyzer: nearest.map_or(format!("no {name}"), |(d, _)| {
                format!(
                    "{name} ({}){}",
                    ms(d),
                    if late {
                        ", its expiry's retransmission held back until a SACK"
                    } else {
                        ""
                    }
                )
            }),
            asserted: point == "cn",
            agrees: nearest.is_some_and(|(d, _)| near_notification(d)) || late,
        });
    }
    // Every failure the analyzer infers at the sender's capture is one
    // the kernel notified.
    if point == "cn" {
        let kernel_failures: Vec<(Timestamp, &str)> = run
            .of("cn", "kernel_addr_change")
            .into_iter()
            .filter_map(|r| {
                let s = r["state"].as_str()?;
                matches!(s, "potentially_failed" | "unreachable").then(|| (time(r), s))
            })
            .collect();
        for e in &a.events {
            let state = match e.kind {
                EventKind::PathPotentiallyFailed { .. } => "potentially_failed",
                EventKind::PathInactive { .. } => "unreachable",
                _ => continue,
            };
            let matched = kernel_failures.iter().any(|(t, s)| {
                let d = e.time.since(*t);
                *s == state && (near_notification(d) || held_back(d, e.time, &sacks, run))
            });
            if !matched {
                // Including a path to an address never confirmed: Linux
                // leaves it unconfirmed however many HEARTBEATs to it go
                // unanswered (no state change, no notification), and so
                // does the analyzer (docs/metrics.md, "Heartbeats and
                // confirmation").
                rows.push(Row {
                    scenario: run.name.clone(),
                    point,
                    what: format!("{state} inferred at frame {}", e.frame),
                    kernel: "no such notification".into(),
                    analyzer: format!("{:?}", e.kind),
                    asserted: true,
                    agrees: false,
                });
            }
        }
        // And every confirmation: the handshake's addresses are confirmed
        // without one, an address listed or added with a notification
        // when the first HEARTBEAT ACK for it comes back.
        let kernel_confirmed: Vec<(Timestamp, String)> = run
            .of("cn", "kernel_addr_change")
            .into_iter()
            .filter(|r| r["state"] == "confirmed")
            .filter_map(|r| Some((time(r), r["address"].as_str()?.to_owned())))
            .collect();
        for e in &a.events {
            let EventKind::PathConfirmed { path, address } = e.kind else {
                continue;
            };
            if assoc
                .paths
                .get(usize::from(path))
                .is_none_or(|p| p.src != cn)
            {
                continue;
            }
            let address = address.to_string();
            let matched = kernel_confirmed
                .iter()
                .any(|(t, k)| *k == address && near_notification(e.time.since(*t)));
            if !matched {
                rows.push(Row {
                    scenario: run.name.clone(),
                    point,
                    what: format!("confirmed {address} inferred at frame {}", e.frame),
                    kernel: "no such notification".into(),
                    analyzer: format!("{:?}", e.kind),
                    asserted: true,
                    agrees: false,
                });
            }
        }
    }
}

/// T3 expiries of a sender, at its own capture: the kernel's count of its
/// namespace (SctpT3RtxExpireds) against the analyzer's expiries (first
/// timeout-driven retransmissions) of that endpoint.
fn expiries(run: &Run, point: &'static str, a: &FileAnalysis, rows: &mut Vec<Row>) {
    let kernel = run
        .of(point, "kernel_mib")
        .last()
        .and_then(|r| r["t3_rtx_expireds"].as_u64())
        .unwrap_or(0);
    // The capture's own endpoint: endpoint 0 started the association (the
    // MN connects), the CN is endpoint 1.
    let sender = if point == "mn" { 0 } else { 1 };
    let analyzer = a
        .events
        .iter()
        .filter(|e| {
            matches!(e.kind, EventKind::Retransmission { sender: s, t3_expiry: true, .. } if s == sender)
        })
        .count() as u64;
    // An address removed from the MN while the peer still sends to it:
    // its tcpdump captures the SACKs to it, which its kernel drops, so
    // the MN's retransmissions look like copies of acknowledged DATA.
    let blind = point == "mn" && run.log.iter().any(|r| r["kind"] == "addr_down");
    rows.push(Row {
        scenario: run.name.clone(),
        point,
        what: format!("T3 expiries of the {point}"),
        kernel: format!("SctpT3RtxExpireds {kernel}"),
        analyzer: format!(
            "{analyzer} recognised at its own capture{}",
            if blind && kernel != analyzer {
                " (SACKs to its removed address captured, dropped by its kernel)"
            } else {
                ""
            }
        ),
        asserted: !blind,
        agrees: kernel == analyzer,
    });
}

/// The analyzer's error counter of `path` at `until`, from a failover
/// expiry's count (its value right after the expiry) and what the
/// analyzer inferred after it up to then, counted as the analyzer counts:
/// unanswered HEARTBEATs and T3 expiries of the path raise it (a
/// failover's expiry: to its own count) unless the path is inactive, an
/// `error_counter_cleared` clears it, a state change carries its count.
/// Also the frames that changed it.
fn counter_at(
    a: &FileAnalysis,
    path: PathId,
    (expiries, from): (&[Expiry], &Expiry),
    until: Timestamp,
) -> (u32, Vec<String>) {
    let mut count = from.error_count;
    let mut inactive = a
        .events
        .iter()
        .filter(|e| e.frame <= from.frame)
        .fold(false, |was, e| match e.kind {
            EventKind::PathInactive { path: p, .. } if p == path => true,
            EventKind::PathActive { path: p } if p == path => false,
            _ => was,
        });
    let mut between = Vec::new();
    for e in a
        .events
        .iter()
        .filter(|e| e.frame > from.frame && e.time <= until)
    {
        let (next, what) = match e.kind {
            EventKind::Heartbeat {
                path: p,
                previous_unanswered: true,
            } if p == path && !inactive => (count + 1, "an unanswered HEARTBEAT"),
            EventKind::Retransmission {
                previous_path: Some(p),
                t3_expiry: true,
                ..
            } if p == path && !inactive => (
                // Its own count when it is a failover's (an expiry the
                // analyzer found undone by a clear is not charged).
                expiries
                    .iter()
                    .find(|x| x.frame == e.frame)
                    .map_or(count + 1, |x| x.error_count),
                "a T3 expiry",
            ),
            EventKind::ErrorCounterCleared { path: p, by, .. } if p == path => (
                0,
                if by == "sack" {
                    "a SACK clearing it"
                } else {
                    "a HEARTBEAT ACK clearing it"
                },
            ),
            EventKind::PathInactive {
                path: p,
                error_count,
            }
            | EventKind::PathPotentiallyFailed {
                path: p,
                error_count,
            } if p == path => {
                inactive |= matches!(e.kind, EventKind::PathInactive { .. });
                count = error_count;
                continue;
            }
            EventKind::PathActive { path: p } if p == path => {
                inactive = false;
                continue;
            }
            _ => continue,
        };
        count = next;
        between.push(format!("{what} (frame {})", e.frame));
    }
    (count, between)
}

/// The CN's primary path's error counter after each expiry the analyzer
/// charges to it, against the kernel's sample after it.
fn error_counter(run: &Run, a: &FileAnalysis, rows: &mut Vec<Row>) {
    let cn = run.cn();
    let status: Vec<(Timestamp, String, u64)> = run
        .of("cn", "kernel_status")
        .into_iter()
        .filter_map(|r| {
            Some((
                time(r),
                r["primary"].as_str()?.to_owned(),
                r["primary_error_count"].as_u64()?,
            ))
        })
        .collect();
    let Some(assoc) = a.associations.first() else {
        return;
    };
    let mut differ = Vec::new();
    let mut noted = Vec::new();
    let mut compared = 0;
    for h in &a.handovers {
        let Some(f) = &h.failover else { continue };
        let Some(path) = assoc.paths.get(usize::from(h.from_path)) else {
            continue;
        };
        if path.src != cn {
            continue;
        }
        for e in &f.expiries {
            // The kernel's sample just after the expiry, while that path's
            // address is the primary (the counter sctp_diag reports).
            let Some((sampled, _, count)) = status
                .iter()
                .filter(|(t, p, _)| *p == path.dst.to_string() && *t >= e.time)
                .find(|(t, _, _)| *t <= shift(e.time, TOLERANCE))
            else {
                continue;
            };
            compared += 1;
            // Set beside the analyzer's counter when the kernel sampled
            // it: an acknowledgement captured between the expiry and the
            // sample clears it (a SACK for DATA last sent on the path), an
            // unanswered HEARTBEAT sent in between raises it (Linux strikes
            // when its HEARTBEAT timer sends the next one).
            let (at_sample, between) = counter_at(a, h.from_path, (&f.expiries, e), *sampled);
            if u64::from(at_sample) != *count {
                differ.push(format!(
                    "frame {}: {} ({} at the sample{}) vs {count}",
                    e.frame,
                    e.error_count,
                    at_sample,
                    if between.is_empty() {
                        String::new()
                    } else {
                        format!(", after {}", between.join(", "))
                    }
                ));
            } else if !between.is_empty() {
                noted.push(format!(
                    "frame {}: {} then {at_sample} after {}",
                    e.frame,
                    e.error_count,
                    between.join(", ")
                ));
            }
        }
    }
    // Resets: the kernel's counter falls to 0 between two samples (10 ms
    // apart, logged on change); the analyzer names the acknowledgement
    // that cleared it.
    let primary_path = |address: &str| {
        assoc
            .paths
            .iter()
            .find(|p| p.src == cn && p.dst.to_string() == address)
            .map(|p| p.id)
    };
    // (The sampler logs on change; on a loaded machine its 10 ms period
    // stretches, so the fall lies between the previous line and this one.)
    let mut last: Option<(String, u64, Timestamp)> = None;
    for (t, primary, count) in &status {
        let since = match &last {
            Some((p, c, at)) if p == primary && *c > 0 && *count == 0 => Some(*at),
            _ => None,
        };
        // The sampler reads the error count (sctp_diag) before the primary
        // (SCTP_STATUS): on the line where the primary changed, the count
        // can still be the old primary's (koh-kim-2-lan, SET-PRIMARY at
        // 1250 ms, r04: the old primary's 1 beside the new one), so no fall
        // is measured from it.
        let changed = last.as_ref().is_some_and(|(p, _, _)| p != primary);
        last = Some((primary.clone(), if changed { 0 } else { *count }, *t));
        let (Some(path), Some(since)) = (primary_path(primary), since) else {
            continue;
        };
        let from = shift(since, Nanos(-TOLERANCE.0));
        let cleared = a.events.iter().find(|e| {
            e.time >= from
                && e.time <= shift(*t, TOLERANCE)
                && matches!(e.kind, EventKind::ErrorCounterCleared { path: p, .. } if p == path)
        });
        rows.push(Row {
            scenario: run.name.clone(),
            point: "cn",
            what: format!("reset of the primary {primary}'s error counter"),
            kernel: "primary_error_count fell to 0 at a sample".into(),
            analyzer: cleared.map_or("no error_counter_cleared".into(), |e| {
                format!("error_counter_cleared at frame {}", e.frame)
            }),
            asserted: true,
            agrees: cleared.is_some(),
        });
    }
    if compared > 0 {
        rows.push(Row {
            scenario: run.name.clone(),
            point: "cn",
            what: "primary's error count after each failover expiry".into(),
            kernel: format!("primary_error_count sampled within {}", ms(TOLERANCE)),
            analyzer: if differ.is_empty() && noted.is_empty() {
                format!("the same at all {compared}")
            } else if differ.is_empty() {
                format!(
                    "the same at all {compared}, counted at the sample: {}",
                    noted.join("; ")
                )
            } else {
                format!("differs: {}", differ.join(", "))
            },
            asserted: true,
            agrees: differ.is_empty(),
        });
    }
}

/// Compares the runs below `root` (named by their directory in it) and
/// asserts that every asserted row agrees, with at least `at_least` of
/// them.
fn compare(root: &Path, runs: Vec<PathBuf>, at_least: usize) {
    let mut rows = Vec::new();
    for dir in runs {
        let mut run = Run::load(dir);
        // Named by its directory: a sweep has many runs of one scenario.
        if let Ok(rel) = run.dir.strip_prefix(root) {
            run.name = rel.display().to_string();
        }
        for point in ["cn", "mn"] {
            let a = run.analyse(point);
            asconf_effects(&run, point, &a, &mut rows);
            path_states(&run, point, &a, &mut rows);
            expiries(&run, point, &a, &mut rows);
            if point == "cn" {
                error_counter(&run, &a, &mut rows);
            }
        }
    }
    let mut failed = Vec::new();
    println!("\nanalyzer vs kernel ({})", root.display());
    for r in &rows {
        let mark = match (r.agrees, r.asserted) {
            (true, _) => "agree ",
            (false, true) => "DIFFER",
            (false, false) => "n/c   ",
        };
        println!(
            "[{mark}] {:<36} {}  {}\n         kernel:   {}\n         analyzer: {}",
            r.scenario, r.point, r.what, r.kernel, r.analyzer
        );
        if r.asserted && !r.agrees {
            failed.push(format!("{} {}: {}", r.scenario, r.point, r.what));
        }
    }
    assert!(
        rows.iter().filter(|r| r.asserted).count() >= at_least,
        "too little compared: {} rows",
        rows.len()
    );
    assert!(failed.is_empty(), "disagreements:\n{}", failed.join("\n"));
}

/// The run directory of a scenario replayed by [`replay_all`].
fn replayed(root: &Path, scenario: &Path) -> Option<PathBuf> {
    let name = scenario.file_stem()?;
    Some(root.join(name).join(name).join("default/r01"))
}

/// Every shipped scenario (about 4 minutes: `make kernel-check`, and
/// `make reproduce` over all its runs).
#[test]
#[ignore = "replays every scenario; make kernel-check"]
fn every_scenario_agrees_with_the_kernel() {
    let scenarios = shipped_scenarios();
    if let Some(dir) = std::env::var_os("SCTP_KERNEL_AGREEMENT_RUNS") {
        let root = PathBuf::from(dir);
        let mut runs = Vec::new();
        run_dirs(&root, &mut runs);
        runs.sort();
        compare(&root, runs, 30);
        return;
    }
    let root = replay_all(&scenarios, "all");
    let runs = scenarios
        .iter()
        .filter_map(|s| replayed(&root, s))
        .collect();
    compare(&root, runs, 30);
    let _ = std::fs::remove_dir_all(root);
}

/// In `make test`: the scenarios whose fresh replays met analyzer gaps
/// that varied from run to run, replayed together (about 20 s) —
/// koh-kim-2, whose cut sometimes comes before the ASCONF-ACK and leaves
/// the added address unconfirmed, and bokor-failover, where a SACK
/// sometimes clears the primary's error counter between an expiry and the
/// kernel's sample.
#[test]
fn the_scenarios_that_varied_agree_with_the_kernel() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let scenarios = [dir.join("koh-kim-2.toml"), dir.join("bokor-failover.toml")];
    let root = replay_all(&scenarios, "varied");
    // A run whose script did not take effect (a loaded machine can delay a
    // scripted call past the harness's 2 s check) is never measured: it is
    // replayed once more, alone, and fails the test if still invalid.
    for s in &scenarios {
        let run = replayed(&root, s).expect("run directory");
        if let Some(why) = invalid_reasons(&run) {
            eprintln!("{}: invalid run ({why}), replayed again", s.display());
            let name = s.file_stem().expect("scenario name");
            let _ = std::fs::remove_dir_all(root.join(name));
            replay_into(&root, std::slice::from_ref(s));
            if let Some(why) = invalid_reasons(&run) {
                panic!("{}: the run is invalid twice: {why}", s.display());
            }
        }
    }
    let runs = scenarios
        .iter()
        .filter_map(|s| replayed(&root, s))
        .collect();
    compare(&root, runs, 10);
    let _ = std::fs::remove_dir_all(root);
}
