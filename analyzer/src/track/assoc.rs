//! Associations and their endpoints.

use super::index::TagKey;
use super::path::PathState;
use super::tsn::{DirectionCounters, TsnLedger};
use crate::events::{AddressSource, AsconfRequestEvent, AssociationEndReason, EndpointId, PathId};
use crate::time::Timestamp;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;
use std::net::IpAddr;

/// Up to this many paths, a path is found by scanning the association's
/// paths; beyond, through a hash index.
const PATHS_SCANNED: usize = 16;

/// How an address became known, each way once, in the order learned.
/// Inline: a heap list per address was a tenth of a short association.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LearnedFrom {
    ways: [Option<AddressSource>; 3],
}

impl LearnedFrom {
    pub(crate) fn one(how: AddressSource) -> Self {
        LearnedFrom {
            ways: [Some(how), None, None],
        }
    }

    /// Whether the address became known this way.
    pub fn contains(&self, how: &AddressSource) -> bool {
        self.ways.contains(&Some(*how))
    }

    /// The ways the address became known, in the order learned.
    pub fn iter(&self) -> impl Iterator<Item = &AddressSource> {
        self.ways.iter().map_while(Option::as_ref)
    }

    /// Adds `how` unless known (there are only three ways).
    pub fn add(&mut self, how: AddressSource) {
        if !self.contains(&how) {
            if let Some(free) = self.ways.iter_mut().find(|w| w.is_none()) {
                *free = Some(how);
            }
        }
    }
}

impl Serialize for LearnedFrom {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// One address of an endpoint: how it became known, whether it was
/// deleted or confirmed.
#[derive(Debug, Clone, Serialize)]
pub struct AddressInfo {
    /// The address.
    pub address: IpAddr,
    /// How it became known (INIT / INIT ACK parameters, ASCONF, packets).
    pub learned_from: LearnedFrom,
    /// The frame it first became known in.
    pub first_frame: u64,
    /// Frame of the ASCONF-ACK that confirmed its deletion.
    pub deleted_frame: Option<u64>,
    /// Frame of the first HEARTBEAT ACK answering a HEARTBEAT sent to it
    /// since it was (last) added.
    pub confirmed_frame: Option<u64>,
    /// Used by the handshake (the source or destination of an INIT or
    /// INIT ACK): confirmed implicitly (RFC 9260 §5.4), with no
    /// notification (Linux makes it ACTIVE at once).
    pub handshake: bool,
    /// Awaiting confirmation (RFC 9260 §5.4 UNCONFIRMED): listed in an
    /// INIT or INIT ACK without being the handshake's own address, or
    /// added by ASCONF (Linux: SCTP_UNCONFIRMED), and no HEARTBEAT ACK
    /// has answered a HEARTBEAT to it since. Errors on paths to it are
    /// counted, but the paths are never potentially failed or inactive
    /// (docs/metrics.md, "Heartbeats and confirmation"). An address only
    /// seen in packets (a capture from mid-stream) is taken as confirmed:
    /// its history is not known.
    pub unconfirmed: bool,
    /// Its place in the peer's list of destinations (Linux's
    /// `transport_addr_list`: addresses in the order they were added, one
    /// added again after a DELETE-IP last, as a new transport). The first
    /// one not deleted replaces a deleted primary or active path
    /// (`sctp_assoc_rm_peer`).
    #[serde(skip)]
    pub(crate) transport_rank: u32,
}

impl AddressInfo {
    /// Confirmed implicitly by the handshake.
    pub(crate) fn confirm_by_handshake(&mut self) {
        self.handshake = true;
        self.unconfirmed = false;
    }

    /// Listed by its endpoint (INIT parameters) or added (ASCONF): it
    /// awaits confirmation unless the handshake or a HEARTBEAT ACK
    /// confirmed it already.
    fn await_confirmation(&mut self) {
        if !self.handshake && self.confirmed_frame.is_none() {
            self.unconfirmed = true;
        }
    }
}

/// One end of an association: its port, tag, addresses and extensions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Endpoint {
    /// Its SCTP port.
    pub port: u16,
    /// The tag the peer writes in packets sent to this endpoint (this
    /// endpoint's Initiate Tag).
    pub verification_tag: Option<u32>,
    /// Its addresses, in the order they became known (deleted ones kept,
    /// with their `deleted_frame`).
    pub addresses: Vec<AddressInfo>,
    /// Chunk types listed in a Supported Extensions parameter (RFC 5061 §4.2.7).
    pub supported_extensions: Vec<&'static str>,
    /// The destination address this endpoint was asked to use as primary
    /// by an acknowledged SET PRIMARY from the peer.
    pub primary_destination: Option<IpAddr>,
    /// The last `AddressInfo::transport_rank` given.
    #[serde(skip)]
    transports_ranked: u32,
}

