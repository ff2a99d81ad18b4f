//! The `sctp-handover` binary as a user runs it.

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
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

#[test]
fn text_summary_names_what_happened() {
    let p = common::sample("koh-kim-1", "mn");
    let (code, out, err) = run(&["analyze", p.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("164 SCTP analysed, 33 not SCTP"), "{out}");
    assert!(
        out.contains("ASCONF-ACK serial 3140169307 for frame 74"),
        "{out}"
    );
    assert!(
        out.contains("new DATA from endpoint 1 moves from path 1 to path 2"),
        "{out}"
    );
}

#[test]
fn a_bad_file_among_good_ones_is_reported_and_the_rest_analysed() {
    let dir = common::tempdir("cli");
    let bad = dir.join("README.md");
    std::fs::write(&bad, "# not a capture").expect("write");
    let good = common::sample("koh-kim-1", "cn");
    let (code, out, err) = run(&[
        "analyze",
        "--format",
        "json",
        bad.to_str().expect("utf-8"),
        good.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 2, "a file that is not a capture gives exit status 2");
    assert!(
        err.contains("README.md") && err.contains("not a pcap or pcapng capture"),
        "{err}"
    );
    assert!(err.contains("23 20 6e 6f"), "names the bytes found: {err}");
    let records: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines on stdout"))
        .collect();
    assert_eq!(records[0]["record"], "header");
    assert_eq!(records[0]["schema"], "sctp-handover/analysis");
    assert_eq!(records[0]["schema_version"], 2);
    let files: Vec<&serde_json::Value> = records.iter().filter(|r| r["record"] == "file").collect();
    assert_eq!(files.len(), 2);
    assert!(files[0]["error"]
        .as_str()
        .expect("error")
        .contains("README.md"));
    let f = files[1];
    let frames = f["frames"].as_u64().expect("frames");
    let counted: u64 = f["accounting"]
        .as_object()
        .expect("accounting")
        .values()
        .map(|v| v.as_u64().expect("count"))
        .sum();
    assert_eq!(counted, frames, "every frame in exactly one category");
    // Events carry frame numbers and exact epoch times (tshark's
    // frame.time_epoch format).
    let asconf = records
        .iter()
        .find(|e| e["record"] == "event" && e["event"] == "asconf")
        .expect("an ASCONF event");
    // Checked with tshark -e frame.number -e frame.time_epoch.
    assert_eq!(asconf["frame"], 60);
    assert_eq!(asconf["time"], "1795343548.254135000");
    assert_eq!(asconf["requests"][0]["op"], "add_ip");
}

#[test]
fn truncated_input_warns_but_succeeds() {
    let dir = common::tempdir("cli-trunc");
    let bytes = std::fs::read(common::sample("koh-kim-1", "mn")).expect("read");
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let (code, out, err) = run(&["analyze", cut.to_str().expect("utf-8")]);
    assert_eq!(code, 0);
    assert!(
        err.contains("warning") && err.contains("cut.pcap") && err.contains("truncated"),
        "{err}"
    );
    assert!(out.contains("association 0"), "{out}");
}

#[test]
fn usage_errors_are_explained() {
    let (code, _, err) = run(&["analyze"]);
    assert_eq!(code, 2);
    assert!(err.contains("<PATH>"), "{err}");
}

#[test]
fn a_capture_filter_keeps_what_it_matches_and_a_bad_one_is_named() {
    let sample = common::sample("koh-kim-1", "mn");
    let sample = sample.to_str().expect("utf-8");
    let (code, out, err) = run(&["analyze", sample, "--filter", "host 198.51.100.102"]);
    assert_eq!(code, 0, "{err}");
    // The new address's packets only: 77 of 197 frames (tcpdump agrees,
    // live/tests/filter.rs), and no handover left to see.
    assert!(
        out.contains("77 SCTP analysed, 120 filtered out (--filter)"),
        "{out}"
    );
    let (code, out, err) = run(&["analyze", sample, "--filter", "sctp port banana"]);
    assert_eq!(code, 2);
    assert!(out.is_empty(), "nothing read: {out}");
    assert!(
        err.contains("filter `sctp port banana`: unknown port 'banana'"),
        "{err}"
    );
}

#[test]
fn the_tables_doc_matches_the_schema() {
    let (code, reference, err) = run(&["tables-reference"]);
    assert_eq!(code, 0, "{err}");
    let doc = std::fs::read_to_string(common::repo_root().join("docs/tables.md"))
        .expect("docs/tables.md");
    assert!(
        doc.ends_with(&reference),
        "docs/tables.md's column reference is stale: regenerate it with `sctp-handover tables-reference`"
    );
    for table in common::TABLES {
        assert!(reference.contains(&format!("## `{table}`")), "{table}");
    }
}
