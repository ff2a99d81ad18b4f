//! Capture timestamps and signed durations, both in integer nanoseconds so
//! that nanosecond pcaps lose nothing and arithmetic is exact.

use std::fmt;

/// An absolute capture time: nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

/// A signed span of time in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Nanos(pub i64);

/// Nanoseconds in a second.
pub const NANOS_PER_SEC: i64 = 1_000_000_000;

impl Timestamp {
    /// The time `secs` seconds and `nanos` nanoseconds after the Unix epoch.
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
        f.write_str(EpochText::default().of(*self))
    }
}

/// A buffer for a timestamp's text, `[-]seconds.nanoseconds` with nine
/// decimals: every JSON record has several, and the formatting machinery
/// cost more than the rest of the record. The longest, `-9223372036.854775808`,
/// takes 21 bytes.
#[derive(Default)]
pub(crate) struct EpochText {
    bytes: [u8; 24],
}

impl EpochText {
    /// The text of `t`, borrowed from this buffer.
    pub fn of(&mut self, t: Timestamp) -> &str {
        let abs = t.0.unsigned_abs();
        let (mut secs, mut nanos) = (abs / NANOS_PER_SEC as u64, abs % NANOS_PER_SEC as u64);
        // Written from the end: nine decimals, the point, the seconds.
        let mut at = self.bytes.len();
        for _ in 0..9 {
            at -= 1;
            self.bytes[at] = b'0' + (nanos % 10) as u8;
            nanos /= 10;
        }
        at -= 1;
        self.bytes[at] = b'.';
        loop {
            at -= 1;
            self.bytes[at] = b'0' + (secs % 10) as u8;
            secs /= 10;
            if secs == 0 {
                break;
            }
        }
        if t.0 < 0 {
            at -= 1;
            self.bytes[at] = b'-';
        }
        std::str::from_utf8(&self.bytes[at..]).expect("digits, a point and a sign")
    }
}

impl Nanos {
    /// A span of `ms` milliseconds.
    pub fn from_millis(ms: i64) -> Self {
        Nanos(ms.saturating_mul(1_000_000))
    }
    /// The span in milliseconds, with fractions.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// The span in seconds, with fractions.
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
        s.serialize_str(EpochText::default().of(*self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_text_is_seconds_with_nine_decimals() {
        let reference = |t: i64| {
            let sign = if t < 0 { "-" } else { "" };
            let abs = t.unsigned_abs();
            format!("{sign}{}.{:09}", abs / 1_000_000_000, abs % 1_000_000_000)
        };
        for t in [
            0,
            1,
            -1,
            999_999_999,
            1_000_000_000,
            -1_000_000_000,
            1_700_000_000_011_279_000,
            -1_700_000_000_011_279_000,
            i64::MAX,
            i64::MIN,
        ] {
            assert_eq!(Timestamp(t).to_string(), reference(t), "{t}");
        }
        assert_eq!(Timestamp(i64::MIN).to_string(), "-9223372036.854775808");
        assert_eq!(
            serde_json::to_string(&Timestamp(1_500_000_000))
                .ok()
                .as_deref(),
            Some("\"1.500000000\"")
        );
    }

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
