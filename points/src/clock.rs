//! Clock offset and drift between two capture points from the packets both
//! saw (docs/points.md, "Clock offset and drift").
//!
//! For a packet from A to B the difference of the capture times,
//! `δ = t_B − t_A`, is the one-way delay plus the offset of B's clock; for
//! a packet from B to A it is the offset minus the one-way delay. So the
//! packets A→B lie above the offset line and those B→A below it, and the
//! least delayed of each direction lie closest to it (NTP's and
//! mptcpanalyzer's reasoning). Each path and direction keeps the convex
//! hull of its (time, δ) points on the side facing the offset line: the
//! lower hull for A→B, the upper hull for B→A. The drift is the slope that
//! keeps every line under (A→B) or over (B→A) its points while hugging
//! them closest in total (the linear programme of Moon, Skelly and
//! Towsley, "Estimation and removal of clock skew from network delay
//! measurements", INFOCOM 1999, with one slope shared by every path and
//! both directions); the offset is the middle of the band left between the
//! two directions' lines, and half that band's width is its uncertainty.

use serde::Serialize;
use std::collections::BinaryHeap;

/// Nanoseconds per second, for slopes given in ppm.
const NANOS_PER_SEC: f64 = 1e9;
/// Drift searched for, either way: crystal oscillators stay within
/// ±100 ppm; a tenfold margin still leaves the search well conditioned.
pub const MAX_DRIFT_PPM: f64 = 1000.0;
/// The search stops when the slope is known to this many ppm.
const DRIFT_RESOLUTION_PPM: f64 = 1e-4;

/// Which way a packet travelled between the two points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From point 0 (A) to point 1 (B).
    AToB,
    /// From point 1 (B) to point 0 (A).
    BToA,
}

impl Direction {
    /// The opposite direction.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::AToB => Direction::BToA,
            Direction::BToA => Direction::AToB,
        }
    }
    /// The point that sends in this direction.
    pub fn sender(self) -> usize {
        match self {
            Direction::AToB => 0,
            Direction::BToA => 1,
        }
    }
    /// The point that receives in this direction.
    pub fn receiver(self) -> usize {
        1 - self.sender()
    }
}

/// A point (x, y): x seconds from the reference time, y = ±δ in ns, the
/// sign chosen so that the hull wanted is always the lower one.
#[derive(Debug, Clone, Copy, PartialEq)]
struct HullPoint {
    x: f64,
    y: f64,
}

/// Orders pending points by time, earliest first, in a max-heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ByTime(HullPoint);
impl Eq for ByTime {}
impl PartialOrd for ByTime {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ByTime {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.x.total_cmp(&self.0.x)
    }
}

/// The lower convex hull of one path-direction's points, built as they
/// come (Andrew's monotone chain), with the sums the objective needs.
/// Points may come slightly out of time order (pairs resolve when their
/// second copy is seen); they wait in a small heap until `reorder_s` has
/// passed. The hull of points on an integer nanosecond grid holds few
/// vertices (O(log n) for noisy delays), so memory stays small.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// +1: δ itself (A→B, lower hull of δ); −1: −δ (B→A, upper hull of δ).
    sign: f64,
    hull: Vec<HullPoint>,
    pending: BinaryHeap<ByTime>,
    reorder_s: f64,
    latest_x: f64,
    count: u64,
    sum_x: f64,
    sum_y: f64,
    first_x: f64,
    last_x: f64,
}

impl Envelope {
    pub fn new(direction: Direction, reorder_s: f64) -> Self {
        Envelope {
            sign: match direction {
                Direction::AToB => 1.0,
                Direction::BToA => -1.0,
            },
            hull: Vec::new(),
            pending: BinaryHeap::new(),
            reorder_s,
            latest_x: f64::NEG_INFINITY,
            count: 0,
            sum_x: 0.0,
            sum_y: 0.0,
            first_x: f64::INFINITY,
            last_x: f64::NEG_INFINITY,
        }
    }

    /// Adds a packet seen at `x_s` seconds from the reference time whose
    /// capture times differ by `delta_ns` (t_B − t_A).
    pub fn add(&mut self, x_s: f64, delta_ns: f64) {
        let p = HullPoint {
            x: x_s,
            y: self.sign * delta_ns,
        };
        self.count += 1;
        self.sum_x += p.x;
        self.sum_y += p.y;
        self.first_x = self.first_x.min(p.x);
        self.last_x = self.last_x.max(p.x);
        self.latest_x = self.latest_x.max(p.x);
        self.pending.push(ByTime(p));
        while let Some(ByTime(oldest)) = self.pending.peek().copied() {
            if oldest.x >= self.latest_x - self.reorder_s {
                break;
            }
            self.pending.pop();
            self.push_hull(oldest);
        }
    }

    fn push_hull(&mut self, p: HullPoint) {
        // A point older than the hull's last vertex came later than the
        // reorder delay allowed; it still bounds the line, so it is kept
        // by rebuilding the tail (rare).
        if let Some(last) = self.hull.last() {
            if p.x < last.x {
                let mut all = std::mem::take(&mut self.hull);
                all.push(p);
                all.sort_by(|a, b| a.x.total_cmp(&b.x));
                for q in all {
                    self.push_sorted(q);
                }
                return;
            }
        }
        self.push_sorted(p);
    }

