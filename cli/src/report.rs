//! What `analyze` prints: the compact summary of a batch, and — without
//! `--out` — the text summary or JSON lines of each input, analysed in
//! parallel and printed in input order.

use crate::AnalyzeArgs;
use sctp_handover::analysis::analyze_file;
use sctp_handover::output::{json, summary};
use sctp_handover_tables::batch::{options_for, BatchConfig, Outcome};
use sctp_handover_tables::inputs::{Input, InputKind};
use std::io::Write;
use std::time::Duration;

/// Lines of per-input detail before "… and N more".
const SHOWN_INPUTS: usize = 40;

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
/// output (or `--output`). Returns whether an input failed.
pub fn run(inputs: Vec<Input>, config: &BatchConfig, args: &AnalyzeArgs) -> anyhow::Result<bool> {
    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut failed = false;
    let mut entries = Vec::new();
    let mut analyses = Vec::new();
    for input in &inputs {
        match &input.kind {
            InputKind::NotCapture(why) => {
                eprintln!("sctp-handover: skipped {}: {why}", input.source);
                continue;
            }
            InputKind::Unreadable(why) => {
                failed = true;
                eprintln!("sctp-handover: error: {}: {why}", input.source);
                continue;
            }
            InputKind::Capture => {}
        }
        let options = match options_for(input, config) {
            Ok(o) => o,
            Err(e) => {
                failed = true;
                eprintln!("sctp-handover: error: {e}");
                continue;
            }
        };
        match analyze_file(&input.path, &options) {
            Err(e) => {
                failed = true;
                eprintln!("sctp-handover: {e}");
                entries.push((input.path.clone(), e.to_string()));
            }
            Ok(a) => {
                if let Some(w) = &a.warning {
                    eprintln!("sctp-handover: warning: {}: {w}", input.source);
                }
                if matches!(args.format, crate::Format::Text) {
                    summary::write(&mut out, &a)?;
                    writeln!(out)?;
                } else {
                    analyses.push(a);
                }
            }
        }
    }
    if matches!(args.format, crate::Format::Json) {
        let mut files = Vec::new();
        for a in &analyses {
            files.push(json::FileEntry::Analysed(a));
        }
        for (path, error) in &entries {
            files.push(json::FileEntry::Failed {
                path,
                error: error.clone(),
            });
        }
        json::write(&mut out, files)?;
    }
    out.flush()?;
    Ok(failed)
}
