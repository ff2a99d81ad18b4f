//! Groups and their statistics, computed with polars over the `handovers`
//! table as `analyze --out` writes it: n, mean, median, min, max and the
//! sample standard deviation (ddof = 1) of every component per group.

use anyhow::{bail, Context};
use polars::prelude::{
    BooleanChunked, ChunkAgg, ChunkQuantile, ChunkVar, DataFrame, DataType, IdxCa, IdxSize,
    NewChunkedArray,
};

/// How rows are put into groups.
#[derive(Debug, Clone)]
pub enum GroupBy {
    /// One group holding every row.
    All,
    /// One group per distinct value of a column (`--by`).
    Column(String),
    /// Named glob patterns over `source` (`--group NAME=GLOB`); a row may
    /// fall into several.
    Globs(Vec<(String, glob::Pattern)>),
}

/// Summary statistics of one column within one group (nulls left out).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stat {
    /// The number of non-null values.
    pub n: usize,
    /// Their mean; None when there is none.
    pub mean: Option<f64>,
    /// Their median; None when there is none.
    pub median: Option<f64>,
    /// The smallest; None when there is none.
    pub min: Option<f64>,
    /// The largest; None when there is none.
    pub max: Option<f64>,
    /// Sample standard deviation (n − 1); None below two values.
    pub std: Option<f64>,
}

/// The rows of one group (a value of the grouping column or glob).
#[derive(Debug, Clone)]
pub struct Group {
    /// The group's label.
    pub name: String,
    /// Its rows of the handovers table.
    pub rows: DataFrame,
    /// Distinct sources in the group.
    pub inputs: usize,
}

/// Columns whose text names groups: `file` means `source`, and a swept
/// parameter may be named without its `param_` prefix.
pub fn resolve_column(df: &DataFrame, name: &str) -> anyhow::Result<String> {
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let candidates = [
        name.to_owned(),
        format!("param_{name}"),
        if name == "file" {
            "source".into()
        } else {
            name.to_owned()
        },
        format!("{name}_ms"),
    ];
    for c in candidates {
        if names.contains(&c) {
            return Ok(c);
        }
    }
    let params: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_prefix("param_"))
        .collect();
    bail!(
        "no column `{name}` in the handovers table (group by scenario, capture_side, class, \
         file{}{})",
        if params.is_empty() {
            ""
        } else {
            ", or a swept parameter: "
        },
        params.join(", ")
    )
}

/// A column's values as text (group names, sources), nulls as None.
pub fn text_values(df: &DataFrame, column: &str) -> anyhow::Result<Vec<Option<String>>> {
    let c = df.column(column)?.as_materialized_series();
    if c.dtype().is_float() {
        // 100 rather than "100.0": swept parameters read as people wrote them.
        let f = c.cast(&DataType::Float64)?;
        return Ok(f
            .f64()?
            .iter()
            .map(|v| v.map(|x| crate::figures::svg::num(Some(x))))
            .collect());
    }
    let c = c.cast(&DataType::String)?;
    Ok(c.str()?.iter().map(|v| v.map(|s| s.to_owned())).collect())
}

/// A numeric column as f64 values, nulls as None.
pub fn numbers(df: &DataFrame, column: &str) -> anyhow::Result<Vec<Option<f64>>> {
    let s = df
        .column(column)
        .with_context(|| format!("no column `{column}`"))?
        .as_materialized_series()
        .cast(&DataType::Float64)?;
    Ok(s.f64()?.iter().collect())
}

/// The rows for which `keep(row index)` holds.
pub fn mask(df: &DataFrame, keep: impl Fn(usize) -> bool) -> anyhow::Result<DataFrame> {
    let m = BooleanChunked::from_iter_values("mask".into(), (0..df.height()).map(keep));
    Ok(df.filter(&m)?)
}

/// Rows kept where `column` has one of `values` (an empty list keeps all).
pub fn filter_in(df: &DataFrame, column: &str, values: &[String]) -> anyhow::Result<DataFrame> {
    if values.is_empty() {
        return Ok(df.clone());
    }
    let v = text_values(df, column)?;
    mask(df, |i| v[i].as_ref().is_some_and(|x| values.contains(x)))
}

/// The distinct sources of some rows, sorted.
pub fn sources(df: &DataFrame) -> anyhow::Result<Vec<String>> {
    let mut s: Vec<String> = text_values(df, "source")?.into_iter().flatten().collect();
    s.sort();
    s.dedup();
    Ok(s)
}

fn distinct_sources(df: &DataFrame) -> usize {
    sources(df).map_or(0, |s| s.len())
}