    fn push_sorted(&mut self, p: HullPoint) {
        if let Some(last) = self.hull.last_mut() {
            if last.x == p.x {
                // Same instant: only the lower point matters.
                if p.y < last.y {
                    *last = p;
                    self.fix_tail();
                }
                return;
            }
        }
        self.hull.push(p);
        self.fix_tail();
    }

    /// Pops vertices above the segment joining their neighbours.
    fn fix_tail(&mut self) {
        while self.hull.len() >= 3 {
            let n = self.hull.len();
            let (o, a, b) = (self.hull[n - 3], self.hull[n - 2], self.hull[n - 1]);
            let cross = (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
            if cross <= 0.0 {
                self.hull.remove(n - 2);
            } else {
                break;
            }
        }
    }

    /// Moves every waiting point into the hull (the input has ended).
    pub fn flush(&mut self) {
        let mut rest: Vec<HullPoint> = self.pending.drain().map(|ByTime(p)| p).collect();
        rest.sort_by(|a, b| a.x.total_cmp(&b.x));
        for p in rest {
            self.push_hull(p);
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// For a line of slope `slope_ns_per_s` in δ, the intercept (at x = 0)
    /// of the line touching the envelope: under every A→B point, over
    /// every B→A point.
    pub fn intercept(&self, slope_ns_per_s: f64) -> Option<f64> {
        let s = self.sign * slope_ns_per_s;
        let lowest = self
            .hull
            .iter()
            .map(|p| p.y - s * p.x)
            .min_by(|a, b| a.total_cmp(b))?;
        Some(self.sign * lowest)
    }

    /// Total vertical distance of the points from the touching line: the
    /// objective the shared slope minimises. Convex in the slope.
    fn cost(&self, slope_ns_per_s: f64) -> f64 {
        let s = self.sign * slope_ns_per_s;
        match self
            .hull
            .iter()
            .map(|p| p.y - s * p.x)
            .min_by(|a, b| a.total_cmp(b))
        {
            Some(lowest) => self.sum_y - s * self.sum_x - self.count as f64 * lowest,
            None => 0.0,
        }
    }

    /// The sign of the stored y (for the pairing floor).
    pub fn direction(&self) -> Direction {
        if self.sign > 0.0 {
            Direction::AToB
        } else {
            Direction::BToA
        }
    }
}

/// The estimate: B's clock reads `offset + drift × (t − reference)` more
/// than A's at A-time t.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClockEstimate {
    /// A-clock time (ns since the epoch) the offset is given at.
    pub reference_ns: i64,
    /// B minus A at the reference time, ns.
    pub offset_ns: f64,
    /// Half the band the two directions' envelopes leave at the reference
    /// time: how far the offset can be from the estimate if the fastest
    /// packets of each direction took different times (asymmetric paths).
    pub offset_uncertainty_ns: f64,
    /// How much faster B's clock runs, in parts per million.
    pub drift_ppm: f64,
    /// Packets used (paired, unambiguous, direction known).
    pub samples: u64,
    /// Seconds of A-time the samples span.
    pub span_s: f64,
}

impl ClockEstimate {
    /// No correction: both clocks taken as one.
    pub fn identity() -> Self {
        ClockEstimate {
            reference_ns: 0,
            offset_ns: 0.0,
            offset_uncertainty_ns: f64::INFINITY,
            drift_ppm: 0.0,
            samples: 0,
            span_s: 0.0,
        }
    }

    fn slope_ns_per_s(&self) -> f64 {
        self.drift_ppm * 1e-6 * NANOS_PER_SEC
    }

    /// B minus A at A-time `t_a_ns`.
    pub fn offset_at(&self, t_a_ns: i64) -> f64 {
        self.offset_ns
            + self.slope_ns_per_s() * ((t_a_ns - self.reference_ns) as f64 / NANOS_PER_SEC)
    }

    /// A B-clock time carried onto A's clock.
    pub fn b_to_a(&self, t_b_ns: i64) -> i64 {
        let drift = self.drift_ppm * 1e-6;
        // t_B − ref = (t_A − ref)(1 + drift) + offset, solved for t_A.
        let since = (t_b_ns - self.reference_ns) as f64 - self.offset_ns;
        self.reference_ns + (since / (1.0 + drift)).round() as i64
    }
}

/// Why no estimate could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClockError {
    /// No SCTP packet was paired between the two captures.
    #[error("no packet was seen at both points")]
    NoPairs,
    #[error(
        "packets seen at both points travelled one way only ({0}); the offset needs both directions"
    )]
    /// Every paired packet travelled the same way (which): one direction
    /// bounds the offset from one side only.
    OneDirection(&'static str),
    /// The envelopes contradict each other: a one-way delay would be negative.
    #[error("the two directions' envelopes cross: the packets paired do not bound the offset (a one-way delay below zero)")]
    Crossed,
}

