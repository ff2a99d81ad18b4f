//! `sctp-handover report`: the HTML report and its assets.

use crate::exit::{self, usage, Status};
use crate::{analysis_options, check_stdin_once, AnalysisArgs};
use anyhow::{anyhow, Context};
use sctp_handover_report::build::{self, ReportConfig, SweepRequest};
use sctp_handover_report::html;
use sctp_handover_report::points as report_points;
use sctp_handover_report::stats::GroupBy;
use sctp_handover_tables::batch::BatchConfig;
use sctp_handover_tables::inputs;
use sctp_handover_tables::write::TableFormat;
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// The arguments of `sctp-handover report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// Captures, directories of captures, or tables directories written by
    /// `analyze --out` (read as they are, nothing re-analysed). `-` reads a
    /// capture from standard input, kept as ASSETS/stdin.pcap (or .pcapng,
    /// .gz): the report reads each capture twice, a pipe can be read once.
    #[arg(required_unless_present = "points", value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Two capture points of the same traffic as NAME=CAPTURE (e.g.
    /// `--point mn=mn.pcap --point cn=cn.pcap`; the first one's clock is
    /// the reference): the report leads with each handover as both points
    /// saw it, the one-way delay per path, the clock between the points,
    /// then each capture's usual sections (docs/points.md).
    #[arg(long = "point", value_name = "NAME=CAPTURE", value_parser = crate::points::parse_point, conflicts_with = "inputs")]
    points: Vec<sctp_handover_points::PointInput>,
    /// The HTML file to write.
    #[arg(short, long, default_value = "report.html", value_name = "FILE")]
    output: PathBuf,
    /// Folder for every figure (SVG + its data as CSV), every table (CSV +
    /// Markdown) and the tables of analysed captures (default: FILE's name
    /// with `-assets`, beside it).
    #[arg(long, value_name = "DIR")]
    assets: Option<PathBuf>,
    /// Where the tables of the analysed captures go (default: ASSETS/tables).
    #[arg(long, value_name = "DIR")]
    tables: Option<PathBuf>,
    /// The report's title.
    #[arg(long)]
    title: Option<String>,
    /// Compare groups formed by the values of a column of the handovers
    /// table: scenario, capture_side, class, file, or a swept parameter.
    #[arg(long, value_name = "COLUMN", conflicts_with = "group")]
    by: Option<String>,
    /// A named group of inputs whose path matches GLOB (repeat for each
    /// group), e.g. --group smsctp='runs/sm*/**' --group normal='runs/n*/**'.
    #[arg(long, value_name = "NAME=GLOB")]
    group: Vec<String>,
    /// Keep only handovers of this class (planned, failover, return, other;
    /// repeatable).
    #[arg(long, value_name = "CLASS")]
    class: Vec<String>,
    /// Keep only captures taken at this side (mn, cn; repeatable).
    #[arg(long, value_name = "SIDE")]
    side: Vec<String>,
    /// Sweep chart: the swept parameter on the x axis (e.g. rto).
    #[arg(long, value_name = "PARAM", requires = "metric")]
    x: Option<String>,
    /// Sweep chart: one series per value of this parameter (e.g. pmr).
    #[arg(long, value_name = "PARAM", requires = "x")]
    series: Option<String>,
    /// Sweep chart: the component drawn (e.g. failover_time, data_interrupt).
    #[arg(long, value_name = "COMPONENT", requires = "x")]
    metric: Option<String>,
    /// Sweep chart of a failover metric: the predicted failover times
    /// drawn beside it, with the observed PMR and RTO: fixed-rto (PMR ×
    /// RTO, for RTO.Min = RTO.Max), backoff (the RTO doubled at each
    /// expiry, capped at --rto-max-ms), none (docs/metrics.md, Failover).
    #[arg(long, value_name = "PREDICTION", value_delimiter = ',', default_value = "fixed-rto",
          value_parser = ["backoff", "fixed-rto", "none"])]
    predict: Vec<String>,
    /// No per-capture sections (comparison and sweep only).
    #[arg(long)]
    no_captures: bool,
    /// Captures drawn at most (the rest still count in comparisons).
    #[arg(long, default_value_t = 20, value_name = "N")]
    draw_captures: usize,
    /// Associations drawn per capture, those with handovers first.
    #[arg(long, default_value_t = 4, value_name = "N")]
    draw_associations: usize,
    /// Files analysed at once (default: all cores).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    analysis: AnalysisArgs,
}

fn group_by(args: &ReportArgs) -> anyhow::Result<GroupBy> {
    if let Some(c) = &args.by {
        return Ok(GroupBy::Column(c.clone()));
    }
    if args.group.is_empty() {
        return Ok(GroupBy::All);
    }
    let mut groups = Vec::new();
    for g in &args.group {
        let Some((name, pattern)) = g.split_once('=') else {
            return Err(usage(anyhow!("--group {g}: expected NAME=GLOB")));
        };
        let p = glob::Pattern::new(pattern)
            .with_context(|| format!("--group {g}: not a glob pattern"))
            .map_err(usage)?;
        groups.push((name.to_string(), p));
    }
    Ok(GroupBy::Globs(groups))
}

