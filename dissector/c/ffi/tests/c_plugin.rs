//! The C plugin (built with the Wireshark plugin SDK, this crate linked in)
//! run by the real tshark: the same `-T fields` output as the Lua plugin on
//! every sample capture; a capture read from a pipe (no file name, so
//! analysed frame by frame) annotated as the named file; broken captures
//! handled as plain tshark handles them, malformed SCTP marked; installed
//! where the Wireshark it was built against looks, with its version, the
//! fields the descriptors give (as the Lua tier's) and the Lua tier's
//! statistics (`-z sctpho`). Wireshark does not load binary plugins for
//! root, so tshark runs as an unprivileged user (created when the test runs
//! as root, as in CI).

#[path = "../../../../analyzer/tests/common/mod.rs"]
mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use sctp_handover::handover::COMPONENTS;
use sctpho_ffi::Analysis;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

const TEST_USER: &str = "sctpho-test";

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("command runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn is_root() -> bool {
    run(Command::new("id").arg("-u")).trim() == "0"
}

/// Who runs tshark, with the C plugin installed in `home` and not in
/// `plain_home`; `work` holds captures the user can read, and the Lua
/// plugin (the checkout itself may not be readable to the test user, e.g.
/// a clone in a `mktemp -d` directory).
struct Env {
    user: Option<&'static str>,
    home: PathBuf,
    /// Where `build.sh --install` put sctpho.so in `home`.
    installed: PathBuf,
    /// The Lua plugin installed by `make install-plugin` (and no C plugin).
    lua_home: PathBuf,
    /// The C plugin installed, with `sctpho.prescan: FALSE` in the user's
    /// preferences file.
    no_prescan_home: PathBuf,
    plain_home: PathBuf,
    work: PathBuf,
    lua_plugin: PathBuf,
}

/// Builds sctpho.so once and installs it in a home of this test process
/// (not the user's own: other checkouts may be testing theirs).
fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let user = if is_root() {
            if Command::new("id")
                .arg(TEST_USER)
                .output()
                .map_or(true, |o| !o.status.success())
            {
                run(Command::new("useradd").args(["-m", TEST_USER]));
            }
            Some(TEST_USER)
        } else {
            None
        };
        let base = common::process_dir("c-plugin");
        let (home, plain_home, work) = (base.join("home"), base.join("plain"), base.join("work"));
        let no_prescan_home = base.join("no-prescan");
        let install = |h: &Path| {
            let so = run(
                Command::new(common::repo_root().join("dissector/c/build.sh"))
                    .arg("--install")
                    .arg(h.join(".local/lib/wireshark/plugins")),
            );
            PathBuf::from(so.trim())
        };
        let installed = install(&home);
        install(&no_prescan_home);
        let lua_home = base.join("lua-home");
        run(Command::new("make")
            .arg("-C")
            .arg(common::repo_root())
            .arg("--no-print-directory")
            .arg("install-plugin")
            .arg(format!(
                "PLUGIN_DIR={}",
                lua_home.join(".local/lib/wireshark/plugins").display()
            )));
        let prefs = no_prescan_home.join(".config/wireshark");
        std::fs::create_dir_all(&prefs).expect("preferences dir");
        std::fs::write(prefs.join("preferences"), "sctpho.prescan: FALSE\n")
            .expect("preferences file");
        std::fs::create_dir_all(&plain_home).expect("plain home");
        std::fs::create_dir_all(&work).expect("work dir");
        run(Command::new("chmod").arg("755").arg(&base).arg(&work));
        let lua = work.join("lua");
        std::fs::create_dir_all(&lua).expect("lua dir");
        for f in [
            "sctpho.lua",
            "sctpho_core.lua",
            "sctpho_wire.lua",
            "sctpho_fields.lua",
        ] {
            std::fs::copy(common::repo_root().join("dissector").join(f), lua.join(f))
                .expect("copy the Lua plugin");
        }
        run(Command::new("chmod").arg("-R").arg("a+rX").arg(&lua));
        if let Some(u) = user {
            run(Command::new("chown")
                .args(["-R", u])
                .arg(&home)
                .arg(&no_prescan_home)
                .arg(&lua_home)
                .arg(&plain_home));
        }
        run(Command::new("chmod").arg("-R").arg("a+rX").arg(&lua_home));
        Env {
            user,
            home,
            installed,
            lua_home,
            no_prescan_home,
            plain_home,
            lua_plugin: lua.join("sctpho.lua"),
            work,
        }
    })
}