impl Endpoint {
    /// Records `address`; returns true when it was not known before (or
    /// comes back after a deletion). An ASCONF's addition changes no
    /// confirmation state here: whether the peer made a new transport for
    /// the address is the caller's to say ([`Association::renew_transport`]).
    pub(crate) fn learn(&mut self, address: IpAddr, how: AddressSource, frame: u64) -> bool {
        match self.addresses.iter_mut().find(|a| a.address == address) {
            Some(info) => {
                let revived = info.deleted_frame.is_some() && how == AddressSource::Asconf;
                if revived {
                    info.deleted_frame = None;
                }
                if how == AddressSource::Init {
                    info.await_confirmation();
                }
                info.learned_from.add(how);
                revived
            }
            None => {
                let transport_rank = self.next_transport_rank();
                // Endpoints have one or two addresses: grow one at a time.
                self.addresses.reserve_exact(1);
                self.addresses.push(AddressInfo {
                    address,
                    learned_from: LearnedFrom::one(how),
                    first_frame: frame,
                    deleted_frame: None,
                    confirmed_frame: None,
                    handshake: false,
                    unconfirmed: how != AddressSource::Observed,
                    transport_rank,
                });
                true
            }
        }
    }

    fn next_transport_rank(&mut self) -> u32 {
        self.transports_ranked = self.transports_ranked.saturating_add(1);
        self.transports_ranked
    }

    /// The peer made a new transport for `address` (Linux's
    /// sctp_assoc_add_peer with SCTP_UNCONFIRMED, from an ADD-IP): it
    /// awaits confirmation whatever it had (RFC 9260 §5.4; Linux notifies
    /// `confirmed` again) and goes last in the peer's list.
    fn renew_transport(&mut self, address: IpAddr) {
        let rank = self.next_transport_rank();
        if let Some(info) = self.address_mut(address) {
            info.confirmed_frame = None;
            info.handshake = false;
            info.unconfirmed = true;
            info.transport_rank = rank;
        }
    }

    /// The first address of the peer's list of destinations not deleted:
    /// the one Linux's sctp_assoc_rm_peer makes primary (and active) when
    /// the primary (the active path) was deleted.
    pub(crate) fn first_transport(&self) -> Option<IpAddr> {
        self.addresses
            .iter()
            .filter(|a| a.deleted_frame.is_none())
            .min_by_key(|a| a.transport_rank)
            .map(|a| a.address)
    }

    /// Whether `address` is one of its addresses (deleted ones included).
    pub fn has(&self, address: IpAddr) -> bool {
        self.addresses.iter().any(|a| a.address == address)
    }

    pub(crate) fn address_mut(&mut self, address: IpAddr) -> Option<&mut AddressInfo> {
        self.addresses.iter_mut().find(|a| a.address == address)
    }

    /// Whether `address` awaits confirmation (unknown addresses do not).
    pub fn unconfirmed(&self, address: IpAddr) -> bool {
        self.addresses
            .iter()
            .any(|a| a.address == address && a.unconfirmed)
    }
}

/// How the capture shows an association begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// Its INIT was captured.
    Init,
    /// INIT not captured; INIT ACK was.
    InitAck,
    /// Neither: tracked from the verification tags of a running association.
    MidStream,
}

/// A new-DATA segment: a run of new DATA on one path, per direction.
#[derive(Debug, Clone, Serialize)]
pub struct DataSegment {
    /// The path that carried the run.
    pub path: PathId,
    /// The run's first new DATA.
    pub first_frame: u64,
    /// That frame's time.
    pub first_time: Timestamp,
    /// The run's last new DATA so far.
    pub last_frame: u64,
    /// That frame's time.
    pub last_time: Timestamp,
    /// New DATA chunks in the run (retransmissions not counted).
    pub new_chunks: u64,
}

/// New-DATA segments a direction keeps: the first ones and the current
/// one. An association that switches paths every few seconds for days
/// would otherwise hold every segment (its switches are in the events).
pub const DATA_SEGMENTS_AT_MOST: usize = 200;

