//! events.jsonl: one JSON object a line, the harness's actions and the
//! kernels' own view (docs/harness.md, "Ground truth" and "The kernel's
//! own view"). Times are epoch seconds with nine decimals from
//! CLOCK_REALTIME, the clock of the captures, written as strings so that
//! they stay exact.

use serde::{Deserialize, Serialize};

/// Nanoseconds since the epoch → `secs.nnnnnnnnn` (the seconds floored, so
/// the fraction is never negative: [`parse_epoch`] reads it back exactly).
pub fn epoch_string(ns: i64) -> String {
    format!(
        "{}.{:09}",
        ns.div_euclid(1_000_000_000),
        ns.rem_euclid(1_000_000_000)
    )
}

/// `1795343547.228277768` → ns since the epoch, exactly (no float): whole
/// seconds, optionally a point and up to nine decimal digits; None for
/// anything else, more digits included (they would be rounded away) and
/// times beyond an `i64` of nanoseconds.
pub fn parse_epoch(s: &str) -> Option<i64> {
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = secs.parse().ok()?;
    let frac_ns: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().ok()? * 10_i64.pow(9 - frac.len() as u32)
    };
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// The harness's own line: an action of the timeline (`time` just before
/// its syscall, `time_after` just after), `addr_up` / `addr_down`,
/// `assoc_up` around `connect()`, `traffic_end`. What the harness writes;
/// readers read every line as an [`Event`].
#[derive(Debug, Serialize)]
pub struct Record<'a> {
    /// [`epoch_string`] of the moment.
    pub time: String,
    /// [`epoch_string`] of the end of the syscall, for a timed action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_after: Option<String>,
    /// The action's name, or `addr_up`, `addr_down`, `assoc_up`, `traffic_end`.
    pub kind: &'a str,
    /// The MN interface it concerns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interface: Option<&'a str>,
    /// The address it concerns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<&'a str>,
    /// Whether the call succeeded.
    pub ok: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One line of events.jsonl, as every reader reads it: the fields of the
/// harness's lines and of the kernel's (`node` set), each absent where its
/// kind does not write it. Fields a later harness adds are ignored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Event {
    /// `time`, exactly ([`parse_epoch`]).
    #[serde(skip)]
    pub time_ns: i64,
    /// `time` as written.
    pub time: String,
    /// `time_after` as written: just after a timed action's syscall.
    #[serde(default)]
    pub time_after: Option<String>,
    /// The action's name (`bindx_add`, `link_down`, …), `addr_up`,
    /// `addr_down`, `assoc_up`, `traffic_end`, or the kernel's
    /// `kernel_addr_change`, `kernel_status`, `kernel_paddr`, `kernel_mib`.
    pub kind: String,
    /// `mn` / `cn`: whose kernel, on the kernel's lines; absent on the
    /// harness's own.
    #[serde(default)]
    pub node: Option<String>,
    /// Whether the harness's call succeeded (absent on the kernel's lines).
    #[serde(default)]
    pub ok: Option<bool>,
    /// Why it did not.
    #[serde(default)]
    pub error: Option<String>,
    /// The MN interface of an action.
    #[serde(default)]
    pub interface: Option<String>,
    /// The address of an action; the peer address of `kernel_addr_change`
    /// and `kernel_paddr`.
    #[serde(default)]
    pub address: Option<String>,
    /// `kernel_addr_change`: `added`, `removed`, `made_primary`,
    /// `unreachable`, …; `kernel_status`: the association's state;
    /// `kernel_paddr`: the path's.
    #[serde(default)]
    pub state: Option<String>,
    /// `kernel_addr_change`: the notification's `spc_error`.
    #[serde(default)]
    pub spc_error: Option<String>,
    /// `kernel_status`: the primary path's address.
    #[serde(default)]
    pub primary: Option<String>,
    /// `kernel_status`: the primary path's state.
    #[serde(default)]
    pub primary_state: Option<String>,
    /// `kernel_status` (the primary's) and `kernel_paddr`: RTO, ms.
    #[serde(default)]
    pub rto_ms: Option<u64>,
    /// The same paths' SRTT, ms (in 10 ms steps at HZ = 100).
    #[serde(default)]
    pub srtt_ms: Option<u64>,
    /// The same paths' congestion window, bytes.
    #[serde(default)]
    pub cwnd: Option<u64>,
    /// `kernel_status`: unacknowledged DATA chunks.
    #[serde(default)]
    pub unacked: Option<u64>,
    /// `kernel_status`: DATA chunks waiting to be sent.
    #[serde(default)]
    pub pending: Option<u64>,
    /// `kernel_status`: the primary path's error counter (RFC 9260 §8.2).
    #[serde(default)]
    pub primary_error_count: Option<u64>,
    /// `kernel_status`: the association's error counter (RFC 9260 §8.1).
    #[serde(default)]
    pub overall_error_count: Option<u64>,
    /// `kernel_mib`: T3-rtx expiries, all paths (/proc/net/sctp/snmp).
    #[serde(default)]
    pub t3_rtx_expireds: Option<u64>,
    /// `kernel_mib`: retransmissions by T3-rtx.
    #[serde(default)]
    pub t3_retransmits: Option<u64>,
    /// `kernel_mib`: fast retransmissions.
    #[serde(default)]
    pub fast_retransmits: Option<u64>,
}

