//! A table of the dataset as plain rows: every column materialised once
//! (numbers as f64, the rest as text), and the rows of one sweep picked by
//! their `source` path (`RUNS/<sweep>/<scenario>/<group>/rNN/<side>.pcap`).

use crate::stats::{numbers, text_values};
use polars::prelude::DataFrame;
use std::collections::HashMap;

enum Col {
    Num(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

pub struct Rows {
    pub len: usize,
    cols: HashMap<String, Col>,
}

impl Rows {
    pub fn new(df: &DataFrame) -> anyhow::Result<Rows> {
        let mut cols = HashMap::new();
        for c in df.columns() {
            let name = c.name().to_string();
            let col = if c.dtype().is_primitive_numeric() {
                Col::Num(numbers(df, &name)?)
            } else {
                Col::Text(text_values(df, &name)?)
            };
            cols.insert(name, col);
        }
        Ok(Rows {
            len: df.height(),
            cols,
        })
    }

    pub fn empty() -> Rows {
        Rows {
            len: 0,
            cols: HashMap::new(),
        }
    }

    /// A number; text that reads as one counts (swept parameters written
    /// as text in some parts).
    pub fn num(&self, col: &str, i: usize) -> Option<f64> {
        match self.cols.get(col)? {
            Col::Num(v) => v.get(i).copied().flatten(),
            Col::Text(v) => v.get(i)?.as_deref()?.parse().ok(),
        }
    }

    pub fn text(&self, col: &str, i: usize) -> Option<String> {
        match self.cols.get(col)? {
            Col::Num(v) => v
                .get(i)
                .copied()
                .flatten()
                .map(|x| crate::figures::svg::num(Some(x))),
            Col::Text(v) => v.get(i)?.clone(),
        }
    }

    /// The rows of a sweep's runs: their source holds `/<sweep>/` (or
    /// starts with `<sweep>/`). Runs whose script did not take effect
    /// (`run_valid` false: the harness's check) are left out; the report
    /// lists them with the reason.
    pub fn of_sweep(&self, sweep: &str) -> Vec<usize> {
        (0..self.len)
            .filter(|&i| {
                self.text("source", i)
                    .is_some_and(|s| run_of(&s, sweep).is_some())
                    && self.text("run_valid", i).as_deref() != Some("false")
            })
            .collect()
    }
}

/// The run directory of a capture path relative to the runs root
/// (`<sweep>/<scenario>/<group>/rNN`), when the path is one of `sweep`'s.
pub fn run_of(source: &str, sweep: &str) -> Option<String> {
    let marker = format!("/{sweep}/");
    let start = if source.starts_with(&marker[1..]) {
        0
    } else {
        source.find(&marker)? + 1
    };
    let rel = &source[start..];
    let dir = rel.rsplit_once('/')?.0;
    Some(dir.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_directories_of_a_sweep() {
        assert_eq!(
            run_of(
                "reproduce-output/runs/bokor-linear/bokor-failover/rto=100,pmr=1/r02/cn.pcap",
                "bokor-linear"
            )
            .as_deref(),
            Some("bokor-linear/bokor-failover/rto=100,pmr=1/r02")
        );
        assert_eq!(
            run_of("honda/honda-dad/default/r01/mn.pcap", "honda").as_deref(),
            Some("honda/honda-dad/default/r01")
        );
        assert_eq!(
            run_of("runs/bokor-linear-x/a/b/r01/cn.pcap", "bokor-linear"),
            None
        );
    }
}