/// Data sent by one endpoint.
#[derive(Debug, Default)]
pub struct Direction {
    /// The endpoint sending the DATA (0 or 1).
    pub sender: EndpointId,
    /// Which path carried new DATA over time: the first segments, then the
    /// current one (at most `DATA_SEGMENTS_AT_MOST` in all).
    pub new_data_paths: Vec<DataSegment>,
    /// Segments left out between the first ones and the current one.
    pub new_data_paths_left_out: u64,
    /// Allocated by the direction's first DATA, SACK or FORWARD TSN: many
    /// associations carry DATA one way only, or none, and with tens of
    /// thousands alive an empty ledger per direction is a third of an
    /// association's memory.
    ledger: Option<Box<TsnLedger>>,
    /// The latest timeout-driven copies (TSN, path charged, the frame of
    /// its expiry), allocated by the first: a duplicate report of one of
    /// them shows its expiry spurious.
    // Boxed: one pointer wide in every direction of every association
    // (few ever time out); an empty VecDeque alone is four words.
    #[allow(clippy::box_collection)]
    timeout_copies: Option<Box<VecDeque<(u32, PathId, u64)>>>,
}

/// Timeout-driven copies remembered per direction for spurious-expiry
/// recognition: a duplicate report comes one round trip after the copy.
const TIMEOUT_COPIES: usize = 64;

impl Direction {
    /// A timeout-driven copy of `tsn`, charged to `path`'s expiry that
    /// began at `expiry_frame`: remembered when it is the TSN's first
    /// retransmission (`first`), and any earlier copy of the TSN forgotten
    /// (a duplicate report after three copies could be of any two).
    pub(crate) fn note_timeout_copy(
        &mut self,
        tsn: u32,
        path: PathId,
        expiry_frame: u64,
        first: bool,
    ) {
        if let Some(copies) = self.timeout_copies.as_mut() {
            copies.retain(|c| c.0 != tsn);
        }
        if !first {
            return;
        }
        let copies = self.timeout_copies.get_or_insert_with(Box::default);
        if copies.len() == TIMEOUT_COPIES {
            copies.pop_front();
        }
        copies.push_back((tsn, path, expiry_frame));
    }

    /// Another copy of `tsn` that is not a timeout's (a fast
    /// retransmission): its timeout copy, if any, is no longer the only
    /// retransmission.
    pub(crate) fn forget_timeout_copy(&mut self, tsn: u32) {
        if let Some(copies) = self.timeout_copies.as_mut() {
            if copies.iter().any(|c| c.0 == tsn) {
                copies.retain(|c| c.0 != tsn);
            }
        }
    }

    /// The expiries (path, expiry frame, TSN) a SACK's duplicate TSNs show
    /// spurious, each once (its copies are forgotten then).
    pub(crate) fn spurious(
        &mut self,
        duplicates: impl Iterator<Item = u32>,
    ) -> Vec<(PathId, u64, u32)> {
        let mut found = Vec::new();
        let Some(copies) = self.timeout_copies.as_mut() else {
            return found;
        };
        for dup in duplicates {
            if let Some(&(tsn, path, expiry)) = copies.iter().find(|c| c.0 == dup) {
                copies.retain(|c| c.2 != expiry || c.1 != path);
                found.push((path, expiry, tsn));
            }
        }
        found
    }

    /// Starts a new-DATA segment; beyond `DATA_SEGMENTS_AT_MOST`, it
    /// replaces the current one, which is counted as left out.
    pub(crate) fn start_segment(&mut self, segment: DataSegment) {
        if self.new_data_paths.len() >= DATA_SEGMENTS_AT_MOST {
            if let Some(current) = self.new_data_paths.last_mut() {
                *current = segment;
                self.new_data_paths_left_out += 1;
                return;
            }
        }
        crate::compact::push(&mut self.new_data_paths, segment);
    }

    /// The direction's counters (all zero until it carries anything).
    pub fn counters(&self) -> &DirectionCounters {
        self.ledger
            .as_deref()
            .map_or(&DirectionCounters::ZERO, |l| &l.counters)
    }

    /// The TSN ledger, created on first use with at most `window` TSNs.
    pub(crate) fn ledger(&mut self, window: usize) -> &mut TsnLedger {
        self.ledger.get_or_insert_with(|| {
            let mut ledger = Box::<TsnLedger>::default();
            ledger.limit_window(window);
            ledger
        })
    }
}

