//! Host side of `replay`: expands `--set` sweeps and repetitions into runs,
//! boots one UML guest per run, enforces a timeout, and cleans up.

use crate::scenario::Scenario;
use anyhow::{bail, Context};
use sctp_handover_harness_check::{run_verdict, Verdict};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Debian packages the harness needs, with a file each provides.
const REQUIREMENTS: [(&str, &str); 5] = [
    ("user-mode-linux", "/usr/bin/linux.uml"),
    ("tcpdump", "/usr/bin/tcpdump"),
    ("iproute2", "/usr/sbin/ip"),
    ("kmod", "/usr/bin/kmod"),
    ("ethtool", "/usr/sbin/ethtool"),
];
const UML_MODULES: &str = "/usr/lib/uml/modules";

pub struct ReplayOptions {
    pub scenario: PathBuf,
    pub out: PathBuf,
    pub repeat: usize,
    pub sets: Vec<(String, Vec<String>)>,
    pub timeout: Duration,
    /// Run `sctp-handover watch` on the MN inside the guest (watch.jsonl).
    pub watch: bool,
}

pub fn check_requirements() -> anyhow::Result<()> {
    let missing: Vec<&str> = REQUIREMENTS
        .iter()
        .filter(|(_, file)| !Path::new(file).exists())
        .map(|(pkg, _)| *pkg)
        .collect();
    if !missing.is_empty() {
        bail!(
            "missing Debian packages: {} (run `make setup`, or apt-get install {})",
            missing.join(", "),
            missing.join(" ")
        );
    }
    Ok(())
}