/// A copy of `src` in the work dir, readable by the test user.
fn readable(src: &Path, name: &str) -> PathBuf {
    let dst = env().work.join(name);
    std::fs::copy(src, &dst).expect("copy capture");
    run(Command::new("chmod").arg("644").arg(&dst));
    dst
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tier {
    /// tshark without either plugin.
    Plain,
    C,
    /// The C plugin, its pre-scan turned off in the preferences file.
    CNoPrescanPrefs,
    Lua,
    /// The Lua plugin as `make install-plugin` installs it (not `-X`).
    LuaInstalled,
}

/// Where tshark reads the capture from.
#[derive(Clone, Copy, Debug)]
enum Input<'a> {
    /// None (`-G plugins`).
    Nothing,
    Named(&'a Path),
    /// `-r -` with the file on stdin.
    Pipe(&'a Path),
    /// A live capture: `-i -` (dumpcap reading the file from stdin).
    Live(&'a Path),
}

fn tshark(tier: Tier, input: Input<'_>, args: &[&str]) -> Output {
    let e = env();
    let home = match tier {
        Tier::C => &e.home,
        Tier::CNoPrescanPrefs => &e.no_prescan_home,
        Tier::Plain | Tier::Lua => &e.plain_home,
        Tier::LuaInstalled => &e.lua_home,
    };
    let mut cmd = match e.user {
        Some(u) => {
            let mut c = Command::new("runuser");
            c.args(["-u", u, "--", "env"])
                .arg(format!("HOME={}", home.display()))
                .arg("tshark");
            c
        }
        None => {
            let mut c = Command::new("tshark");
            c.env("HOME", home);
            c
        }
    };
    if tier == Tier::Lua {
        cmd.arg("-X")
            .arg(format!("lua_script:{}", env().lua_plugin.display()));
    }
    match input {
        Input::Nothing => {
            cmd.stdin(Stdio::null());
        }
        Input::Named(p) => {
            cmd.arg("-r").arg(p).stdin(Stdio::null());
        }
        Input::Pipe(p) => {
            cmd.args(["-r", "-"])
                .stdin(std::fs::File::open(p).expect("capture"));
        }
        Input::Live(p) => {
            cmd.args(["-i", "-"])
                .stdin(std::fs::File::open(p).expect("capture"));
        }
    }
    cmd.args(args).output().expect("tshark runs")
}

/// stdout of a run that must succeed.
fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// `-T fields` over the plugin's packets (the columns of
/// [`common::plugin_columns`]), which must succeed.
fn fields_of(tier: Tier, input: Input<'_>, extra: &[&str]) -> String {
    ok(
        fields_run(tier, input, extra),
        &format!("{tier:?} {input:?} {extra:?}"),
    )
}

/// The `-T fields` run, whatever its exit status.
fn fields_run(tier: Tier, input: Input<'_>, extra: &[&str]) -> Output {
    let args = common::plugin_fields_args(extra);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    tshark(tier, input, &refs)
}

/// Every sample capture, and koh-kim-1's mobile-node capture without its
/// ASCONF-ACKs (so with unanswered ASCONFs), as readable copies.
fn captures() -> &'static [(String, PathBuf)] {
    static CAPTURES: OnceLock<Vec<(String, PathBuf)>> = OnceLock::new();
    CAPTURES.get_or_init(copy_captures)
}

fn copy_captures() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for src in common::all_samples() {
        let scenario = src.parent().and_then(|p| p.file_name()).expect("scenario");
        let side = src.file_stem().expect("side");
        let name = format!(
            "{}-{}.pcap",
            scenario.to_string_lossy(),
            side.to_string_lossy()
        );
        out.push((name.clone(), readable(&src, &name)));
    }
    let src = common::sample("koh-kim-1", "mn");
    let acks = common::asconf_ack_frames(
        &analyze_file(&src, &AnalysisOptions::default())
            .expect("analysable")
            .events,
        false,
    );
    assert!(!acks.is_empty());
    let tmp = env().work.join("no-asconf-ack.tmp");
    common::write_without(&tmp, &src, &acks);
    out.push((
        "no-asconf-ack.pcap".into(),
        readable(&tmp, "no-asconf-ack.pcap"),
    ));
    out
}

#[test]
fn c_plugin_matches_the_lua_plugin_on_every_sample() {
    let plugins = ok(
        tshark(Tier::C, Input::Nothing, &["-G", "plugins"]),
        "-G plugins",
    );
    assert!(
        plugins.contains("sctpho.so"),
        "the C plugin is loaded: {plugins}"
    );
    let mut compared = 0;
    for (name, capture) in captures() {
        let c = fields_of(Tier::C, Input::Named(capture), &[]);
        let lua = fields_of(Tier::Lua, Input::Named(capture), &[]);
        assert!(!c.is_empty(), "{name}: C plugin annotated nothing");
        assert_eq!(c, lua, "{name}: C and Lua plugins differ");
        // (Not only on empty columns: honda-* sends its ADD-IP again.)
        if name.starts_with("honda") {
            assert!(
                c.contains("ASCONF retransmission 2 of serial"),
                "{name}: {c}"
            );
        }
        compared += 1;
    }
    assert_eq!(compared, 21);
}

/// `-o` options giving a sample's own sender settings (its meta.json):
/// Path.Max.Retrans, the potentially-failed state and RTO.Max, as
/// preferences of both tiers.
fn own_thresholds(name: &str) -> Option<Vec<String>> {
    let scenario = name.strip_suffix(".pcap")?.rsplit_once('-')?.0;
    let meta = common::repo_root()
        .join("sample-captures")
        .join(scenario)
        .join("meta.json");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(meta).ok()?).expect("meta.json is JSON");
    let sctp = &meta["sctp"];
    let pf = sctp["pf_enable"] == true;
    let mut args = vec![
        format!("sctpho.pmr:{}", sctp["path_max_retrans"].as_u64()?),
        format!("sctpho.pf:{}", if pf { "TRUE" } else { "FALSE" }),
        format!("sctpho.rto_max_ms:{}", sctp["rto_max_ms"].as_u64()?),
    ];
    if pf {
        args.push(format!(
            "sctpho.pf_retrans:{}",
            sctp["pf_retrans"].as_u64().unwrap_or(0)
        ));
    }
    Some(
        args.into_iter()
            .flat_map(|a| ["-o".to_string(), a])
            .collect(),
    )
}