/// Standard input copied into `assets` (created), named by its first
/// bytes' magic: the report reads each capture twice (tables, then the
/// per-capture figures), and a pipe can be read once.
fn keep_stdin(assets: &Path) -> anyhow::Result<PathBuf> {
    let mut stdin = BufReader::new(std::io::stdin().lock());
    let head = stdin.fill_buf().context("reading standard input")?;
    // pcapng Section Header Block type; gzip member magic (RFC 1952 §2.3.1).
    let name = if head.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        "stdin.pcapng"
    } else if head.starts_with(&[0x1f, 0x8b]) {
        "stdin.gz"
    } else {
        "stdin.pcap"
    };
    std::fs::create_dir_all(assets).with_context(|| format!("creating {}", assets.display()))?;
    let kept = assets.join(name);
    let mut file = std::fs::File::create(&kept)
        .with_context(|| format!("cannot create {}", kept.display()))?;
    std::io::copy(&mut stdin, &mut file)
        .with_context(|| format!("copying standard input into {}", kept.display()))?;
    Ok(kept)
}

/// Runs `sctp-handover report`: builds the document and writes the HTML
/// page and its assets (each figure and table as files).
pub fn run(args: ReportArgs) -> anyhow::Result<Status> {
    check_stdin_once(&args.inputs)?;
    let options = analysis_options(&args.analysis)?;
    let group_by = group_by(&args)?;
    let assets = args.assets.clone().unwrap_or_else(|| {
        let stem = args
            .output
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "report".into());
        args.output.with_file_name(format!("{stem}-assets"))
    });
    let point_inputs = if args.points.is_empty() {
        None
    } else {
        Some(crate::points::point_inputs(&args.points)?)
    };
    let mut inputs = match &point_inputs {
        Some(found) => found.iter().map(|i| i.path.clone()).collect(),
        None => args.inputs.clone(),
    };
    if let Some(stdin) = inputs.iter_mut().find(|p| inputs::is_stdin(p)) {
        *stdin = keep_stdin(&assets)?;
    }
    let config = ReportConfig {
        inputs,
        title: args.title.clone(),
        group_by,
        classes: args.class.clone(),
        sides: args.side.clone(),
        sweep: args.x.as_ref().map(|x| SweepRequest {
            x: x.clone(),
            series: args.series.clone(),
            metric: args.metric.clone().unwrap_or_default(),
            predict: args.predict.clone(),
        }),
        capture_sections: !args.no_captures,
        max_captures: args.draw_captures,
        max_associations: args.draw_associations.max(1),
        batch: BatchConfig {
            out: args.tables.clone().unwrap_or_else(|| assets.join("tables")),
            format: TableFormat::PARQUET,
            jobs: args.jobs.unwrap_or(0),
            force: true,
            shard: None,
            options,
            harness_files: !args.analysis.no_harness_files,
        },
    };
    // Inputs left out are listed once, below, with their reason.
    let mut built = build::build(&config, &sctp_handover_tables::batch::Silent)?;
    let mut pair_failed = false;
    if let Some(found) = point_inputs {
        pair_failed = lead_with_points(&args, found, &config, &mut built.document)?;
    }
    let doc = &built.document;
    doc.write_assets(&assets)?;
    std::fs::write(&args.output, html::render(doc))
        .with_context(|| format!("writing {}", args.output.display()))?;
    if !args.quiet {
        eprintln!(
            "sctp-handover: wrote {} ({} figures, {} tables; assets in {})",
            args.output.display(),
            doc.figures().count(),
            doc.tables().count(),
            assets.display()
        );
    }
    // Inputs that could not be read are errors (and exit status 1); the
    // others left out (no handover, in no group, an invalid harness run)
    // are listed as notes.
    let unread: HashSet<&str> = built
        .outcomes
        .iter()
        .filter(|o| o.failed())
        .map(|o| o.source.as_str())
        .chain(built.unlisted.iter().map(String::as_str))
        .collect();
    for e in &doc.excluded {
        if unread.contains(e.input.as_str()) {
            exit::print_error(format_args!("left out {}: {}", e.input, e.reason));
        } else {
            eprintln!("sctp-handover: left out {}: {}", e.input, e.reason);
        }
    }
    Ok(Status::partial_if(!unread.is_empty() || pair_failed))
}

/// `report --point`: the two captures paired (as `analyze --point` pairs
/// them), their `points`, `owd` and `handovers_two_sided` tables written
/// beside the per-capture ones, and the two-point sections put before the
/// usual ones. True when a point's capture had a warning (a partial run).
fn lead_with_points(
    args: &ReportArgs,
    found: Vec<sctp_handover_tables::inputs::Input>,
    config: &ReportConfig,
    doc: &mut sctp_handover_report::Document,
) -> anyhow::Result<bool> {
    use sctp_handover_points::PointsOptions;
    use sctp_handover_tables::batch;
    use sctp_handover_tables::dataset::Dataset;

    let names = [args.points[0].name.clone(), args.points[1].name.clone()];
    // `plan` keeps the inputs' order: that of the --point options.
    let (planned, params) = batch::plan(found, None);
    let dataset = Dataset::open(&config.batch.out, config.batch.format)?;
    let sources = [planned[0].source.as_str(), planned[1].source.as_str()];
    let (pair, figure) = crate::points::pair_into_dataset(
        &dataset,
        &planned,
        &params,
        &names,
        &config.batch,
        &PointsOptions::default(),
    )?;
    let mut sections = report_points::sections(&names, &pair, figure);
    sections.append(&mut doc.sections);
    doc.sections = sections;
    if args.title.is_none() {
        doc.title = format!("SCTP handovers seen at {} and {}", names[0], names[1]);
    }
    doc.summary.insert(
        0,
        format!(
            "Two capture points: {} = {}, {} = {} ({} handovers seen at both, {} at one only).",
            names[0],
            sources[0],
            names[1],
            sources[1],
            pair.records.len(),
            pair.one_sided.len()
        ),
    );
    Ok(pair.report.points.iter().any(|p| p.warning.is_some()))
}
