//! Several capture points, one story (issue 32, first slice): the SCTP
//! packets two captures both saw are paired, the offset and drift between
//! the two clocks are estimated from them, and each path's one-way delays,
//! losses (sent at one point, never seen at the other) and spurious
//! retransmissions (whose original did arrive) follow. docs/points.md
//! describes the method.
//!
//! Two streaming passes over both captures, each bounded in memory by the
//! packets of one pairing window: the first calibrates the clocks (on the
//! packets whose identity is unique within the window), the second pairs
//! every packet on the corrected clock and reports.
//!
//! In the workspace's data flow (docs/architecture.md) it sits beside the
//! core analysis: it reads the captures itself (the analyzer's capture,
//! decode and wire layers) and takes each point's handover records from
//! the analysis; `sctp-handover points` and the `handovers_two_sided`
//! table (`sctp_handover_tables::points`) render what it returns:
//! [`analyze_points`] (a [`PointsReport`], with samples and records
//! streamed to a [`PointsSink`]) and [`two_sided::analyze_two_sided`].

#![warn(missing_docs)]

mod assoc;
mod clock;
mod observe;
mod pairing;
mod report;
pub mod series;
pub mod two_sided;

pub use assoc::{AssociationMatch, EndpointMatch, SideSeen};
pub use clock::{ClockError, ClockEstimate, Direction};
pub use observe::PointInput;
pub use report::{
    Loss, LossKind, OwdSample, PathSummary, PointSummary, PointsReport, PointsSink, Retransmission,
};

use clock::Envelope;
use observe::{spawn_reader, Observation};
use pairing::{Matcher, Merged, PairHandler, Source, Stamped};
use rustc_hash::FxHashMap;
use sctp_handover::capture::CaptureError;
use std::net::IpAddr;

/// Observations of each capture read before pairing starts, to find the
/// offset roughly (so that the window can be small even when the clocks
/// are hours apart). The two prefixes must overlap in time.
const PREFIX_PACKETS: usize = 4096;

/// How two captures are paired.
#[derive(Debug, Clone)]
pub struct PointsOptions {
    /// How long a packet waits for its copy at the other point before it
    /// counts as not seen there: much longer than any one-way delay. It
    /// also bounds memory (the packets of one window wait at most).
    pub window_ns: i64,
}

impl Default for PointsOptions {
    fn default() -> Self {
        PointsOptions {
            window_ns: 2_000_000_000,
        }
    }
}

/// Why two captures could not be paired.
#[derive(Debug, thiserror::Error)]
pub enum PointsError {
    /// A capture could not be read.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// The clocks' offset and drift could not be estimated.
    #[error("clock offset between {a} and {b}: {source}")]
    Clock {
        /// The first point's name.
        a: String,
        /// The second point's name.
        b: String,
        /// Why the estimate failed.
        source: ClockError,
    },
    /// The captures' first packets have none in common.
    #[error(
        "none of the first {PREFIX_PACKETS} SCTP packets of {a} is among the first {PREFIX_PACKETS} of {b}: the captures must overlap in time"
    )]
    NoOverlap {
        /// The first point's name.
        a: String,
        /// The second point's name.
        b: String,
    },
    /// Not exactly two points were given (how many were).
    #[error("exactly two capture points are supported in this version, {0} given")]
    PointCount(usize),
}

/// Which way packets carrying each verification tag travel between the
/// points (RFC 9260 §8.5: a tag names the endpoint packets go to).
#[derive(Debug, Clone, Default)]
pub(crate) struct Directions {
    by_tag: FxHashMap<u32, Direction>,
}

impl Directions {
    pub(crate) fn of(&self, obs: &Observation) -> Option<Direction> {
        let c = &obs.chunks;
        let tag = obs.key.verification_tag;
        if tag == 0 {
            // INIT travels away from the endpoint whose tag it announces.
            return c
                .initiate_tag
                .and_then(|t| self.by_tag.get(&t))
                .map(|d| d.reverse());
        }
        let d = self.by_tag.get(&tag).copied()?;
        Some(if c.tag_reflected { d.reverse() } else { d })
    }

    fn learn(&mut self, obs: &Observation, d: Direction) {
        let tag = obs.key.verification_tag;
        if tag != 0 && !obs.chunks.tag_reflected {
            self.by_tag.entry(tag).or_insert(d);
        }
    }
}

