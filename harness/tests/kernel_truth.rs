//! The kernel's own view as ground truth: bokor-failover (RTO.min = RTO.max
//! = 200 ms, Path.Max.Retrans 2) replayed on the real kernel, the
//! correspondent's capture analysed, and the analyzer's inferred path
//! state, T3 expiries, RTO and failover time set beside what the
//! correspondent's kernel logged in events.jsonl (`kernel_addr_change`,
//! `kernel_status`, `kernel_paddr`, `kernel_mib`; docs/harness.md).
//!
//! The comparison is printed (`cargo test -p sctp-handover-harness --test
//! kernel_truth -- --nocapture`); the assertions hold what must agree on
//! every run. `SCTP_KERNEL_TRUTH_RUN=DIR` analyses an existing run
//! directory instead of replaying one.

use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use sctp_handover::events::EventKind;
use sctp_handover::handover::anchors;
use sctp_handover::handover::{CapturePoint, SwitchClass};
use sctp_handover::time::{Nanos, Timestamp};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

const RTO_MS: i64 = 200;
const PMR: u32 = 2;
/// The guest kernel's timer tick (HZ = 100).
const TICK: Nanos = Nanos(10_000_000);
/// The sampling period of the kernel_* lines, with scheduling slack.
const SAMPLE: Nanos = Nanos(15_000_000);

