//! `analyze PATH... --out DIR` end to end: directories of good and bad
//! inputs, the tables read back by pyarrow (not the polars writer) and
//! held against the per-file JSON output, and a run killed midway.

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
}

fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(common::repo_root())
        .output()
        .expect("binary runs")
}

/// `analyze INPUT --out OUT -q EXTRA...`, which must succeed.
fn analyze_into(input: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "analyze",
        input.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "-q",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    o
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn copy_run(scenario: &str, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    let from = common::repo_root().join("sample-captures").join(scenario);
    for f in [
        "mn.pcap",
        "cn.pcap",
        "meta.json",
        "scenario.toml",
        "events.jsonl",
    ] {
        std::fs::copy(from.join(f), to.join(f)).expect("copy");
    }
}

#[test]
fn a_directory_of_good_and_bad_files_is_analysed_and_every_bad_one_named() {
    let dir = common::tempdir("batch-bad");
    let archive = dir.join("archive");
    copy_run("koh-kim-1", &archive.join("koh-kim-1"));
    copy_run(
        "bokor-failover",
        &archive.join("nested/deeper/bokor-failover"),
    );
    common::gzip(
        &common::sample("honda-dad", "mn"),
        &archive.join("honda-dad-mn.pcap.gz"),
    );
    // No extension: recognised by its magic number alone.
    std::fs::copy(
        common::sample("koh-kim-2", "cn"),
        archive.join("capture-without-extension"),
    )
    .expect("copy");
    let whole = std::fs::read(common::sample("koh-kim-2", "mn")).expect("read");
    std::fs::write(archive.join("cut.pcap"), &whole[..whole.len() / 2]).expect("write");
    let mut corrupt = whole[..24].to_vec();
    corrupt.extend_from_slice(&[0xff; 200]);
    std::fs::write(archive.join("corrupt.pcap"), corrupt).expect("write");
    std::fs::write(archive.join("empty.pcap"), b"").expect("write");
    std::fs::write(archive.join("fake.pcapng"), b"this is a text file").expect("write");
    std::fs::write(archive.join("notes.txt"), b"campaign notes\n").expect("write");
    let out = dir.join("tables");

    let o = run(&[
        "analyze",
        archive.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "-j",
        "2",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    for bad in [
        "corrupt.pcap",
        "empty.pcap",
        "fake.pcapng",
        "cut.pcap",
        "notes.txt",
    ] {
        assert!(err.contains(bad), "{bad} named in the log: {err}");
    }
    assert!(!err.contains("panick"), "{err}");

    let files = common::read_table(&out, "files");
    let status: BTreeMap<String, (String, Value)> = files
        .iter()
        .map(|r| {
            let source = r["source"].as_str().expect("source");
            let name = Path::new(source)
                .strip_prefix(&archive)
                .expect("under the archive")
                .display()
                .to_string();
            (
                name,
                (
                    r["status"].as_str().expect("status").to_string(),
                    r["error"].clone(),
                ),
            )
        })
        .collect();
    let expect = [
        ("capture-without-extension", "ok"),
        ("corrupt.pcap", "truncated"),
        ("cut.pcap", "truncated"),
        ("empty.pcap", "failed"),
        ("fake.pcapng", "failed"),
        ("honda-dad-mn.pcap.gz", "ok"),
        ("koh-kim-1/cn.pcap", "ok"),
        ("koh-kim-1/mn.pcap", "ok"),
        ("nested/deeper/bokor-failover/cn.pcap", "ok"),
        ("nested/deeper/bokor-failover/mn.pcap", "ok"),
        ("notes.txt", "skipped"),
    ];
    let got: Vec<(&str, &str)> = status
        .iter()
        .map(|(k, v)| (k.as_str(), v.0.as_str()))
        .collect();
    assert_eq!(got, expect, "{status:?}");
    for (name, (s, error)) in &status {
        assert_eq!(
            s == "ok",
            error.is_null(),
            "{name}: error iff not ok: {error}"
        );
    }
    assert!(status["empty.pcap"]
        .1
        .as_str()
        .unwrap_or("")
        .contains("empty file"));
    assert!(status["cut.pcap"]
        .1
        .as_str()
        .unwrap_or("")
        .contains("ends inside record"));
    // A truncated file yields what it holds: its associations are there.
    let assocs = common::read_table(&out, "associations");
    assert!(assocs
        .iter()
        .any(|r| r["source"].as_str().unwrap_or("").ends_with("cut.pcap")));
    // The harness's files beside a capture become columns.
    let handovers = common::read_table(&out, "handovers");
    let koh = handovers
        .iter()
        .find(|r| {
            r["source"]
                .as_str()
                .unwrap_or("")
                .ends_with("koh-kim-1/mn.pcap")
        })
        .expect("koh-kim-1 handover");
    assert_eq!(koh["scenario"], "koh-kim-1");
    assert_eq!(koh["capture_side"], "mn");
    assert_eq!(koh["capture_point"], "mn");
    // Every frame of every analysed file counted in exactly one category.
    for r in &files {
        if r["frames"].is_null() {
            continue;
        }
        let sum: u64 = r
            .as_object()
            .expect("row")
            .iter()
            .filter(|(k, _)| k.starts_with("frames_"))
            .map(|(_, v)| v.as_u64().expect("count"))
            .sum();
        assert_eq!(Some(sum), r["frames"].as_u64(), "{}", r["source"]);
    }
}

/// The per-file JSON lines of `analyze --format json FILE`, by record kind.
fn json_records(file: &Path) -> BTreeMap<String, Vec<Value>> {
    let o = run(&["analyze", "--format", "json", file.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut by_kind: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in text(&o.stdout).lines() {
        let v: Value = serde_json::from_str(line).expect("JSON line");
        let kind = v["record"].as_str().expect("record").to_string();
        by_kind.entry(kind).or_default().push(v);
    }
    by_kind
}

fn rows_of<'a>(rows: &'a [Value], source: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["source"] == source).collect()
}

fn close(a: &Value, b: &Value, what: &str) {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => assert!((x - y).abs() < 1e-9, "{what}: {x} vs {y}"),
        _ => assert_eq!(a.is_null(), b.is_null(), "{what}: {a} vs {b}"),
    }
}

#[test]
fn the_tables_hold_the_numbers_of_the_per_file_json() {
    let dir = common::tempdir("batch-json");
    let out = dir.join("tables");
    analyze_into(Path::new("sample-captures"), &out, &[]);
    let files = common::read_table(&out, "files");
    let associations = common::read_table(&out, "associations");
    let paths = common::read_table(&out, "paths");
    let handovers = common::read_table(&out, "handovers");
    let asconf = common::read_table(&out, "asconf");
    let events = common::read_table(&out, "events");
    let samples = common::all_samples();
    assert_eq!(
        files.iter().filter(|r| r["status"] == "ok").count(),
        samples.len()
    );
    let mut checked_handovers = 0;
    for capture in samples {
        let source = capture
            .strip_prefix(common::repo_root())
            .expect("in repo")
            .display()
            .to_string();
        let json = json_records(&capture);
        let file = &json["file"][0];
        let f = rows_of(&files, &source);
        assert_eq!(f.len(), 1, "{source}");
        assert_eq!(f[0]["frames"], file["frames"], "{source}");
        assert_eq!(f[0]["frames_sctp"], file["accounting"]["sctp"], "{source}");
        assert_eq!(
            f[0]["frames_not_sctp"], file["accounting"]["not_sctp"],
            "{source}"
        );

        let assoc_json = json.get("association").cloned().unwrap_or_default();
        let assoc_rows = rows_of(&associations, &source);
        assert_eq!(assoc_rows.len(), assoc_json.len(), "{source}");
        for a in &assoc_json {
            let r = assoc_rows
                .iter()
                .find(|r| r["association"] == a["id"])
                .expect("association row");
            assert_eq!(r["packets"], a["packets"], "{source}");
            assert_eq!(r["first_frame"], a["first_frame"], "{source}");
            assert_eq!(r["end"], a["end"], "{source}");
            let path_rows = rows_of(&paths, &source);
            for p in a["paths"].as_array().expect("paths") {
                let r = path_rows
                    .iter()
                    .find(|r| r["association"] == a["id"] && r["path"] == p["id"])
                    .expect("path row");
                for (col, field) in [
                    ("packets", "packets"),
                    ("bytes", "bytes"),
                    ("heartbeats_acked", "heartbeats_acked"),
                    ("data_new", "data_new"),
                ] {
                    assert_eq!(r[col], p[field], "{source} path {} {col}", p["id"]);
                }
                assert_eq!(r["hb_rtt_samples"], p["hb_rtt"]["samples"]);
                close(&r["hb_rtt_min_ms"], &p["hb_rtt"]["min"], "hb_rtt min");
                close(&r["hb_rtt_max_ms"], &p["hb_rtt"]["max"], "hb_rtt max");
                close(&r["srtt_ms"], &p["rto"]["srtt"], "srtt");
            }
        }

        let ho_rows = rows_of(&handovers, &source);
        let ho_json = json.get("handover").cloned().unwrap_or_default();
        assert_eq!(ho_rows.len(), ho_json.len(), "{source}");
        for h in &ho_json {
            let r = ho_rows
                .iter()
                .find(|r| r["switch_frame"] == h["switch_frame"])
                .expect("handover row");
            assert_eq!(r["class"], h["class"], "{source}");
            for c in [
                "data_interrupt",
                "total_handover_latency",
                "network_disconnection",
                "transport_latency",
                "addip_sent",
                "setprim_sent",
                "sender_recovery",
            ] {
                close(&r[format!("{c}_ms")], &h[c]["ms"], &format!("{source} {c}"));
                assert_eq!(
                    r[format!("{c}_from_frame")],
                    h[c]["from"]["frame"],
                    "{source} {c}"
                );
                assert_eq!(
                    r[format!("{c}_missing")].as_str(),
                    h[c]["missing"].as_str(),
                    "{source} {c}"
                );
            }
            close(
                &r["failover_time_ms"],
                &h["failover"]["failover_time"]["ms"],
                "failover",
            );
            assert_eq!(
                r["failover_observed_pmr"], h["failover"]["observed_pmr"],
                "{source}"
            );
            checked_handovers += 1;
        }

        let ev = json.get("event").cloned().unwrap_or_default();
        let asconf_frames: BTreeSet<u64> = ev
            .iter()
            .filter(|e| e["event"] == "asconf")
            .map(|e| e["frame"].as_u64().expect("frame"))
            .collect();
        let table_frames: BTreeSet<u64> = rows_of(&asconf, &source)
            .iter()
            .map(|r| r["frame"].as_u64().expect("frame"))
            .collect();
        assert_eq!(asconf_frames, table_frames, "{source}");
        for e in ev.iter().filter(|e| e["event"] == "asconf_ack") {
            if let Some(req) = e["request_frame"].as_u64() {
                let r = rows_of(&asconf, &source)
                    .into_iter()
                    .find(|r| r["frame"].as_u64() == Some(req))
                    .expect("asconf row");
                assert_eq!(r["ack_frame"], e["frame"], "{source}");
                close(&r["rtt_ms"], &e["rtt_ms"], "asconf rtt");
            }
        }
        let hb_json = ev
            .iter()
            .filter(|e| e["event"] == "heartbeat_ack" && !e["rtt_ms"].is_null())
            .count();
        let hb_rows = rows_of(&events, &source)
            .iter()
            .filter(|r| r["event"] == "heartbeat" && !r["rtt_ms"].is_null())
            .count();
        assert_eq!(hb_json, hb_rows, "{source}");
    }
    assert!(checked_handovers >= 16, "{checked_handovers}");
}

/// Rows of every table, sorted, without the columns that measure the run.
fn dataset_contents(dir: &Path) -> BTreeMap<&'static str, Vec<String>> {
    let mut all = BTreeMap::new();
    for t in common::TABLES {
        let mut rows: Vec<String> = common::read_table(dir, t)
            .into_iter()
            .map(|mut r| {
                if let Some(o) = r.as_object_mut() {
                    o.remove("analysis_seconds");
                }
                r.to_string()
            })
            .collect();
        rows.sort();
        all.insert(t, rows);
    }
    all
}

fn hidden_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for d in std::fs::read_dir(dir)
        .expect("dataset")
        .filter_map(Result::ok)
    {
        if let Ok(files) = std::fs::read_dir(d.path()) {
            for f in files.filter_map(Result::ok) {
                if f.file_name().to_string_lossy().starts_with('.') {
                    found.push(f.path());
                }
            }
        }
    }
    found
}

