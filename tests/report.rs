//! `sctp-handover report` end to end: reports from captures, from a tables
//! directory and from a harness sweep, each checked by tests/check_report.py
//! (well-formed, self-contained, every figure also an SVG file that parses,
//! and every number equal to the tables it was built from, recomputed with
//! pyarrow and Python's statistics module), and opened in headless Chromium.

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(args)
        .current_dir(common::repo_root())
        .output()
        .expect("binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// tests/check_report.py over a report; its JSON verdict.
fn check(html: &Path, assets: &Path, tables: &Path, extra: &[&str]) -> Value {
    let out = common::python()
        .arg(common::repo_root().join("tests/check_report.py"))
        .args([path(html), path(assets), path(tables)])
        .args(extra)
        .output()
        .expect("python3 runs (make setup installs pyarrow)");
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check_report.py: {e}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        )
    });
    assert!(
        out.status.success(),
        "{}: {}",
        html.display(),
        verdict["problems"]
    );
    verdict
}

fn figures(verdict: &Value) -> Vec<String> {
    verdict["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .map(|f| f.as_str().unwrap_or_default().to_string())
        .collect()
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn assets_file(assets: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(assets)
        .expect("assets")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{suffix}: {found:?}");
    found[0].clone()
}

/// Headless Chromium: the DOM it builds holds every figure as an SVG
/// element, and a screenshot is drawn.
fn open_in_chromium(html: &Path, svgs: usize, dir: &Path) {
    let url = format!("file://{}", path(html));
    let profile = dir.join("chromium-profile");
    let base = |args: &[&str]| {
        Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                &format!("--user-data-dir={}", path(&profile)),
            ])
            .args(args)
            .output()
            .expect("chromium runs (make setup installs it)")
    };
    let dom = base(&["--dump-dom", &url]);
    let dom = text(&dom.stdout);
    assert_eq!(
        dom.matches("<svg").count(),
        svgs,
        "SVG elements in Chromium's DOM"
    );
    assert!(dom.contains("</html>"), "Chromium parsed the whole page");
    let shot = dir.join("screenshot.png");
    base(&[
        &format!("--screenshot={}", path(&shot)),
        "--window-size=1100,1600",
        &url,
    ]);
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[1..4], b"PNG");
    assert!(png.len() > 20_000, "a blank page? {} bytes", png.len());
}