impl Serialize for Direction {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct View<'a> {
            sender: EndpointId,
            #[serde(flatten)]
            counters: &'a DirectionCounters,
            new_data_paths: &'a [DataSegment],
            new_data_paths_left_out: u64,
        }
        View {
            sender: self.sender,
            counters: self.counters(),
            new_data_paths: &self.new_data_paths,
            new_data_paths_left_out: self.new_data_paths_left_out,
        }
        .serialize(serializer)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct PendingHeartbeat {
    pub info_hash: u64,
    pub sender: EndpointId,
    pub frame: u64,
    pub time: Timestamp,
    pub path: PathId,
}

#[derive(Debug, Clone)]
pub(crate) struct PendingAsconf {
    pub serial: u32,
    pub sender: EndpointId,
    /// The first transmission of the serial seen: what the peer had before
    /// it is what the request found ([`Association::in_use_at_peer`]).
    pub first_frame: u64,
    /// The last transmission of the serial so far: an ASCONF-ACK is
    /// matched to it and its round trip measured from it (Karn's rule: a
    /// sample from an earlier copy could belong to either).
    pub frame: u64,
    pub time: Timestamp,
    pub requests: Vec<AsconfRequestEvent>,
    /// An ASCONF-ACK answered the serial before this copy was sent (the
    /// requester did not get it, or resent anyway): the request is not
    /// unanswered, though a second answer may still match the copy.
    pub answered: bool,
}

/// The latest ASCONF serial an endpoint sent: RFC 5061 §5.1 has the
/// sender increment the serial for each new ASCONF and resend an
/// unanswered one (T-4 timer) with the same serial, so a serial already
/// sent is a retransmission whether or not an ASCONF-ACK was seen.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SentAsconf {
    pub serial: u32,
    pub first_frame: u64,
    pub transmissions: u32,
    /// An ASCONF-ACK for the serial was matched to a transmission of it
    /// (a later one answers a retransmission: `repeated`).
    pub acknowledged: bool,
    /// An ASCONF-ACK for the serial was seen, matched or not: a copy sent
    /// after it is of an answered request.
    pub answer_seen: bool,
    /// Its request was forgotten unanswered beyond the tracker's cap
    /// (counted in `unanswered_asconfs_forgotten`): a copy or an answer
    /// of it takes it out of that count.
    pub forgotten_unanswered: bool,
}

/// The wire-level association the tracker owns: endpoints, addresses,
/// verification tags, paths with their state, data directions, and the
/// outstanding HEARTBEATs and ASCONFs.
#[derive(Debug, Serialize)]
pub struct Association {
    /// Its id: unique and increasing within a capture file.
    pub id: u32,
    /// How the capture shows it begin.
    pub start: Start,
    /// Its first packet.
    pub first_frame: u64,
    /// That packet's time.
    pub first_time: Timestamp,
    /// Its last packet so far.
    pub last_frame: u64,
    /// That packet's time.
    pub last_time: Timestamp,
    /// The COOKIE ACK that established it; `None` when not captured.
    pub established_frame: Option<u64>,
    /// How it ended; `None` while it has not ended.
    pub end: Option<AssociationEndReason>,
    /// The frame that ended it (the ABORT, SHUTDOWN COMPLETE, or the
    /// packet of the association that superseded it); `None` while it has
    /// not ended.
    pub end_frame: Option<u64>,
    /// Its two endpoints: 0 is the initiator (the INIT's sender, or the
    /// INIT ACK's receiver; from mid-stream, the first packet's sender),
    /// 1 its peer.
    pub endpoints: [Endpoint; 2],
    /// Its paths (source, destination address pairs), indexed by
    /// [`PathId`] in the order first seen.
    pub paths: Vec<PathState>,
    /// The DATA each endpoint sent, indexed by sending endpoint.
    pub directions: [Direction; 2],
    /// SCTP packets of it analysed.
    pub packets: u64,
    /// Chunks of this association that could not be decoded.
    #[serde(skip)]
    pub malformed_chunks: u64,
    /// Paths by (source, destination), only once there are more than
    /// [`PATHS_SCANNED`] (fewer are found by scanning `paths`).
    #[serde(skip)]
    path_index: Option<Box<FxHashMap<(IpAddr, IpAddr), PathId>>>,
    #[serde(skip)]
    pub(crate) pending_heartbeats: Vec<PendingHeartbeat>,
    #[serde(skip)]
    pub(crate) pending_asconfs: Vec<PendingAsconf>,
    /// Unanswered requests forgotten from `pending_asconfs` beyond its cap
    /// (an answer after that is unmatched, so they stay unanswered).
    #[serde(skip)]
    pub(crate) unanswered_asconfs_forgotten: u64,
    /// Per sending endpoint, its latest ASCONF serial (allocated by the
    /// first ASCONF: most associations never send one).
    #[serde(skip)]
    pub(crate) sent_asconf: Option<Box<[Option<SentAsconf>; 2]>>,
    /// Keys this association put in the tracker's tag and INIT tables.
    #[serde(skip)]
    pub(crate) tag_keys: Vec<TagKey>,
    /// Keys this association put in the tracker's INIT table.
    #[serde(skip)]
    pub(crate) init_keys: Vec<TagKey>,
    /// Entries for it in the tracker's deadline heap.
    #[serde(skip)]
    pub(crate) queued_deadlines: u8,
    /// Per sending endpoint, the path of its last packet once both of
    /// that path's addresses are known to the right endpoints: the next
    /// packet on it needs no address learning and no path lookup (most
    /// packets repeat their sender's last path).
    #[serde(skip)]
    pub(crate) last_path: [Option<PathId>; 2],
}