/// With each sample's own Path.Max.Retrans, potentially-failed setting and
/// RTO.Max as preferences (on the command line: the C tier's pre-scan
/// started as tshark loads it, with the defaults, is not taken), the two
/// tiers give the same output, named and piped; the preferences take
/// effect (bokor-failover's CN: its primary inactive at the third expiry
/// with PMR 2 and no potentially-failed state, instead of potentially
/// failed at the first).
#[test]
fn the_tiers_agree_with_each_samples_own_thresholds() {
    let mut changed = 0;
    for (name, capture) in captures() {
        let Some(args) = own_thresholds(name) else {
            continue;
        };
        let extra: Vec<&str> = args.iter().map(String::as_str).collect();
        let c = fields_of(Tier::C, Input::Named(capture), &extra);
        let lua = fields_of(Tier::Lua, Input::Named(capture), &extra);
        assert_eq!(c, lua, "{name} {extra:?}: C and Lua plugins differ");
        let c_pipe = fields_of(Tier::C, Input::Pipe(capture), &extra);
        let lua_pipe = fields_of(Tier::Lua, Input::Pipe(capture), &extra);
        assert_eq!(
            c_pipe, lua_pipe,
            "{name} {extra:?}: C and Lua differ on the pipe"
        );
        if c != fields_of(Tier::C, Input::Named(capture), &[]) {
            changed += 1;
        }
        if name == "bokor-failover-cn.pcap" {
            assert!(c.contains("path_inactive"), "{name}: {c}");
            assert!(!c.contains("path_potentially_failed"), "{name}: {c}");
        }
    }
    assert!(changed > 0, "the thresholds change some output");
}