impl Event {
    /// One line: JSON with a `kind` and an exact `time`.
    pub fn parse(line: &str) -> Result<Event, String> {
        let mut event: Event = serde_json::from_str(line).map_err(|e| e.to_string())?;
        event.time_ns =
            parse_epoch(&event.time).ok_or_else(|| format!("bad time {:?}", event.time))?;
        Ok(event)
    }

    /// `time_after`, exactly; None when absent or not an epoch time.
    pub fn time_after_ns(&self) -> Option<i64> {
        self.time_after.as_deref().and_then(parse_epoch)
    }

    /// Whether the kernel wrote it (`node` set) rather than the harness.
    pub fn is_kernel(&self) -> bool {
        self.node.is_some()
    }
}

/// A line of events.jsonl that is not an [`Event`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("events.jsonl line {line}: {message}")]
pub struct LineError {
    /// Its number, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// Every line of an events.jsonl (blank lines aside), sorted by time: the
/// MN's and the CN's processes append to the same file, so it is not in
/// time order (lines of the same time keep the file's order). A line that
/// is not an event is an error naming it: nothing of the ground truth is
/// dropped unseen.
pub fn parse_log(text: &str) -> Result<Vec<Event>, LineError> {
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        events.push(Event::parse(line).map_err(|message| LineError {
            line: i + 1,
            message,
        })?);
    }
    events.sort_by_key(|e| e.time_ns);
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_times_are_exact_both_ways() {
        assert_eq!(
            parse_epoch("1795343547.228277768"),
            Some(1_795_343_547_228_277_768)
        );
        assert_eq!(parse_epoch("12.5"), Some(12_500_000_000));
        assert_eq!(parse_epoch("12"), Some(12_000_000_000));
        assert_eq!(parse_epoch("12.1234567890"), None, "a tenth digit");
        assert_eq!(parse_epoch("12.-5"), None);
        assert_eq!(parse_epoch("x"), None);
        assert_eq!(parse_epoch("99999999999.5"), None, "beyond i64 ns");
        for ns in [1_795_343_547_228_277_768, 0, 5, -1, -1_500_000_000] {
            assert_eq!(parse_epoch(&epoch_string(ns)), Some(ns), "{ns}");
        }
        assert_eq!(epoch_string(-1), "-1.999999999");
    }

    #[test]
    fn a_log_is_sorted_and_a_bad_line_names_itself() {
        let log = concat!(
            r#"{"time":"1795445749.116790170","node":"cn","kind":"kernel_addr_change","address":"198.51.100.102","state":"added","spc_error":"failed_threshold"}"#,
            "\n\n",
            r#"{"time":"1795445749.106176410","time_after":"1795445749.106320282","kind":"bindx_add","address":"198.51.100.102","ok":true}"#,
            "\n",
            r#"{"time":"1795445749.611896730","node":"cn","kind":"kernel_status","state":"established","primary":"198.51.100.102","primary_state":"active","rto_ms":200,"srtt_ms":20,"cwnd":4380,"unacked":1,"pending":0,"primary_error_count":0,"overall_error_count":0,"from_a_later_harness":[1]}"#,
        );
        let events = parse_log(log).expect("parses");
        let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["bindx_add", "kernel_addr_change", "kernel_status"]);
        assert_eq!(events[0].time_ns, 1_795_445_749_106_176_410);
        assert_eq!(events[0].time_after_ns(), Some(1_795_445_749_106_320_282));
        assert_eq!((events[0].ok, events[0].is_kernel()), (Some(true), false));
        assert_eq!(events[1].spc_error.as_deref(), Some("failed_threshold"));
        assert_eq!(
            (events[2].rto_ms, events[2].primary.as_deref()),
            (Some(200), Some("198.51.100.102"))
        );
        let e = parse_log(&format!("{log}\n{{\"time\":\"17953435")).expect_err("cut");
        assert_eq!(e.line, 5);
        assert!(e.to_string().starts_with("events.jsonl line 5: "), "{e}");
        let e = parse_log(r#"{"time":"1.2.3","kind":"assoc_up"}"#).expect_err("bad time");
        assert_eq!(e.to_string(), r#"events.jsonl line 1: bad time "1.2.3""#);
    }

    #[test]
    fn what_the_harness_writes_reads_back() {
        let line = serde_json::to_string(&Record {
            time: epoch_string(1_795_343_548_249_082_376),
            time_after: Some(epoch_string(1_795_343_548_249_133_832)),
            kind: "bindx_add",
            interface: None,
            address: Some("198.51.100.102"),
            ok: true,
            error: None,
        })
        .expect("JSON");
        assert_eq!(
            line,
            r#"{"time":"1795343548.249082376","time_after":"1795343548.249133832","kind":"bindx_add","address":"198.51.100.102","ok":true}"#
        );
        let e = Event::parse(&line).expect("an event");
        assert_eq!(e.time_ns, 1_795_343_548_249_082_376);
        assert_eq!(e.address.as_deref(), Some("198.51.100.102"));
    }
}