impl Association {
    pub(crate) fn new(id: u32, start: Start, ports: [u16; 2], frame: u64, time: Timestamp) -> Self {
        let mut endpoints: [Endpoint; 2] = Default::default();
        endpoints[0].port = ports[0];
        endpoints[1].port = ports[1];
        let mut directions: [Direction; 2] = Default::default();
        directions[1].sender = 1;
        Association {
            id,
            start,
            first_frame: frame,
            first_time: time,
            last_frame: frame,
            last_time: time,
            established_frame: None,
            end: None,
            end_frame: None,
            endpoints,
            paths: Vec::new(),
            directions,
            packets: 0,
            malformed_chunks: 0,
            path_index: None,
            pending_heartbeats: Vec::new(),
            pending_asconfs: Vec::new(),
            unanswered_asconfs_forgotten: 0,
            sent_asconf: None,
            tag_keys: Vec::new(),
            init_keys: Vec::new(),
            queued_deadlines: 0,
            last_path: [None; 2],
        }
    }

    /// ASCONF requests (by sender and serial, copies counted once) no
    /// ASCONF-ACK in the capture answered: those still outstanding and
    /// those forgotten as outstanding beyond the tracker's cap.
    pub fn unanswered_asconfs(&self) -> u64 {
        let outstanding = self.pending_asconfs.iter().filter(|p| !p.answered).count();
        outstanding as u64 + self.unanswered_asconfs_forgotten
    }

