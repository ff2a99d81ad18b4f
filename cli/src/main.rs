//! `sctp-handover`: command-line entry point, the last step of the data
//! flow (docs/architecture.md). It parses the options into the analyzer's
//! settings and hands the work to the library crates: `analyze` to the
//! batch tables (`sctp_handover_tables`, its summary in [`output`]),
//! `report` to the report crate ([`report`]), `watch` to the live capture
//! and the streaming analysis ([`watch`]), `points` to the two-point
//! pairing ([`points`]); [`exit`] gives every command its exit statuses.

mod exit;
mod generate;
mod output;
mod points;
mod progress;
mod report;
mod watch;

use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::CommandFactory;
use clap::{Parser, Subcommand, ValueEnum};
use exit::{usage, Status};
use sctp_handover::analysis::AnalysisOptions;
use sctp_handover::handover::CapturePoint;
use sctp_handover::settings::option;
use sctp_handover_live::filter::BpfFilter;
use sctp_handover_tables::batch::{self, BatchConfig};
use sctp_handover_tables::inputs::{self, InputKind};
use sctp_handover_tables::settings::Settings;
use sctp_handover_tables::write::{ParquetCodec, TableFormat};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sctp-handover",
    version,
    propagate_version = true,
    about = "Where the time went when an SCTP association moved between addresses",
    after_help = exit::EXIT_STATUS_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reconstruct associations, paths, events and handovers from captures
    /// or whole directories of them.
    #[command(after_help = exit::EXIT_STATUS_HELP)]
    Analyze(Box<AnalyzeArgs>),
    /// Draw a self-contained HTML report (plotters figures, tables) from
    /// captures, directories of captures or tables written by `analyze
    /// --out`: per-capture TSN/RTT/handover figures, group comparisons and
    /// parameter sweeps.
    #[command(after_help = exit::EXIT_STATUS_HELP)]
    Report(Box<report::ReportArgs>),
    /// Handovers as they happen: live from interfaces (libpcap) or from a
    /// capture still being written (--follow), one line or JSON line per
    /// event.
    #[command(after_help = exit::EXIT_STATUS_HELP)]
    Watch(Box<watch::WatchArgs>),
    /// Two capture points of the same traffic paired packet by packet:
    /// clock offset and drift, one-way delay per path, losses, spurious
    /// retransmissions (docs/points.md).
    #[command(after_help = exit::EXIT_STATUS_HELP)]
    Points(Box<points::PointsArgs>),
    /// Print the column reference of the tables (docs/tables.md).
    #[command(hide = true)]
    TablesReference,
    /// Manual pages and shell completions, generated from this command
    /// line (`make install`).
    #[command(hide = true, subcommand)]
    Generate(generate::Generate),
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// A readable summary per file.
    Text,
    /// JSON lines: one record per file, association, handover and event
    /// (docs/json-schema.md). `json`, its former name, is still accepted.
    #[value(alias = "json")]
    Jsonl,
}

#[derive(Clone, Copy, ValueEnum)]
enum TableFormatArg {
    /// Apache Parquet (compressed as --parquet-compression says).
    Parquet,
    Csv,
    /// Newline-delimited JSON.
    Jsonl,
}

#[derive(Clone, Copy, ValueEnum)]
enum ParquetCodecArg {
    /// Fast, and read by every Parquet reader.
    Snappy,
    /// About a quarter smaller, and slower to write.
    Zstd,
    /// LZ4_RAW.
    Lz4,
    None,
}

/// How `--out` writes the tables (shared by `analyze` and `watch`).
#[derive(clap::Args)]
pub(crate) struct TableArgs {
    #[arg(long, value_enum, default_value_t = TableFormatArg::Parquet, value_name = "FORMAT")]
    table_format: TableFormatArg,
    /// Compression of the Parquet tables' pages (CSV and JSON lines are
    /// written uncompressed).
    #[arg(long, value_enum, default_value_t = ParquetCodecArg::Snappy, value_name = "CODEC")]
    parquet_compression: ParquetCodecArg,
}