/// A path: source and destination address of the packets on it.
pub(crate) type PathKey = (IpAddr, IpAddr);

fn median(v: &mut [i64]) -> i64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// One tag's paired packets in a prefix: median, least and largest
/// t_B − t_A, and how many.
type TagDeltas = (i64, i64, i64, usize);

/// A first offset from the prefixes: packets whose identity occurs once in
/// each prefix are paired; per tag the median of t_B − t_A tells which way
/// the tag's packets go (the larger median goes A→B); the offset lies
/// between the least delayed packets of the two ways.
fn coarse_estimate(a: &[Observation], b: &[Observation]) -> Option<(ClockEstimate, Directions)> {
    let mut count: FxHashMap<observe::PacketKey, (u32, u32, i64, i64)> = FxHashMap::default();
    for o in a {
        let e = count.entry(o.key).or_default();
        e.0 += 1;
        e.2 = o.time.0;
    }
    for o in b {
        let e = count.entry(o.key).or_default();
        e.1 += 1;
        e.3 = o.time.0;
    }
    // Per tag: (ports, deltas).
    let mut by_tag: FxHashMap<u32, ((u16, u16), Vec<i64>)> = FxHashMap::default();
    for o in a {
        let Some(&(1, 1, ta, tb)) = count.get(&o.key) else {
            continue;
        };
        if o.key.verification_tag == 0 || o.chunks.tag_reflected {
            continue;
        }
        let ports = (
            o.key.src_port.min(o.key.dst_port),
            o.key.src_port.max(o.key.dst_port),
        );
        by_tag
            .entry(o.key.verification_tag)
            .or_insert_with(|| (ports, Vec::new()))
            .1
            .push(tb - ta);
    }
    // The port pair with the most paired packets in both ways sets the
    // offset; every tag then takes the side of it its median lies on.
    let mut groups: FxHashMap<(u16, u16), Vec<TagDeltas>> = FxHashMap::default();
    let mut medians: Vec<(u32, i64)> = Vec::new();
    for (tag, (ports, deltas)) in by_tag.iter_mut() {
        let m = median(deltas);
        let (lo, hi) = (deltas[0], deltas[deltas.len() - 1]);
        groups
            .entry(*ports)
            .or_default()
            .push((m, lo, hi, deltas.len()));
        medians.push((*tag, m));
    }
    let best = groups
        .values()
        .filter(|g| g.len() >= 2)
        .max_by_key(|g| g.iter().map(|x| x.3).sum::<usize>())?;
    let toward_b = best.iter().max_by_key(|x| x.0)?;
    let toward_a = best.iter().min_by_key(|x| x.0)?;
    // Least delayed A→B: its smallest δ; least delayed B→A: largest δ.
    let offset = (toward_b.1 + toward_a.2) as f64 / 2.0;
    let mut directions = Directions::default();
    for (tag, m) in medians {
        let d = if (m as f64) > offset {
            Direction::AToB
        } else {
            Direction::BToA
        };
        directions.by_tag.insert(tag, d);
    }
    let reference_ns = a.first().map(|o| o.time.0)?;
    Some((
        ClockEstimate {
            reference_ns,
            offset_ns: offset,
            offset_uncertainty_ns: (toward_b.1 - toward_a.2) as f64 / 2.0,
            drift_ppm: 0.0,
            samples: 0,
            span_s: 0.0,
        },
        directions,
    ))
}

/// Pass 1: the envelopes of every path and direction.
struct Calibrator {
    coarse: ClockEstimate,
    directions: Directions,
    envelopes: FxHashMap<(PathKey, Direction), Envelope>,
    reorder_s: f64,
}

impl PairHandler for Calibrator {
    fn paired(&mut self, earlier: Stamped, later: Stamped, ambiguous: bool) {
        let (a, b) = if earlier.obs.point == 0 {
            (&earlier, &later)
        } else {
            (&later, &earlier)
        };
        let direction = match self.directions.of(&a.obs) {
            Some(d) => d,
            None => {
                // A tag first seen after the prefix: the corrected times
                // say which way it went.
                let d = if b.corrected_ns >= a.corrected_ns {
                    Direction::AToB
                } else {
                    Direction::BToA
                };
                self.directions.learn(&a.obs, d);
                d
            }
        };
        if ambiguous {
            return;
        }
        let delta = (b.obs.time.0 - a.obs.time.0) as f64;
        let x = (a.obs.time.0 - self.coarse.reference_ns) as f64 / 1e9;
        let path = (a.obs.key.src, a.obs.key.dst);
        let reorder = self.reorder_s;
        self.envelopes
            .entry((path, direction))
            .or_insert_with(|| Envelope::new(direction, reorder))
            .add(x, delta);
    }
    fn unmatched(&mut self, _packet: Stamped) {}
}

