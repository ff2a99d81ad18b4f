//! Analyses one capture in a single streaming pass and writes the terminal
//! summary or JSON lines to stdout: the library's outputs without the CLI,
//! for measuring time and memory (inputs from lab/src/bin/gen_workload).
//!
//! ```text
//! stream CAPTURE [summary|all|jsonl]
//! ```

use sctp_handover::analysis::{analyze_stream, AnalysisOptions};
use sctp_handover::output::{jsonl, summary::Summary};
use std::io::Write;
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next().map(PathBuf::from) else {
        eprintln!("usage: stream CAPTURE [summary|all|jsonl]");
        std::process::exit(2);
    };
    let format = args.next().unwrap_or_else(|| "summary".into());
    let options = AnalysisOptions::default();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let started = std::time::Instant::now();
    let report = match format.as_str() {
        "summary" | "all" => {
            let mut s = Summary::new(format == "all");
            let result = analyze_stream(&path, &options, &mut s);
            match result {
                Ok(file) => {
                    s.finish(&file, &mut out)?;
                    Some(file)
                }
                Err(e) => {
                    eprintln!("stream: {e}");
                    None
                }
            }
        }
        "jsonl" => {
            jsonl::header(&mut out)?;
            let mut lines = jsonl::JsonLines::new(&mut out, &path);
            match analyze_stream(&path, &options, &mut lines) {
                Ok(file) => {
                    lines.finish(&file)?;
                    Some(file)
                }
                Err(e) => {
                    drop(lines);
                    jsonl::failed(&mut out, &path, &e)?;
                    None
                }
            }
        }
        other => {
            eprintln!("stream: unknown format {other:?} (summary, all, jsonl)");
            std::process::exit(2);
        }
    };
    out.flush()?;
    if let Some(f) = report {
        eprintln!(
            "stream: {} frames, {} associations, {} handovers in {:.3} s",
            f.frames,
            f.associations,
            f.handovers,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
