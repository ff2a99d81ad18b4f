//! What `analyze` prints: the compact summary of a batch, and — without
//! `--out` — the text summary or JSON lines of each input, analysed in
//! parallel and printed in input order.

use crate::AnalyzeArgs;
use sctp_handover::analysis::analyze_reader;
use sctp_handover::output::jsonl::{self, JsonLines};
use sctp_handover::output::summary::Summary;
use sctp_handover_tables::batch::{options_for, BatchConfig, Outcome};
use sctp_handover_tables::inputs::{open_capture, Input, InputKind};
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

/// Lines of per-input detail before "… and N more".
const SHOWN_INPUTS: usize = 40;

/// Prints the batch's compact summary to standard output: the inputs by
/// outcome (ok, truncated, failed, skipped; those already complete in the
/// dataset `out` reused), the `captures` and `bytes` read in `elapsed`,
/// and the associations and handovers found.
pub fn batch_summary(
    outcomes: &[Outcome],
    captures: usize,
    bytes: u64,
    elapsed: Duration,
    out: &str,
) -> std::io::Result<()> {
    let count = |s: &str| outcomes.iter().filter(|o| o.status == s).count();
    let reused = outcomes.iter().filter(|o| o.reused).count();
    let stdout = std::io::stdout();
    let mut w = stdout.lock();
    writeln!(
        w,
        "{} inputs ({} captures, {:.1} MB) in {:.2} s: {} ok, {} truncated, {} failed, {} skipped (not captures){}",
        outcomes.len(),
        captures,
        bytes as f64 / 1e6,
        elapsed.as_secs_f64(),
        count("ok"),
        count("truncated"),
        count("failed"),
        count("skipped"),
        if reused > 0 {
            format!("; {reused} already complete in {out}, not analysed again (--force redoes them)")
        } else {
            String::new()
        }
    )?;
    let associations: u64 = outcomes.iter().map(|o| o.associations).sum();
    let handovers: u64 = outcomes.iter().map(|o| o.handovers).sum();
    writeln!(
        w,
        "{associations} associations, {handovers} handovers; tables in {out}/: files, associations, paths, asconf, events, handovers"
    )?;
    // Problems first, then the inputs with handovers, then the rest.
    let mut order: Vec<&Outcome> = outcomes.iter().collect();
    order.sort_by_key(|o| match o.status.as_str() {
        "failed" => 0,
        "truncated" => 1,
        _ if o.handovers > 0 => 2,
        "ok" => 3,
        _ => 4,
    });
    writeln!(
        w,
        "  {:<9} {:>7} {:>9}  source",
        "status", "assocs", "handovers"
    )?;
    for o in order.iter().take(SHOWN_INPUTS) {
        writeln!(
            w,
            "  {:<9} {:>7} {:>9}  {}",
            o.status, o.associations, o.handovers, o.source
        )?;
    }
    if order.len() > SHOWN_INPUTS {
        writeln!(
            w,
            "  … and {} more (see {out}/files)",
            order.len() - SHOWN_INPUTS
        )?;
    }
    Ok(())
}

/// Without `--out`: each input's text summary or JSON lines on standard
/// output (or `--output`), in input order. With one worker, or one input,
/// output streams as associations finish; with several, each input's
/// output is rendered in memory by its worker and written in order.
/// Returns whether an input failed.
pub fn run(inputs: Vec<Input>, config: &BatchConfig, args: &AnalyzeArgs) -> anyhow::Result<bool> {
    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let json = matches!(args.format, crate::Format::Jsonl);
    if json {
        jsonl::header(&mut out)?;
    }
    let pool = sctp_handover_tables::batch::worker_pool(config.jobs)?;
    let workers = pool.current_num_threads();
    let mut failed = false;
    if workers == 1 || inputs.len() == 1 {
        for input in &inputs {
            failed |= render(input, config, args, &mut out)?;
        }
    } else {
        use rayon::prelude::*;
        for chunk in inputs.chunks(workers * 2) {
            let rendered: Vec<(bool, Vec<u8>)> = pool.install(|| {
                chunk
                    .par_iter()
                    .map(|input| {
                        let mut buffer = Vec::new();
                        let failed = render(input, config, args, &mut buffer).unwrap_or(true);
                        (failed, buffer)
                    })
                    .collect()
            });
            for (f, buffer) in rendered {
                failed |= f;
                out.write_all(&buffer)?;
            }
        }
    }
    out.flush()?;
    Ok(failed)
}

/// One input's output into `out`; log lines to standard error. Returns
/// whether the input failed.
fn render(
    input: &Input,
    config: &BatchConfig,
    args: &AnalyzeArgs,
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    let json = matches!(args.format, crate::Format::Jsonl);
    let fail = |out: &mut dyn Write, message: String| -> std::io::Result<bool> {
        eprintln!("sctp-handover: error: {message}");
        if json {
            jsonl::failed(out, &input.path, &message)?;
        }
        Ok(true)
    };
    match &input.kind {
        InputKind::NotCapture(why) => {
            eprintln!("sctp-handover: skipped {}: {why}", input.source);
            return Ok(false);
        }
        InputKind::Unreadable(why) => return fail(out, format!("{}: {why}", input.source)),
        InputKind::Capture => {}
    }
    let options = match options_for(input, config) {
        Ok(o) => o,
        Err(e) => return fail(out, e),
    };
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        if json {
            let mut sink = JsonLines::new(&mut *out, &input.path);
            open_capture(input)
                .and_then(|reader| analyze_reader(reader, &options, &mut sink))
                .map(|report| sink.finish(&report).map(|_| report))
        } else {
            let mut sink = Summary::new(args.all);
            open_capture(input)
                .and_then(|reader| analyze_reader(reader, &options, &mut sink))
                .map(|report| {
                    sink.finish(&report, &mut *out)
                        .and_then(|()| writeln!(out))
                        .map(|()| report)
                })
        }
    }));
    match result {
        Ok(Ok(Ok(report))) => {
            if let Some(w) = &report.warning {
                eprintln!("sctp-handover: warning: {}: {w}", input.source);
            }
            Ok(false)
        }
        Ok(Ok(Err(io))) => Err(io),
        Ok(Err(e)) => fail(out, e.to_string()),
        Err(_) => fail(
            out,
            format!("{}: internal error (please report)", input.source),
        ),
    }
}
