//! The C plugin (built with the Wireshark plugin SDK, this crate linked in)
//! gives the same `-T fields` output as the Lua plugin on every sample
//! capture. Wireshark does not load binary plugins for root, so tshark runs
//! as an unprivileged user (created when the test runs as root, as in CI).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `-e` columns compared (dissector/tests/fields.txt, shared by the
/// plugin tests and the golden files).
fn fields() -> Vec<String> {
    std::fs::read_to_string(repo().join("dissector/tests/fields.txt"))
        .expect("fields.txt")
        .lines()
        .map(str::to_string)
        .collect()
}
const TEST_USER: &str = "sctpho-test";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

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

/// Builds sctpho.so and installs it where `tshark` (as `user`, HOME=`home`)
/// will load it. Returns a function-like command builder.
fn install(home: &Path, user: Option<&str>) {
    let so = run(&mut Command::new(repo().join("dissector/c/build.sh")));
    let so = PathBuf::from(so.trim());
    let dir = home.join(".local/lib/wireshark/plugins/4.0/epan");
    std::fs::create_dir_all(&dir).expect("plugin dir");
    std::fs::copy(&so, dir.join("sctpho.so")).expect("install plugin");
    if let Some(u) = user {
        run(Command::new("chown")
            .args(["-R", u])
            .arg(home.join(".local")));
    }
}

fn tshark(user: Option<&str>, home: &Path, args: &[String]) -> String {
    let mut cmd = match user {
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
    cmd.args(args);
    run(&mut cmd)
}

fn field_args(capture: &Path) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "-r".into(),
        capture.display().to_string(),
        "-Y".into(),
        "sctpho".into(),
    ];
    a.extend([
        "-T".into(),
        "fields".into(),
        "-E".into(),
        "occurrence=a".into(),
    ]);
    for f in fields() {
        a.push("-e".into());
        a.push(f);
    }
    a
}

#[test]
fn c_plugin_matches_the_lua_plugin_on_every_sample() {
    let (user, home) = if is_root() {
        if Command::new("id")
            .arg(TEST_USER)
            .output()
            .map_or(true, |o| !o.status.success())
        {
            run(Command::new("useradd").args(["-m", TEST_USER]));
        }
        (Some(TEST_USER), PathBuf::from(format!("/home/{TEST_USER}")))
    } else {
        let h = std::env::temp_dir().join(format!("sctpho-home-{}", std::process::id()));
        std::fs::create_dir_all(&h).expect("home");
        (None, h)
    };
    install(&home, user);
    let plugins = tshark(user, &home, &["-G".into(), "plugins".into()]);
    assert!(
        plugins.contains("sctpho.so"),
        "the C plugin is loaded: {plugins}"
    );

    // Copies readable by the test user, wherever the clone lives.
    let work = std::env::temp_dir().join(format!("sctpho-c-samples-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    run(Command::new("chmod").arg("755").arg(&work));
    let mut compared = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(repo().join("sample-captures"))
        .expect("samples")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        for side in ["mn", "cn"] {
            let src = d.join(format!("{side}.pcap"));
            let name = format!(
                "{}-{side}.pcap",
                d.file_name().expect("name").to_string_lossy()
            );
            let capture = work.join(&name);
            std::fs::copy(&src, &capture).expect("copy capture");
            run(Command::new("chmod").arg("644").arg(&capture));
            let c = tshark(user, &home, &field_args(&capture));
            let mut lua_args = vec![
                "-X".to_string(),
                format!(
                    "lua_script:{}",
                    repo().join("dissector/sctpho.lua").display()
                ),
            ];
            lua_args.extend(field_args(&src));
            let lua = run(Command::new("tshark").args(&lua_args));
            assert!(!c.is_empty(), "{name}: C plugin annotated nothing");
            assert_eq!(c, lua, "{name}: C and Lua plugins differ");
            compared += 1;
        }
    }
    assert_eq!(compared, 16);
    let _ = std::fs::remove_dir_all(&work);
}