impl TableArgs {
    /// The table format and (for Parquet) page compression asked for.
    pub(crate) fn format(&self) -> TableFormat {
        match self.table_format {
            TableFormatArg::Parquet => TableFormat::Parquet(match self.parquet_compression {
                ParquetCodecArg::Snappy => ParquetCodec::Snappy,
                ParquetCodecArg::Zstd => ParquetCodec::Zstd,
                ParquetCodecArg::Lz4 => ParquetCodec::Lz4,
                ParquetCodecArg::None => ParquetCodec::Uncompressed,
            }),
            TableFormatArg::Csv => TableFormat::Csv,
            TableFormatArg::Jsonl => TableFormat::JsonLines,
        }
    }
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// Captures (pcap, pcapng, optionally gzip-compressed) or directories,
    /// walked recursively; captures are recognised by their magic numbers.
    /// `-` reads a capture from standard input (`tcpdump -w - | …`).
    #[arg(required_unless_present = "points", value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// A capture point of the same traffic as NAME=CAPTURE, given twice
    /// (`--point mn=mn.pcap --point cn=cn.pcap`), instead of PATHs: each
    /// capture is analysed as a PATH is, then their packets are paired and
    /// every handover both saw gets its two-sided record (one seen at one
    /// point only is listed and counted as one-sided); with --out, also
    /// the `points`, `owd` and `handovers_two_sided` tables and a one-way
    /// delay figure (docs/points.md).
    #[arg(long = "point", value_name = "NAME=CAPTURE", value_parser = points::parse_point, conflicts_with = "paths")]
    points: Vec<sctp_handover_points::PointInput>,
    /// Write the tables (files, associations, paths, asconf, events,
    /// handovers) as a dataset into DIR (docs/tables.md); inputs already
    /// complete there are not analysed again.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    tables: TableArgs,
    /// Analyse every input again, even those already complete in --out.
    #[arg(long)]
    force: bool,
    /// Take shard I of N (1-based) of the inputs, chosen by a hash of each
    /// input's path, so that N machines can share one archive and dataset.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(u64, u64)>,
    /// Files analysed at once (default: all cores).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    /// Output on standard output when no --out is given.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// In the text summary, list every association (default: those with
    /// handovers, failovers or anomalies).
    #[arg(long)]
    all: bool,
    /// Write the text or JSON output here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    #[command(flatten)]
    analysis: AnalysisArgs,
}

