//! `sctp-handover`: command-line entry point.

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
use sctp_handover::track::limits::Limits;
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
    /// The reproduction report of `make reproduce`: the seed papers'
    /// experiments replayed by the harness, set beside the published values.
    Reproduction(Box<report::ReproductionArgs>),
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
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
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

/// How captures are analysed (shared by `analyze` and `report`).
#[derive(clap::Args, Clone)]
struct AnalysisArgs {
    /// Check every SCTP packet's CRC32c and count failures.
    #[arg(long)]
    verify_checksum: bool,
    /// Extra UDP port carrying SCTP (RFC 6951); 9899 is always included.
    #[arg(long = "udp-encap-port", value_name = "PORT")]
    udp_encap_ports: Vec<u16>,
    /// Copies of one packet closer than this are capture duplicates (µs).
    #[arg(long, default_value_t = 1000, value_name = "MICROSECONDS")]
    duplicate_window_us: i64,
    /// RTO.Initial for the per-path RTO estimate (ms).
    #[arg(long, default_value_t = 1000)]
    rto_initial_ms: i64,
    /// RTO.Min for the per-path RTO estimate (ms).
    #[arg(long, default_value_t = 1000)]
    rto_min_ms: i64,
    /// RTO.Max for the per-path RTO estimate (ms).
    #[arg(long, default_value_t = 60000)]
    rto_max_ms: i64,
    /// Path.Max.Retrans used to infer inactive paths.
    #[arg(long, default_value_t = 5)]
    pmr: u32,
    /// The potentially-failed threshold (RFC 7829 PFMR; Linux's
    /// net.sctp.pf_retrans) used to infer potentially failed paths.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pf_retrans: u32,
    /// Infer no potentially failed state (a sender with it off, as Linux
    /// with net.sctp.pf_enable = 0).
    #[arg(long)]
    no_pf: bool,
    /// Ground-truth events (JSON lines or CSV: time, kind ∈ link_down,
    /// link_up, addr_up, addr_down, address, interface), e.g. the harness's
    /// events.jsonl; anchors the components packets cannot show. Without
    /// it, a harness run's events.jsonl beside a capture is used.
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Where the capture was taken; recorded with the handover results.
    /// Without it, a harness capture named mn.pcap / cn.pcap says.
    #[arg(
        long,
        default_value_t = CapturePoint::Unknown,
        value_parser = PossibleValuesParser::new(CapturePoint::NAMES).try_map(|s| s.parse::<CapturePoint>())
    )]
    capture_point: CapturePoint,
    /// Ignore the harness's files beside captures (events.jsonl, the
    /// capture side); scenario and parameters are still recorded.
    #[arg(long)]
    no_harness_files: bool,
    /// Associations alive at once; past it, packets of further ones are
    /// counted as not tracked and the file reports the limit reached.
    #[arg(long, default_value_t = Limits::default().associations, value_name = "N")]
    max_associations: usize,
    /// Paths (address pairs) of one association.
    #[arg(long, default_value_t = Limits::default().paths, value_name = "N")]
    max_paths: usize,
    /// Addresses of one endpoint.
    #[arg(long, default_value_t = Limits::default().addresses, value_name = "N")]
    max_addresses: usize,
    /// Outstanding TSNs remembered per data direction.
    #[arg(long, default_value_t = Limits::default().tsn_window, value_name = "N")]
    tsn_window: usize,
    /// Events of one association held at once until they are written (a
    /// long association writes them in parts of 256).
    #[arg(long, default_value_t = Limits::default().events, value_name = "N")]
    max_events: usize,
    /// Analyse only the frames this capture filter accepts (libpcap syntax,
    /// as `tcpdump -r FILE EXPR`); the others are counted as filtered out.
    #[arg(long, value_name = "EXPR")]
    filter: Option<String>,
    /// Fragmented IP datagrams in reassembly at once.
    #[arg(long, default_value_t = 64, value_name = "N")]
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
        Command::Reproduction(args) => report::reproduction(*args),
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
