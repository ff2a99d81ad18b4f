//! `sctp-handover-lab`: the lab's command line. Today one command, the
//! reproduction report of `make reproduce` (scripts/reproduce.sh,
//! docs/reproduction.md).

use clap::{Parser, Subcommand};
use sctp_handover_lab::reproduction;
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "sctp-handover-lab", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The reproduction report of `make reproduce`: the seed papers'
    /// experiments replayed by the harness, set beside the published values.
    Reproduction(ReproductionArgs),
}

#[derive(clap::Args)]
struct ReproductionArgs {
    /// Where index.html, README.md and assets/ go, beside the copy of what
    /// they are drawn from (tables/, runs/, sweeps.txt, provenance.txt).
    #[arg(value_name = "DIR")]
    out: PathBuf,
    /// The harness runs of `make reproduce` (`SWEEP/SCENARIO/GROUP/rNN/`):
    /// copy their tables and ground truth into DIR first. Without it the
    /// report is redrawn from DIR's copy alone.
    #[arg(long, value_name = "RUNS", requires_all = ["tables", "sweeps"])]
    runs: Option<PathBuf>,
    /// The dataset `sctp-handover analyze --out` wrote from RUNS.
    #[arg(long, value_name = "DIR")]
    tables: Option<PathBuf>,
    /// The sweeps file (scripts/reproduce.sweeps).
    #[arg(long, value_name = "FILE")]
    sweeps: Option<PathBuf>,
    /// A line for the provenance section (date, machine load, …;
    /// repeatable; with --runs).
    #[arg(long, value_name = "TEXT")]
    note: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Reproduction(args) => draw_reproduction(&args),
    }
}

/// The seeds' experiments beside the runs (docs/reproduction.md).
fn draw_reproduction(args: &ReproductionArgs) -> anyhow::Result<()> {
    if let (Some(runs), Some(tables), Some(sweeps)) = (&args.runs, &args.tables, &args.sweeps) {
        reproduction::export(tables, runs, sweeps, &args.note, &args.out)?;
    }
    let config = reproduction::Config::from_copy(&args.out)?;
    let doc = reproduction::build(&config)?;
    reproduction::write(&doc, &args.out)?;
    eprintln!(
        "sctp-handover-lab: wrote {} ({} figures, {} tables)",
        args.out.join("index.html").display(),
        doc.figures().count(),
        doc.tables().count()
    );
    for e in &doc.excluded {
        eprintln!("sctp-handover-lab: left out {}: {}", e.input, e.reason);
    }
    Ok(())
}
