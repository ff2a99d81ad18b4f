//! `long`: a few long associations between two multihomed core nodes,
//! simulated as a discrete-event model of both SCTP endpoints and captured
//! by a tap beside node A (Ethernet, IPv4).
//!
//! * Node A (the client, INIT sender) has one address on network 1 (it
//!   alternates between 10.1.1.1 and 10.1.3.1, see renumbering) and
//!   10.2.2.1 on network 2; node B has 10.1.1.2 and 10.2.2.2. Network 1
//!   has a one-way delay of 5 ms, network 2 of 7 ms. The primary path is on
//!   network 1; DATA moves to network 2 only on failover.
//! * Messages arrive at each endpoint as a Poisson process (`--rate` per
//!   second per direction per association); their sizes are those of
//!   signalling: 70 % 60–240 B, 22 % 240–600 B, 8 % 600–1338 B of user
//!   data (frames of ~120 B to 1416 B). Each is sent at once in its own
//!   packet (SACKs bundled when pending), queued messages are bundled up
//!   to the MTU.
//! * Delayed SACK (every second packet, else after 200 ms; at once for
//!   duplicates and gaps, with gap blocks and duplicate TSNs).
//! * HEARTBEAT every 30 s (plus up to one RTO) on every path that does
//!   not carry DATA, answered from the probed address.
//! * Every 60–120 s of capture time, in turn, for all associations:
//!   - renumbering: A adds its other network-1 address (ASCONF ADD-IP,
//!     ASCONF-ACK), B confirms it with a HEARTBEAT, A makes it primary
//!     (SET-PRIMARY) and sends DATA from it, then deletes the old one
//!     (DELETE-IP): a planned switch in each direction;
//!   - an outage of network 1 for 8–25 s beyond the tap: A's packets on
//!     it are captured and lost, B's lost unseen. T3 timeouts (RTO 0.5 s
//!     doubling to 4 s, Path.Max.Retrans 2) retransmit the outstanding
//!     DATA on network 2 until the primary is inactive and new DATA
//!     follows (failover); a HEARTBEAT ACK on the repaired path brings it
//!     back (return).
//! * When the file reaches the size, arrivals stop, outstanding DATA is
//!   acknowledged and each association is shut down.
//!
//! Payloads are opaque (PPID 0, ports 50000+i -> 6000+i, registered to
//! no Wireshark dissector), so tshark's work is the SCTP layer and below.

use crate::packet::{param, Rng, SctpPacket};
use crate::writer::CaptureWriter;
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

pub const LINKTYPE_ETHERNET: u32 = 1;

const MS: i64 = 1_000_000;
const SEC: i64 = 1_000_000_000;
const STREAMS: usize = 10;
const RTO_INITIAL: i64 = 500 * MS;
const RTO_MAX: i64 = 4 * SEC;
const PATH_MAX_RETRANS: u32 = 2;
const HB_INTERVAL: i64 = 30 * SEC;
const SACK_DELAY: i64 = 200 * MS;
/// SCTP bytes (common header and chunks) that fit an Ethernet MTU.
const SCTP_MTU: usize = 1500 - 20;
/// One-way delay of network 1 and 2.
const DELAY: [i64; 2] = [5 * MS, 7 * MS];
const A_NET1: [[u8; 4]; 2] = [[10, 1, 1, 1], [10, 1, 3, 1]];
const A_NET2: [u8; 4] = [10, 2, 2, 1];
const B_ADDRS: [[u8; 4]; 2] = [[10, 1, 1, 2], [10, 2, 2, 2]];
const A: usize = 0;
const B: usize = 1;

pub struct Options {
    pub associations: u32,
    /// Messages per second per direction per association.
    pub rate: f64,
    pub target_bytes: u64,
    pub start_ns: i64,
}

fn net_of(addr: [u8; 4]) -> usize {
    usize::from(addr[1] == 2)
}

fn mac(addr: [u8; 4]) -> [u8; 6] {
    [0x02, 0, addr[0], addr[1], addr[2], addr[3]]
}

/// Unwrapped TSNs are u64 internally, written as their low 32 bits.
#[derive(Clone, Debug)]
enum Chunk {
    Init {
        tag: u32,
        tsn: u32,
        addrs: [[u8; 4]; 2],
    },
    InitAck {
        tag: u32,
        tsn: u32,
        addrs: [[u8; 4]; 2],
        cookie: u64,
    },
    CookieEcho {
        cookie: u64,
    },
    CookieAck,
    Data {
        tsn: u64,
        stream: u16,
        ssn: u16,
        len: u16,
    },
    Sack {
        cum: u64,
        gaps: Vec<(u16, u16)>,
        dups: Vec<u64>,
    },
    Heartbeat(HbInfo),
    HeartbeatAck(HbInfo),
    Asconf {
        serial: u32,
        addr: [u8; 4],
        params: Vec<(u16, u32, [u8; 4])>,
    },
    AsconfAck {
        serial: u32,
    },
    Shutdown {
        cum: u64,
    },
    ShutdownAck,
    ShutdownComplete,
}