/// All combinations of the `--set` values, each as (key, value) pairs.
fn combinations(sets: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (key, values) in sets {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((key.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    out
}

/// Parses `key=v1,v2,...`.
pub fn parse_set(s: &str) -> anyhow::Result<(String, Vec<String>)> {
    let (k, v) = s
        .split_once('=')
        .with_context(|| format!("--set needs key=value[,value...], got {s}"))?;
    Ok((
        k.trim().to_string(),
        v.split(',').map(|x| x.trim().to_string()).collect(),
    ))
}

/// The module tree the guest's modprobe reads: DIR/lib/modules/VERSION.
fn module_root(tmp: &Path) -> anyhow::Result<PathBuf> {
    let version = std::fs::read_dir(UML_MODULES)
        .with_context(|| format!("cannot list {UML_MODULES} (is user-mode-linux installed?)"))?
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .next()
        .context("no UML kernel modules installed")?;
    let root = tmp.join("modroot");
    let dir = root.join("lib/modules");
    std::fs::create_dir_all(&dir)?;
    let link = dir.join(&version);
    if !link.exists() {
        std::os::unix::fs::symlink(Path::new(UML_MODULES).join(&version), &link)?;
    }
    Ok(root)
}

pub struct RunResult {
    pub dir: PathBuf,
    /// The run itself worked (meta.json `ok`).
    pub ok: bool,
    /// Whether its scripted actions took effect (meta.json `valid`).
    pub verdict: Verdict,
}

pub fn replay(opts: &ReplayOptions) -> anyhow::Result<Vec<RunResult>> {
    check_requirements()?;
    let base = Scenario::load(&opts.scenario)?;
    std::fs::create_dir_all(&opts.out)?;
    let out = opts.out.canonicalize()?;
    let tmp = out.join(".harness-tmp");
    std::fs::create_dir_all(&tmp)?;
    let modroot = module_root(&tmp)?;
    let init = init_script(&tmp)?;
    let bin = std::env::current_exe()?;
    let watch = if opts.watch {
        Some(watch_binary(&bin)?)
    } else {
        None
    };
    let mut results = Vec::new();
    for combo in combinations(&opts.sets) {
        let mut scenario = base.clone();
        for (k, v) in &combo {
            scenario.set(k, v)?;
        }
        let group = if combo.is_empty() {
            "default".to_string()
        } else {
            combo
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        for rep in 1..=opts.repeat {
            let dir = out
                .join(&scenario.name)
                .join(&group)
                .join(format!("r{rep:02}"));
            if dir.exists() {
                std::fs::remove_dir_all(&dir)?;
            }
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("scenario.toml"), toml::to_string(&scenario)?)?;
            let started = Instant::now();
            let (ok, message) = boot(
                &dir,
                &init,
                &bin,
                watch.as_deref(),
                &modroot,
                &tmp,
                opts.timeout,
            )?;
            // The guest wrote the verdict into meta.json; a guest that died
            // before that leaves it to be checked here.
            let verdict = run_verdict(&dir).unwrap_or_else(|e| {
                Verdict::Invalid(vec![format!("the check could not be made: {e}")])
            });
            let invalid = match &verdict {
                Verdict::Valid => String::new(),
                Verdict::Invalid(r) => format!(
                    ", invalid: {} scripted action{} did not take effect",
                    r.len(),
                    if r.len() == 1 { "" } else { "s" }
                ),
                Verdict::Unchecked(_) => ", not checked: no kernel view in events.jsonl".into(),
            };
            eprintln!(
                "{} {} ({:.1} s){}{invalid}",
                if ok { "ok  " } else { "FAIL" },
                dir.display(),
                started.elapsed().as_secs_f64(),
                if ok {
                    String::new()
                } else {
                    format!(": {message}")
                }
            );
            results.push(RunResult { dir, ok, verdict });
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(results)
}

/// The `sctp-handover` binary for `--watch`: beside `sctp-harness` (one
/// build of the workspace makes both), else `$SCTP_HANDOVER_BIN`, else the
/// first on PATH. The guest sees the host's files (hostfs), so a host path
/// runs there as it is.
fn watch_binary(harness: &Path) -> anyhow::Result<PathBuf> {
    let beside = harness.with_file_name("sctp-handover");
    let candidates = std::iter::once(beside)
        .chain(std::env::var_os("SCTP_HANDOVER_BIN").map(PathBuf::from))
        .chain(
            std::env::var_os("PATH")
                .map(|p| {
                    std::env::split_paths(&p)
                        .map(|d| d.join("sctp-handover"))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default(),
        );
    for c in candidates {
        if c.is_file() {
            return Ok(c.canonicalize()?);
        }
    }
    bail!(
        "--watch needs the sctp-handover binary: not beside {} nor on PATH \
         (build the workspace, or set SCTP_HANDOVER_BIN)",
        harness.display()
    )
}

/// UML backs guest memory with a file in TMPDIR and wants it on tmpfs.
fn uml_tmpdir(fallback: &Path) -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        fallback.to_path_buf()
    }
}

/// The guest's PID 1, embedded so the binary works wherever it was built.
const GUEST_INIT: &str = include_str!("../guest-init.sh");

fn init_script(tmp: &Path) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let p = tmp.join("guest-init.sh");
    std::fs::write(&p, GUEST_INIT)?;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
    Ok(p)
}

/// Boots one guest for `dir`; returns (ok, message).
#[allow(clippy::too_many_arguments)]
fn boot(
    dir: &Path,
    init: &Path,
    bin: &Path,
    watch: Option<&Path>,
    modroot: &Path,
    tmp: &Path,
    timeout: Duration,
) -> anyhow::Result<(bool, String)> {
    let log = std::fs::File::create(dir.join("guest.log"))?;
    let mut child = Command::new("/usr/bin/linux.uml")
        .arg("mem=384M")
        .arg("root=/dev/root")
        .arg("rootfstype=hostfs")
        .arg("rootflags=/")
        .arg("rw")
        .arg(format!("init={}", init.display()))
        .arg(format!("HARNESS_RUN_DIR={}", dir.display()))
        .arg(format!("HARNESS_BIN={}", bin.display()))
        .arg(format!("HARNESS_MODROOT={}", modroot.display()))
        // Empty: no watch (the init script passes --watch only when set).
        .arg(format!(
            "HARNESS_WATCH={}",
            watch.map_or(String::new(), |w| w.display().to_string())
        ))
        .arg("con0=fd:0,fd:1")
        .arg("con=null")
        .arg("quiet")
        .env("TMPDIR", uml_tmpdir(tmp))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .context("cannot start /usr/bin/linux.uml")?;
    let deadline = Instant::now() + timeout;
    let timed_out = loop {
        if child.try_wait()?.is_some() {
            break false;
        }
        if Instant::now() > deadline {
            break true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // UML runs several host processes (one per guest thread/helper): end
    // the whole group either way so nothing is left behind.
    // SAFETY: signalling the process group we created.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    let _ = child.wait();
    if timed_out {
        return Ok((false, format!("guest timed out after {timeout:?}")));
    }
    let text = std::fs::read_to_string(dir.join("guest.log")).unwrap_or_default();
    if text.contains("HARNESS-EXIT 0") {
        Ok((true, String::new()))
    } else {
        let meta = std::fs::read_to_string(dir.join("meta.json")).unwrap_or_default();
        let error = sctp_handover_harness_formats::Meta::parse(&meta)
            .ok()
            .and_then(|m| m.error)
            .unwrap_or_else(|| "guest failed; see guest.log".into());
        Ok((false, error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_combinations() {
        let sets = vec![
            parse_set("rto_max=200,400").unwrap(),
            parse_set("pmr=1,2,3").unwrap(),
        ];
        let c = combinations(&sets);
        assert_eq!(c.len(), 6);
        assert_eq!(
            c[5],
            vec![("rto_max".into(), "400".into()), ("pmr".into(), "3".into())]
        );
        assert!(parse_set("novalue").is_err());
    }
}
