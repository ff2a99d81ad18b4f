//! Capture timestamps and signed durations, both in integer nanoseconds so
//! that nanosecond pcaps lose nothing and arithmetic is exact.

use std::fmt;

/// An absolute capture time: nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

/// A signed span of time in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nanos(pub i64);

pub const NANOS_PER_SEC: i64 = 1_000_000_000;

impl Timestamp {
    pub fn from_parts(secs: i64, nanos: i64) -> Self {
        Timestamp(secs.saturating_mul(NANOS_PER_SEC).saturating_add(nanos))
    }
    /// `self - earlier`, signed.
    pub fn since(self, earlier: Timestamp) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }
    /// Epoch seconds with nine decimals, exactly as tshark's `frame.time_epoch`.
    pub fn epoch_string(self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(
            f,
            "{sign}{}.{:09}",
            abs / NANOS_PER_SEC as u64,
            abs % NANOS_PER_SEC as u64
        )
    }
}

impl Nanos {
    pub fn from_millis(ms: i64) -> Self {
        Nanos(ms.saturating_mul(1_000_000))
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl fmt::Display for Nanos {
    /// Milliseconds with microsecond precision, the unit the papers use.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} ms", self.as_millis_f64())
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_and_arithmetic() {
        let a = Timestamp::from_parts(1_700_000_000, 11_279_000);
        let b = Timestamp::from_parts(1_700_000_000, 104_939_000);
        assert_eq!(a.to_string(), "1700000000.011279000");
        assert_eq!(b.since(a), Nanos(93_660_000));
        assert_eq!(a.since(b).to_string(), "-93.660 ms");
        assert_eq!(Timestamp(-1).to_string(), "-0.000000001");
    }
}
