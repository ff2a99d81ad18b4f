//! The sweeps file of `make reproduce` (scripts/reproduce.sweeps): one
//! harness sweep per line, `SWEEP SCENARIO REPEAT [KEY=V1,V2,...]...`.

use anyhow::{bail, Context};
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub id: String,
    pub scenario: String,
    pub repeat: usize,
    pub sets: Vec<String>,
}

impl Sweep {
    /// The harness command that makes this sweep's runs.
    pub fn command(&self) -> String {
        let mut c = format!(
            "sctp-harness replay harness/scenarios/{}.toml --out RUNS/{}",
            self.scenario, self.id
        );
        for s in &self.sets {
            c.push_str(&format!(" --set {s}"));
        }
        if self.repeat > 1 {
            c.push_str(&format!(" --repeat {}", self.repeat));
        }
        c
    }

    /// How many run directories under `dir` (RUNS/<sweep>/<scenario>)
    /// exist and finished with `"ok": true`.
    pub fn describe_runs(&self, dir: &Path) -> String {
        let (mut all, mut ok) = (0, 0);
        for group in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            for run in std::fs::read_dir(group.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let meta = run.path().join("meta.json");
                if !meta.is_file() {
                    continue;
                }
                all += 1;
                let good = std::fs::read_to_string(&meta)
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                    .and_then(|v| v.get("ok")?.as_bool())
                    .unwrap_or(false);
                ok += usize::from(good);
            }
        }
        format!("{all} ({ok} ok)")
    }
}

pub fn parse(text: &str) -> anyhow::Result<Vec<Sweep>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(id), Some(scenario), Some(repeat)) = (words.next(), words.next(), words.next())
        else {
            bail!("line {}: SWEEP SCENARIO REPEAT [KEY=VALUES]...", n + 1);
        };
        let repeat = repeat
            .parse()
            .with_context(|| format!("line {}: REPEAT is a number", n + 1))?;
        let sets: Vec<String> = words.map(str::to_owned).collect();
        if let Some(bad) = sets.iter().find(|s| !s.contains('=')) {
            bail!("line {}: `{bad}` is not KEY=VALUES", n + 1);
        }
        out.push(Sweep {
            id: id.into(),
            scenario: scenario.into(),
            repeat,
            sets,
        });
    }
    Ok(out)
}

pub fn read(path: &Path) -> anyhow::Result<Vec<Sweep>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse(&text).with_context(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_sweeps_and_commands() {
        let s = parse(
            "# comment\n\nbokor-linear bokor-failover 3 rto=100,200 pmr=1,2\nhonda honda-dad 5\n",
        )
        .expect("parses");
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0].command(),
            "sctp-harness replay harness/scenarios/bokor-failover.toml --out RUNS/bokor-linear \
             --set rto=100,200 --set pmr=1,2 --repeat 3"
        );
        assert_eq!((s[1].repeat, s[1].sets.len()), (5, 0));
        assert!(parse("x y z").is_err());
        assert!(parse("x y 1 rto").is_err());
    }
}
