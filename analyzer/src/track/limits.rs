//! Caps on tracked state. Hostile or unusual captures (tens of thousands of
//! associations that never end, an INIT listing thousands of addresses, a
//! peer that never acknowledges) would otherwise grow state without bound.
//! Past a cap the state stops growing, the excess is counted with the first
//! frame it happened at, and the file's report says so
//! ([`LimitHits::warnings`]); packets that could not be tracked are counted
//! as `sctp_untracked`, never dropped silently.

use serde::Serialize;

/// The caps (`analyze --max-associations` etc.). Defaults hold a busy
/// core-network capture: a million live associations, 64 paths per
/// association and 64 addresses per endpoint (RFC 9260 gives no limit,
/// real multihoming uses a handful), 2^20 outstanding TSNs per direction,
/// a million events of one association held at once until written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Associations alive at once; a packet that would start another is
    /// not tracked.
    pub associations: usize,
    /// Paths (source, destination pairs) of one association; packets on
    /// further pairs are not tracked.
    pub paths: usize,
    /// Addresses of one endpoint; further ones are not recorded (their
    /// packets still are).
    pub addresses: usize,
    /// TSNs of one data direction remembered beyond the cumulative ack;
    /// older ones are forgotten (their retransmissions are then not matched
    /// to a first transmission).
    pub tsn_window: usize,
    /// Events of one association held at once until they are handed to
    /// the outputs (a long association hands them on in parts,
    /// [`crate::handover::PART_EVENTS`], and at half this cap); its metrics
    /// are still computed from all of them.
    pub events: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            associations: 1_000_000,
            paths: 64,
            addresses: 64,
            tsn_window: 1 << 20,
            events: 1_000_000,
        }
    }
}

/// How often one cap was hit, and where first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// How many times (packets, addresses, TSNs, events or datagrams, as
    /// the cap counts) it was hit.
    pub count: u64,
    /// The frame it was first hit at; `None` when never hit.
    pub first_frame: Option<u64>,
}

impl Hit {
    /// Records `count` hits at `frame` (nothing when `count` is 0).
    pub fn record(&mut self, frame: u64, count: u64) {
        if count == 0 {
            return;
        }
        self.count += count;
        self.first_frame.get_or_insert(frame);
    }
}

/// Every cap's hits in one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LimitHits {
    /// Packets not tracked: they would have started an association beyond
    /// [`Limits::associations`].
    pub associations: Hit,
    /// Packets not tracked: on a path beyond [`Limits::paths`].
    pub paths: Hit,
    /// Addresses not recorded beyond [`Limits::addresses`].
    pub addresses: Hit,
    /// TSNs forgotten beyond [`Limits::tsn_window`].
    pub tsn_window: Hit,
    /// Events not kept beyond [`Limits::events`].
    pub events: Hit,
    /// Fragmented datagrams dropped unfinished because too many were in
    /// progress at once.
    pub fragments: Hit,
}

impl LimitHits {
    /// Whether any cap was hit.
    pub fn any(&self) -> bool {
        [
            self.associations,
            self.paths,
            self.addresses,
            self.tsn_window,
            self.events,
            self.fragments,
        ]
        .iter()
        .any(|h| h.count > 0)
    }

    /// One readable line per cap that was hit (`fragments_cap`: the
    /// decoder's cap on datagrams in reassembly).
    pub fn warnings<'a>(
        &'a self,
        limits: &'a Limits,
        fragments_cap: usize,
    ) -> impl Iterator<Item = String> + 'a {
        [
            (
                self.associations,
                format!(
                    "more than {} associations alive at once (--max-associations): SCTP packets not tracked",
                    limits.associations
                ),
            ),
            (
                self.paths,
                format!(
                    "an association with more than {} paths (--max-paths): SCTP packets not tracked",
                    limits.paths
                ),
            ),
            (
                self.addresses,
                format!(
                    "an endpoint with more than {} addresses (--max-addresses): addresses not recorded",
                    limits.addresses
                ),
            ),
            (
                self.tsn_window,
                format!(
                    "more than {} TSNs outstanding in one direction (--tsn-window): TSNs forgotten",
                    limits.tsn_window
                ),
            ),
            (
                self.events,
                format!(
                    "an association with more than {} events (--max-events): events not kept",
                    limits.events
                ),
            ),
            (
                self.fragments,
                format!(
                    "more than {fragments_cap} fragmented datagrams in reassembly at once: datagrams dropped unfinished"
                ),
            ),
        ]
        .into_iter()
        .filter(|(hit, _)| hit.count > 0)
        .map(|(hit, what)| {
            format!(
                "limit reached: {what}: {} from frame {}",
                hit.count,
                hit.first_frame.unwrap_or(0)
            )
        })
    }
}
