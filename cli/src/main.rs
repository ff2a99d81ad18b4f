//! `sctp-handover`: command-line entry point.

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use sctp_handover::handover::{anchors, CapturePoint};
use sctp_handover::output::{json, summary};
use sctp_handover::time::Nanos;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sctp-handover",
    version,
    about = "Where the time went when an SCTP association moved between addresses"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reconstruct associations, paths and events from capture files.
    Analyze(AnalyzeArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum Point {
    Mn,
    Cn,
    Middle,
    Unknown,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// pcap or pcapng files, optionally gzip-compressed.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the output here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
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
    /// Ground-truth events (JSON lines or CSV: time, kind ∈ link_down,
    /// link_up, addr_up, addr_down, address, interface), e.g. the harness's
    /// events.jsonl; anchors the components packets cannot show.
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Timeout retransmissions closer than this are one T3 expiry (ms);
    /// keep it below the sender's RTO.Min.
    #[arg(long, default_value_t = 100)]
    expiry_burst_ms: i64,
    /// Where the capture was taken; recorded with the handover results.
    #[arg(long, value_enum, default_value_t = Point::Unknown)]
    capture_point: Point,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze(args) => match analyze(args) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("sctp-handover: {e:#}");
                ExitCode::from(1)
            }
        },
    }
}

fn analyze(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let mut options = AnalysisOptions::default();
    options
        .decode
        .udp_encapsulation_ports
        .extend(&args.udp_encap_ports);
    options.verify_checksum = args.verify_checksum;
    options.duplicate_window = Nanos(args.duplicate_window_us.saturating_mul(1000));
    options.track.rto.initial = Nanos::from_millis(args.rto_initial_ms);
    options.track.rto.min = Nanos::from_millis(args.rto_min_ms);
    options.track.rto.max = Nanos::from_millis(args.rto_max_ms);
    options.track.path_max_retrans = args.pmr;
    options.handover.rto_max = Some(options.track.rto.max);
    options.handover.expiry_burst = Nanos::from_millis(args.expiry_burst_ms);
    options.handover.capture_point = match args.capture_point {
        Point::Mn => CapturePoint::Mn,
        Point::Cn => CapturePoint::Cn,
        Point::Middle => CapturePoint::Middle,
        Point::Unknown => CapturePoint::Unknown,
    };
    if let Some(events) = &args.events {
        match anchors::load(events) {
            Ok(a) => options.handover.anchors = a,
            Err(e) => {
                eprintln!("sctp-handover: {e}");
                return Ok(ExitCode::from(2));
            }
        }
    }

    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };

    let mut results = Vec::with_capacity(args.files.len());
    let mut failed = false;
    for path in &args.files {
        let result = analyze_file(path, &options);
        match &result {
            Err(e) => {
                failed = true;
                eprintln!("sctp-handover: {e}");
            }
            Ok(a) => {
                if let Some(w) = &a.warning {
                    eprintln!("sctp-handover: warning: {}: {w}", path.display());
                }
                if let Format::Text = args.format {
                    summary::write(&mut out, a)?;
                    writeln!(out)?;
                }
            }
        }
        results.push((path, result));
    }
    if let Format::Json = args.format {
        let entries = results
            .iter()
            .map(|(path, r)| match r {
                Ok(a) => json::FileEntry::Analysed(a),
                Err(e) => json::FileEntry::Failed {
                    path,
                    error: e.to_string(),
                },
            })
            .collect();
        json::write(&mut out, entries)?;
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