/// Named file, pre-scanned (`-r FILE`, one pass or `-2`) = the same file
/// analysed frame by frame in two passes (`-2 -o sctpho.prescan:FALSE`);
/// pipe (`-r - < FILE`, one pass: tshark cannot make two over a pipe) =
/// named file frame by frame in one pass = the pre-scanned output without
/// the look-ahead fields (ASCONF-ACK / HEARTBEAT ACK frame on the request)
/// and the unanswered-ASCONF warning; both tiers alike on the pipe.
#[test]
fn c_plugin_reads_a_pipe_as_a_named_file() {
    for (name, capture) in captures() {
        let named = fields_of(Tier::C, Input::Named(capture), &[]);
        let two_pass = fields_of(Tier::C, Input::Named(capture), &["-2"]);
        assert_eq!(two_pass, named, "{name}: -2 changes the pre-scanned output");
        let incremental_two_pass = fields_of(
            Tier::C,
            Input::Named(capture),
            &["-2", "-o", "sctpho.prescan:FALSE"],
        );
        assert_eq!(
            incremental_two_pass, named,
            "{name}: frame by frame in two passes differs from the pre-scan"
        );
        let pipe = fields_of(Tier::C, Input::Pipe(capture), &[]);
        let incremental_one_pass = fields_of(
            Tier::C,
            Input::Named(capture),
            &["-o", "sctpho.prescan:FALSE"],
        );
        assert_eq!(
            pipe, incremental_one_pass,
            "{name}: the pipe differs from the named file read frame by frame"
        );
        assert_eq!(
            pipe,
            common::without_look_ahead(&named, &common::plugin_columns()),
            "{name}: the pipe differs from the named file beyond look-ahead"
        );
        let lua_pipe = fields_of(Tier::Lua, Input::Pipe(capture), &[]);
        assert_eq!(pipe, lua_pipe, "{name}: C and Lua differ on the pipe");
        if name.starts_with("no-asconf-ack") {
            assert!(named.contains(common::NO_ACK), "{name}: {named}");
            assert!(!pipe.contains(common::NO_ACK), "{name}: {pipe}");
        }
    }
    // A live capture (here from a pipe interface) is annotated the same.
    let capture = env().work.join("koh-kim-1-mn.pcap");
    let live = fields_of(Tier::C, Input::Live(&capture), &[]);
    assert_eq!(live, fields_of(Tier::C, Input::Pipe(&capture), &[]), "live");
    // tshark refuses two passes over a pipe, with or without the plugin.
    let plain = tshark(Tier::Plain, Input::Pipe(&capture), &["-2"]);
    let c = tshark(Tier::C, Input::Pipe(&capture), &["-2"]);
    assert!(!plain.status.success());
    assert_eq!(c.status.code(), plain.status.code());
    assert_eq!(c.stderr, plain.stderr);
}

/// The pre-scan started as tshark loads the plugin (the command line names
/// the file and `sctpho` fields) is only taken when the preferences keep
/// the pre-scan on: turned off in the preferences file, the output is the
/// frame-by-frame one (no unanswered-ASCONF warning without look-ahead).
#[test]
fn a_prescan_turned_off_in_the_preferences_file_is_not_taken() {
    let (_, capture) = captures()
        .iter()
        .find(|(name, _)| name == "no-asconf-ack.pcap")
        .expect("the capture without ASCONF-ACKs");
    let capture = capture.as_path();
    let off_in_prefs = fields_of(Tier::CNoPrescanPrefs, Input::Named(capture), &[]);
    let off_on_command_line = fields_of(
        Tier::C,
        Input::Named(capture),
        &["-o", "sctpho.prescan:FALSE"],
    );
    assert_eq!(off_in_prefs, off_on_command_line);
    assert!(!off_in_prefs.contains(common::NO_ACK), "{off_in_prefs}");
    let named = fields_of(Tier::C, Input::Named(capture), &[]);
    assert!(named.contains(common::NO_ACK), "{named}");
}

/// `-T fields` output without the plugins' notes on input they could not
/// decode (worded differently by the two tiers).
fn strip_marks(out: &str) -> String {
    out.lines()
        .map(|l| {
            let (fields, experts) = l.rsplit_once('\t').expect("columns");
            let kept: Vec<&str> = experts
                .split('|')
                .filter(|m| {
                    !(m.starts_with("malformed SCTP")
                        || m.starts_with("SCTP packet cut short")
                        || m.starts_with("plugin could not decode"))
                })
                .collect();
            format!("{fields}\t{}\n", kept.join("|"))
        })
        .collect()
}

/// Frames the analysis marks as input it could not decode.
fn marked_by_the_analyzer(capture: &Path) -> BTreeSet<u64> {
    let mut a = Analysis::prescan(capture).expect("readable capture");
    a.frames()
        .into_iter()
        .filter(|&f| {
            a.describe(f, true)
                .iter()
                .any(|d| d.starts_with("sctpho.expert.malformed:"))
        })
        .collect()
}

