//! Ground-truth anchors (`--events FILE`): the moments packets alone cannot
//! show — a link going down or up, an address becoming usable or going
//! away. JSON lines (the harness's events.jsonl) or CSV
//! (`time,kind,address,interface`, header optional).

use crate::time::Timestamp;
use sctp_handover_harness_formats::parse_epoch;
use serde::Serialize;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// What happened at an anchor: the events.jsonl / CSV `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnchorKind {
    /// `link_down`: a link went down (a failure start, the start of the
    /// network-layer disconnection).
    LinkDown,
    /// `link_up`: a link came back (the start of link availability
    /// recognition).
    LinkUp,
    /// `addr_up`: an address became usable (ADDIP sent time starts here,
    /// the network-layer disconnection ends here).
    AddrUp,
    /// `addr_down`: an address went away (a start of the network-layer
    /// disconnection for the old address).
    AddrDown,
}

impl AnchorKind {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "link_down" => Some(AnchorKind::LinkDown),
            "link_up" => Some(AnchorKind::LinkUp),
            "addr_up" => Some(AnchorKind::AddrUp),
            "addr_down" => Some(AnchorKind::AddrDown),
            _ => None,
        }
    }
}

/// One ground-truth moment from the `--events` file.
#[derive(Debug, Clone, Serialize)]
pub struct Anchor {
    /// When it happened, on the capture's clock (epoch time).
    pub time: Timestamp,
    /// What happened.
    pub kind: AnchorKind,
    /// The address it concerns (`addr_up`, `addr_down`); `None` when the
    /// record names none.
    pub address: Option<IpAddr>,
    /// The network interface it concerns, as the record names it; `None`
    /// when it names none.
    pub interface: Option<String>,
}

/// Why an `--events` file could not be read ([`load`]).
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    /// The file could not be read.
    #[error("{path}: cannot read events: {source}")]
    Read {
        /// The events file.
        path: PathBuf,
        /// The I/O error reading it.
        source: std::io::Error,
    },
    /// A line of an anchor kind is malformed (not JSON, no or bad time,
    /// bad address, too few CSV fields).
    #[error("{path}:{line}: {reason}")]
    Line {
        /// The events file.
        path: PathBuf,
        /// The line's number (1-based).
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Parses "secs.frac" (up to nine decimals) without going through floats:
/// the harness's epoch times ([`parse_epoch`]), quoted or not (a CSV field).
pub fn parse_time(s: &str) -> Option<Timestamp> {
    parse_epoch(s.trim().trim_matches('"')).map(Timestamp)
}

/// Reads anchors; lines of other kinds (actions such as `bindx_add`, the
/// kernel's `kernel_*` records, kinds added later) are skipped whatever
/// their other fields, as are records with `ok: false`.
pub fn load(path: &Path) -> Result<Vec<Anchor>, AnchorError> {
    let text = std::fs::read_to_string(path).map_err(|source| AnchorError::Read {
        path: path.to_owned(),
        source,
    })?;
    let bad = |line: usize, reason: String| AnchorError::Line {
        path: path.to_owned(),
        line,
        reason,
    };
    let mut anchors = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let n = i + 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (time, kind, address, interface) = if line.starts_with('{') {
            let v: serde_json::Value =
                serde_json::from_str(line).map_err(|e| bad(n, format!("not JSON: {e}")))?;
            let known = v["kind"].as_str().and_then(AnchorKind::parse).is_some();
            if v["ok"] == false || !known {
                continue;
            }
            let time = match &v["time"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(x) => x.to_string(),
                _ => return Err(bad(n, "no \"time\"".into())),
            };
            (
                time,
                v["kind"].as_str().unwrap_or_default().to_string(),
                v["address"].as_str().map(String::from),
                v["interface"].as_str().map(String::from),
            )
        } else {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if n == 1 && f.first() == Some(&"time") {
                continue;
            }
            if f.len() < 2 {
                return Err(bad(n, "expected time,kind[,address[,interface]]".into()));
            }
            (
                f[0].to_string(),
                f[1].to_string(),
                f.get(2).filter(|s| !s.is_empty()).map(|s| s.to_string()),
                f.get(3).filter(|s| !s.is_empty()).map(|s| s.to_string()),
            )
        };
        let Some(kind) = AnchorKind::parse(&kind) else {
            continue;
        };
        let time = parse_time(&time).ok_or_else(|| bad(n, format!("bad time {time:?}")))?;
        let address = match address {
            Some(a) => Some(
                a.parse()
                    .map_err(|_| bad(n, format!("bad address {a:?}")))?,
            ),
            None => None,
        };
        anchors.push(Anchor {
            time,
            kind,
            address,
            interface,
        });
    }
    anchors.sort_by_key(|a| a.time);
    Ok(anchors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_exactly() {
        assert_eq!(parse_time("12.5"), Some(Timestamp(12_500_000_000)));
        assert_eq!(
            parse_time("1795342932.769014659"),
            Some(Timestamp(1_795_342_932_769_014_659))
        );
        assert_eq!(parse_time("3"), Some(Timestamp(3_000_000_000)));
        assert_eq!(parse_time("1.0000000001"), None);
        assert_eq!(parse_time("x"), None);
    }

    #[test]
    fn json_lines_and_csv() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let j = dir.join("e.jsonl");
        std::fs::write(
            &j,
            "{\"time\":\"10.5\",\"kind\":\"bindx_add\",\"ok\":true}\n{\"time\":\"11.25\",\"kind\":\"link_down\",\"interface\":\"eth1\",\"ok\":true}\n{\"time\":\"9\",\"kind\":\"addr_up\",\"address\":\"10.0.0.2\",\"ok\":false}\n",
        )
        .unwrap();
        let a = load(&j).unwrap();
        assert_eq!(a.len(), 1);
        // The harness's kernel records, and kinds not known yet whatever
        // their fields, are skipped.
        std::fs::write(
            &j,
            concat!(
                r#"{"time":"11.25","kind":"link_down","interface":"eth1","ok":true}"#,
                "\n",
                r#"{"time":"12.0","node":"cn","kind":"kernel_addr_change","address":"198.51.100.101","state":"unreachable","spc_error":"failed_threshold"}"#,
                "\n",
                r#"{"time":"12.0","node":"cn","kind":"kernel_status","state":"established","primary":"198.51.100.101","primary_error_count":3}"#,
                "\n",
                r#"{"time":"12.0","node":"cn","kind":"kernel_paddr","address":"198.51.100.101","state":"inactive","rto_ms":200}"#,
                "\n",
                r#"{"time":"12.0","node":"cn","kind":"kernel_mib","t3_rtx_expireds":6}"#,
                "\n",
                r#"{"kind":"from_the_future","address":"not an address","time":null}"#,
                "\n",
            ),
        )
        .unwrap();
        let a = load(&j).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].kind, AnchorKind::LinkDown);
        assert_eq!(a[0].interface.as_deref(), Some("eth1"));
        let c = dir.join("e.csv");
        std::fs::write(
            &c,
            "time,kind,address,interface\n5.0,addr_up,2001:db8::2,\n4,link_up,,wlan0\n",
        )
        .unwrap();
        let a = load(&c).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].kind, AnchorKind::LinkUp, "sorted by time");
        assert_eq!(a[1].address, Some("2001:db8::2".parse().unwrap()));
        std::fs::write(&c, "5.0,addr_up,not-an-address\n").unwrap();
        let e = load(&c).unwrap_err().to_string();
        assert!(e.contains("e.csv:1") && e.contains("not-an-address"), "{e}");
    }
}