/// How captures are analysed (shared by `analyze`, `report` and `watch`).
/// Each option's flag, value name and help text are the analyzer's
/// (`sctp_handover::settings::option`, which the Python package's
/// `ANALYSIS_OPTIONS` renders too), its default `Settings::default()`'s.
#[derive(clap::Args, Clone)]
struct AnalysisArgs {
    #[arg(long = option::VERIFY_CHECKSUM.long(), help = option::VERIFY_CHECKSUM.help)]
    verify_checksum: bool,
    #[arg(
        long = option::UDP_ENCAP_PORTS.long(),
        value_name = option::UDP_ENCAP_PORTS.value_name,
        help = option::UDP_ENCAP_PORTS.help
    )]
    udp_encap_ports: Vec<u16>,
    #[arg(
        long = option::DUPLICATE_WINDOW_US.long(),
        default_value_t = Settings::default().duplicate_window_us,
        value_name = option::DUPLICATE_WINDOW_US.value_name,
        help = option::DUPLICATE_WINDOW_US.help
    )]
    duplicate_window_us: i64,
    #[arg(
        long = option::RTO_INITIAL_MS.long(),
        default_value_t = Settings::default().rto_initial_ms,
        help = option::RTO_INITIAL_MS.help
    )]
    rto_initial_ms: i64,
    #[arg(
        long = option::RTO_MIN_MS.long(),
        default_value_t = Settings::default().rto_min_ms,
        help = option::RTO_MIN_MS.help
    )]
    rto_min_ms: i64,
    #[arg(
        long = option::RTO_MAX_MS.long(),
        default_value_t = Settings::default().rto_max_ms,
        help = option::RTO_MAX_MS.help
    )]
    rto_max_ms: i64,
    #[arg(
        long = option::PMR.long(),
        default_value_t = Settings::default().pmr,
        help = option::PMR.help
    )]
    pmr: u32,
    // The default threshold; --no-pf turns the inference off.
    #[arg(
        long = option::PF_RETRANS.long(),
        default_value_t = Settings::default().pf_retrans.unwrap_or_default(),
        value_name = option::PF_RETRANS.value_name,
        help = option::PF_RETRANS.help
    )]
    pf_retrans: u32,
    #[arg(long = option::NO_PF.long(), help = option::NO_PF.help)]
    no_pf: bool,
    #[arg(
        long = option::EVENTS.long(),
        value_name = option::EVENTS.value_name,
        help = option::EVENTS.help
    )]
    events: Option<PathBuf>,
    #[arg(
        long = option::CAPTURE_POINT.long(),
        default_value_t = Settings::default().capture_point,
        value_parser = PossibleValuesParser::new(CapturePoint::NAMES).try_map(|s| s.parse::<CapturePoint>()),
        help = option::CAPTURE_POINT.help
    )]
    capture_point: CapturePoint,
    #[arg(long = option::NO_HARNESS_FILES.long(), help = option::NO_HARNESS_FILES.help)]
    no_harness_files: bool,
    #[arg(
        long = option::MAX_ASSOCIATIONS.long(),
        default_value_t = Settings::default().max_associations,
        value_name = option::MAX_ASSOCIATIONS.value_name,
        help = option::MAX_ASSOCIATIONS.help
    )]
    max_associations: usize,
    #[arg(
        long = option::MAX_PATHS.long(),
        default_value_t = Settings::default().max_paths,
        value_name = option::MAX_PATHS.value_name,
        help = option::MAX_PATHS.help
    )]
    max_paths: usize,
    #[arg(
        long = option::MAX_ADDRESSES.long(),
        default_value_t = Settings::default().max_addresses,
        value_name = option::MAX_ADDRESSES.value_name,
        help = option::MAX_ADDRESSES.help
    )]
    max_addresses: usize,
    #[arg(
        long = option::TSN_WINDOW.long(),
        default_value_t = Settings::default().tsn_window,
        value_name = option::TSN_WINDOW.value_name,
        help = option::TSN_WINDOW.help
    )]
    tsn_window: usize,
    #[arg(
        long = option::MAX_EVENTS.long(),
        default_value_t = Settings::default().max_events,
        value_name = option::MAX_EVENTS.value_name,
        help = option::MAX_EVENTS.help
    )]
    max_events: usize,
    #[arg(
        long = option::FILTER.long(),
        value_name = option::FILTER.value_name,
        help = option::FILTER.help
    )]
    filter: Option<String>,
    #[arg(
        long = option::MAX_REASSEMBLY.long(),
        default_value_t = Settings::default().max_reassembly,
        value_name = option::MAX_REASSEMBLY.value_name,
        help = option::MAX_REASSEMBLY.help
    )]
    max_reassembly: usize,
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("{s}: expected I/N, e.g. 2/8"))?;
    let i: u64 = i.parse().map_err(|_| format!("{s}: I is not a number"))?;
    let n: u64 = n.parse().map_err(|_| format!("{s}: N is not a number"))?;
    if n == 0 || i == 0 || i > n {
        return Err(format!("{s}: need 1 ≤ I ≤ N"));
    }
    Ok((i - 1, n))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return exit::clap_error(e),
    };
    // A panic is a bug; it still ends with one of the documented statuses
    // (the panic hook has printed where it happened).
    match std::panic::catch_unwind(|| run(cli.command)) {
        Ok(Ok(status)) => status.into(),
        Ok(Err(e)) => exit::failed(&e),
        Err(_) => {
            exit::print_error("internal error (please report)");
            Status::Partial.into()
        }
    }
}