/// Broken captures, named (one and two passes) and piped: tshark with the
/// C plugin exits as plain tshark does, says nothing more on stderr, shows
/// no dissector bug, and marks exactly the frames the analyzer finds
/// malformed or cut inside SCTP (every overrunning chunk among them); the
/// pipe is annotated as the named file, and as the Lua plugin does but for
/// random flips.
#[test]
fn c_plugin_survives_hostile_captures() {
    let dir = env().work.join("hostile");
    std::fs::create_dir_all(&dir).expect("dir");
    run(Command::new("chmod").arg("755").arg(&dir));
    for h in common::hostile_captures(&dir, "koh-kim-1", "mn") {
        run(Command::new("chmod").arg("644").arg(&h.path));
        let want = marked_by_the_analyzer(&h.path);
        if h.name == "chunk-overrun" {
            let overrun: BTreeSet<u64> = h.overrun.iter().copied().collect();
            assert_eq!(want, overrun, "{}: overrunning chunks", h.name);
        }
        if h.name.starts_with("snaplen") || h.name == "byte-flips" {
            assert!(!want.is_empty(), "{}: nothing malformed", h.name);
        }
        let text = |o: Output| String::from_utf8(o.stdout).expect("utf-8");
        let named = text(fields_run(Tier::C, Input::Named(&h.path), &[]));
        assert!(!named.is_empty(), "{}: annotated", h.name);
        let two_pass = text(fields_run(Tier::C, Input::Named(&h.path), &["-2"]));
        assert_eq!(two_pass, named, "{}: -2", h.name);
        let pipe = text(fields_run(Tier::C, Input::Pipe(&h.path), &[]));
        assert_eq!(
            pipe,
            common::without_look_ahead(&named, &common::plugin_columns()),
            "{}: pipe",
            h.name
        );
        // Random flips damage handshakes, which the two tiers' decoders
        // then read differently (e.g. an INIT with a bad parameter).
        if h.name != "byte-flips" {
            let lua_pipe = text(fields_run(Tier::Lua, Input::Pipe(&h.path), &[]));
            assert_eq!(
                strip_marks(&lua_pipe),
                strip_marks(&pipe),
                "{}: C and Lua on the pipe",
                h.name
            );
        }
        for (input, extra) in [
            (Input::Named(&h.path), &[][..]),
            (Input::Named(&h.path), &["-2"][..]),
            (Input::Pipe(&h.path), &[][..]),
        ] {
            let what = format!("{} {input:?} {extra:?}", h.name);
            let plain = tshark(Tier::Plain, input, extra);
            let mut args = extra.to_vec();
            args.extend(["-V", "-Y", "sctpho.expert.malformed"]);
            let c = tshark(Tier::C, input, &args);
            assert!(c.status.code().is_some(), "{what}: killed by a signal");
            assert_eq!(c.status.code(), plain.status.code(), "{what}: exit status");
            assert_eq!(
                String::from_utf8_lossy(&c.stderr),
                String::from_utf8_lossy(&plain.stderr),
                "{what}: stderr"
            );
            let text = String::from_utf8_lossy(&c.stdout);
            assert!(!text.contains("Dissector bug"), "{what}: {text}");
            assert_eq!(
                common::frames_in(&text),
                want,
                "{what}: frames marked malformed"
            );
        }
    }
}

/// In tshark the plugins analyse a capture only once something uses their
/// output (preference `sctpho.lazy`, default TRUE; Wireshark's GUI always
/// analyses): every way of using it gives what the eager analysis
/// (`-o sctpho.lazy:FALSE`) gives, on both tiers — summary lines (the Info
/// column without a tree), expert infos without a tree (`-q -z expert`),
/// the protocol hierarchy, a tap or a filter on the plugins' fields, on
/// the protocol itself or on their expert messages, two passes, a pipe,
/// the Lua tier's `-z sctpho`
/// summary — and each of those shows the plugins' output (differs from
/// plain tshark); runs that use none of it print what plain tshark prints.
#[test]
fn output_used_is_the_same_as_with_an_eager_analysis() {
    let switch = "sctpho.event == \"path_switch\"";
    let expert = "io,stat,0,_ws.expert.message contains \"path switch\"";
    // (arguments, input is a pipe, shows the plugins' output, tiers)
    let both = &[Tier::C, Tier::Lua][..];
    let lua = &[Tier::Lua][..];
    let modes: &[(&[&str], bool, bool, &[Tier])] = &[
        (&[], false, true, both),
        (&[], true, true, both),
        (&["-2"], false, true, both),
        (&["-q", "-z", "expert"], false, true, both),
        (&["-q", "-z", "io,phs"], false, true, both),
        (&["-q", "-z", "io,stat,0,sctpho.event"], false, true, both),
        (&["-q", "-z", expert], false, true, both),
        (&["-Y", switch], false, true, both),
        (&["-2", "-Y", switch], false, true, both),
        (&["-Y", "sctpho && !sctpho.event"], false, true, both),
        (&["-Y", "sctpho.path == 1"], false, true, both),
        (&["-q", "-z", "io,stat,0,sctpho"], false, true, both),
        (&["-q", "-z", "sctpho"], false, true, lua),
        (&["-q", "-z", "sctpho"], true, true, lua),
        (&["-q", "-z", "io,stat,0"], false, false, both),
        (&["-q", "-z", "sctp,stat"], false, false, both),
    ];
    let names = [
        "koh-kim-1-mn.pcap",
        "no-asconf-ack.pcap",
        "bokor-failover-cn.pcap",
    ];
    for (name, capture) in captures()
        .iter()
        .filter(|(n, _)| names.contains(&n.as_str()))
    {
        for (args, piped, shows, tiers) in modes {
            let input = if *piped {
                Input::Pipe(capture)
            } else {
                Input::Named(capture)
            };
            let what = format!("{name} {input:?} {args:?}");
            let plain = tshark(Tier::Plain, input, args);
            for &tier in *tiers {
                let lazy = ok(tshark(tier, input, args), &what);
                let mut eager_args = args.to_vec();
                eager_args.extend(["-o", "sctpho.lazy:FALSE"]);
                let eager = ok(tshark(tier, input, &eager_args), &what);
                assert_eq!(lazy, eager, "{tier:?} {what}: lazy and eager differ");
                let plain_out = String::from_utf8_lossy(&plain.stdout);
                if *shows {
                    assert_ne!(
                        lazy, plain_out,
                        "{tier:?} {what}: shows nothing of the plugin"
                    );
                } else {
                    assert_eq!(
                        lazy, plain_out,
                        "{tier:?} {what}: not plain tshark's output"
                    );
                }
            }
        }
    }
}