    /// The frames of the unanswered requests still outstanding (each
    /// request's last transmission, the one an answer would match): those
    /// [`Association::unanswered_asconfs`] counts but the ones forgotten
    /// beyond the cap, whose frames are not kept.
    pub fn unanswered_asconf_frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.pending_asconfs
            .iter()
            .filter(|p| !p.answered)
            .map(|p| p.frame)
    }

    /// The two endpoints' ports, endpoint 0's first.
    pub fn ports(&self) -> [u16; 2] {
        [self.endpoints[0].port, self.endpoints[1].port]
    }

    /// The path from `src` to `dst`, if it has carried packets.
    pub fn path(&self, src: IpAddr, dst: IpAddr) -> Option<PathId> {
        match &self.path_index {
            Some(index) => index.get(&(src, dst)).copied(),
            None => self
                .paths
                .iter()
                .position(|p| p.src == src && p.dst == dst)
                .map(|i| i as PathId),
        }
    }

    /// Adds a path not seen before (its id is its index in `paths`),
    /// unconfirmed when its destination is.
    pub(crate) fn add_path(&mut self, mut path: PathState) {
        debug_assert_eq!(usize::from(path.id), self.paths.len());
        path.unconfirmed = self.endpoints[1 - path.sender].unconfirmed(path.dst);
        debug_assert!(self.path(path.src, path.dst).is_none());
        if let Some(index) = &mut self.path_index {
            index.insert((path.src, path.dst), path.id);
        } else if self.paths.len() == PATHS_SCANNED {
            let index = self.paths.iter().map(|p| ((p.src, p.dst), p.id));
            let mut index: FxHashMap<_, _> = index.collect();
            index.insert((path.src, path.dst), path.id);
            self.path_index = Some(Box::new(index));
        }
        // Most associations have two or four paths, and a path is large:
        // grow one at a time while few.
        crate::compact::push(&mut self.paths, path);
    }

    /// Whether the peer of `endpoint` already had a transport for its
    /// address `address` (not deleted) before an ASCONF first sent at
    /// `request_frame` asked to add it: the handshake's or one listed in
    /// an INIT, added before, confirmed by a HEARTBEAT ACK to the peer's
    /// HEARTBEAT, or a destination of the peer's packets before the
    /// request (an association captured from mid-stream). An address only
    /// seen as a source (the ASCONF's own, from the new address) is not:
    /// Linux makes no transport from a packet's source.
    pub(crate) fn in_use_at_peer(
        &self,
        endpoint: EndpointId,
        address: IpAddr,
        request_frame: u64,
    ) -> bool {
        let Some(info) = self.endpoints[endpoint]
            .addresses
            .iter()
            .find(|a| a.address == address)
        else {
            return false;
        };
        info.deleted_frame.is_none()
            && (info.handshake
                || info.confirmed_frame.is_some()
                || info.learned_from.contains(&AddressSource::Init)
                || info.learned_from.contains(&AddressSource::Asconf)
                || self.paths.iter().any(|p| {
                    p.sender != endpoint && p.dst == address && p.first_frame < request_frame
                }))
    }

    /// The peer of `endpoint` made a new transport for `address` (an
    /// acknowledged ADD-IP of an address it had none for): unconfirmed and
    /// last in its list. When it had one before, freed by the DELETE-IP of
    /// frame `deleted_frame` (Linux's sctp_assoc_rm_peer, then
    /// sctp_assoc_add_peer), the peer's paths to it start afresh (error
    /// counter, potentially failed, inactive), and a HEARTBEAT sent to it
    /// before the deletion is forgotten: its answer matches no nonce of
    /// the new transport, and it is no error of it (Linux's `hb_sent`
    /// starts clear).
    pub(crate) fn renew_transport(
        &mut self,
        endpoint: EndpointId,
        address: IpAddr,
        deleted_frame: Option<u64>,
    ) {
        self.endpoints[endpoint].renew_transport(address);
        let Some(deleted_frame) = deleted_frame else {
            return;
        };
        let mut renewed = Vec::new();
        for p in self
            .paths
            .iter_mut()
            .filter(|p| p.sender != endpoint && p.dst == address)
        {
            p.renew_transport();
            renewed.push(p.id);
        }
        self.pending_heartbeats
            .retain(|h| h.frame >= deleted_frame || !renewed.contains(&h.path));
    }

    /// Carries `endpoint`'s address `address` confirmation state to the
    /// paths to it (the peer's transport to that address, whatever the
    /// source address: Linux keeps the state per destination).
    pub(crate) fn sync_confirmation(&mut self, endpoint: EndpointId, address: IpAddr) {
        let unconfirmed = self.endpoints[endpoint].unconfirmed(address);
        for p in self
            .paths
            .iter_mut()
            .filter(|p| p.sender != endpoint && p.dst == address)
        {
            p.unconfirmed = unconfirmed;
        }
    }

    /// The path in the opposite direction, if it has carried packets.
    pub fn reverse_of(&self, path: PathId) -> Option<PathId> {
        let p = self.paths.get(usize::from(path))?;
        self.path(p.dst, p.src)
    }

    /// Whether `address` is an address of either endpoint.
    pub fn involves(&self, address: IpAddr) -> bool {
        self.endpoints.iter().any(|e| e.has(address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(path: PathId, frame: u64) -> DataSegment {
        DataSegment {
            path,
            first_frame: frame,
            first_time: Timestamp(frame as i64),
            last_frame: frame,
            last_time: Timestamp(frame as i64),
            new_chunks: 1,
        }
    }

    #[test]
    fn segments_beyond_the_cap_replace_the_current_one() {
        let mut d = Direction::default();
        let switches = DATA_SEGMENTS_AT_MOST as u64 + 50;
        for frame in 0..switches {
            d.start_segment(segment((frame % 2) as PathId, frame));
        }
        assert_eq!(d.new_data_paths.len(), DATA_SEGMENTS_AT_MOST);
        assert_eq!(d.new_data_paths_left_out, 50);
        let frames: Vec<u64> = d.new_data_paths.iter().map(|s| s.first_frame).collect();
        // The first ones in order, then the newest.
        assert_eq!(
            frames[..DATA_SEGMENTS_AT_MOST - 1],
            (0..DATA_SEGMENTS_AT_MOST as u64 - 1).collect::<Vec<_>>()[..]
        );
        assert_eq!(
            d.new_data_paths.last().map(|s| s.first_frame),
            Some(switches - 1)
        );
    }
}
