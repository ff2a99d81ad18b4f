//! `sctp-harness`: replays scripted SCTP handover scenarios on the real
//! Linux kernel SCTP stack inside User-Mode Linux.

mod endpoint;
mod eventlog;
#[path = "../../cli/src/generate.rs"]
mod generate;
mod guest;
mod kernel;
mod netlink;
mod runner;
mod scenario;
mod sctp_sys;
mod topology;

use clap::{CommandFactory, Parser, Subcommand};
use sctp_handover_harness_check::{check_run_dir, find_runs, Verdict};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "sctp-harness", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario (optionally a parameter sweep) and write captures,
    /// ground-truth events and metadata under --out.
    Replay {
        scenario: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// key=value[,value...]; repeat for a cartesian sweep.
        #[arg(long = "set", value_name = "KEY=VALUES")]
        sets: Vec<String>,
        /// Seconds before a hung guest is killed.
        #[arg(long, default_value_t = 120)]
        timeout_s: u64,
        /// Also run `sctp-handover watch --format jsonl` in the guest on the
        /// mobile node's interfaces, beside its tcpdump; its lines go to
        /// watch.jsonl in the run directory (docs/harness.md). The
        /// sctp-handover binary is taken from beside sctp-harness, else
        /// from $SCTP_HANDOVER_BIN or PATH.
        #[arg(long)]
        watch: bool,
        /// Exit 0 even when a run is invalid: one of its scripted actions
        /// did not take effect (its reasons are still printed, as
        /// warnings, and recorded in its meta.json).
        #[arg(long)]
        allow_invalid: bool,
    },
    /// Re-check run directories: did each run's scripted actions take
    /// effect, by the kernel's view in its events.jsonl? A directory
    /// without events.jsonl is searched for runs below it. Exit status 1
    /// when any run is invalid, 2 when one cannot be read.
    Verify {
        #[arg(required = true, value_name = "RUN_DIR")]
        dirs: Vec<PathBuf>,
    },
    /// (inside the guest) build the topology and run the scenario.
    #[command(hide = true)]
    Guest {
        #[arg(long)]
        run_dir: PathBuf,
        #[arg(long)]
        modroot: PathBuf,
        /// The sctp-handover binary to watch the MN with.
        #[arg(long)]
        watch: Option<PathBuf>,
    },
    /// (inside the guest) one endpoint process.
    #[command(hide = true)]
    Endpoint {
        #[arg(long)]
        role: String,
        #[arg(long)]
        run_dir: PathBuf,
    },
    /// Manual pages and shell completions, generated from this command
    /// line (`make install`).
    #[command(hide = true, subcommand)]
    Generate(generate::Generate),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Replay {
            scenario,
            out,
            repeat,
            sets,
            timeout_s,
            watch,
            allow_invalid,
        } => (|| {
            let sets = sets
                .iter()
                .map(|s| runner::parse_set(s))
                .collect::<anyhow::Result<_>>()?;
            let results = runner::replay(&runner::ReplayOptions {
                scenario,
                out,
                repeat: repeat.max(1),
                sets,
                timeout: Duration::from_secs(timeout_s),
                watch,
            })?;
            replay_status(&results, allow_invalid)
        })(),
        Cmd::Verify { dirs } => verify(&dirs),
        Cmd::Guest {
            run_dir,
            modroot,
            watch,
        } => guest::run(&run_dir, &modroot, watch.as_deref()).map(|()| ExitCode::SUCCESS),
        Cmd::Endpoint { role, run_dir } => (|| {
            let s = scenario::Scenario::load(&run_dir.join("scenario.toml"))?;
            match role.as_str() {
                "mn" => endpoint::run_mn(&s, &run_dir),
                "cn" => endpoint::run_cn(&s, &run_dir),
                other => anyhow::bail!("unknown role {other}"),
            }
        })()
        .map(|()| ExitCode::SUCCESS),
        Cmd::Generate(what) => generate::run(what, Cli::command()).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sctp-harness: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Exit status of `replay`: 2 when a run failed, 1 when one is invalid
/// (unless allowed), each invalid run's reasons printed.
fn replay_status(results: &[runner::RunResult], allow_invalid: bool) -> anyhow::Result<ExitCode> {
    let level = if allow_invalid { "warning" } else { "error" };
    let mut invalid = 0;
    for r in results.iter().filter(|r| r.verdict != Verdict::Valid) {
        invalid += 1;
        for reason in r.verdict.reasons() {
            eprintln!("sctp-harness: {level}: {}: {reason}", r.dir.display());
        }
    }
    let failed = results.iter().filter(|r| !r.ok).count();
    if failed > 0 {
        anyhow::bail!("{failed} of {} runs failed", results.len());
    }
    if invalid > 0 && !allow_invalid {
        eprintln!(
            "sctp-harness: {invalid} of {} runs invalid: their script did not take effect \
             (--allow-invalid to accept them)",
            results.len()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `verify`: each run checked again from its events.jsonl and scenario.toml.
fn verify(dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let mut runs = Vec::new();
    // A run named twice (`sample-sweeps/**/r*/` matches both `rto=…` and
    // the `rNN` below it) is checked once.
    let mut seen = std::collections::HashSet::new();
    for d in dirs {
        let found = find_runs(d)?;
        if found.is_empty() {
            anyhow::bail!(
                "{}: no run directory (with an events.jsonl) here",
                d.display()
            );
        }
        runs.extend(
            found
                .into_iter()
                .filter(|r| seen.insert(r.canonicalize().unwrap_or_else(|_| r.clone()))),
        );
    }
    let (mut valid, mut invalid, mut unchecked, mut unreadable) = (0, 0, 0, 0);
    // Written with errors seen (`verify … | head` closes the pipe early).
    let mut out = std::io::stdout().lock();
    for dir in &runs {
        let d = dir.display();
        let verdict = match check_run_dir(dir) {
            Ok(v) => v,
            Err(e) => {
                unreadable += 1;
                eprintln!("sctp-harness: error: {d}: {e}");
                continue;
            }
        };
        match &verdict {
            Verdict::Valid => {
                valid += 1;
                writeln!(out, "{d}: valid")?;
            }
            Verdict::Invalid(reasons) => {
                invalid += 1;
                for r in reasons {
                    writeln!(out, "{d}: invalid: {r}")?;
                }
            }
            Verdict::Unchecked(notes) => {
                unchecked += 1;
                for n in notes {
                    writeln!(out, "{d}: unchecked: {n}")?;
                }
            }
        }
        // What the run recorded when it was made, if that differs.
        let recorded = std::fs::read_to_string(dir.join("meta.json"))
            .ok()
            .and_then(|t| sctp_handover_harness_formats::Meta::parse(&t).ok())
            .and_then(|m| Verdict::from_meta(&m));
        if let Some(r) = recorded.filter(|r| r.valid() != verdict.valid()) {
            let said = match r.valid() {
                Some(true) => "valid",
                Some(false) => "invalid",
                None => "not checked",
            };
            writeln!(out, "{d}: note: its meta.json recorded it as {said}")?;
        }
    }
    eprintln!(
        "sctp-harness: {} runs: {valid} valid, {invalid} invalid{}{}",
        runs.len(),
        if unchecked > 0 {
            format!(", {unchecked} not checkable (no kernel view in events.jsonl)")
        } else {
            String::new()
        },
        if unreadable > 0 {
            format!(", {unreadable} unreadable")
        } else {
            String::new()
        }
    );
    Ok(if unreadable > 0 {
        ExitCode::from(2)
    } else if invalid > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
