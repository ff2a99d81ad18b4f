//! A batch worker analyses one input at a time: with one worker, the
//! inputs finish in input order. polars writes each batch of rows on its
//! own rayon pool, and a rayon worker waiting for another pool runs its own
//! pool's queued jobs meanwhile: when the batch's workers were a rayon
//! pool, the next inputs started on top of the one being written, finished
//! before it (last first), and every analysis on the stack stayed in
//! memory (5 MB per 25 MB capture).

#[path = "../../analyzer/tests/common/mod.rs"]
mod common;

use sctp_handover::analysis::AnalysisOptions;
use sctp_handover_tables::batch::{self, BatchConfig, Outcome, Progress};
use sctp_handover_tables::inputs;
use sctp_handover_tables::write::TableFormat;
use std::sync::Mutex;

/// The sources in the order their inputs finished.
struct FinishOrder(Mutex<Vec<String>>);

impl Progress for FinishOrder {
    fn input_done(&self, outcome: &Outcome) {
        if let Ok(mut order) = self.0.lock() {
            order.push(outcome.source.clone());
        }
    }
}

#[test]
fn one_worker_finishes_the_inputs_in_order() {
    let (found, problems) = inputs::discover(&[common::repo_root().join("sample-captures")]);
    assert!(problems.is_empty(), "{problems:?}");
    let (planned, params) = batch::plan(found, None);
    let sources: Vec<String> = planned.iter().map(|i| i.source.clone()).collect();
    assert!(sources.len() >= 10, "{sources:?}");
    let out = std::env::temp_dir().join(format!("sctpho-batch-workers-{}", std::process::id()));
    let config = BatchConfig {
        out: out.clone(),
        format: TableFormat::PARQUET,
        jobs: 1,
        force: true,
        shard: None,
        options: AnalysisOptions::default(),
        harness_files: true,
    };
    let order = FinishOrder(Mutex::new(Vec::new()));
    let outcomes = batch::run(planned, &params, &config, &order).expect("batch runs");
    let _ = std::fs::remove_dir_all(&out);
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| o.failed()).collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(order.0.into_inner().expect("not poisoned"), sources);
}