#[test]
fn a_capture_report_draws_every_figure_and_holds_the_tables_numbers() {
    let dir = common::tempdir("report-capture");
    let html = dir.join("koh.html");
    let o = run(&[
        "report",
        "sample-captures/koh-kim-1",
        "-o",
        path(&html),
        "--by",
        "capture_side",
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let assets = dir.join("koh-assets");
    let verdict = check(
        &html,
        &assets,
        &assets.join("tables"),
        &["--by", "capture_side"],
    );
    let figs = figures(&verdict);
    // Both capture points: one association, DATA both ways, HEARTBEATs,
    // two data path switches (CN→MN after SET-PRIMARY, MN→CN after
    // DELETE-IP; sample-captures/README.md).
    for side in ["cn", "mn"] {
        for f in ["tsn0", "tsn1", "rtt", "h1-timeline", "h2-timeline"] {
            let name = format!("c-sample-captures-koh-kim-1-{side}-pcap-a0-{f}");
            assert!(figs.contains(&name), "{name} in {figs:?}");
        }
    }
    assert!(figs.contains(&"comparison-data_interrupt-bars".to_string()));
    assert!(verdict["checked"].as_u64().unwrap_or(0) > 100, "{verdict}");
    // Every table of the page was compared cell by cell with its CSV.
    assert_eq!(verdict["html_tables"], verdict["tables"], "{verdict}");

    // Checked by hand in Wireshark: at the MN the CN's new DATA leaves the
    // old path with frame 106 and arrives on the new one with frame 109,
    // 50.021 ms later, after the SET-PRIMARY of frame 104.
    let components = csv_rows(&assets_file(&assets, "mn-pcap-a0-h1-components.csv"));
    let interrupt = components
        .iter()
        .find(|r| r[1] == "data_interrupt_ms")
        .expect("data interrupt row");
    assert_eq!(interrupt[2], "50.021");
    assert!(interrupt[3].starts_with("frame 106 "), "{interrupt:?}");
    assert!(interrupt[4].starts_with("frame 109 "), "{interrupt:?}");
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(
        page.contains("<title>frame 104: ASCONF serial"),
        "tooltips name frames"
    );
    assert!(page.contains("SACK cumulative TSN ack"));

    open_in_chromium(&html, verdict["svgs"].as_u64().unwrap_or(0) as usize, &dir);
}

#[test]
fn a_harness_sweep_becomes_a_comparison_and_a_sweep_chart() {
    let dir = common::tempdir("report-sweep");
    let tables = dir.join("tables");
    let o = run(&["analyze", "sample-sweeps", "--out", path(&tables), "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));

    // Comparison from the tables directory: nothing re-analysed.
    let html = dir.join("cmp.html");
    let o = run(&[
        "report",
        path(&tables),
        "--by",
        "pmr",
        "--side",
        "cn",
        "-o",
        path(&html),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let assets = dir.join("cmp-assets");
    assert!(
        !assets.join("tables").exists(),
        "a tables input is not analysed again"
    );
    let verdict = check(
        &html,
        &assets,
        &tables,
        &["--by", "param_pmr", "--side", "cn"],
    );
    assert!(figures(&verdict).contains(&"comparison-failover_time-bars".to_string()));
    let failover = csv_rows(&assets.join("comparison-failover_time.csv"));
    let groups: Vec<(&str, &str)> = failover
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    // Two RTOs × three runs per PMR, one failover each at the CN.
    assert_eq!(groups, [("pmr = 1", "6"), ("pmr = 2", "6")]);
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("Inputs given as tables have no per-capture figures"));

    // The sweep chart, one command.
    let html = dir.join("sweep.html");
    let o = run(&[
        "report",
        path(&tables),
        "--side",
        "cn",
        "--x",
        "rto",
        "--series",
        "pmr",
        "--metric",
        "failover_time",
        "--no-captures",
        "-o",
        path(&html),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let assets = dir.join("sweep-assets");
    let verdict = check(
        &html,
        &assets,
        &tables,
        &["--side", "cn", "--sweep", "rto", "pmr", "failover_time"],
    );
    assert!(figures(&verdict).contains(&"sweep-failover-time-figure".to_string()));
    let sweep = csv_rows(&assets.join("sweep-failover-time.csv"));
    let cells: Vec<(&str, &str, &str)> = sweep
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(
        cells,
        [
            ("pmr = 1", "100", "3"),
            ("pmr = 1", "200", "3"),
            ("pmr = 2", "100", "3"),
            ("pmr = 2", "200", "3"),
        ]
    );
    // More retransmissions before moving: PMR 2 fails over later than PMR 1
    // at either RTO, and a longer RTO takes longer.
    let mean = |i: usize| sweep[i][3].parse::<f64>().expect("mean");
    assert!(mean(2) > mean(0) && mean(3) > mean(1), "{sweep:?}");
    assert!(mean(1) > mean(0) && mean(3) > mean(2), "{sweep:?}");
    let svg = std::fs::read_to_string(assets.join("sweep-failover-time-figure.svg")).expect("svg");
    for legend in [
        "pmr = 1 (mean",
        "pmr = 2 (mean",
        "fixed RTO, configured PMR × RTO, pmr = 2",
        "fixed RTO, observed PMR × RTO, pmr = 2",
    ] {
        assert!(svg.contains(legend), "legend {legend}");
    }
    // The configured prediction is the swept PMR × RTO itself.
    let data = std::fs::read_to_string(assets.join("sweep-failover-time-figure.csv")).expect("csv");
    for (pmr, rto, product) in [(1, 100, 100), (2, 100, 200), (2, 200, 400)] {
        let line = format!(
            "\"fixed RTO, configured PMR × RTO, pmr = {pmr}\",{rto},,{product},,,,,prediction"
        );
        assert!(data.lines().any(|l| l == line), "{line} in\n{data}");
    }
    assert!(svg.contains("rto (ms, swept parameter)") && svg.contains("failover time (ms)"));
}

#[test]
fn bad_inputs_and_empty_groups_are_listed_never_dropped() {
    let dir = common::tempdir("report-bad");
    let garbage = dir.join("garbage.pcap");
    std::fs::write(&garbage, b"this is not a capture at all").expect("write");
    let whole = std::fs::read(common::sample("koh-kim-1", "mn")).expect("sample");
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &whole[..3000]).expect("write");
    let html = dir.join("bad.html");
    let o = run(&[
        "report",
        path(&garbage),
        path(&cut),
        "sample-captures/koh-kim-1/mn.pcap",
        "--group",
        "koh=*koh-kim-1*",
        "--group",
        "nothing=*no-such-run*",
        "-o",
        path(&html),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a failed input: {}",
        text(&o.stderr)
    );
    let stderr = text(&o.stderr);
    // The input that could not be read is an error; the one without a
    // handover is a note.
    let garbage_line = stderr
        .lines()
        .find(|l| l.contains("garbage.pcap: failed"))
        .unwrap_or_else(|| panic!("garbage.pcap named: {stderr}"));
    assert!(
        garbage_line.starts_with("sctp-handover: error: left out "),
        "{garbage_line}"
    );
    let cut_line = stderr
        .lines()
        .find(|l| l.contains("cut.pcap"))
        .unwrap_or_else(|| panic!("cut.pcap named: {stderr}"));
    assert!(
        cut_line.starts_with("sctp-handover: left out "),
        "{cut_line}"
    );
    let assets = dir.join("bad-assets");
    let excluded = csv_rows(&assets.join("excluded.csv"));
    let reason = |name: &str| {
        excluded
            .iter()
            .find(|r| r[0].ends_with(name))
            .map(|r| r[1..].join(","))
            .unwrap_or_else(|| panic!("{name} not listed: {excluded:?}"))
    };
    let garbage_reason = reason("garbage.pcap");
    assert!(
        garbage_reason.contains("failed: ")
            && garbage_reason.contains("not a pcap or pcapng capture"),
        "{excluded:?}"
    );
    assert_eq!(
        reason("cut.pcap"),
        "not in the comparison: no handover (no data path switch)"
    );
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("Group `nothing` holds no handover."));
    let rows = csv_rows(&assets.join("comparison-data_interrupt.csv"));
    assert_eq!(rows[0][..2], ["koh".to_string(), "2".to_string()]);
    assert_eq!(rows[1], ["nothing", "0", "", "", "", "", ""]);

    let o = run(&[
        "report",
        "sample-captures/koh-kim-1/mn.pcap",
        "--by",
        "colour",
        "-o",
        path(&dir.join("x.html")),
    ]);
    // Which columns there are is known once the inputs are read: an
    // error after the run started, status 1.
    assert_eq!(o.status.code(), Some(1));
    let stderr = text(&o.stderr);
    assert!(
        stderr.starts_with("sctp-handover: error: ")
            && stderr.contains("no column `colour`")
            && stderr.contains("scenario"),
        "{stderr}"
    );
}

/// A harness run whose script did not take effect (meta.json `valid:
/// false`, as the harness writes for honda-nodad, whose SET-PRIMARY and
/// DELETE-IP never reach the CN) is drawn with a warning but left out of
/// the statistics and listed with its reason; a run recorded before the
/// check and without the kernel's view stays in, and the summary says so.
#[test]
fn invalid_harness_runs_are_left_out_of_the_statistics() {
    let dir = common::tempdir("report-invalid");
    let runs = dir.join("runs");
    let reasons = [
        "set_peer_primary 2001:db8::102 at +1.00 s: no SCTP_ADDR_MADE_PRIM at the cn within 2 s",
        "bindx_remove 2001:db8::101 at +1.00 s: no SCTP_ADDR_REMOVED at the cn within 2 s",
    ];
    for name in ["honda-nodad", "koh-kim-1"] {
        let to = runs.join(name);
        std::fs::create_dir_all(&to).expect("run dir");
        let from = common::repo_root().join("sample-captures").join(name);
        for f in [
            "mn.pcap",
            "cn.pcap",
            "events.jsonl",
            "scenario.toml",
            "meta.json",
        ] {
            std::fs::copy(from.join(f), to.join(f)).expect("copy");
        }
    }
    let meta_path = runs.join("honda-nodad/meta.json");
    let mut meta: Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).expect("meta")).expect("JSON");
    meta["valid"] = Value::Bool(false);
    meta["invalid_reasons"] = reasons.iter().map(|r| Value::from(*r)).collect();
    std::fs::write(&meta_path, meta.to_string()).expect("write meta");

    let html = dir.join("r.html");
    let o = run(&[
        "report",
        path(&runs),
        "--by",
        "scenario",
        "-o",
        path(&html),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let assets = dir.join("r-assets");
    check(
        &html,
        &assets,
        &assets.join("tables"),
        &["--by", "scenario"],
    );
    let excluded = csv_rows(&assets.join("excluded.csv"));
    for side in ["mn", "cn"] {
        let row = excluded
            .iter()
            .find(|r| r[0].ends_with(&format!("honda-nodad/{side}.pcap")))
            .unwrap_or_else(|| panic!("honda-nodad {side} not listed: {excluded:?}"));
        assert_eq!(
            row[1..].join(","),
            format!(
                "invalid harness run (its script did not take effect): {}",
                reasons.join("; ")
            )
        );
    }
    let groups: Vec<String> = csv_rows(&assets.join("comparison-data_interrupt.csv"))
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(groups, ["koh-kim-1"], "honda-nodad has no group");
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("2 captures of invalid harness runs left out of the statistics"));
    assert!(page.contains("Invalid harness run, left out of the statistics"));
    assert!(page.contains("2 captures of harness runs whose script could not be checked"));
}

/// The row of a report table's CSV whose first cells are `key`.
fn row_starting<'a>(rows: &'a [Vec<String>], key: &[&str]) -> &'a Vec<String> {
    rows.iter()
        .find(|r| r.iter().zip(key).all(|(a, b)| a == b))
        .unwrap_or_else(|| panic!("no row {key:?} in {rows:?}"))
}

fn ms_cell(cell: &str) -> f64 {
    cell.parse()
        .unwrap_or_else(|e| panic!("{cell:?} is not a number: {e}"))
}

/// `report --point`: the page leads with each handover as both points saw
/// it, then the one-way delay figure, the clock and the paths, then each
/// capture's usual sections. Values checked against `analyze --point …
/// --format jsonl` on the same captures and the runs' scenario.toml.
#[test]
fn a_two_point_report_tells_each_handover_from_both_sides() {
    let dir = common::tempdir("report-points");
    let report = |sample: &str| {
        let html = dir.join(format!("{sample}.html"));
        let o = run_report_points(sample, &html);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let assets = dir.join(format!("{sample}-assets"));
        let verdict = check(&html, &assets, &assets.join("tables"), &[]);
        assert_eq!(verdict["html_tables"], verdict["tables"], "{verdict}");
        // The one-way delay figure is the page's first; the pair's tables
        // are written beside the per-capture ones.
        assert!(figures(&verdict)[0].starts_with("owd-"), "{verdict}");
        for t in ["points", "owd", "handovers_two_sided", "handovers"] {
            assert!(assets.join("tables").join(t).is_dir(), "tables/{t}");
        }
        let page = std::fs::read_to_string(&html).expect("html");
        let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("{s} in the page"));
        assert!(at("Handovers seen from both points") < at("One-way delay per path"));
        assert!(at("One-way delay per path") < at("Clock, losses and retransmissions"));
        assert!(at("Clock, losses and retransmissions") < at(">Comparison<"));
        (html, assets, page, verdict)
    };

    // koh-kim-2: two planned handovers, each moved by an ASCONF of the
    // MN's over 5 ms netem links (scenario.toml: delay_ms = 5.0 on both).
    let (html, assets, page, verdict) = report("koh-kim-2");
    let switches = csv_rows(&assets.join("two-sided-switches.csv"));
    assert_eq!(switches.len(), 2, "{switches:?}");
    // handover, sender, receiver, old path, new path, then each side's
    // class, switch frame and time.
    let first = row_starting(&switches, &["1", "mn", "cn", "198.51.100.101"]);
    assert_eq!((first[8].as_str(), first[11].as_str()), ("74", "64"));
    row_starting(&switches, &["2", "cn", "mn", "198.51.100.100"]);
    // handover, requester, requests, transmissions, sent, received, one-way
    // delay, peer processing, ACK received, ACK one-way delay, peer → its
    // first new DATA.
    let asconf = csv_rows(&assets.join("two-sided-asconf.csv"));
    let add_ip = row_starting(&asconf, &["1", "mn", "add_ip 198.51.100.102", "1"]);
    assert_eq!(add_ip[6], "5.036884");
    assert!((ms_cell(&add_ip[6]) - 5.0).abs() < 1.0);
    assert_eq!(add_ip[7], "0.037");
    assert_eq!(add_ip[9], "5.026116");
    let set_primary = row_starting(&asconf, &["2", "mn", "set_primary 198.51.100.102"]);
    assert_eq!(set_primary[6], "5.084134");
    assert!((ms_cell(&set_primary[6]) - 5.0).abs() < 1.0);
    assert_eq!(set_primary[10], "41.158");
    // Each side's interrupt and its parts (one-way delay, loss, endpoint),
    // which add up to it: the MN lost the CN's two DATA sent to its old
    // address after the cut (CN frames 63 and 66, docs/points.md).
    let parts = csv_rows(&assets.join("two-sided-interrupts.csv"));
    let expect = [
        ["1", "sender", "mn", "50.019", "0", "0", "50.019"],
        ["1", "receiver", "cn", "50.042", "0.023", "0", "50.019"],
        ["2", "sender", "cn", "50.022", "0", "0", "50.022"],
        [
            "2", "receiver", "mn", "150.098", "0.018", "100.069", "50.011",
        ],
    ];
    for e in expect {
        let r = row_starting(&parts, &e[..3]);
        assert_eq!(&r[..7], &e[..], "{r:?}");
        let sum: f64 = r[4..7].iter().map(|c| ms_cell(c)).sum();
        assert!((sum - ms_cell(&r[3])).abs() < 1e-6, "{r:?}");
    }
    let clock = csv_rows(&assets.join("points-clock.csv"));
    // point_a, point_b, offset, uncertainty, drift, samples, …: one clock
    // (the harness's), so the offset is within 100 µs of zero.
    assert_eq!(&clock[0][..2], &["mn", "cn"]);
    assert!(ms_cell(&clock[0][2]).abs() < 0.1, "{clock:?}");
    assert_eq!(clock[0][5], "167");
    let paths = csv_rows(&assets.join("points-paths.csv"));
    let old = row_starting(&paths, &["cn→mn", "198.51.100.100", "198.51.100.101"]);
    assert_eq!(old[7], "2", "lost on the old path: {old:?}");
    assert!(page.contains("Handover 1: the data sender (mn) moved from 198.51.100.101"));
    open_in_chromium(&html, verdict["svgs"].as_u64().unwrap_or(0) as usize, &dir);

    // bokor-failover: the CN fails over from the 5 ms link to the 90 ms
    // one (scenario.toml) with no ASCONF. The Linux sender's interrupt is
    // negative (it sent on the new path before its last old-path DATA): not
    // decomposed, with the reason. At the MN, 450.168 ms of which the new
    // path's longer one-way delay is 85.17 ms (90 − 5 within 1 ms).
    let (_, assets, page, _) = report("bokor-failover");
    let switches = csv_rows(&assets.join("two-sided-switches.csv"));
    assert_eq!(switches.len(), 1, "{switches:?}");
    let failover = row_starting(&switches, &["1", "cn", "mn"]);
    assert_eq!(
        (failover[7].as_str(), failover[10].as_str()),
        ("failover", "failover")
    );
    assert!(!assets.join("two-sided-asconf.csv").exists());
    let parts = csv_rows(&assets.join("two-sided-interrupts.csv"));
    let sender = row_starting(&parts, &["1", "sender", "cn"]);
    assert_eq!(&sender[3..7], &["-235.031", "", "", ""]);
    assert!(
        sender[7..].join(",").contains("the paths overlapped"),
        "{sender:?}"
    );
    let receiver = row_starting(&parts, &["1", "receiver", "mn"]);
    assert_eq!(&receiver[3..7], &["450.168", "85.17", "314.926", "50.072"]);
    assert!((ms_cell(&receiver[4]) - 85.0).abs() < 1.0);
    let paths = csv_rows(&assets.join("points-paths.csv"));
    let old = row_starting(&paths, &["cn→mn", "198.51.100.100", "198.51.100.101"]);
    assert_eq!(old[7], "12", "lost on the old path: {old:?}");
    let new = row_starting(&paths, &["cn→mn", "198.51.100.100", "198.51.100.102"]);
    assert_eq!((new[9].as_str(), new[10].as_str()), ("14", "5"), "{new:?}");
    assert!(page.contains("No ASCONF moved it"));
    assert!(page.contains("No ASCONF moved any of these handovers."));

    // Other than two points, or points beside INPUTs: usage errors.
    let one = run(&[
        "report",
        "--point",
        "mn=sample-captures/koh-kim-2/mn.pcap",
        "-o",
        path(&dir.join("one.html")),
    ]);
    assert_eq!(one.status.code(), Some(2), "{}", text(&one.stderr));
    assert!(text(&one.stderr).contains("exactly two capture points"));
    let both = run(&[
        "report",
        "sample-captures/koh-kim-2",
        "--point",
        "mn=sample-captures/koh-kim-2/mn.pcap",
        "--point",
        "cn=sample-captures/koh-kim-2/cn.pcap",
    ]);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both.stderr));
}

/// `report --point mn=… --point cn=…` over a sample run's two captures.
fn run_report_points(sample: &str, html: &Path) -> Output {
    let point = |side: &str| format!("{side}=sample-captures/{sample}/{side}.pcap");
    run(&[
        "report",
        "--point",
        &point("mn"),
        "--point",
        &point("cn"),
        "-o",
        path(html),
        "-q",
    ])
}