#[test]
fn a_run_killed_midway_and_rerun_gives_the_tables_of_an_uninterrupted_run() {
    let dir = common::tempdir("batch-kill");
    let archive = dir.join("archive");
    for i in 0..6 {
        for s in [
            "koh-kim-1",
            "bokor-failover",
            "honda-dad",
            "eklund-sack-delay",
        ] {
            copy_run(s, &archive.join(format!("copy{i}/{s}")));
        }
    }
    let inputs = 6 * 4 * 2;
    let whole = dir.join("whole");
    analyze_into(&archive, &whole, &[]);

    let killed = dir.join("killed");
    let mut child = bin()
        .args([
            "analyze",
            archive.to_str().expect("utf-8"),
            "--out",
            killed.to_str().expect("utf-8"),
            "-q",
            "-j",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let done = |d: &Path| {
        std::fs::read_dir(d.join("_inputs")).map_or(0, |r| {
            r.filter_map(Result::ok)
                .filter(|f| !f.file_name().to_string_lossy().starts_with('.'))
                .count()
        })
    };
    let started = std::time::Instant::now();
    while done(&killed) < 3 && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().expect("kill");
    child.wait().expect("reaped");
    let finished_before = done(&killed);
    assert!(
        (3..inputs).contains(&finished_before),
        "killed midway: {finished_before} of {inputs} inputs complete"
    );

    let o = analyze_into(&archive, &killed, &[]);
    let summary = text(&o.stdout);
    assert!(
        summary.contains(&format!("{finished_before} already complete")),
        "the rerun skips what was complete: {summary}"
    );
    assert!(
        hidden_files(&killed).is_empty(),
        "temporaries left: {:?}",
        hidden_files(&killed)
    );
    assert_eq!(dataset_contents(&killed), dataset_contents(&whole));

    // A third run has nothing to do; --force redoes everything, same tables.
    let o = analyze_into(&archive, &killed, &["--force"]);
    assert!(!text(&o.stdout).contains("already complete"));
    assert_eq!(dataset_contents(&killed), dataset_contents(&whole));
}

/// A table that could not be written (here its directory's name taken by
/// a file, as a full disk or a lost mount would fail it) fails the input
/// with the reason, and does not complete it: the next run analyses it
/// again rather than reusing the failure, and gives the tables of a run
/// that never failed.
#[test]
fn an_input_whose_tables_could_not_be_written_is_analysed_again() {
    let dir = common::tempdir("batch-write-error");
    let archive = dir.join("archive");
    for s in ["koh-kim-1", "bokor-failover"] {
        copy_run(s, &archive.join(s));
    }
    let whole = dir.join("whole");
    analyze_into(&archive, &whole, &[]);

    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    let blocker = out.join("asconf");
    std::fs::write(&blocker, b"not a directory").expect("write");
    let o = run(&[
        "analyze",
        archive.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "-q",
    ]);
    assert!(!o.status.success(), "a failed input fails the run");
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(stdout.contains("0 ok, 0 truncated, 4 failed"), "{stdout}");
    let mn = archive.join("koh-kim-1/mn.pcap");
    assert!(
        stderr.contains(&format!(
            "{}: writing tables: cannot create {}",
            mn.display(),
            blocker.display()
        )),
        "{stderr}"
    );

    std::fs::remove_file(&blocker).expect("rm");
    let o = analyze_into(&archive, &out, &[]);
    let stdout = text(&o.stdout);
    assert!(stdout.contains("4 ok, 0 truncated, 0 failed"), "{stdout}");
    assert!(!stdout.contains("already complete"), "{stdout}");
    assert_eq!(dataset_contents(&out), dataset_contents(&whole));
    let o = analyze_into(&archive, &out, &[]);
    assert!(text(&o.stdout).contains("4 already complete"));
}

#[test]
fn shards_split_the_inputs_and_write_one_dataset() {
    let dir = common::tempdir("batch-shard");
    let out = dir.join("tables");
    for shard in ["1/3", "2/3", "3/3"] {
        analyze_into(Path::new("sample-captures"), &out, &["--shard", shard]);
    }
    let whole = dir.join("whole");
    analyze_into(Path::new("sample-captures"), &whole, &[]);
    assert_eq!(dataset_contents(&out), dataset_contents(&whole));
    let o = run(&["analyze", "sample-captures", "--out", "x", "--shard", "4/3"]);
    assert_eq!(o.status.code(), Some(2), "bad shard is a usage error");
}

/// A table of a dataset read by pyarrow (tests/read_tables.py, `reader`
/// parquet, csv or json): one JSON line a row.
fn read_table(dataset: &Path, table: &str, reader: &str) -> Vec<String> {
    let py = common::python()
        .arg(common::repo_root().join("tests/read_tables.py"))
        .args([dataset.to_str().expect("utf-8"), table, reader])
        .output()
        .expect("python3");
    assert!(py.status.success(), "{}", text(&py.stderr));
    text(&py.stdout).lines().map(str::to_owned).collect()
}

/// The codec of every column chunk of every Parquet part of a table, as
/// pyarrow reads it from the files' metadata.
fn parquet_codecs(dataset: &Path, table: &str) -> BTreeSet<String> {
    let py = common::python()
        .args([
            "-c",
            "import glob, sys, pyarrow.parquet as pq\n\
             for f in sorted(glob.glob(sys.argv[1] + '/*.parquet')):\n\
             \x20   m = pq.ParquetFile(f).metadata\n\
             \x20   for g in range(m.num_row_groups):\n\
             \x20       for c in range(m.num_columns):\n\
             \x20           print(m.row_group(g).column(c).compression)",
        ])
        .arg(dataset.join(table))
        .output()
        .expect("python3");
    assert!(py.status.success(), "{}", text(&py.stderr));
    text(&py.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn parquet_compression_sets_the_codec_of_every_page_and_keeps_the_rows() {
    let dir = common::tempdir("batch-codecs");
    let mut rows = BTreeMap::new();
    for (arg, codec) in [
        (None, "SNAPPY"),
        (Some("zstd"), "ZSTD"),
        (Some("lz4"), "LZ4"),
        (Some("none"), "UNCOMPRESSED"),
    ] {
        let out = dir.join(arg.unwrap_or("default"));
        let extra: Vec<&str> = arg.map_or(vec![], |a| vec!["--parquet-compression", a]);
        analyze_into(Path::new("sample-captures/koh-kim-1"), &out, &extra);
        for table in ["events", "handovers", "files"] {
            assert_eq!(
                parquet_codecs(&out, table),
                BTreeSet::from([codec.to_owned()]),
                "{table} with {arg:?}"
            );
        }
        let mut lines = read_table(&out, "events", "parquet");
        lines.sort();
        assert!(!lines.is_empty(), "koh-kim-1 has events");
        rows.insert(codec, lines);
    }
    let snappy = &rows["SNAPPY"];
    for (codec, lines) in &rows {
        assert_eq!(lines, snappy, "{codec}: the same event rows as snappy");
    }
}

#[test]
fn csv_and_json_lines_tables() {
    let dir = common::tempdir("batch-formats");
    for (fmt, ext, reader) in [("csv", "csv", "csv"), ("jsonl", "jsonl", "json")] {
        let out = dir.join(fmt);
        analyze_into(
            Path::new("sample-captures/koh-kim-1"),
            &out,
            &["--table-format", fmt],
        );
        let parts: Vec<_> = std::fs::read_dir(out.join("handovers"))
            .expect("dir")
            .filter_map(Result::ok)
            .collect();
        assert_eq!(parts.len(), 2, "one part per capture");
        assert!(parts
            .iter()
            .all(|p| p.file_name().to_string_lossy().ends_with(ext)));
        let rows: Vec<Value> = read_table(&out, "handovers", reader)
            .iter()
            .map(|l| serde_json::from_str(l).expect("row"))
            .collect();
        assert_eq!(rows.len(), 4, "{fmt}: two planned switches per side");
        assert!(rows.iter().all(|r| r["scenario"] == "koh-kim-1"));
    }
}