fn start(inputs: &[PointInput], with_reasons: bool) -> [Source; 2] {
    let (rx_a, _) = spawn_reader(0, &inputs[0].path, with_reasons);
    let (rx_b, _) = spawn_reader(1, &inputs[1].path, with_reasons);
    [
        Source::new(rx_a, &inputs[0].path),
        Source::new(rx_b, &inputs[1].path),
    ]
}

/// Pairs two capture points' packets and reports clock, delays, losses
/// and retransmissions; samples and records stream to `sink` as they are
/// found, the summary is returned.
pub fn analyze_points(
    inputs: &[PointInput],
    options: &PointsOptions,
    sink: &mut dyn PointsSink,
) -> Result<PointsReport, PointsError> {
    if inputs.len() != 2 {
        return Err(PointsError::PointCount(inputs.len()));
    }
    let names = (inputs[0].name.clone(), inputs[1].name.clone());

    // Pass 1: calibration.
    // The calibration needs no retransmission reasons.
    let mut sources = start(inputs, false);
    let pa: Vec<Observation> = sources[0]
        .read_prefix(PREFIX_PACKETS)
        .iter()
        .cloned()
        .collect();
    let pb: Vec<Observation> = sources[1]
        .read_prefix(PREFIX_PACKETS)
        .iter()
        .cloned()
        .collect();
    let Some((coarse, directions)) = coarse_estimate(&pa, &pb) else {
        // Surface a read error first: it is the likelier cause.
        let [a, b] = sources;
        a.finish()?;
        b.finish()?;
        return Err(PointsError::NoOverlap {
            a: names.0,
            b: names.1,
        });
    };
    drop((pa, pb));
    let mut calibrator = Calibrator {
        coarse,
        directions,
        envelopes: FxHashMap::default(),
        reorder_s: options.window_ns as f64 / 1e9,
    };
    let mut merged = Merged::new(sources, coarse);
    Matcher::new(options.window_ns).run(&mut merged, &mut calibrator);
    let [a, b] = merged.sources;
    a.finish()?;
    b.finish()?;
    let mut envelopes: Vec<((PathKey, Direction), Envelope)> =
        calibrator.envelopes.into_iter().collect();
    envelopes.sort_by_key(|x| x.0);
    for (_, e) in envelopes.iter_mut() {
        e.flush();
    }
    let only: Vec<Envelope> = envelopes.iter().map(|(_, e)| e.clone()).collect();
    let clock =
        clock::estimate(&only, coarse.reference_ns).map_err(|source| PointsError::Clock {
            a: names.0.clone(),
            b: names.1.clone(),
            source,
        })?;
    // Each path-direction's least one-way delay on the corrected clock:
    // the floor that tells identical copies apart in pass 2.
    let slope = clock.drift_ppm * 1e3;
    let floors: FxHashMap<(PathKey, Direction), f64> = envelopes
        .iter()
        .filter_map(|(k, e)| {
            let intercept = e.intercept(slope)?;
            let floor = match k.1 {
                Direction::AToB => intercept - clock.offset_ns,
                Direction::BToA => clock.offset_ns - intercept,
            };
            Some((*k, floor))
        })
        .collect();

    // Pass 2: pairing on the corrected clock.
    let mut reporter = report::Reporter::new(
        [names.0.clone(), names.1.clone()],
        clock,
        calibrator.directions,
        floors,
        sink,
    );
    let mut merged = Merged::new(start(inputs, true), clock);
    let mut matcher = Matcher::new(options.window_ns);
    matcher.run(&mut merged, &mut reporter);
    let [a, b] = merged.sources;
    let outcomes = [a.finish()?, b.finish()?];
    let mut report = reporter.finish(outcomes, matcher.peak_waiting, options.window_ns);
    for (summary, input) in report.points.iter_mut().zip(inputs) {
        summary.path = input.path.display().to_string();
    }
    Ok(report)
}
