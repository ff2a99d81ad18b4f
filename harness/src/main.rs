//! `sctp-harness`: replays scripted SCTP handover scenarios on the real
//! Linux kernel SCTP stack inside User-Mode Linux.

mod endpoint;
mod eventlog;
mod guest;
mod kernel;
mod netlink;
mod runner;
mod scenario;
mod sctp_sys;
mod topology;

use clap::{Parser, Subcommand};
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
            let failed = results.iter().filter(|r| !r.ok).count();
            if failed > 0 {
                anyhow::bail!("{failed} of {} runs failed", results.len());
            }
            Ok(())
        })(),
        Cmd::Guest {
            run_dir,
            modroot,
            watch,
        } => guest::run(&run_dir, &modroot, watch.as_deref()),
        Cmd::Endpoint { role, run_dir } => (|| {
            let s = scenario::Scenario::load(&run_dir.join("scenario.toml"))?;
            match role.as_str() {
                "mn" => endpoint::run_mn(&s, &run_dir),
                "cn" => endpoint::run_cn(&s, &run_dir),
                other => anyhow::bail!("unknown role {other}"),
            }
        })(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sctp-harness: {e:#}");
            ExitCode::from(2)
        }
    }
}
