//! The sweeps file of `make reproduce` (scripts/reproduce.sweeps): one
//! harness sweep per line, `SWEEP SCENARIO REPEAT [KEY=V1,V2,...]...`.

use anyhow::{bail, Context};
use sctp_handover_harness_formats::Meta;
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
        let mut own = Vec::new();
        for s in &self.sets {
            if let Some(rest) = s.strip_prefix("at_") {
                let (action, values) = rest.split_once('=').unwrap_or((rest, ""));
                own.push(format!(
                    "the scenario's {action} moved to at_ms = {} (one derived scenario per value)",
                    values.replace(',', ", ")
                ));
            } else if let Some(action) = s.strip_prefix("phase=") {
                own.push(format!(
                    "repetition k of n with its {action} (k − 0.5)/n of a heartbeat period \
                     (HB.Interval + RTO.max) later and the run as much plus one period longer"
                ));
            } else {
                c.push_str(&format!(" --set {s}"));
            }
        }
        if self.repeat > 1 {
            c.push_str(&format!(" --repeat {}", self.repeat));
        }
        if !own.is_empty() {
            c.push_str(&format!(
                " (scripts/reproduce.sh: {}; each run's scenario.toml is what was replayed)",
                own.join("; ")
            ));
        }
        c
    }

    /// The group directories of this line's combinations (`default`
    /// without keys; `phase=` is not a group key).
    pub fn groups(&self) -> Vec<String> {
        let mut out = vec![String::new()];
        for set in self.sets.iter().filter(|s| !s.starts_with("phase=")) {
            let (key, values) = set.split_once('=').unwrap_or((set, ""));
            out = values
                .split(',')
                .flat_map(|v| {
                    out.iter().map(move |prefix| {
                        if prefix.is_empty() {
                            format!("{key}={v}")
                        } else {
                            format!("{prefix},{key}={v}")
                        }
                    })
                })
                .collect();
        }
        if out == [String::new()] {
            return vec!["default".into()];
        }
        // The harness names a group by the keys in the order given, the
        // first key varying slowest.
        out.sort();
        out
    }

    /// How many run directories of this line's groups under `dir`
    /// (RUNS/<sweep>/<scenario>) exist, finished with `"ok": true`, and
    /// passed the harness's check (`"valid": true`).
    pub fn describe_runs(&self, dir: &Path) -> String {
        let (mut all, mut ok, mut valid) = (0, 0, 0);
        let groups = self.groups();
        for group in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if !groups.contains(&group.file_name().to_string_lossy().into_owned()) {
                continue;
            }
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
                let meta = std::fs::read_to_string(&meta)
                    .ok()
                    .and_then(|t| Meta::parse(&t).ok())
                    .unwrap_or_default();
                let run_ok = meta.ok == Some(true);
                ok += usize::from(run_ok);
                valid += usize::from(run_ok && meta.valid == Some(Some(true)));
            }
        }
        format!("{all} ({ok} ok, {valid} valid)")
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
        let own = parse("k koh-kim-2-lan 5 at_set_peer_primary=1020,1050 delay=1 phase=link_up\n")
            .expect("parses");
        let c = own[0].command();
        assert!(c.contains("--set delay=1 --repeat 5"), "{c}");
        assert!(
            c.contains("set_peer_primary moved to at_ms = 1020, 1050"),
            "{c}"
        );
        assert!(c.contains("repetition k of n with its link_up"), "{c}");
        assert!(
            !c.contains("--set at_") && !c.contains("--set phase"),
            "{c}"
        );
        assert_eq!(
            parse("a b 1 rto=1,2 pmr=3\n").expect("parses")[0].groups(),
            vec!["rto=1,pmr=3", "rto=2,pmr=3"]
        );
        assert_eq!(
            parse("a b 1\n").expect("parses")[0].groups(),
            vec!["default"]
        );
        assert!(parse("x y z").is_err());
        assert!(parse("x y 1 rto").is_err());
    }
}