#[derive(Clone, Copy, Debug)]
struct HbInfo {
    addr: [u8; 4],
    sent: i64,
    nonce: u64,
}

const ADD_IP: u16 = 0xc001;
const DELETE_IP: u16 = 0xc002;
const SET_PRIMARY: u16 = 0xc004;

enum Event {
    /// A packet of B reaching the tap.
    Capture(Vec<u8>),
    Deliver {
        assoc: usize,
        to: usize,
        src: [u8; 4],
        dst: [u8; 4],
        chunks: Vec<Chunk>,
    },
    Start(usize),
    Message(usize, usize),
    SackTimer(usize, usize, u64),
    T3(usize, usize, u64),
    Hb(usize, usize, usize, u64),
    Incident,
    OutageEnd,
    Asconf(usize, Step),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    Add,
    SetPrimary,
    Delete,
}

struct Scheduled {
    at: i64,
    seq: u64,
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    /// Reversed: the heap pops the earliest.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// A destination address of an endpoint and what it knows of the path.
struct Peer {
    addr: [u8; 4],
    deleted: bool,
    errors: u32,
    rto: i64,
    active: bool,
    hb_pending: Option<u64>,
    hb_gen: u64,
}

impl Peer {
    fn new(addr: [u8; 4]) -> Self {
        Peer {
            addr,
            deleted: false,
            errors: 0,
            rto: RTO_INITIAL,
            active: true,
            hb_pending: None,
            hb_gen: 0,
        }
    }
}

struct Outstanding {
    tsn: u64,
    stream: u16,
    ssn: u16,
    len: u16,
    peer: usize,
    acked: bool,
}

struct Endpoint {
    /// Source address per network.
    src: [[u8; 4]; 2],
    peers: Vec<Peer>,
    primary: usize,
    established: bool,
    // Sending.
    next_tsn: u64,
    ssn: [u16; STREAMS],
    queue: VecDeque<u16>,
    outstanding: VecDeque<Outstanding>,
    t3_gen: u64,
    t3_running: bool,
    blocked: bool,
    ip_id: u16,
    // Receiving.
    cum: u64,
    above: BTreeSet<u64>,
    dups: Vec<u64>,
    unacked: u32,
    sack_gen: u64,
    last_from: usize,
    // ASCONF (A only).
    serial: u32,
    pending: Option<(u32, Step)>,
}

impl Endpoint {
    fn new(src: [[u8; 4]; 2], peers: &[[u8; 4]], my_tsn: u32, peer_tsn: u32) -> Self {
        Endpoint {
            src,
            peers: peers.iter().map(|&a| Peer::new(a)).collect(),
            primary: 0,
            established: false,
            // Unwrapped one wrap up, so that the TSN before the first
            // is representable.
            next_tsn: u64::from(my_tsn) + (1 << 32),
            ssn: [0; STREAMS],
            queue: VecDeque::new(),
            outstanding: VecDeque::new(),
            t3_gen: 0,
            t3_running: false,
            blocked: false,
            ip_id: (my_tsn >> 7) as u16,
            cum: u64::from(peer_tsn) + (1 << 32) - 1,
            above: BTreeSet::new(),
            dups: Vec::new(),
            unacked: 0,
            sack_gen: 0,
            last_from: 0,
            serial: my_tsn ^ 0x5a5a,
            pending: None,
        }
    }

    fn usable(&self, i: usize) -> bool {
        self.peers[i].active && !self.peers[i].deleted
    }

    /// Where new DATA goes: the primary while active, else another active
    /// address, else the primary anyway.
    fn data_dest(&self) -> usize {
        if self.usable(self.primary) {
            return self.primary;
        }
        (0..self.peers.len())
            .find(|&i| self.usable(i))
            .unwrap_or(self.primary)
    }

    fn alternate(&self, not: usize) -> usize {
        (0..self.peers.len())
            .find(|&i| i != not && self.usable(i))
            .or_else(|| (0..self.peers.len()).find(|&i| i != not && !self.peers[i].deleted))
            .unwrap_or(not)
    }

    fn peer_index(&self, addr: [u8; 4]) -> Option<usize> {
        self.peers.iter().position(|p| p.addr == addr)
    }

    fn sack_pending(&self) -> bool {
        self.unacked > 0 || !self.dups.is_empty()
    }

