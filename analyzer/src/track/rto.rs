//! RTT statistics and the RTO estimator of RFC 9260 §6.3.1.

use crate::time::Nanos;
use serde::Serialize;

/// RTO.Alpha = 1/8 and RTO.Beta = 1/4 (RFC 9260 §16).
const ALPHA_DIV: i64 = 8;
const BETA_DIV: i64 = 4;

/// RTO protocol parameters (RFC 9260 §16 defaults: 1 s initial, 1 s min,
/// 60 s max). Linux defaults are 3 s / 200 ms / 60 s.
#[derive(Debug, Clone, Copy)]
pub struct RtoConfig {
    /// RTO.Initial: the RTO before the first RTT sample.
    pub initial: Nanos,
    /// RTO.Min (`--rto-min-ms`): the RTO is never below it.
    pub min: Nanos,
    /// RTO.Max (`--rto-max-ms`): the RTO is never above it (it wins over a
    /// larger RTO.Min).
    pub max: Nanos,
}

impl Default for RtoConfig {
    fn default() -> Self {
        RtoConfig {
            initial: Nanos::from_millis(1000),
            min: Nanos::from_millis(1000),
            max: Nanos::from_millis(60_000),
        }
    }
}

/// Running summary of RTT samples; constant size however many samples.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct RttStats {
    /// RTT samples taken.
    pub samples: u64,
    /// The smallest sample; `None` without samples (milliseconds in JSON).
    #[serde(serialize_with = "ms_opt")]
    pub min: Option<Nanos>,
    /// The largest sample; `None` without samples.
    #[serde(serialize_with = "ms_opt")]
    pub max: Option<Nanos>,
    /// The latest sample; `None` without samples.
    #[serde(serialize_with = "ms_opt")]
    pub last: Option<Nanos>,
    #[serde(skip)]
    sum: i128,
}

impl RttStats {
    /// Takes one RTT sample.
    pub fn add(&mut self, rtt: Nanos) {
        self.samples += 1;
        self.sum += i128::from(rtt.0);
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
        self.max = Some(self.max.map_or(rtt, |m| m.max(rtt)));
        self.last = Some(rtt);
    }
    /// The mean of the samples; `None` without samples.
    pub fn mean(&self) -> Option<Nanos> {
        (self.samples > 0).then(|| Nanos((self.sum / i128::from(self.samples)) as i64))
    }
}

/// SRTT / RTTVAR / RTO as RFC 9260 §6.3.1 rules C1–C3 compute them.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RtoEstimator {
    /// SRTT, the smoothed RTT; `None` before the first sample
    /// (milliseconds in JSON).
    #[serde(serialize_with = "ms_opt")]
    pub srtt: Option<Nanos>,
    /// RTTVAR, the RTT variation; `None` before the first sample.
    #[serde(serialize_with = "ms_opt")]
    pub rttvar: Option<Nanos>,
    /// The RTO: SRTT + 4·RTTVAR clamped to [RTO.Min, RTO.Max]; RTO.Initial
    /// before the first sample.
    #[serde(serialize_with = "ms")]
    pub rto: Nanos,
    #[serde(skip)]
    config: RtoConfig,
}

impl RtoEstimator {
    /// An estimator with no sample yet: the RTO is RTO.Initial.
    pub fn new(config: RtoConfig) -> Self {
        RtoEstimator {
            srtt: None,
            rttvar: None,
            rto: config.initial,
            config,
        }
    }

    /// Takes one RTT sample `r` (rules C1 for the first, C2 after, then
    /// the clamp of C6/C7); a negative sample counts as zero.
    pub fn update(&mut self, r: Nanos) {
        let r = Nanos(r.0.max(0));
        let (srtt, rttvar) = match (self.srtt, self.rttvar) {
            // C2: subsequent measurement.
            (Some(srtt), Some(rttvar)) => {
                let rttvar = rttvar.0 - rttvar.0 / BETA_DIV + (srtt.0 - r.0).abs() / BETA_DIV;
                let srtt = srtt.0 - srtt.0 / ALPHA_DIV + r.0 / ALPHA_DIV;
                (srtt, rttvar)
            }
            // C1: first measurement.
            _ => (r.0, r.0 / 2),
        };
        self.srtt = Some(Nanos(srtt));
        self.rttvar = Some(Nanos(rttvar));
        // Saturating: an RTT sample between times a file made extreme.
        let rto = srtt.saturating_add(rttvar.saturating_mul(4));
        // C6/C7: clamp to RTO.Min and RTO.Max.
        // (Not `clamp`: it panics when a caller's RTO.Min exceeds its
        // RTO.Max; RTO.Max then wins.)
        self.rto = Nanos(rto.max(self.config.min.0).min(self.config.max.0));
    }
}

pub(crate) fn ms<S: serde::Serializer>(v: &Nanos, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(v.as_millis_f64())
}

pub(crate) fn ms_opt<S: serde::Serializer>(v: &Option<Nanos>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(n) => s.serialize_f64(n.as_millis_f64()),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extreme_sample_clamps_to_rto_max() {
        let max = Nanos::from_millis(60_000);
        let mut e = RtoEstimator::new(RtoConfig {
            initial: Nanos::from_millis(3000),
            min: Nanos::from_millis(200),
            max,
        });
        e.update(Nanos(i64::MAX));
        assert_eq!(e.rto, max);
        e.update(Nanos(i64::MAX));
        assert_eq!(e.rto, max);
    }

    #[test]
    fn rfc_9260_rules() {
        let mut e = RtoEstimator::new(RtoConfig {
            initial: Nanos::from_millis(3000),
            min: Nanos::from_millis(200),
            max: Nanos::from_millis(60_000),
        });
        assert_eq!(e.rto, Nanos::from_millis(3000));
        e.update(Nanos::from_millis(100));
        // SRTT = 100, RTTVAR = 50, RTO = 300
        assert_eq!(e.rto, Nanos::from_millis(300));
        e.update(Nanos::from_millis(100));
        // RTTVAR = 3/4·50 + 1/4·0 = 37.5, SRTT = 100, RTO = 250
        assert_eq!(e.rttvar, Some(Nanos(37_500_000)));
        assert_eq!(e.rto, Nanos::from_millis(250));
        for _ in 0..50 {
            e.update(Nanos::from_millis(10));
        }
        assert_eq!(e.rto, Nanos::from_millis(200), "clamped to RTO.min");
    }

    #[test]
    fn stats() {
        let mut s = RttStats::default();
        s.add(Nanos(10));
        s.add(Nanos(30));
        assert_eq!(
            (s.min, s.max, s.mean()),
            (Some(Nanos(10)), Some(Nanos(30)), Some(Nanos(20)))
        );
    }
}