fn replay() -> (PathBuf, Option<PathBuf>) {
    if let Some(dir) = std::env::var_os("SCTP_KERNEL_TRUTH_RUN") {
        return (PathBuf::from(dir), None);
    }
    let out = std::env::temp_dir().join(format!("sctp-kernel-truth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bokor-failover.toml");
    let status = Command::new(env!("CARGO_BIN_EXE_sctp-harness"))
        .arg("replay")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .args(["--set", &format!("rto={RTO_MS}")])
        .args(["--set", &format!("pmr={PMR}")])
        .args(["--timeout-s", "60"])
        .status()
        .expect("sctp-harness runs");
    let run = out.join(format!("bokor-failover/rto={RTO_MS},pmr={PMR}/r01"));
    assert!(
        status.success(),
        "replay failed: {}",
        std::fs::read_to_string(run.join("guest.log")).unwrap_or_default()
    );
    (run, Some(out))
}

fn time(v: &serde_json::Value) -> Timestamp {
    anchors::parse_time(v["time"].as_str().expect("time")).expect("epoch time")
}

fn add(t: Timestamp, d: Nanos) -> Timestamp {
    Timestamp(t.0 + d.0)
}

fn ms(n: Nanos) -> String {
    format!("{:.1} ms", n.as_millis_f64())
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// One T3 expiry the analyzer recognised: its first retransmission and
/// the path it is charged to (docs/metrics.md, "Inferred path state").
struct Expiry {
    path: u16,
    frame: u64,
    time: Timestamp,
}

/// A row of the comparison.
struct Row {
    what: &'static str,
    kernel: String,
    analyzer: String,
    agrees: bool,
}

#[test]
fn bokor_failover_inference_against_the_kernel() {
    let (run, cleanup) = replay();
    let scenario: toml::Value =
        toml::from_str(&std::fs::read_to_string(run.join("scenario.toml")).expect("scenario"))
            .expect("TOML");
    let cn: IpAddr = scenario["topology"]["cn_address"]
        .as_str()
        .and_then(|a| a.parse().ok())
        .expect("cn_address");
    let mn_addrs: Vec<IpAddr> = scenario["topology"]["mn_interfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .map(|i| {
            i["addresses"][0]
                .as_str()
                .expect("address")
                .parse()
                .expect("IP")
        })
        .collect();
    let (primary, alternate) = (mn_addrs[0], mn_addrs[1]);
    let interval = Nanos::from_millis(
        scenario["traffic"]["interval_ms"]
            .as_integer()
            .expect("interval_ms"),
    );

    // The kernel's view (the correspondent: the data sender).
    let log: Vec<serde_json::Value> = std::fs::read_to_string(run.join("events.jsonl"))
        .expect("events.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let of_cn = |kind: &str| -> Vec<&serde_json::Value> {
        let mut v: Vec<_> = log
            .iter()
            .filter(|r| r["kind"] == kind && r["node"] == "cn")
            .collect();
        v.sort_by_key(|r| time(r));
        v
    };
    let link_down = log
        .iter()
        .find(|r| r["kind"] == "link_down")
        .map(time)
        .expect("link_down logged");
    let since = |t: Timestamp| ms(t.since(link_down));
    let primary_s = primary.to_string();
    let unreachable = of_cn("kernel_addr_change")
        .into_iter()
        .find(|r| r["state"] == "unreachable" && r["address"] == primary_s.as_str())
        .map(|r| {
            assert_eq!(r["spc_error"], "failed_threshold");
            time(r)
        })
        .expect("the correspondent's kernel reports the primary unreachable");
    assert!(unreachable > link_down);
    let paddr = of_cn("kernel_paddr");
    let primary_samples: Vec<_> = paddr
        .iter()
        .filter(|r| r["address"] == primary_s.as_str())
        .collect();
    assert!(
        primary_samples
            .iter()
            .any(|r| r["state"] == "inactive" && time(r) >= add(unreachable, Nanos(-SAMPLE.0))),
        "SCTP_GET_PEER_ADDR_INFO shows the primary inactive with the notification (the \
         sampling thread may run before the receiving thread reads it)"
    );
    let kernel_rtos: Vec<u64> = primary_samples
        .iter()
        .filter_map(|r| r["rto_ms"].as_u64())
        .collect();
    // SRTT is logged with state and RTO changes only: its first sample
    // after the cut holds the RTT samples the path had.
    let kernel_srtt = primary_samples
        .iter()
        .find(|r| time(r) > link_down)
        .and_then(|r| r["srtt_ms"].as_u64());
    // The primary's error counter (sctp_diag), as sampled while it was the
    // primary (it stays the primary: Linux fails over to another active
    // path without changing the primary).
    let status = of_cn("kernel_status");
    let counter: Vec<(Timestamp, u64)> = status
        .iter()
        .filter(|r| r["primary"] == primary_s.as_str() && time(r) > link_down)
        .filter_map(|r| Some((time(r), r["primary_error_count"].as_u64()?)))
        .filter(|(t, _)| *t <= add(unreachable, SAMPLE))
        .collect();
    assert!(
        !counter.is_empty(),
        "kernel_status carries the primary's error count (sctp_diag)"
    );
    let mut kernel_charges: Vec<Timestamp> = Vec::new();
    let mut kernel_resets: Vec<Timestamp> = Vec::new();
    let mut previous = 0;
    for (t, c) in &counter {
        match c.cmp(&previous) {
            std::cmp::Ordering::Greater => kernel_charges.extend((previous..*c).map(|_| *t)),
            std::cmp::Ordering::Less => kernel_resets.push(*t),
            std::cmp::Ordering::Equal => {}
        }
        previous = *c;
    }
    let at_unreachable = counter.last().map(|(_, c)| *c);
    // The kernel's counter as sampled just after `t`.
    let counter_at = |t: Timestamp| {
        counter
            .iter()
            .rfind(|(s, _)| *s <= add(t, SAMPLE))
            .map_or(0, |(_, c)| *c)
    };
    assert_eq!(
        at_unreachable,
        Some(u64::from(PMR) + 1),
        "the kernel gives the path up when its error count exceeds Path.Max.Retrans"
    );
    // T3 expiries on all paths: the namespace's SctpT3RtxExpireds; an
    // increase of k at a sample means k expiries in the period before it.
    let mut kernel_expiries: Vec<Timestamp> = Vec::new();
    let mut count = 0;
    for r in of_cn("kernel_mib") {
        let c = r["t3_rtx_expireds"].as_u64().expect("counter");
        kernel_expiries.extend((count..c).map(|_| time(r)));
        count = c;
    }
    // (The window is cut at the switch below.)
    kernel_expiries.retain(|t| *t > link_down);

    // The analyzer's view of the correspondent's capture, told the
    // configured parameters.
    let mut options = AnalysisOptions::default();
    options.track.path_max_retrans = PMR;
    options.track.rto.initial = Nanos::from_millis(RTO_MS);
    options.track.rto.min = Nanos::from_millis(RTO_MS);
    options.track.rto.max = Nanos::from_millis(RTO_MS);
    options.handover.rto_max = Some(Nanos::from_millis(RTO_MS));
    options.handover.capture_point = CapturePoint::Cn;
    options.handover.anchors = anchors::load(&run.join("events.jsonl")).expect("anchors load");
    let a = analyze_file(&run.join("cn.pcap"), &options).expect("cn.pcap analysable");
    assert_eq!(a.associations.len(), 1);
    let assoc = &a.associations[0];
    let path_id = |dst: IpAddr| {
        assoc
            .paths
            .iter()
            .find(|p| p.src == cn && p.dst == dst)
            .map(|p| p.id)
            .expect("path seen")
    };
    let (old, new) = (path_id(primary), path_id(alternate));
    let inactive: Vec<(u64, Timestamp, u32)> = a
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::PathInactive { path, error_count } if path == old && e.time > link_down => {
                Some((e.frame, e.time, error_count))
            }
            _ => None,
        })
        .collect();
    let mut bursts: Vec<Expiry> = a
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Retransmission {
                previous_path: Some(path),
                t3_expiry: true,
                ..
            } => Some(Expiry {
                path,
                frame: e.frame,
                time: e.time,
            }),
            _ => None,
        })
        .collect();
    let failover = a
        .handovers
        .iter()
        .find(|h| h.class == SwitchClass::Failover && h.from_path == old && h.to_path == new)
        .expect("the analyzer finds the failover switch");
    let f = failover.failover.as_ref().expect("failover details");
    let old_state = &assoc.paths[usize::from(old)];
    bursts.retain(|b| b.time > link_down && b.time <= failover.switch_time);
    kernel_expiries.retain(|t| *t <= add(failover.switch_time, SAMPLE));

    // Side by side.
    let mut rows: Vec<Row> = Vec::new();
    let first_inactive = inactive.first().copied();
    let inactive_delta = first_inactive.map(|(_, t, _)| t.since(unreachable));
    rows.push(Row {
        what: "the primary goes inactive",
        kernel: format!(
            "ADDR_UNREACHABLE at {} (error count {})",
            since(unreachable),
            at_unreachable.unwrap_or_default()
        ),
        analyzer: first_inactive.map_or("never".into(), |(frame, t, n)| {
            format!(
                "PathInactive, frame {frame} at {} (error count {n}), {} from the kernel's",
                since(t),
                ms(t.since(unreachable))
            )
        }),
        agrees: inactive_delta.is_some_and(|d| d.0.abs() <= TICK.0 + TICK.0 / 2),
    });
    rows.push(Row {
        what: "the primary's error counter (increments; resets)",
        kernel: format!(
            "{}; resets {}",
            kernel_charges
                .iter()
                .map(|t| since(*t))
                .collect::<Vec<_>>()
                .join(", "),
            if kernel_resets.is_empty() {
                "none".into()
            } else {
                kernel_resets
                    .iter()
                    .map(|t| since(*t))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
        analyzer: format!(
            "expiries charged to it (error count after): {}",
            f.expiries
                .iter()
                .map(|e| format!("frame {} {} ({})", e.frame, since(e.time), e.error_count))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        agrees: f.expiries.len() == kernel_charges.len()
            && f.expiries
                .iter()
                .zip(&kernel_charges)
                .all(|(e, k)| e.time >= add(*k, Nanos(-SAMPLE.0)) && e.time <= add(*k, TICK)),
    });
    let counts_differ: Vec<String> = f
        .expiries
        .iter()
        .filter(|e| u64::from(e.error_count) != counter_at(e.time))
        .map(|e| {
            format!(
                "frame {}: {} vs {}",
                e.frame,
                e.error_count,
                counter_at(e.time)
            )
        })
        .collect();
    rows.push(Row {
        what: "the error count after each of the analyzer's expiries",
        kernel: "primary_error_count at the next sample".into(),
        analyzer: if counts_differ.is_empty() {
            "the same at every expiry".into()
        } else {
            format!("differs: {}", counts_differ.join(", "))
        },
        agrees: counts_differ.is_empty(),
    });
    rows.push(Row {
        what: "T3 expiries on all paths until the failover",
        kernel: format!(
            "{} (SctpT3RtxExpireds rose by {})",
            kernel_expiries.len(),
            kernel_expiries
                .iter()
                .map(|t| since(*t))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        analyzer: format!(
            "{} ({})",
            bursts.len(),
            bursts
                .iter()
                .map(|b| format!(
                    "{} frame {} {}",
                    if b.path == old {
                        "primary"
                    } else {
                        "alternate"
                    },
                    b.frame,
                    since(b.time)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        agrees: bursts.len() == kernel_expiries.len(),
    });
    rows.push(Row {
        what: "Path.Max.Retrans",
        kernel: format!(
            "{PMR} (configured; the count was {} when the kernel gave up)",
            at_unreachable.unwrap_or_default()
        ),
        analyzer: format!(
            "observed_pmr {} (error count at the last expiry - 1)",
            f.observed_pmr.map_or("null".into(), |p| p.to_string())
        ),
        agrees: f.observed_pmr == Some(PMR),
    });
    let switch_lag = failover.switch_time.since(unreachable);
    rows.push(Row {
        what: "first new DATA on the alternate path",
        kernel: format!(
            "after ADDR_UNREACHABLE at {}, when the next application write, a SACK or the \
             alternate's window lets it out",
            since(unreachable)
        ),
        analyzer: format!(
            "switch frame {} at {} ({} after the notification); failover time {}",
            failover.switch_frame,
            since(failover.switch_time),
            ms(switch_lag),
            f.failover_time.nanos.map_or("null".into(), ms)
        ),
        agrees: switch_lag.0 >= -TICK.0,
    });
    // A T3 run lasts the RTO, up to a tick longer (HZ = 100) and some
    // processing.
    let rto_ok = |x: f64| (0.0..=1.5 * TICK.as_millis_f64()).contains(&(x - RTO_MS as f64));
    let implied_ok = f.implied_rto_ms.iter().filter(|x| rto_ok(**x)).count();
    rows.push(Row {
        what: "RTO of the primary",
        kernel: format!("spinfo_rto samples {kernel_rtos:?} ms"),
        analyzer: format!(
            "estimator {} ms; failover rto_estimate {} ms, the median of implied {:?} ms \
             ({implied_ok} of {} within a tick and a half)",
            old_state.rto.rto.as_millis_f64(),
            f.rto_estimate_ms
                .map_or("null".into(), |x| round1(x).to_string()),
            f.implied_rto_ms
                .iter()
                .map(|x| round1(*x))
                .collect::<Vec<_>>(),
            f.implied_rto_ms.len()
        ),
        agrees: kernel_rtos.iter().all(|r| *r == RTO_MS as u64)
            && old_state.rto.rto == Nanos::from_millis(RTO_MS)
            && f.rto_estimate_ms.is_some_and(rto_ok),
    });
    rows.push(Row {
        what: "SRTT of the primary",
        kernel: format!(
            "{} ms at the first sample after the cut (spinfo_srtt is in jiffies: 10 ms steps)",
            kernel_srtt.map_or("?".into(), |s| s.to_string())
        ),
        analyzer: format!(
            "{} ms",
            old_state
                .rto
                .srtt
                .map_or("?".into(), |s| round1(s.as_millis_f64()).to_string())
        ),
        agrees: true,
    });

    println!(
        "\nbokor-failover rto={RTO_MS} pmr={PMR}, {}\ncorrespondent's kernel vs its capture analysed with --pmr {PMR} and RTO {RTO_MS} ms; times from link_down",
        run.display()
    );
    for r in &rows {
        println!(
            "[{}] {}\n      kernel:   {}\n      analyzer: {}",
            if r.agrees { "agree " } else { "DIFFER" },
            r.what,
            r.kernel,
            r.analyzer
        );
    }

    // What must hold on every run: the switch follows the kernel's
    // decision (within the next application write, or a T3 run of the
    // alternate when its window holds the DATA back), and the analyzer,
    // told the sender's PMR and RTO, infers the primary inactive at the
    // expiry the kernel gave it up at and observes the configured PMR
    // (docs/metrics.md, "Inferred path state").
    assert!(
        switch_lag.0 >= -TICK.0
            && switch_lag.0 <= interval.0 + Nanos::from_millis(RTO_MS).0 + 2 * TICK.0,
        "the first new DATA on the alternate path comes {} after the kernel's ADDR_UNREACHABLE",
        ms(switch_lag)
    );
    let d = inactive_delta.expect("the analyzer infers the primary inactive");
    assert!(
        d.0.abs() <= TICK.0 + TICK.0 / 2,
        "the analyzer's PathInactive is {} from the kernel's ADDR_UNREACHABLE",
        ms(d)
    );
    assert_eq!(f.observed_pmr, Some(PMR), "observed PMR");
    if let Some(out) = cleanup {
        let _ = std::fs::remove_dir_all(out);
    }
}