    /// The SACK for what has been received; clears the pending state.
    fn take_sack(&mut self) -> Chunk {
        let mut gaps = Vec::new();
        let mut run: Option<(u64, u64)> = None;
        for &t in &self.above {
            match run {
                Some((s, e)) if t == e + 1 => run = Some((s, t)),
                Some((s, e)) => {
                    gaps.push(((s - self.cum) as u16, (e - self.cum) as u16));
                    run = Some((t, t));
                }
                None => run = Some((t, t)),
            }
        }
        if let Some((s, e)) = run {
            gaps.push(((s - self.cum) as u16, (e - self.cum) as u16));
        }
        self.unacked = 0;
        self.sack_gen += 1;
        Chunk::Sack {
            cum: self.cum,
            gaps,
            dups: std::mem::take(&mut self.dups),
        }
    }
}

struct Assoc {
    ports: (u16, u16),
    /// Initiate tags of A and B: the tag each side expects.
    tags: [u32; 2],
    cookie: u64,
    ep: [Endpoint; 2],
}

pub struct Stats {
    pub renumberings: u32,
    pub outages: u32,
}

struct Sim<'w> {
    rng: Rng,
    now: i64,
    seq: u64,
    heap: BinaryHeap<Scheduled>,
    w: &'w mut CaptureWriter,
    buf: Vec<u8>,
    assocs: Vec<Assoc>,
    net1_down: bool,
    stopping: bool,
    /// Time of the last frame written.
    last: i64,
    target: u64,
    rate: f64,
    next_incident_is_outage: bool,
    stats: Stats,
}

pub fn generate(w: &mut CaptureWriter, rng: Rng, o: &Options) -> std::io::Result<Stats> {
    let mut sim = Sim {
        rng,
        now: o.start_ns,
        seq: 0,
        heap: BinaryHeap::new(),
        w,
        buf: Vec::with_capacity(2048),
        assocs: Vec::new(),
        net1_down: false,
        stopping: false,
        last: o.start_ns,
        target: o.target_bytes,
        rate: o.rate,
        next_incident_is_outage: false,
        stats: Stats {
            renumberings: 0,
            outages: 0,
        },
    };
    for i in 0..o.associations as usize {
        let tags = [sim.rng.tag(), sim.rng.tag()];
        let tsns = [sim.rng.next() as u32, sim.rng.next() as u32];
        let a = Endpoint::new(
            [A_NET1[0], A_NET2],
            &[B_ADDRS[0], B_ADDRS[1]],
            tsns[0],
            tsns[1],
        );
        let b = Endpoint::new(B_ADDRS, &[A_NET1[0], A_NET2], tsns[1], tsns[0]);
        sim.assocs.push(Assoc {
            ports: (50_000 + i as u16, 6_000 + i as u16),
            tags,
            cookie: sim.rng.next(),
            ep: [a, b],
        });
        sim.schedule(o.start_ns + i as i64 * 10 * MS, Event::Start(i));
    }
    let first = o.start_ns + 60 * SEC + sim.rng.below(30) as i64 * SEC;
    sim.schedule(first, Event::Incident);
    while let Some(s) = sim.heap.pop() {
        sim.now = s.at;
        sim.handle(s.event)?;
    }
    sim.shutdown()?;
    Ok(sim.stats)
}