/// Golden-section search for the minimum of a convex function of the
/// slope (ns per s) within ±[`MAX_DRIFT_PPM`].
fn search_slope(total: impl Fn(f64) -> f64) -> f64 {
    let ppm = 1e-6 * NANOS_PER_SEC;
    let (mut lo, mut hi) = (-MAX_DRIFT_PPM * ppm, MAX_DRIFT_PPM * ppm);
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = hi - ratio * (hi - lo);
    let mut d = lo + ratio * (hi - lo);
    let (mut fc, mut fd) = (total(c), total(d));
    while hi - lo > DRIFT_RESOLUTION_PPM * ppm {
        if fc <= fd {
            hi = d;
            d = c;
            fd = fc;
            c = hi - ratio * (hi - lo);
            fc = total(c);
        } else {
            lo = c;
            c = d;
            fc = fd;
            d = lo + ratio * (hi - lo);
            fd = total(d);
        }
    }
    (lo + hi) / 2.0
}

/// Fits the shared slope over every envelope, then the offset at x = 0
/// from the band the two directions leave.
pub fn estimate(envelopes: &[Envelope], reference_ns: i64) -> Result<ClockEstimate, ClockError> {
    let used: Vec<&Envelope> = envelopes.iter().filter(|e| e.count() > 0).collect();
    if used.is_empty() {
        return Err(ClockError::NoPairs);
    }
    let has = |d: Direction| used.iter().any(|e| e.direction() == d);
    if !has(Direction::AToB) {
        return Err(ClockError::OneDirection("B to A"));
    }
    if !has(Direction::BToA) {
        return Err(ClockError::OneDirection("A to B"));
    }
    let ppm = 1e-6 * NANOS_PER_SEC;
    // Every envelope counts by its total distance from the line.
    let slope = search_slope(|slope| used.iter().map(|e| e.cost(slope)).sum::<f64>());
    // The band: over the highest B→A line, under the lowest A→B line.
    let floor = used
        .iter()
        .filter(|e| e.direction() == Direction::BToA)
        .filter_map(|e| e.intercept(slope))
        .fold(f64::NEG_INFINITY, f64::max);
    let ceiling = used
        .iter()
        .filter(|e| e.direction() == Direction::AToB)
        .filter_map(|e| e.intercept(slope))
        .fold(f64::INFINITY, f64::min);
    if floor > ceiling {
        return Err(ClockError::Crossed);
    }
    let first = used.iter().map(|e| e.first_x).fold(f64::INFINITY, f64::min);
    let last = used
        .iter()
        .map(|e| e.last_x)
        .fold(f64::NEG_INFINITY, f64::max);
    Ok(ClockEstimate {
        reference_ns,
        offset_ns: (floor + ceiling) / 2.0,
        offset_uncertainty_ns: (ceiling - floor) / 2.0,
        drift_ppm: slope / ppm,
        samples: used.iter().map(|e| e.count()).sum(),
        span_s: last - first,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets every 10 ms for 4 s both ways over a 5 ms path, B's clock
    /// 3 ms ahead and 50 ppm fast, delays above the floor by a few tens of
    /// µs in a fixed pattern: the estimate lands on the line.
    #[test]
    fn recovers_offset_and_drift_of_a_synthetic_line() {
        let mut ab = Envelope::new(Direction::AToB, 0.5);
        let mut ba = Envelope::new(Direction::BToA, 0.5);
        for i in 0..400 {
            let x = i as f64 * 0.01;
            let theta = 3e6 + 50e-6 * 1e9 * x;
            let noise = f64::from((i * 37) % 11) * 7_000.0;
            ab.add(x, theta + 5e6 + noise);
            ba.add(x + 0.005, theta - 5e6 - noise);
        }
        ab.flush();
        ba.flush();
        let e = estimate(&[ab, ba], 0).expect("both directions");
        assert!((e.offset_ns - 3e6).abs() < 1_000.0, "{e:?}");
        assert!((e.drift_ppm - 50.0).abs() < 0.5, "{e:?}");
        assert!((e.offset_uncertainty_ns - 5e6).abs() < 1_000.0, "{e:?}");
        assert_eq!(e.samples, 800);
    }

    #[test]
    fn one_direction_is_refused() {
        let mut ab = Envelope::new(Direction::AToB, 0.5);
        ab.add(0.0, 1.0);
        ab.flush();
        assert_eq!(estimate(&[ab], 0), Err(ClockError::OneDirection("A to B")));
    }

    #[test]
    fn b_to_a_inverts_offset_at() {
        let e = ClockEstimate {
            reference_ns: 1_000_000_000_000,
            offset_ns: 3_600e9,
            offset_uncertainty_ns: 0.0,
            drift_ppm: 50.0,
            samples: 0,
            span_s: 0.0,
        };
        let t_a = 1_000_000_000_000 + 7_000_000_000;
        let t_b = t_a + e.offset_at(t_a).round() as i64;
        assert_eq!(e.b_to_a(t_b), t_a);
    }
}
