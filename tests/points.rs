//! `analyze --point`: two capture points of one harness run (the samples:
//! both captures written from one clock) analysed as the per-capture
//! analysis does, plus the two-sided handover records and the `points`,
//! `owd` and `handovers_two_sided` tables, read back by pyarrow.

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::process::Command;

fn analyze(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

fn points_args(run: &str) -> (String, String) {
    let mn = common::sample(run, "mn");
    let cn = common::sample(run, "cn");
    (
        format!("mn={}", mn.display()),
        format!("cn={}", cn.display()),
    )
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The JSON lines hold each point's own records, unchanged, then the
/// clock and one two-sided record per handover; koh-kim-2's CN → MN
/// handover is the one the MN saw 100 ms later: the CN sent two DATA into
/// the cut path (CN frames 63 and 66, docs/metrics.md).
#[test]
fn jsonl_adds_the_two_sided_records_to_each_points_own() {
    let (mn, cn) = points_args("koh-kim-2");
    let (code, out, err) = analyze(&[
        "analyze", "--format", "jsonl", "--point", &mn, "--point", &cn,
    ]);
    assert_eq!(code, 0, "{err}");
    let records: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    // Each point's own output is what `analyze PATH` writes for it.
    for side in ["mn", "cn"] {
        let p = common::sample("koh-kim-2", side);
        let (code, alone, err) =
            analyze(&["analyze", "--format", "jsonl", p.to_str().expect("utf-8")]);
        assert_eq!(code, 0, "{err}");
        for line in alone.lines().skip(1) {
            assert!(out.contains(line), "{side}: {line}");
        }
    }
    let two: Vec<&Value> = records
        .iter()
        .filter(|r| r["record"] == "two_sided_handover")
        .collect();
    assert_eq!(two.len(), 2, "{out}");
    let cn_to_mn = two
        .iter()
        .find(|r| r["sender_point"] == "cn")
        .expect("the CN's DATA handover");
    assert_eq!(cn_to_mn["sender_switch_frame"], 71);
    assert_eq!(cn_to_mn["receiver_switch_frame"], 81);
    let rx = &cn_to_mn["receiver"];
    assert_eq!(rx["interrupt_ns"], 150_098_000, "{rx}");
    // The CN's next DATA after the MN's last on the old path (CN frame 57
    // → 63: pacing) was lost, as was frame 66; its first on the new path
    // (frame 71) came 100.069 ms after frame 63.
    assert_eq!(rx["endpoint_ns"], 50_011_000, "{rx}");
    assert_eq!(rx["loss_ns"], 100_069_000, "{rx}");
    let sum = rx["one_way_delay_ns"].as_i64().expect("owd")
        + rx["loss_ns"].as_i64().expect("loss")
        + rx["endpoint_ns"].as_i64().expect("endpoint");
    assert_eq!(Some(sum), rx["interrupt_ns"].as_i64());
    let asconf = &cn_to_mn["asconf"];
    assert_eq!(asconf["requests"], "set_primary 198.51.100.102");
    assert_eq!(asconf["requester_point"], "mn");
    // 5 ms of netem on the MN's links (scenario.toml).
    let owd_ms = f(asconf, "one_way_delay_ns") / 1e6;
    assert!((owd_ms - 5.0).abs() < 1.0, "{asconf}");
    assert_eq!(asconf["peer_to_first_new_data_ns"], 41_158_000, "{asconf}");
    let clock = records
        .iter()
        .find(|r| r["record"] == "points_clock")
        .expect("clock");
    assert!(f(clock, "offset_ns").abs() < 100_000.0, "{clock}");
}

/// `--out`: the per-capture tables as for `analyze PATH…`, and the three
/// tables of the pair, which pyarrow reads: one `points` row with the
/// clock, one `owd` row per packet paired (167 on koh-kim-2, as `points`
/// counts them), and the two-sided rows whose parts add up.
#[test]
fn out_writes_the_points_owd_and_two_sided_tables() {
    let dir = std::env::temp_dir().join(format!("sctp-points-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (mn, cn) = points_args("koh-kim-2");
    let (code, out, err) = analyze(&[
        "analyze",
        "-q",
        "--point",
        &mn,
        "--point",
        &cn,
        "--out",
        dir.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("2 two-sided handovers, 0 seen at one point only; tables in"),
        "{out}"
    );
    assert_eq!(common::read_table(&dir, "handovers").len(), 4);
    let points = common::read_table(&dir, "points");
    assert_eq!(points.len(), 1);
    let p = &points[0];
    assert_eq!(p["point_a"], "mn");
    assert_eq!(p["point_b"], "cn");
    assert!(f(p, "offset_ms").abs() < 0.1, "{p}");
    assert!((f(p, "offset_uncertainty_ms") - 5.0).abs() < 0.1, "{p}");
    assert_eq!(p["paired"], 167);
    assert_eq!(p["not_seen_at_receiver"], 2);
    let owd = common::read_table(&dir, "owd");
    assert_eq!(owd.len(), 167);
    for row in &owd {
        let sent = row["sent_time"].as_i64().expect("sent");
        let received = row["received_time"].as_i64().expect("received");
        let ms = f(row, "one_way_delay_ms");
        assert!(((received - sent) as f64 / 1e6 - ms).abs() < 1e-6, "{row}");
        // Every link of koh-kim-2 has 5 ms of netem delay; a packet can
        // wait behind others a few ms more.
        assert!((5.0..10.0).contains(&ms), "{row}");
    }
    let least = owd
        .iter()
        .map(|r| f(r, "one_way_delay_ms"))
        .fold(f64::INFINITY, f64::min);
    assert!(least < 5.1, "least one-way delay {least} ms");
    let two = common::read_table(&dir, "handovers_two_sided");
    assert_eq!(two.len(), 2);
    for row in &two {
        for side in ["sender", "receiver"] {
            let part = |p: &str| f(row, &format!("{side}_{p}_ms"));
            let sum = part("one_way_delay") + part("loss") + part("endpoint");
            assert!((sum - part("interrupt")).abs() < 1e-9, "{row}");
        }
        assert!(
            (f(row, "asconf_one_way_delay_ms") - 5.0).abs() < 1.0,
            "{row}"
        );
    }
    // The figure: one-way delay per path with both points' events, its
    // data beside it: the 167 pairs (every sample kept: far fewer than the
    // buckets' bound) and 10 events (per handover two switches, the
    // ASCONF's departure and arrival and its ASCONF-ACK's arrival).
    let figures: Vec<std::path::PathBuf> = std::fs::read_dir(dir.join("figures"))
        .expect("figures")
        .map(|e| e.expect("entry").path())
        .collect();
    let svg = figures
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "svg"))
        .expect("an SVG");
    let svg = std::fs::read_to_string(svg).expect("svg");
    assert!(svg.contains("one-way delay (ms)"), "y axis");
    assert!(svg.contains("on its clock (s)"), "x axis");
    assert!(
        svg.contains("#0072B2") || svg.contains("#0072b2"),
        "Okabe–Ito blue"
    );
    let csv = figures
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "csv"))
        .expect("a CSV");
    let csv = std::fs::read_to_string(csv).expect("csv");
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.iter().filter(|r| r.ends_with(',')).count(), 167);
    let events: Vec<&&str> = rows.iter().filter(|r| !r.ends_with(',')).collect();
    assert_eq!(events.len(), 10, "{events:?}");
    assert!(
        events.iter().any(|r| r.contains("\"cn: switch 71\"")),
        "{events:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// docs/tables.md lists the three tables' columns as tables/src/points.rs
/// defines them (`SCTPHO_WRITE_DOCS=1` rewrites the list).
#[test]
fn the_tables_doc_lists_the_points_tables() {
    let path = common::repo_root().join("docs/tables.md");
    let doc = std::fs::read_to_string(&path).expect("docs/tables.md");
    let (begin, end) = (
        "<!-- points tables: begin -->\n",
        "<!-- points tables: end -->",
    );
    let start = doc.find(begin).expect("begin marker") + begin.len();
    let stop = doc.find(end).expect("end marker");
    let reference = sctp_handover_tables::points::markdown_reference();
    if std::env::var_os("SCTPHO_WRITE_DOCS").is_some() {
        let text = format!("{}{}{}", &doc[..start], reference, &doc[stop..]);
        std::fs::write(&path, text).expect("write docs/tables.md");
        return;
    }
    assert_eq!(
        doc[start..stop],
        reference,
        "docs/tables.md's points tables are stale: SCTPHO_WRITE_DOCS=1 cargo test -p sctp-handover-cli --test points"
    );
}

/// A handover one point did not see is reported, never dropped: bokor-return
/// with the MN's capture cut after frame 100 (`editcap -r … 1-100`, before
/// the CN's return to the first path at CN frame 132, MN frame 136) keeps
/// the failover two-sided and shows the return as seen at the CN (the data
/// sender) only — in the text's count line, as a `one_sided_handover`
/// record and as a `handovers_two_sided` row whose receiver side is null.
#[test]
fn a_handover_one_point_missed_is_counted_and_shown() {
    let dir = std::env::temp_dir().join(format!("sctp-points-one-sided-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cut = dir.join("mn-cut.pcap");
    let status = Command::new("editcap")
        .arg("-r")
        .arg(common::sample("bokor-return", "mn"))
        .arg(&cut)
        .arg("1-100")
        .status()
        .expect("editcap runs (Wireshark's tools are a dependency)");
    assert!(status.success());
    let mn = format!("mn={}", cut.display());
    let cn = format!("cn={}", common::sample("bokor-return", "cn").display());
    let (code, out, err) = analyze(&["analyze", "--point", &mn, "--point", &cn]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("1 two-sided handovers; 1 seen at one point only (0 at mn, 1 at cn)"),
        "{out}"
    );
    assert!(
        out.contains("one-sided handover at data sender cn (198.51.100.100 → 198.51.100.102 to 198.51.100.100 → 198.51.100.101): return at cn frame 132, data interrupt 49.989 ms; none at mn"),
        "{out}"
    );

    let (code, out, err) = analyze(&[
        "analyze", "--format", "jsonl", "--point", &mn, "--point", &cn,
    ]);
    assert_eq!(code, 0, "{err}");
    let records: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let kind = |k: &str| records.iter().filter(|r| r["record"] == k).count();
    assert_eq!(kind("two_sided_handover"), 1);
    let one: Vec<&Value> = records
        .iter()
        .filter(|r| r["record"] == "one_sided_handover")
        .collect();
    assert_eq!(one.len(), 1, "{out}");
    assert_eq!(one[0]["point"], "cn");
    assert_eq!(one[0]["at_data_sender"], true);
    assert_eq!(one[0]["switch_frame"], 132);
    assert_eq!(one[0]["class"], "return");
    assert_eq!(one[0]["interrupt_ns"], 49_989_000);

    let tables = dir.join("out");
    let (code, out, err) = analyze(&[
        "analyze",
        "-q",
        "--point",
        &mn,
        "--point",
        &cn,
        "--out",
        tables.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("1 two-sided handovers, 1 seen at one point only; tables in"),
        "{out}"
    );
    let rows = common::read_table(&tables, "handovers_two_sided");
    assert_eq!(rows.len(), 2, "{rows:?}");
    let both = rows.iter().find(|r| r["seen_at"] == "both").expect("both");
    assert_eq!(both["sender_switch_frame"], 76);
    assert_eq!(both["receiver_switch_frame"], 67);
    assert!(both["one_sided_reason"].is_null(), "{both}");
    let single = rows.iter().find(|r| r["seen_at"] == "cn").expect("cn only");
    assert_eq!(single["sender_point"], "cn");
    assert!(single["receiver_point"].is_null(), "{single}");
    assert_eq!(single["sender_switch_frame"], 132);
    assert!(single["receiver_switch_frame"].is_null(), "{single}");
    assert!(
        (f(single, "sender_interrupt_ms") - 49.989).abs() < 1e-9,
        "{single}"
    );
    assert!(single["receiver_interrupt_ms"].is_null(), "{single}");
    assert!(single["asconf_one_way_delay_ms"].is_null(), "{single}");
    assert!(
        single["one_sided_reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("no handover of mn's analysis traces to this one")),
        "{single}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `points` says why each retransmission was sent, in its text and JSON
/// lines, by the analyzer's names: on koh-kim-1-ack-lost the MN's three
/// copies are its one T3 expiry's and the CN's three fast retransmits,
/// as the kernels counted them (`kernel_mib` in events.jsonl;
/// points/tests/harness_runs.rs checks the counters).
#[test]
fn points_gives_each_retransmission_its_reason() {
    let (mn, cn) = points_args("koh-kim-1-ack-lost");
    let (code, out, err) = analyze(&[
        "points", "--format", "jsonl", "--point", &mn, "--point", &cn,
    ]);
    assert_eq!(code, 0, "{err}");
    let records: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let mut reasons: Vec<(u64, String, String)> = records
        .iter()
        .filter(|r| r["record"] == "retransmission")
        .map(|r| {
            (
                r["frame"].as_u64().expect("frame"),
                r["direction"].as_str().expect("direction").to_owned(),
                r["reason"].as_str().expect("reason").to_owned(),
            )
        })
        .collect();
    reasons.sort();
    let expect = |frame: u64, d: &str, why: &str| (frame, d.to_owned(), why.to_owned());
    assert_eq!(
        reasons,
        vec![
            expect(75, "a_to_b", "t3_expiry"),
            expect(77, "a_to_b", "t3_expiry"),
            expect(78, "a_to_b", "t3_expiry"),
            expect(82, "b_to_a", "fast_retransmit"),
            expect(84, "b_to_a", "fast_retransmit"),
            expect(85, "b_to_a", "fast_retransmit"),
        ]
    );
    let by_reason: Vec<&Value> = records
        .iter()
        .filter(|r| r["record"] == "path" && r["retransmissions"] != 0)
        .map(|r| &r["retransmissions_by_reason"])
        .collect();
    assert_eq!(
        by_reason,
        [
            &serde_json::json!({"fast_retransmit": 3}),
            &serde_json::json!({"t3_expiry": 3})
        ]
    );

    let (code, text, err) = analyze(&["points", "--point", &mn, "--point", &cn]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains(
            "mn frame 75 at 1795686843.645488000 TSN 3818833099 (transmission 2, t3_expiry)"
        ),
        "{text}"
    );
    assert!(
        text.contains("; 3 retransmissions (3 fast_retransmit), 0 spurious"),
        "{text}"
    );
    assert!(
        text.contains("; 3 retransmissions (3 t3_expiry), 1 spurious"),
        "{text}"
    );
}