impl Sim<'_> {
    fn schedule(&mut self, at: i64, event: Event) {
        self.seq += 1;
        self.heap.push(Scheduled {
            at,
            seq: self.seq,
            event,
        });
    }

    fn write(&mut self, at: i64, frame: &[u8]) -> std::io::Result<()> {
        self.w.frame(at, frame)?;
        self.last = at;
        if self.w.bytes >= self.target {
            self.stopping = true;
        }
        Ok(())
    }

    fn handle(&mut self, event: Event) -> std::io::Result<()> {
        match event {
            Event::Capture(frame) => self.write(self.now, &frame)?,
            Event::Start(a) => {
                let ep = &self.assocs[a].ep[A];
                let chunk = Chunk::Init {
                    tag: self.assocs[a].tags[A],
                    tsn: ep.next_tsn as u32,
                    addrs: [ep.src[0], ep.src[1]],
                };
                let (src, dst) = (ep.src[0], ep.peers[0].addr);
                self.send(a, A, src, dst, vec![chunk])?;
            }
            Event::Deliver {
                assoc,
                to,
                src,
                dst,
                chunks,
            } => {
                for c in chunks {
                    self.receive(assoc, to, src, dst, c)?;
                }
                // A SACK owed at once (gaps, duplicates, every second packet).
                let ep = &self.assocs[assoc].ep[to];
                if ep.unacked >= 2
                    || !ep.dups.is_empty()
                    || (ep.unacked > 0 && !ep.above.is_empty())
                {
                    self.send_sack(assoc, to)?;
                }
            }
            Event::Message(a, side) => {
                if self.stopping {
                    return Ok(());
                }
                let gap = self.rng.exp(SEC as f64 / self.rate) as i64 + 1;
                self.schedule(self.now + gap, Event::Message(a, side));
                let len = self.message_len();
                self.assocs[a].ep[side].queue.push_back(len);
                self.try_send(a, side)?;
            }
            Event::SackTimer(a, side, generation) => {
                let ep = &self.assocs[a].ep[side];
                if ep.sack_gen == generation && ep.sack_pending() {
                    self.send_sack(a, side)?;
                }
            }
            Event::T3(a, side, generation) => {
                let ep = &self.assocs[a].ep[side];
                if ep.t3_running && ep.t3_gen == generation {
                    self.t3_expiry(a, side)?;
                }
            }
            Event::Hb(a, side, peer, generation) => {
                self.heartbeat_timer(a, side, peer, generation)?
            }
            Event::Incident => {
                if self.stopping {
                    return Ok(());
                }
                if self.next_incident_is_outage {
                    self.stats.outages += 1;
                    self.net1_down = true;
                    let len = (8 + self.rng.below(18) as i64) * SEC;
                    self.schedule(self.now + len, Event::OutageEnd);
                    let next = self.now + len + (60 + self.rng.below(60) as i64) * SEC;
                    self.schedule(next, Event::Incident);
                } else {
                    self.stats.renumberings += 1;
                    for a in 0..self.assocs.len() {
                        let at = self.now + self.rng.below(2_000) as i64 * MS;
                        self.schedule(at, Event::Asconf(a, Step::Add));
                    }
                    let next = self.now + (60 + self.rng.below(60) as i64) * SEC;
                    self.schedule(next, Event::Incident);
                }
                self.next_incident_is_outage = !self.next_incident_is_outage;
            }
            Event::OutageEnd => self.net1_down = false,
            Event::Asconf(a, step) => {
                if !self.stopping {
                    self.asconf_step(a, step)?;
                }
            }
        }
        Ok(())
    }

    /// Signalling message sizes (user data bytes).
    fn message_len(&mut self) -> u16 {
        let u = self.rng.below(100);
        let len = if u < 70 {
            60 + self.rng.below(180)
        } else if u < 92 {
            240 + self.rng.below(360)
        } else {
            600 + self.rng.below(739)
        };
        len as u16
    }

    /// Puts a packet on the wire: captured at the tap (A's at once, B's
    /// when they reach it unless lost before it) and delivered unless its
    /// network is down.
    fn send(
        &mut self,
        a: usize,
        from: usize,
        src: [u8; 4],
        dst: [u8; 4],
        chunks: Vec<Chunk>,
    ) -> std::io::Result<()> {
        let net = net_of(dst);
        let lost = net == 0 && self.net1_down;
        let delay = DELAY[net];
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        self.encode(a, from, src, dst, &chunks, &mut buf);
        if from == A {
            self.write(self.now, &buf)?;
        } else if !lost {
            self.schedule(self.now + delay, Event::Capture(buf.clone()));
        }
        self.buf = buf;
        if !lost {
            self.schedule(
                self.now + delay,
                Event::Deliver {
                    assoc: a,
                    to: 1 - from,
                    src,
                    dst,
                    chunks,
                },
            );
        }
        Ok(())
    }

    fn encode(
        &mut self,
        a: usize,
        from: usize,
        src: [u8; 4],
        dst: [u8; 4],
        chunks: &[Chunk],
        buf: &mut Vec<u8>,
    ) {
        let assoc = &mut self.assocs[a];
        let ports = if from == A {
            assoc.ports
        } else {
            (assoc.ports.1, assoc.ports.0)
        };
        let vtag = match chunks.first() {
            Some(Chunk::Init { .. }) => 0,
            _ => assoc.tags[1 - from],
        };
        let ep = &mut assoc.ep[from];
        ep.ip_id = ep.ip_id.wrapping_add(1);
        buf.extend_from_slice(&mac(dst));
        buf.extend_from_slice(&mac(src));
        buf.extend_from_slice(&0x0800u16.to_be_bytes());
        let mut p = SctpPacket::begin(buf, src, dst, ep.ip_id, ports, vtag);
        for c in chunks {
            encode_chunk(&mut p, c);
        }
        p.finish();
    }

    fn receive(
        &mut self,
        a: usize,
        to: usize,
        src: [u8; 4],
        dst: [u8; 4],
        chunk: Chunk,
    ) -> std::io::Result<()> {
        match chunk {
            Chunk::Init { .. } => {
                let assoc = &self.assocs[a];
                let c = Chunk::InitAck {
                    tag: assoc.tags[B],
                    tsn: assoc.ep[B].next_tsn as u32,
                    addrs: B_ADDRS,
                    cookie: assoc.cookie,
                };
                self.send(a, B, dst, src, vec![c])?;
            }
            Chunk::InitAck { cookie, .. } => {
                self.send(a, A, dst, src, vec![Chunk::CookieEcho { cookie }])?;
            }
            Chunk::CookieEcho { .. } => {
                self.send(a, B, dst, src, vec![Chunk::CookieAck])?;
                self.establish(a, B);
            }
            Chunk::CookieAck => self.establish(a, A),
            Chunk::Data { tsn, .. } => {
                let ep = &mut self.assocs[a].ep[to];
                if let Some(i) = ep.peer_index(src) {
                    ep.last_from = i;
                }
                if tsn <= ep.cum || ep.above.contains(&tsn) {
                    ep.dups.push(tsn);
                } else if tsn == ep.cum + 1 {
                    ep.cum = tsn;
                    while ep.above.remove(&(ep.cum + 1)) {
                        ep.cum += 1;
                    }
                } else {
                    ep.above.insert(tsn);
                }
                if ep.unacked == 0 {
                    let generation = ep.sack_gen;
                    self.schedule(self.now + SACK_DELAY, Event::SackTimer(a, to, generation));
                }
                self.assocs[a].ep[to].unacked += 1;
            }
            Chunk::Sack { cum, gaps, .. } => self.on_sack(a, to, cum, &gaps)?,
            Chunk::Heartbeat(info) => {
                self.send(a, to, dst, src, vec![Chunk::HeartbeatAck(info)])?;
            }
            Chunk::HeartbeatAck(info) => {
                let ep = &mut self.assocs[a].ep[to];
                if let Some(i) = ep.peer_index(info.addr) {
                    let p = &mut ep.peers[i];
                    if p.hb_pending == Some(info.nonce) {
                        p.hb_pending = None;
                        p.errors = 0;
                        p.active = true;
                        p.rto = RTO_INITIAL;
                    }
                }
                self.try_send(a, to)?;
            }
            Chunk::Asconf { serial, params, .. } => {
                // B applies the requests and acknowledges them all.
                self.send(a, to, dst, src, vec![Chunk::AsconfAck { serial }])?;
                for (kind, _, addr) in params {
                    let ep = &mut self.assocs[a].ep[to];
                    let i = match ep.peer_index(addr) {
                        Some(i) => i,
                        None => {
                            ep.peers.push(Peer::new(addr));
                            ep.peers.len() - 1
                        }
                    };
                    match kind {
                        ADD_IP => {
                            ep.peers[i] = Peer::new(addr);
                            ep.peers[i].hb_gen = self.seq;
                            let generation = ep.peers[i].hb_gen;
                            // Confirm the new address at once.
                            self.schedule(self.now + MS, Event::Hb(a, to, i, generation));
                        }
                        SET_PRIMARY => ep.primary = i,
                        _ => ep.peers[i].deleted = true,
                    }
                }
            }
            Chunk::AsconfAck { serial } => {
                let ep = &mut self.assocs[a].ep[to];
                if let Some((s, step)) = ep.pending {
                    if s == serial {
                        ep.pending = None;
                        let new = other_net1(ep.src[0]);
                        match step {
                            Step::Add => {
                                let at = self.now + (50 + self.rng.below(250) as i64) * MS;
                                self.schedule(at, Event::Asconf(a, Step::SetPrimary));
                            }
                            Step::SetPrimary => {
                                ep.src[0] = new;
                                let at = self.now + (500 + self.rng.below(1500) as i64) * MS;
                                self.schedule(at, Event::Asconf(a, Step::Delete));
                            }
                            Step::Delete => {}
                        }
                    }
                }
            }
            Chunk::Shutdown { .. } | Chunk::ShutdownAck | Chunk::ShutdownComplete => {}
        }
        Ok(())
    }

    fn establish(&mut self, a: usize, side: usize) {
        self.assocs[a].ep[side].established = true;
        let gap = self.rng.exp(SEC as f64 / self.rate) as i64 + 1;
        self.schedule(self.now + gap, Event::Message(a, side));
        for peer in 0..self.assocs[a].ep[side].peers.len() {
            let at = self.now + self.rng.below(HB_INTERVAL as u64) as i64;
            self.schedule(at, Event::Hb(a, side, peer, 0));
        }
    }

    /// Sends what the queue holds unless T3 recovery holds it back.
    fn try_send(&mut self, a: usize, side: usize) -> std::io::Result<()> {
        loop {
            let ep = &mut self.assocs[a].ep[side];
            if ep.blocked || ep.queue.is_empty() || !ep.established {
                return Ok(());
            }
            let dest = ep.data_dest();
            let mut chunks = Vec::new();
            let mut size = 12;
            if ep.sack_pending() {
                chunks.push(ep.take_sack());
                size += 16;
            }
            while let Some(&len) = ep.queue.front() {
                let c = (16 + usize::from(len)).next_multiple_of(4);
                if size + c > SCTP_MTU && chunks.iter().any(|c| matches!(c, Chunk::Data { .. })) {
                    break;
                }
                ep.queue.pop_front();
                size += c;
                let tsn = ep.next_tsn;
                ep.next_tsn += 1;
                let stream = (tsn % STREAMS as u64) as u16;
                let ssn = ep.ssn[usize::from(stream)];
                ep.ssn[usize::from(stream)] = ssn.wrapping_add(1);
                ep.outstanding.push_back(Outstanding {
                    tsn,
                    stream,
                    ssn,
                    len,
                    peer: dest,
                    acked: false,
                });
                chunks.push(Chunk::Data {
                    tsn,
                    stream,
                    ssn,
                    len,
                });
            }
            self.start_t3(a, side, false);
            let ep = &self.assocs[a].ep[side];
            let (src, dst) = (ep.src[net_of(ep.peers[dest].addr)], ep.peers[dest].addr);
            self.send(a, side, src, dst, chunks)?;
        }
    }

    fn start_t3(&mut self, a: usize, side: usize, restart: bool) {
        let ep = &mut self.assocs[a].ep[side];
        if ep.t3_running && !restart {
            return;
        }
        let Some(first) = ep.outstanding.iter().find(|o| !o.acked) else {
            ep.t3_running = false;
            return;
        };
        let rto = ep.peers[first.peer].rto;
        ep.t3_gen += 1;
        ep.t3_running = true;
        let generation = ep.t3_gen;
        self.schedule(self.now + rto, Event::T3(a, side, generation));
    }

    fn send_sack(&mut self, a: usize, side: usize) -> std::io::Result<()> {
        let ep = &mut self.assocs[a].ep[side];
        let dest = if ep.usable(ep.last_from) {
            ep.last_from
        } else {
            ep.data_dest()
        };
        let sack = ep.take_sack();
        let (src, dst) = (ep.src[net_of(ep.peers[dest].addr)], ep.peers[dest].addr);
        self.send(a, side, src, dst, vec![sack])
    }

    fn on_sack(
        &mut self,
        a: usize,
        side: usize,
        cum: u64,
        gaps: &[(u16, u16)],
    ) -> std::io::Result<()> {
        let ep = &mut self.assocs[a].ep[side];
        let mut advanced = false;
        while ep.outstanding.front().is_some_and(|o| o.tsn <= cum) {
            let o = ep.outstanding.pop_front().expect("front");
            let p = &mut ep.peers[o.peer];
            p.errors = 0;
            p.active = true;
            p.rto = RTO_INITIAL;
            advanced = true;
        }
        for &(s, e) in gaps {
            for o in ep.outstanding.iter_mut() {
                if o.tsn >= cum + u64::from(s) && o.tsn <= cum + u64::from(e) {
                    o.acked = true;
                }
            }
        }
        if ep.outstanding.iter().all(|o| o.acked) {
            ep.t3_running = false;
            ep.t3_gen += 1;
            ep.blocked = false;
        } else if advanced {
            self.start_t3(a, side, true);
        }
        self.try_send(a, side)
    }

    /// T3-rtx expiry: charge the path of the earliest unacknowledged DATA,
    /// retransmit everything outstanding on an alternate path and hold new
    /// DATA back until it is acknowledged.
    fn t3_expiry(&mut self, a: usize, side: usize) -> std::io::Result<()> {
        let ep = &mut self.assocs[a].ep[side];
        let Some(first) = ep.outstanding.iter().find(|o| !o.acked) else {
            ep.t3_running = false;
            return Ok(());
        };
        let failed = first.peer;
        let p = &mut ep.peers[failed];
        p.errors += 1;
        if p.errors > PATH_MAX_RETRANS {
            p.active = false;
        }
        p.rto = (p.rto * 2).min(RTO_MAX);
        let alt = ep.alternate(failed);
        ep.blocked = true;
        let mut packets: Vec<Vec<Chunk>> = Vec::new();
        let mut size = SCTP_MTU;
        if ep.sack_pending() {
            packets.push(vec![ep.take_sack()]);
            size = 12 + 16;
        }
        for o in ep.outstanding.iter_mut().filter(|o| !o.acked) {
            o.peer = alt;
            let c = (16 + usize::from(o.len)).next_multiple_of(4);
            if size + c > SCTP_MTU {
                packets.push(Vec::new());
                size = 12;
            }
            size += c;
            packets.last_mut().expect("a packet").push(Chunk::Data {
                tsn: o.tsn,
                stream: o.stream,
                ssn: o.ssn,
                len: o.len,
            });
        }
        let (src, dst) = (ep.src[net_of(ep.peers[alt].addr)], ep.peers[alt].addr);
        self.start_t3(a, side, true);
        for chunks in packets {
            self.send(a, side, src, dst, chunks)?;
        }
        Ok(())
    }

    fn heartbeat_timer(
        &mut self,
        a: usize,
        side: usize,
        peer: usize,
        generation: u64,
    ) -> std::io::Result<()> {
        let ep = &mut self.assocs[a].ep[side];
        let p = &ep.peers[peer];
        if self.stopping || p.deleted || p.hb_gen != generation {
            return Ok(());
        }
        let idle = peer != ep.data_dest() || !p.active;
        let jitter = self.rng.below(p.rto as u64) as i64;
        self.schedule(
            self.now + HB_INTERVAL + jitter,
            Event::Hb(a, side, peer, generation),
        );
        if !idle {
            return Ok(());
        }
        let ep = &mut self.assocs[a].ep[side];
        let p = &mut ep.peers[peer];
        if p.hb_pending.is_some() {
            p.errors += 1;
            if p.errors > PATH_MAX_RETRANS {
                p.active = false;
            }
        }
        let nonce = self.rng.next();
        let p = &mut ep.peers[peer];
        p.hb_pending = Some(nonce);
        let info = HbInfo {
            addr: p.addr,
            sent: self.now,
            nonce,
        };
        let (src, dst) = (ep.src[net_of(p.addr)], p.addr);
        self.send(a, side, src, dst, vec![Chunk::Heartbeat(info)])
    }

    /// A's renumbering on network 1: ADD-IP, SET-PRIMARY, DELETE-IP.
    fn asconf_step(&mut self, a: usize, step: Step) -> std::io::Result<()> {
        let ep = &mut self.assocs[a].ep[A];
        if ep.pending.is_some() || !ep.established {
            return Ok(());
        }
        let old = ep.src[0];
        let (kind, addr, from) = match step {
            Step::Add => (ADD_IP, other_net1(old), old),
            Step::SetPrimary => (SET_PRIMARY, other_net1(old), old),
            // After SET-PRIMARY the source is the new address already.
            Step::Delete => (DELETE_IP, other_net1(old), old),
        };
        ep.serial = ep.serial.wrapping_add(1);
        let serial = ep.serial;
        ep.pending = Some((serial, step));
        let corr = serial.wrapping_mul(7);
        let dst = ep.peers[ep.primary].addr;
        let c = Chunk::Asconf {
            serial,
            addr: from,
            params: vec![(kind, corr, addr)],
        };
        self.send(a, A, from, dst, vec![c])
    }

    /// SHUTDOWN, SHUTDOWN ACK, SHUTDOWN COMPLETE for every association,
    /// after the last packet.
    fn shutdown(&mut self) -> std::io::Result<()> {
        // Timers left in the queue when it drained moved the clock on.
        self.now = self.last;
        for a in 0..self.assocs.len() {
            self.now += MS;
            let ep = &self.assocs[a].ep[A];
            let dest = ep.data_dest();
            let (src, dst) = (ep.src[net_of(ep.peers[dest].addr)], ep.peers[dest].addr);
            let cum = ep.cum;
            self.send(a, A, src, dst, vec![Chunk::Shutdown { cum }])?;
            while let Some(s) = self.heap.pop() {
                self.now = s.at;
                if let Event::Capture(frame) = s.event {
                    self.write(self.now, &frame)?;
                }
            }
            let net = net_of(dst);
            self.now += DELAY[net];
            let mut buf = Vec::new();
            self.encode(a, B, dst, src, &[Chunk::ShutdownAck], &mut buf);
            self.write(self.now, &buf)?;
            self.now += 50_000;
            buf.clear();
            self.encode(a, A, src, dst, &[Chunk::ShutdownComplete], &mut buf);
            self.write(self.now, &buf)?;
        }
        Ok(())
    }
}

