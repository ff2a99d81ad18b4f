//! meta.json: how a run went (`ok`, `error`), whether its script took
//! effect (`valid`, `invalid_reasons`; the harness check's verdict), the
//! kernel, what the captures dropped and the SCTP parameters replayed.

use crate::scenario::SctpParams;
use serde::{Deserialize, Deserializer, Serialize};

/// A run's meta.json. Every field may be absent: runs recorded by an
/// earlier harness lack the later ones (`valid`, `kernel_hz`,
/// `watch_dropped`), and fields a later harness adds are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The scenario's name.
    #[serde(default)]
    pub scenario: Option<String>,
    /// The run itself worked (every step, no capture drops).
    #[serde(default)]
    pub ok: Option<bool>,
    /// Why it did not.
    #[serde(default)]
    pub error: Option<String>,
    /// Whether every scripted action took effect: `Some(Some(_))` the
    /// check's verdict, `Some(None)` (JSON null) it could not be checked,
    /// None (no field) a run recorded before the harness checked.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub valid: Option<Option<bool>>,
    /// Why not (one per action), or why it could not be checked.
    #[serde(default)]
    pub invalid_reasons: Vec<String>,
    /// The guest kernel's release (`/proc/sys/kernel/osrelease`).
    #[serde(default)]
    pub kernel: Option<String>,
    /// Its timer frequency.
    #[serde(default)]
    pub kernel_hz: Option<u64>,
    /// Packets tcpdump reported dropped on each node (null when the run
    /// failed before the captures ended).
    #[serde(default)]
    pub tcpdump_dropped: Option<TcpdumpDropped>,
    /// Packets the watch's capture dropped (`replay --watch`; null without).
    #[serde(default)]
    pub watch_dropped: Option<u64>,
    /// How long the guest ran, seconds.
    #[serde(default)]
    pub guest_seconds: Option<f64>,
    /// The SCTP parameters replayed.
    #[serde(default)]
    pub sctp: Option<SctpParams>,
}

/// Packets tcpdump dropped, per node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpdumpDropped {
    /// On the mobile node.
    pub mn: u64,
    /// On the correspondent node.
    pub cn: u64,
}

/// A field that is there, null or not: `Some(None)` for null (serde's
/// default for a missing field stays None).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<bool>>, D::Error> {
    Option::<bool>::deserialize(d).map(Some)
}

impl Meta {
    /// meta.json's text.
    pub fn parse(text: &str) -> Result<Meta, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The text the harness writes: pretty JSON with the keys sorted (as
    /// every meta.json so far), and a final newline. `valid` is written
    /// (null when not checkable) once the check was made.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        // Through a `Value`, whose objects keep their keys sorted.
        let value = serde_json::to_value(self)?;
        Ok(serde_json::to_string_pretty(&value)? + "\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_absent_null_or_given() {
        let m = Meta::parse(r#"{"ok": true}"#).expect("meta");
        assert_eq!((m.ok, m.valid), (Some(true), None));
        let m =
            Meta::parse(r#"{"ok": true, "valid": null, "invalid_reasons": ["x"]}"#).expect("meta");
        assert_eq!((m.valid, m.invalid_reasons), (Some(None), vec!["x".into()]));
        let m = Meta::parse(r#"{"valid": false}"#).expect("meta");
        assert_eq!(m.valid, Some(Some(false)));
    }

    /// A committed meta.json reads, and is written back byte for byte.
    #[test]
    fn a_committed_meta_json_round_trips() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../reports/reproduction/runs/bokor-fast/bokor-paper/rto=800,pmr=1,hb_interval=500,duration_s=6/r03/meta.json",
        );
        let text = std::fs::read_to_string(&path).expect("committed");
        let m = Meta::parse(&text).expect("meta");
        assert_eq!(m.scenario.as_deref(), Some("bokor-paper"));
        assert_eq!(
            (m.kernel.as_deref(), m.kernel_hz),
            (Some("6.1.176"), Some(100))
        );
        assert_eq!(m.valid, Some(Some(true)));
        assert_eq!(m.sctp.as_ref().map(|s| s.rto_max_ms), Some(800));
        assert_eq!(m.to_json().expect("JSON"), text);
    }
}
