//! One-way delay over time per path and direction, for a figure, in
//! bounded memory: each path keeps at most [`MAX_BUCKETS`] time buckets,
//! each with its least and largest delay. Buckets start one nanosecond wide
//! (every sample its own: the sample runs' few hundred packets are drawn as
//! they are) and double in width, merging pairs, whenever a path has more,
//! so a capture of any length costs the same.

use crate::clock::Direction;
use crate::report::{Loss, OwdSample, PointsSink, Retransmission};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Buckets kept per path and direction (two samples each at most).
pub const MAX_BUCKETS: usize = 2048;

/// (sent time on A's clock, one-way delay), both ns.
pub type Sample = (i64, i64);

#[derive(Debug, Clone, Copy)]
struct Bucket {
    least: Sample,
    largest: Sample,
}

#[derive(Debug, Clone)]
struct Buckets {
    width_ns: i64,
    by_index: BTreeMap<i64, Bucket>,
}

impl Buckets {
    fn new() -> Self {
        Buckets {
            width_ns: 1,
            by_index: BTreeMap::new(),
        }
    }

    fn merge(into: &mut Bucket, other: Bucket) {
        if other.least.1 < into.least.1 {
            into.least = other.least;
        }
        if other.largest.1 > into.largest.1 {
            into.largest = other.largest;
        }
    }

    fn add(&mut self, s: Sample) {
        let b = Bucket {
            least: s,
            largest: s,
        };
        match self.by_index.entry(s.0.div_euclid(self.width_ns)) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(b);
            }
            std::collections::btree_map::Entry::Occupied(mut o) => Self::merge(o.get_mut(), b),
        }
        while self.by_index.len() > MAX_BUCKETS {
            self.width_ns = self.width_ns.saturating_mul(2);
            let old = std::mem::take(&mut self.by_index);
            for (i, b) in old {
                match self.by_index.entry(i.div_euclid(2)) {
                    std::collections::btree_map::Entry::Vacant(v) => {
                        v.insert(b);
                    }
                    std::collections::btree_map::Entry::Occupied(mut o) => {
                        Self::merge(o.get_mut(), b)
                    }
                }
            }
        }
    }

    fn samples(&self) -> Vec<Sample> {
        let mut out = Vec::with_capacity(self.by_index.len() * 2);
        for b in self.by_index.values() {
            let (first, second) = if b.least.0 <= b.largest.0 {
                (b.least, b.largest)
            } else {
                (b.largest, b.least)
            };
            out.push(first);
            if second != first {
                out.push(second);
            }
        }
        out
    }
}

/// One path and direction's series.
#[derive(Debug, Clone)]
pub struct PathSeries {
    /// The path's source address.
    pub src: IpAddr,
    /// The path's destination address.
    pub dst: IpAddr,
    /// Which way between the points its packets travel.
    pub direction: Direction,
    /// Width of its buckets: 1 ns when every sample is kept.
    pub bucket_ns: i64,
    /// In time order.
    pub samples: Vec<Sample>,
}

/// A [`PointsSink`] that keeps the bounded series and hands every record
/// on to `inner`.
pub struct OwdSeries<'a> {
    paths: BTreeMap<(IpAddr, IpAddr, Direction), Buckets>,
    inner: &'a mut dyn PointsSink,
}

impl<'a> OwdSeries<'a> {
    /// A sink that keeps the series and forwards every record to `inner`.
    pub fn new(inner: &'a mut dyn PointsSink) -> Self {
        OwdSeries {
            paths: BTreeMap::new(),
            inner,
        }
    }

    /// The series, paths in address order.
    pub fn finish(self) -> Vec<PathSeries> {
        self.paths
            .into_iter()
            .map(|((src, dst, direction), b)| PathSeries {
                src,
                dst,
                direction,
                bucket_ns: b.width_ns,
                samples: b.samples(),
            })
            .collect()
    }
}

impl PointsSink for OwdSeries<'_> {
    fn owd(&mut self, s: &OwdSample) {
        self.paths
            .entry((s.src, s.dst, s.direction))
            .or_insert_with(Buckets::new)
            .add((s.sent_ns, s.owd_ns));
        self.inner.owd(s);
    }
    fn loss(&mut self, l: &Loss) {
        self.inner.loss(l);
    }
    fn retransmission(&mut self, r: &Retransmission) {
        self.inner.retransmission(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past MAX_BUCKETS samples the buckets widen, and each keeps its
    /// extremes: the largest and least delays of the whole series survive.
    #[test]
    fn buckets_stay_bounded_and_keep_the_extremes() {
        let mut b = Buckets::new();
        for i in 0..100_000i64 {
            // 1 ms apart, delay 5 ms plus a sawtooth of up to 0.999 ms.
            b.add((i * 1_000_000, 5_000_000 + (i % 1000) * 1000));
        }
        b.add((50_000_000_123, 40_000_000));
        let s = b.samples();
        assert!(b.by_index.len() <= MAX_BUCKETS);
        assert!(s.len() <= 2 * MAX_BUCKETS);
        assert_eq!(s.iter().map(|x| x.1).max(), Some(40_000_000));
        assert_eq!(s.iter().map(|x| x.1).min(), Some(5_000_000));
        assert!(s.windows(2).all(|w| w[0].0 <= w[1].0));
        let mut few = Buckets::new();
        for i in 0..10i64 {
            few.add((i, i));
        }
        assert_eq!(few.samples().len(), 10);
    }
}