fn other_net1(addr: [u8; 4]) -> [u8; 4] {
    if addr == A_NET1[0] {
        A_NET1[1]
    } else {
        A_NET1[0]
    }
}

fn encode_chunk(p: &mut SctpPacket<'_>, c: &Chunk) {
    match c {
        Chunk::Init { tag, tsn, addrs }
        | Chunk::InitAck {
            tag, tsn, addrs, ..
        } => {
            let kind = if matches!(c, Chunk::Init { .. }) {
                1
            } else {
                2
            };
            p.chunk(kind, 0, |b| {
                b.extend_from_slice(&tag.to_be_bytes());
                b.extend_from_slice(&106_496u32.to_be_bytes()); // a_rwnd
                b.extend_from_slice(&(STREAMS as u16).to_be_bytes());
                b.extend_from_slice(&(STREAMS as u16).to_be_bytes());
                b.extend_from_slice(&tsn.to_be_bytes());
                param(b, 0x000c, &5u16.to_be_bytes()); // supported address types: IPv4
                param(b, 0x8008, &[0xc1, 0x80]); // supported extensions: ASCONF, ASCONF-ACK
                for addr in addrs {
                    param(b, 5, addr);
                }
                if let Chunk::InitAck { cookie, .. } = c {
                    let mut v = [0u8; 32];
                    for (i, x) in v.chunks_mut(8).enumerate() {
                        x.copy_from_slice(&cookie.rotate_left(i as u32 * 16).to_be_bytes());
                    }
                    param(b, 7, &v);
                }
            });
        }
        Chunk::CookieEcho { cookie } => p.chunk(10, 0, |b| {
            for i in 0..4u32 {
                b.extend_from_slice(&cookie.rotate_left(i * 16).to_be_bytes());
            }
        }),
        Chunk::CookieAck => p.chunk(11, 0, |_| {}),
        Chunk::Data {
            tsn,
            stream,
            ssn,
            len,
        } => p.chunk(0, 0x03, |b| {
            b.extend_from_slice(&(*tsn as u32).to_be_bytes());
            b.extend_from_slice(&stream.to_be_bytes());
            b.extend_from_slice(&ssn.to_be_bytes());
            b.extend_from_slice(&0u32.to_be_bytes()); // PPID: unspecified
            let seed = (*tsn as u32).wrapping_mul(2_654_435_761);
            let start = b.len();
            b.resize(start + usize::from(*len), 0);
            for (i, x) in b[start..].iter_mut().enumerate() {
                *x = b"signalling message body "[(i + seed as usize) % 24];
            }
        }),
        Chunk::Sack { cum, gaps, dups } => p.chunk(3, 0, |b| {
            b.extend_from_slice(&(*cum as u32).to_be_bytes());
            b.extend_from_slice(&106_496u32.to_be_bytes());
            b.extend_from_slice(&(gaps.len() as u16).to_be_bytes());
            b.extend_from_slice(&(dups.len() as u16).to_be_bytes());
            for (s, e) in gaps {
                b.extend_from_slice(&s.to_be_bytes());
                b.extend_from_slice(&e.to_be_bytes());
            }
            for d in dups {
                b.extend_from_slice(&(*d as u32).to_be_bytes());
            }
        }),
        Chunk::Heartbeat(info) | Chunk::HeartbeatAck(info) => {
            let kind = if matches!(c, Chunk::Heartbeat(_)) {
                4
            } else {
                5
            };
            p.chunk(kind, 0, |b| {
                // Sender-specific information, as Linux fills it: the
                // probed address, the send time and a nonce.
                let mut v = [0u8; 32];
                v[0..2].copy_from_slice(&2u16.to_le_bytes()); // AF_INET
                v[4..8].copy_from_slice(&info.addr);
                v[16..24].copy_from_slice(&info.sent.to_le_bytes());
                v[24..32].copy_from_slice(&info.nonce.to_le_bytes());
                param(b, 1, &v);
            });
        }
        Chunk::Asconf {
            serial,
            addr,
            params,
        } => p.chunk(0xc1, 0, |b| {
            b.extend_from_slice(&serial.to_be_bytes());
            param(b, 5, addr);
            for (kind, corr, addr) in params {
                let mut v = Vec::with_capacity(12);
                v.extend_from_slice(&corr.to_be_bytes());
                param(&mut v, 5, addr);
                param(b, *kind, &v);
            }
        }),
        Chunk::AsconfAck { serial } => {
            p.chunk(0x80, 0, |b| b.extend_from_slice(&serial.to_be_bytes()))
        }
        Chunk::Shutdown { cum } => {
            p.chunk(7, 0, |b| b.extend_from_slice(&(*cum as u32).to_be_bytes()))
        }
        Chunk::ShutdownAck => p.chunk(8, 0, |_| {}),
        Chunk::ShutdownComplete => p.chunk(14, 0, |_| {}),
    }
}