/// The Wireshark tshark is: (major, minor), from `tshark -v`.
fn wireshark_version() -> (u32, u32) {
    let out = ok(tshark(Tier::Plain, Input::Nothing, &["-v"]), "tshark -v");
    let version = out
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .expect("a version in tshark -v");
    let mut parts = version
        .split('.')
        .map(|p| p.parse::<u32>().expect("number"));
    (parts.next().expect("major"), parts.next().expect("minor"))
}

#[test]
fn installed_where_its_wireshark_looks_with_the_crates_version() {
    let (major, minor) = wireshark_version();
    let installed = &env().installed;
    assert!(
        installed.ends_with(format!(
            ".local/lib/wireshark/plugins/{major}.{minor}/epan/sctpho.so"
        )),
        "{}",
        installed.display()
    );
    let plugins = ok(
        tshark(Tier::C, Input::Nothing, &["-G", "plugins"]),
        "-G plugins",
    );
    let line = plugins
        .lines()
        .find(|l| l.starts_with("sctpho.so"))
        .unwrap_or_else(|| panic!("sctpho.so not loaded: {plugins}"));
    let columns: Vec<&str> = line.split('\t').map(str::trim).collect();
    assert_eq!(
        columns,
        [
            "sctpho.so",
            env!("CARGO_PKG_VERSION"),
            "dissector",
            installed.to_str().expect("utf-8 path")
        ]
    );
    // The Lua tier's modules are not loaded as plugins of their own.
    let plugins = ok(
        tshark(Tier::LuaInstalled, Input::Nothing, &["-G", "plugins"]),
        "-G plugins (Lua)",
    );
    let lua: Vec<&str> = plugins
        .lines()
        .filter(|l| l.contains("lua script"))
        .filter_map(|l| l.split('\t').next())
        .collect();
    assert_eq!(lua, ["sctpho.lua"], "{plugins}");
}

/// `tshark -G fields` for the plugin as the descriptors give it.
fn described_fields() -> String {
    use sctpho_ffi::{registered_fields, FieldType, EXPERTS};
    let mut out = String::from("P\tSCTP Handover\tsctpho\n");
    for d in registered_fields() {
        let (ft, base) = match d.kind {
            FieldType::Uint16 => ("FT_UINT16", "BASE_DEC"),
            FieldType::Uint32 => ("FT_UINT32", "BASE_DEC"),
            FieldType::Double => ("FT_DOUBLE", ""),
            FieldType::String => ("FT_STRING", ""),
            // (tshark prints a boolean's base as its bit width: none)
            FieldType::Boolean => ("FT_BOOLEAN", "0"),
            FieldType::FrameNum => ("FT_FRAMENUM", ""),
        };
        out.push_str(&format!(
            "F\t{}\t{}\t{ft}\tsctpho\t{base}\t0x0\t{}\n",
            d.name.to_string_lossy(),
            d.abbrev.to_string_lossy(),
            d.blurb.to_string_lossy()
        ));
    }
    for d in &EXPERTS {
        out.push_str(&format!(
            "F\t{}\t{}\tFT_NONE\tsctpho\t\t0x0\t\n",
            d.summary.to_string_lossy(),
            d.abbrev.to_string_lossy()
        ));
    }
    out
}

