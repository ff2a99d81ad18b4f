//! The `sctp-handover` binary as a user runs it.

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
        "jsonl",
        bad.to_str().expect("utf-8"),
        good.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 1, "a file that is not a capture gives exit status 1");
    assert!(
        err.starts_with("sctp-handover: error: ")
            && err.contains("README.md")
            && err.contains("not a pcap or pcapng capture"),
        "{err}"
    );
    assert!(err.contains("23 20 6e 6f"), "names the bytes found: {err}");
    let records: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines on stdout"))
        .collect();
    assert_eq!(records[0]["record"], "header");
    assert_eq!(records[0]["schema"], "sctp-handover/analysis");
    assert_eq!(records[0]["schema_version"], 3);
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
    assert!(
        err.starts_with("sctp-handover: error: the following required arguments"),
        "{err}"
    );
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
    assert_eq!(
        err,
        "sctp-handover: error: filter `sctp port banana`: unknown port 'banana'\n"
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

/// `analyze --format jsonl` of what `feed` writes to its standard output,
/// piped into the binary's standard input as `-`.
fn analyze_piped(mut feed: Command, extra: &[&str]) -> (i32, String, String) {
    let mut feeder = feed
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the feeding tool runs");
    let pipe = feeder.stdout.take().expect("its standard output");
    let out = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(["analyze", "--format", "jsonl"])
        .args(extra)
        .arg("-")
        .stdin(Stdio::from(pipe))
        .output()
        .expect("binary runs");
    assert!(feeder.wait().expect("feeder ends").success(), "{feed:?}");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// The JSON lines of `analyze --format jsonl FILE`, with FILE named `-` as
/// standard input is.
fn analyzed_as_stdin(file: &Path) -> String {
    let file = file.to_str().expect("utf-8");
    let (code, out, err) = run(&["analyze", "--format", "jsonl", file]);
    assert_eq!(code, 0, "{err}");
    let named = format!("\"{file}\"");
    assert!(out.contains(&named), "the file is named in its records");
    out.replace(&named, "\"-\"")
}

/// A capture outside its harness run directory (standard input has no
/// events.jsonl or capture side beside it, so the file must not either).
fn lone_sample(dir: &Path, name: &str, side: &str) -> PathBuf {
    let lone = dir.join(format!("{name}-{side}.pcap"));
    std::fs::copy(common::sample(name, side), &lone).expect("copy");
    lone
}

#[test]
fn standard_input_from_tcpdump_and_tshark_gives_the_file_s_json_lines() {
    let dir = common::tempdir("cli-stdin");
    for (name, side) in [("koh-kim-1", "mn"), ("bokor-failover", "cn")] {
        let file = lone_sample(&dir, name, side);
        let expected = analyzed_as_stdin(&file);
        // Every record of the file, the file record included (frames,
        // accounting, times), not just the same count.
        assert!(expected.lines().count() > 10, "{expected}");
        // tcpdump writes pcap to a pipe, as in `tcpdump -i IFACE -w - | …`.
        let mut tcpdump = Command::new("tcpdump");
        tcpdump.args(["-r", file.to_str().expect("utf-8"), "-w", "-"]);
        let (code, out, err) = analyze_piped(tcpdump, &[]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, expected, "tcpdump -w - of {name} {side}");
        // tshark writes pcapng.
        let mut tshark = Command::new("tshark");
        tshark.args([
            "-r",
            file.to_str().expect("utf-8"),
            "-F",
            "pcapng",
            "-w",
            "-",
        ]);
        let (code, out, err) = analyze_piped(tshark, &[]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            out,
            expected.replace(r#""format":"pcap""#, r#""format":"pcapng""#),
            "tshark -F pcapng -w - of {name} {side}"
        );
    }
}

#[test]
fn standard_input_reads_gzip_and_zcat_output() {
    let dir = common::tempdir("cli-stdin-gz");
    let file = lone_sample(&dir, "koh-kim-2", "mn");
    let gz = dir.join("koh-kim-2-mn.pcap.gz");
    common::gzip(&file, &gz);
    let gz = gz.to_str().expect("utf-8");
    // zcat F.gz | analyze -: the capture itself.
    let mut zcat = Command::new("zcat");
    zcat.arg(gz);
    let (code, out, err) = analyze_piped(zcat, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, analyzed_as_stdin(&file));
    // cat F.gz | analyze -: gzip looked through, as for the file.
    let mut cat = Command::new("cat");
    cat.arg(gz);
    let (code, out, err) = analyze_piped(cat, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, analyzed_as_stdin(Path::new(gz)));
    assert!(out.contains(r#""compressed":true"#), "{out}");
}

#[test]
fn standard_input_that_is_not_a_capture_fails_with_status_1() {
    let mut echo = Command::new("echo");
    echo.arg("hello");
    let (code, out, err) = analyze_piped(echo, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "sctp-handover: error: -: not a pcap or pcapng capture (file starts with bytes 68 65 6c 6c \"hello.\")\n"
    );
    let file = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
        .find(|r| r["record"] == "file")
        .expect("a file record for -");
    assert_eq!(file["source"], "-");
    assert!(file["error"]
        .as_str()
        .expect("error")
        .contains("not a pcap"));
    // Twice is a usage error: a pipe can be read once.
    let (code, out, err) = run(&["analyze", "-", "-"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "sctp-handover: error: `-` (standard input) is given more than once; it can be read once\n"
    );
}

#[test]
fn standard_input_into_tables_and_a_report() {
    let dir = common::tempdir("cli-stdin-out");
    let file = lone_sample(&dir, "koh-kim-1", "mn");
    let feed = || Stdio::from(std::fs::File::open(&file).expect("open"));
    let out = dir.join("tables");
    let analyze = |out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
            .args(["analyze", "-", "-q", "--out", out.to_str().expect("utf-8")])
            .stdin(feed())
            .output()
            .expect("binary runs")
    };
    for round in ["first", "second"] {
        let o = analyze(&out);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Standard input is never taken as already complete: the second
        // run reads it again.
        assert!(
            stdout.starts_with("1 inputs (1 captures, 0.0 MB)")
                && stdout.contains(": 1 ok, 0 truncated, 0 failed, 0 skipped (not captures)\n")
                && !stdout.contains("already complete"),
            "{round}: {stdout}"
        );
    }
    let files = common::read_table(&out, "files");
    assert_eq!(files.len(), 1, "one input, replaced: {files:?}");
    assert_eq!(files[0]["source"], "-");
    assert_eq!(files[0]["frames"], 197);
    let handovers = common::read_table(&out, "handovers");
    assert_eq!(handovers.len(), 2);

    // The report reads each capture twice: standard input is kept in its
    // assets, and named so.
    let html = dir.join("r.html");
    let o = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(["report", "-", "-q", "-o", html.to_str().expect("utf-8")])
        .stdin(feed())
        .output()
        .expect("binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let kept = dir.join("r-assets/stdin.pcap");
    assert_eq!(
        std::fs::read(&kept).expect("kept"),
        std::fs::read(&file).expect("sample")
    );
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("r-assets/stdin.pcap"), "the capture is named");
    assert!(page.contains("1 inputs (1 capture analysed now"), "summary");
}

/// The first line of standard error, and the status, of a run.
fn refused(args: &[&str]) -> (i32, String) {
    let (code, out, err) = run(args);
    assert!(
        out.is_empty(),
        "{args:?}: nothing on standard output: {out}"
    );
    (code, err.lines().next().unwrap_or_default().to_string())
}

#[test]
fn usage_and_option_errors_are_status_2_in_one_format() {
    let sample = common::sample("koh-kim-1", "mn");
    let sample = sample.to_str().expect("utf-8");
    for (args, first_line) in [
        (
            vec!["analyze", sample, "--bogus"],
            "sctp-handover: error: unexpected argument '--bogus' found",
        ),
        (
            vec!["analyze", sample, "--format", "xml"],
            "sctp-handover: error: invalid value 'xml' for '--format <FORMAT>'",
        ),
        (
            vec!["analyze", sample, "--shard", "4/3"],
            "sctp-handover: error: invalid value '4/3' for '--shard <I/N>': 4/3: need 1 ≤ I ≤ N",
        ),
        (
            vec!["analyze", sample, "--rto-min-ms", "2000", "--rto-max-ms", "1000"],
            "sctp-handover: error: --rto-min-ms 2000 is above --rto-max-ms 1000 (RFC 9260 §6.3.1: RTO.Min ≤ RTO.Max)",
        ),
        (
            vec!["report", sample, "--group", "nonsense", "-o", "/nonexistent/x.html"],
            "sctp-handover: error: --group nonsense: expected NAME=GLOB",
        ),
        (
            vec!["report", "-", "-", "-o", "/nonexistent/x.html"],
            "sctp-handover: error: `-` (standard input) is given more than once; it can be read once",
        ),
        (
            vec!["watch", "--follow", sample, "--filter", "sctp port banana"],
            "sctp-handover: error: filter `sctp port banana`: unknown port 'banana'",
        ),
        (
            vec!["watch", "--follow", sample, "-i", "lo"],
            "sctp-handover: error: the argument '--follow <PATH>' cannot be used with '--interface <IFACE>'",
        ),
        (
            vec!["no-such-command"],
            "sctp-handover: error: unrecognized subcommand 'no-such-command'",
        ),
    ] {
        let (code, line) = refused(&args);
        assert_eq!((code, line.as_str()), (2, first_line), "{args:?}");
    }
    // An --events file that cannot be read is an option error too.
    let (code, line) = refused(&["analyze", sample, "--events", "/nonexistent/events.jsonl"]);
    assert_eq!(code, 2);
    assert!(
        line.starts_with("sctp-handover: error: ") && line.contains("/nonexistent/events.jsonl"),
        "{line}"
    );
}

#[test]
fn a_followed_file_that_is_not_a_capture_is_status_1() {
    let dir = common::tempdir("cli-watch-bad");
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "not a capture\n").expect("write");
    let (code, _, err) = run(&[
        "watch",
        "--follow",
        notes.to_str().expect("utf-8"),
        "--idle-exit",
        "0.2",
    ]);
    assert_eq!(code, 1, "{err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("sctp-handover: error: ")
            && first.contains("notes.txt: not a pcap or pcapng capture"),
        "{err}"
    );
}

#[test]
fn a_reader_that_stops_early_ends_the_run_quietly() {
    // 384 KB of JSON lines, far past a pipe's 64 KiB: the writes after the
    // reader closed its end fail with EPIPE.
    let mut child = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(["analyze", "--format", "jsonl", "-j", "1"])
        .arg(common::repo_root().join("sample-captures"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut first = [0u8; 64];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("the first bytes");
    // The pipe's read end is closed here, as `| head -c 64` does.
    let out = child.wait_with_output().expect("ends");
    assert!(first.starts_with(br#"{"record":"header""#));
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .all(|l| l.starts_with("sctp-handover: skipped ")),
        "no error for the closed pipe: {err}"
    );
}

#[test]
fn help_documents_the_exit_statuses() {
    for args in [
        &["--help"][..],
        &["analyze", "--help"],
        &["report", "--help"],
        &["watch", "--help"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 0, "{err}");
        for line in [
            "Exit status:",
            "  0  every input was read and everything written",
            "  1  some inputs failed or were left out",
            "  2  usage or option error",
            "Errors are printed to standard error as `sctp-handover: error: WHAT`.",
        ] {
            assert!(out.contains(line), "{args:?} --help: {line}\n{out}");
        }
    }
}

#[test]
fn option_spellings_are_shared_and_old_ones_still_work() {
    let sample = common::sample("koh-kim-1", "cn");
    let sample = sample.to_str().expect("utf-8");
    // JSON lines are `jsonl` everywhere: analyze --format, watch --format,
    // --table-format; `json` (analyze's former spelling) gives the same.
    let (code, jsonl, _) = run(&["analyze", "--format", "jsonl", sample]);
    assert_eq!(code, 0);
    let (code, json, _) = run(&["analyze", "--format", "json", sample]);
    assert_eq!(code, 0);
    assert_eq!(json, jsonl);
    let (_, analyze_help, _) = run(&["analyze", "--help"]);
    let (_, watch_help, _) = run(&["watch", "--help"]);
    for help in [&analyze_help, &watch_help] {
        assert!(help.contains("--format <FORMAT>"), "{help}");
        assert!(help.contains("jsonl:"), "{help}");
        assert!(
            !help.contains("json:"),
            "the old spelling is hidden: {help}"
        );
        assert!(help.contains("--table-format <FORMAT>"), "{help}");
    }
    // -w is --write, as tcpdump's -w.
    assert!(
        watch_help.contains("-w, --write <FILE.pcapng>"),
        "{watch_help}"
    );
    let (_, report_help, _) = run(&["report", "--help"]);
    for help in [&analyze_help, &report_help] {
        assert!(help.contains("-o, --output <"), "{help}");
        assert!(help.contains("-j, --jobs <N>"), "{help}");
    }
    for help in [&analyze_help, &report_help, &watch_help] {
        assert!(help.contains("-q, --quiet"), "{help}");
    }
}

#[test]
fn man_pages_and_completions_come_from_the_command_line() {
    let dir = common::tempdir("cli-man");
    let (code, _, err) = run(&["generate", "man", dir.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .expect("pages")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    // One per subcommand shown in --help; hidden ones (generate,
    // tables-reference) have none.
    let (_, help, _) = run(&["--help"]);
    let mut expected: Vec<String> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(|name| format!("sctp-handover-{name}.1"))
        .chain(["sctp-handover.1".to_string()])
        .collect();
    expected.sort();
    for name in ["analyze", "report", "watch"] {
        assert!(
            expected.contains(&format!("sctp-handover-{name}.1")),
            "{help}"
        );
    }
    assert!(!help.contains("generate") && !help.contains("tables-reference"));
    assert_eq!(pages, expected);
    let man = Command::new("man")
        .args(["-l", "-P", "cat"])
        .arg(dir.join("sctp-handover-analyze.1"))
        .env("MANWIDTH", "100")
        .output()
        .expect("man runs");
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(
        man.status.success(),
        "{}",
        String::from_utf8_lossy(&man.stderr)
    );
    assert!(page.contains("sctp-handover-analyze"), "{page}");
    assert!(page.contains("--format"), "{page}");
    // --help's exit statuses, as a section of their own, one entry each.
    let statuses: Vec<&str> = page
        .lines()
        .skip_while(|l| *l != "EXIT STATUS")
        .map(str::trim)
        .filter(|l| l.starts_with(['0', '1', '2']))
        .collect();
    assert_eq!(statuses.len(), 3, "{page}");
    assert_eq!(
        statuses[0].split_whitespace().collect::<Vec<_>>().join(" "),
        "0 every input was read and everything written"
    );
    assert!(
        statuses[2].starts_with("2      usage or option error"),
        "{page}"
    );

    let (code, script, err) = run(&["generate", "completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    let file = dir.join("sctp-handover.bash");
    std::fs::write(&file, script).expect("write");
    let bash = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; complete -p sctp-handover",
            file.display()
        ))
        .output()
        .expect("bash runs");
    let registered = String::from_utf8_lossy(&bash.stdout);
    assert!(
        bash.status.success(),
        "{}",
        String::from_utf8_lossy(&bash.stderr)
    );
    assert!(registered.contains("sctp-handover"), "{registered}");
    // A subcommand's options complete (`sctp-handover analyze --form<TAB>`),
    // not only the subcommands (clap_complete's hyphenated-name bug).
    let bash = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; COMP_WORDS=(sctp-handover analyze --form); COMP_CWORD=2; \
             _sctp__handover sctp-handover --form analyze; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display()
        ))
        .output()
        .expect("bash runs");
    let offered = String::from_utf8_lossy(&bash.stdout);
    assert_eq!(
        offered.trim(),
        "--format",
        "{}",
        String::from_utf8_lossy(&bash.stderr)
    );
    for shell in ["zsh", "fish"] {
        let (code, script, err) = run(&["generate", "completions", shell]);
        assert_eq!(code, 0, "{err}");
        assert!(
            script.contains("analyze") && script.contains("--format"),
            "{shell}"
        );
    }
}