/// The groups, in a stable order; rows without a group are returned
/// apart (with the reason) so the report can list them.
pub fn groups(df: &DataFrame, by: &GroupBy) -> anyhow::Result<(Vec<Group>, DataFrame, String)> {
    match by {
        GroupBy::All => Ok((
            vec![Group {
                name: "all".into(),
                rows: df.clone(),
                inputs: distinct_sources(df),
            }],
            df.clear(),
            String::new(),
        )),
        GroupBy::Column(spec) => {
            // `--by scenario,class`: one group per combination of values.
            let columns: Vec<String> = spec
                .split(',')
                .map(|c| resolve_column(df, c.trim()))
                .collect::<anyhow::Result<_>>()?;
            let values: Vec<Vec<Option<String>>> = columns
                .iter()
                .map(|c| text_values(df, c))
                .collect::<anyhow::Result<_>>()?;
            // One pass: row indices bucketed by their key.
            let mut buckets: std::collections::HashMap<Vec<String>, Vec<IdxSize>> =
                std::collections::HashMap::new();
            let mut rest = Vec::new();
            for i in 0..df.height() {
                let key: Option<Vec<String>> = values.iter().map(|v| v[i].clone()).collect();
                match key {
                    Some(k) => buckets.entry(k).or_default().push(i as IdxSize),
                    None => rest.push(i as IdxSize),
                }
            }
            let mut keys: Vec<Vec<String>> = buckets.keys().cloned().collect();
            keys.sort_by(|a, b| {
                a.iter()
                    .zip(b)
                    .map(|(x, y)| match (x.parse::<f64>(), y.parse::<f64>()) {
                        (Ok(p), Ok(q)) => p.total_cmp(&q),
                        _ => x.cmp(y),
                    })
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            let mut out = Vec::new();
            for key in keys {
                let idx = buckets.remove(&key).unwrap_or_default();
                let rows = df.take(&IdxCa::from_vec("idx".into(), idx))?;
                // A bare number says little: a swept parameter's groups are
                // named `pmr = 2`.
                let name = columns
                    .iter()
                    .zip(&key)
                    .map(|(c, v)| match c.strip_prefix("param_") {
                        Some(p) => format!("{p} = {v}"),
                        None => v.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                out.push(Group {
                    inputs: distinct_sources(&rows),
                    name,
                    rows,
                });
            }
            let rest = df.take(&IdxCa::from_vec("idx".into(), rest))?;
            Ok((
                out,
                rest,
                format!("no value in column `{}`", columns.join("` or `")),
            ))
        }
        GroupBy::Globs(patterns) => {
            let sources = text_values(df, "source")?;
            let matches =
                |i: usize, p: &glob::Pattern| sources[i].as_deref().is_some_and(|s| p.matches(s));
            let mut out = Vec::new();
            for (name, p) in patterns {
                let rows = mask(df, |i| matches(i, p))?;
                out.push(Group {
                    name: name.clone(),
                    inputs: distinct_sources(&rows),
                    rows,
                });
            }
            let rest = mask(df, |i| !patterns.iter().any(|(_, p)| matches(i, p)))?;
            Ok((out, rest, "matches no --group pattern".into()))
        }
    }
}

/// Statistics of a numeric column (None when the column is absent).
pub fn stat(df: &DataFrame, column: &str) -> anyhow::Result<Option<Stat>> {
    let Ok(c) = df.column(column) else {
        return Ok(None);
    };
    let s = c.as_materialized_series().cast(&DataType::Float64)?;
    let ca = s.f64()?;
    let n = ca.len() - ca.null_count();
    Ok(Some(Stat {
        n,
        mean: ca.mean(),
        median: ca.median(),
        min: ca.min(),
        max: ca.max(),
        std: if n >= 2 { ca.std(1) } else { None },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::df;

    fn frame() -> DataFrame {
        df!(
            "source" => ["a/r1.pcap", "a/r2.pcap", "b/r1.pcap", "b/r2.pcap", "c.pcap"],
            "param_pmr" => [Some(1.0), Some(1.0), Some(2.0), Some(2.0), None],
            "data_interrupt_ms" => [Some(10.0), Some(14.0), Some(30.0), None, Some(5.0)]
        )
        .expect("frame")
    }

    #[test]
    fn groups_by_a_parameter_name_their_values_and_keep_the_rest_apart() {
        let (groups, rest, why) = groups(&frame(), &GroupBy::Column("pmr".into())).expect("groups");
        let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["pmr = 1", "pmr = 2"]);
        assert_eq!(rest.height(), 1);
        assert!(why.contains("param_pmr"));
        let s = stat(&groups[0].rows, "data_interrupt_ms")
            .expect("stat")
            .expect("column");
        assert_eq!(
            (s.n, s.mean, s.median, s.min, s.max),
            (2, Some(12.0), Some(12.0), Some(10.0), Some(14.0))
        );
        // Sample standard deviation: sqrt(((10-12)² + (14-12)²) / 1).
        assert!((s.std.unwrap_or(0.0) - 8f64.sqrt()).abs() < 1e-12);
        let one = stat(&groups[1].rows, "data_interrupt_ms")
            .expect("stat")
            .expect("column");
        assert_eq!((one.n, one.std), (1, None));
    }

    #[test]
    fn glob_groups_may_be_empty_and_unknown_columns_are_named() {
        let by = GroupBy::Globs(vec![
            ("a".into(), glob::Pattern::new("a/*").expect("glob")),
            ("none".into(), glob::Pattern::new("z/*").expect("glob")),
        ]);
        let (groups, rest, _) = groups(&frame(), &by).expect("groups");
        assert_eq!(groups[0].rows.height(), 2);
        assert_eq!(groups[0].inputs, 2);
        assert_eq!(groups[1].rows.height(), 0);
        assert_eq!(rest.height(), 3);
        let e = resolve_column(&frame(), "colour").expect_err("no such column");
        assert!(
            e.to_string().contains("`colour`") && e.to_string().contains("pmr"),
            "{e}"
        );
    }
}