fn sctpho_fields(tier: Tier) -> String {
    let all = ok(tshark(tier, Input::Nothing, &["-G", "fields"]), "-G fields");
    all.lines()
        .filter(|l| {
            l.split('\t')
                .nth(2)
                .is_some_and(|a| a == "sctpho" || a.starts_with("sctpho."))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn both_tiers_register_the_fields_the_descriptors_give() {
    let want = described_fields();
    // Checked by hand: one line of each kind.
    assert!(want.contains(
        "F\tASCONF-ACK in frame\tsctpho.asconf.ack_frame\tFT_FRAMENUM\tsctpho\t\t0x0\tThe frame of the ASCONF-ACK that answers this ASCONF\n"
    ));
    assert!(want.contains("F\tPath\tsctpho.path\tFT_UINT16\tsctpho\tBASE_DEC\t0x0\t"));
    assert!(want.contains(
        "F\tLatency component: failover time (ms)\tsctpho.component.failover_time\tFT_DOUBLE\tsctpho\t\t0x0\tFailover time in ms: failure start \u{2192} first new DATA on the alternate path (the switch frame); absent when the analyzer has no value for it (docs/metrics.md)\n"
    ));
    assert_eq!(want.lines().count(), 1 + 27 + COMPONENTS.len() + 12);
    // Every latency component of the analyzer's descriptors is a field of
    // both tiers (the list above is built from them: enumerated here
    // against the descriptors themselves).
    for c in COMPONENTS {
        let line = format!("\tsctpho.component.{}\tFT_DOUBLE\tsctpho\t", c.name);
        assert_eq!(want.matches(&line).count(), 1, "{}", c.name);
    }
    assert_eq!(sctpho_fields(Tier::C), want, "C tier");
    assert_eq!(sctpho_fields(Tier::LuaInstalled), want, "Lua tier");
}

/// `-T fields` of the switch frames: the frame number, then each latency
/// component's field in [`COMPONENTS`] order.
fn component_rows(tier: Tier, input: Input<'_>, extra: &[&str]) -> Vec<(u64, Vec<String>)> {
    let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    args.extend(
        [
            "-Y",
            "sctpho.switch.kind",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ]
        .map(String::from),
    );
    for c in COMPONENTS {
        args.extend(["-e".to_string(), format!("sctpho.component.{}", c.name)]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(tshark(tier, input, &refs), &format!("{tier:?} {input:?}"))
        .lines()
        .map(|l| {
            let mut cols = l.split('\t').map(str::to_string);
            let frame = cols.next().and_then(|f| f.parse().ok()).expect("frame");
            (frame, cols.collect())
        })
        .collect()
}

/// On every sample, the C plugin's `sctpho.component.*` fields on each
/// switch frame are the analyzer's components of that handover, through
/// each descriptor's accessor, to the precision tshark prints (absent when
/// the analyzer has no value); pre-scanned or read frame by frame in two
/// passes alike. The Lua tier, pre-scanned, shows the same (its own
/// analysis fills every component the plugins can have:
/// tests/dissector_agreement.rs).
#[test]
fn switch_frames_carry_the_analyzers_components() {
    let mut values = 0;
    let mut c_rows = std::collections::BTreeMap::new();
    for (name, capture) in captures() {
        let analysis = analyze_file(capture, &AnalysisOptions::default()).expect("analysable");
        let c = component_rows(Tier::C, Input::Named(capture), &[]);
        let frames: Vec<u64> = c.iter().map(|(f, _)| *f).collect();
        let switches: Vec<u64> = analysis.handovers.iter().map(|h| h.switch_frame).collect();
        assert_eq!(frames, switches, "{name}: switch frames");
        for ((frame, cols), h) in c.iter().zip(&analysis.handovers) {
            assert_eq!(cols.len(), COMPONENTS.len(), "{name} {frame}");
            for (d, col) in COMPONENTS.iter().zip(cols) {
                let what = format!("{name} frame {frame} {}: {col:?}", d.name);
                match d.value(h) {
                    None => assert_eq!(col, "", "{what}: the analyzer has none"),
                    Some(v) => {
                        let shown: f64 = col.parse().unwrap_or_else(|_| panic!("{what}"));
                        // (tshark prints 15 significant digits.)
                        assert!(
                            (shown - v).abs() <= v.abs() * 1e-14,
                            "{what}: the analyzer's {v}"
                        );
                        values += 1;
                    }
                }
            }
        }
        let incremental = component_rows(
            Tier::C,
            Input::Named(capture),
            &["-2", "-o", "sctpho.prescan:FALSE"],
        );
        assert_eq!(incremental, c, "{name}: frame by frame in two passes");
        let lua = component_rows(Tier::Lua, Input::Named(capture), &[]);
        assert_eq!(lua, c, "{name}: the Lua tier");
        c_rows.insert(name.clone(), c);
    }
    assert!(values > 100, "{values}");
    // Checked by hand against `sctp-handover analyze --format jsonl` of
    // the capture alone (no events.jsonl beside it: the plugins have no
    // ground-truth events): bokor-failover's CN, its failover at frame 77;
    // koh-kim-1's MN, the planned switch at frame 132 (transport-layer
    // latency = total 50.076 - network 49.029).
    let row = |name: &str, frame: u64| -> Vec<(&'static str, String)> {
        let (_, cols) = c_rows[name]
            .iter()
            .find(|(f, _)| *f == frame)
            .expect("switch frame");
        COMPONENTS
            .iter()
            .zip(cols)
            .filter(|(_, v)| !v.is_empty())
            .map(|(d, v)| (d.name, v.clone()))
            .collect()
    };
    let text = |pairs: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        pairs.iter().map(|(n, v)| (*n, v.to_string())).collect()
    };
    assert_eq!(
        row("bokor-failover-cn.pcap", 77),
        text(&[
            ("data_interrupt", "-235.031"),
            ("new_data_gap", "250.12"),
            ("total_handover_latency", "364.998"),
            ("path_confirmation", "180.252"),
            ("failover_detection", "314.926"),
            ("failover_time", "800.077"),
        ])
    );
    assert_eq!(
        row("koh-kim-1-mn.pcap", 132),
        text(&[
            ("data_interrupt", "50.076"),
            ("new_data_gap", "50.076"),
            ("total_handover_latency", "50.076"),
            ("network_disconnection", "49.029"),
            ("transport_latency", "1.047"),
            ("setprim_sent", "489.923"),
            ("sender_recovery", "991.048"),
        ])
    );
}

/// `tshark -q -z sctpho` of a tier (its whole output).
fn statistics(tier: Tier, input: Input<'_>) -> String {
    ok(
        tshark(tier, input, &["-q", "-z", "sctpho"]),
        &format!("{tier:?} {input:?} -z sctpho"),
    )
}

#[test]
fn c_tier_statistics_are_the_lua_tiers() {
    let mut compared = 0;
    for (name, capture) in captures() {
        let lua = statistics(Tier::Lua, Input::Named(capture));
        assert!(
            lua.starts_with("SCTP Handover: 1 association(s), "),
            "{name}: {lua}"
        );
        assert_eq!(statistics(Tier::C, Input::Named(capture)), lua, "{name}");
        assert_eq!(
            statistics(Tier::C, Input::Pipe(capture)),
            lua,
            "{name} (pipe)"
        );
        compared += 1;
    }
    assert_eq!(compared, 21);
    // Checked by hand against the capture (tshark -V): the ADD-IP sent at
    // frame 63 and again at 72 (its ASCONF-ACK lost), answered at 79; path
    // 0's T3 expiry at 75 (potentially failed with PFMR 0), the counter
    // cleared at 76, the expiry shown spurious by a duplicate report.
    let (_, capture) = captures()
        .iter()
        .find(|(n, _)| n == "koh-kim-1-ack-lost-mn.pcap")
        .expect("sample");
    assert_eq!(
        statistics(Tier::C, Input::Named(capture)),
        "SCTP Handover: 1 association(s), 2 data path switch(es)

association 0  ports 5000 <-> 5000  (first frame 14)
  path 0  198.51.100.101 -> 198.51.100.100  (sent by endpoint 0)
    state: potentially_failed (frame 75), active (frame 76); error counter cleared 1 time(s); 1 spurious T3 expiry
  path 1  198.51.100.100 -> 198.51.100.101  (sent by endpoint 1)
  path 2  198.51.100.100 -> 198.51.100.102  (sent by endpoint 1)
  path 3  198.51.100.102 -> 198.51.100.100  (sent by endpoint 0)
  ASCONF frame 63 serial 3818833080 from endpoint 0: add_ip 198.51.100.102, sent 2 times (last frame 72) -> ACK frame 79
  ASCONF frame 116 serial 3818833081 from endpoint 0: set_primary 198.51.100.102 -> ACK frame 121
  ASCONF frame 138 serial 3818833082 from endpoint 0: delete_ip 198.51.100.101 -> ACK frame 143

assoc  dir  paths     kind        frame  last old first new interrupt ms
0      0>1  0->3      planned       139       136       139       50.145
0      1>0  1->2      planned       145       142       145       49.861
"
    );
}