fn run(command: Command) -> anyhow::Result<Status> {
    match command {
        Command::Analyze(args) => analyze(*args),
        Command::Report(args) => report::run(*args),
        Command::Watch(args) => watch::run(*args),
        Command::Points(args) => points::run(*args),
        Command::TablesReference => {
            use std::io::Write;
            let reference = sctp_handover_tables::schema::markdown_reference();
            std::io::stdout().write_all(reference.as_bytes())?;
            Ok(Status::Complete)
        }
        Command::Generate(what) => generate::run(what, Cli::command()).map(|()| Status::Complete),
    }
}

/// The analysis options of the command line; a value that cannot be used
/// (a capture filter that does not compile, an --events file that cannot
/// be read) is a usage error.
fn analysis_options(args: &AnalysisArgs) -> anyhow::Result<AnalysisOptions> {
    let settings = Settings {
        verify_checksum: args.verify_checksum,
        udp_encap_ports: args.udp_encap_ports.clone(),
        duplicate_window_us: args.duplicate_window_us,
        rto_initial_ms: args.rto_initial_ms,
        rto_min_ms: args.rto_min_ms,
        rto_max_ms: args.rto_max_ms,
        pmr: args.pmr,
        pf_retrans: (!args.no_pf).then_some(args.pf_retrans),
        events: args.events.clone(),
        capture_point: args.capture_point,
        max_associations: args.max_associations,
        max_paths: args.max_paths,
        max_addresses: args.max_addresses,
        tsn_window: args.tsn_window,
        max_events: args.max_events,
        max_reassembly: args.max_reassembly,
    };
    let mut options = settings.options().map_err(usage)?;
    if let Some(expr) = &args.filter {
        let filter = BpfFilter::new(expr).map_err(usage)?;
        options.frame_filter = Some(std::sync::Arc::new(filter));
    }
    Ok(options)
}

/// Standard input can be read once: `-` given twice is a usage error.
fn check_stdin_once(paths: &[PathBuf]) -> anyhow::Result<()> {
    if paths.iter().filter(|p| inputs::is_stdin(p)).count() > 1 {
        return Err(usage(anyhow::anyhow!(
            "`-` (standard input) is given more than once; it can be read once"
        )));
    }
    Ok(())
}

fn analyze(args: AnalyzeArgs) -> anyhow::Result<Status> {
    if !args.points.is_empty() {
        return points::analyze(&args);
    }
    check_stdin_once(&args.paths)?;
    let options = analysis_options(&args.analysis)?;
    let (found, walk_problems) = inputs::discover(&args.paths);
    for p in &walk_problems {
        exit::print_error(format_args!("{}: {}", p.path.display(), p.reason));
    }
    let config = BatchConfig {
        out: args.out.clone().unwrap_or_default(),
        format: args.tables.format(),
        jobs: args.jobs.unwrap_or(0),
        force: args.force,
        shard: args.shard,
        options,
        harness_files: !args.analysis.no_harness_files,
    };
    let (planned, params) = batch::plan(found, config.shard);
    let failed = match &args.out {
        Some(_) => run_batch(planned, &params, &config, &args)?,
        None => output::run(planned, &config, &args)?,
    };
    Ok(Status::partial_if(failed || !walk_problems.is_empty()))
}

/// `--out`: the tables, a progress bar, a compact summary.
fn run_batch(
    planned: Vec<inputs::Input>,
    params: &[(String, sctp_handover_tables::write::ParamType)],
    config: &BatchConfig,
    args: &AnalyzeArgs,
) -> anyhow::Result<bool> {
    let bytes: u64 = planned.iter().filter_map(|i| i.size).sum();
    let captures = planned
        .iter()
        .filter(|i| i.kind == InputKind::Capture)
        .count();
    let bar = progress::Bar::new(planned.len() as u64, bytes, args.quiet);
    let started = std::time::Instant::now();
    let outcomes = batch::run(planned, params, config, &bar)?;
    bar.finish();
    let elapsed = started.elapsed();
    let out = config.out.display();
    output::batch_summary(&outcomes, captures, bytes, elapsed, &out.to_string())
        .context("writing the summary")?;
    Ok(outcomes.iter().any(|o| o.failed()))
}
