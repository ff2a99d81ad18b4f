-- sctpho_core: the association / path state machine, ASCONF and heartbeat
-- matching and data path switches, in pure Lua 5.2 (no Wireshark API).
-- Definitions: docs/metrics.md; numbering of associations and paths is
-- the analyzer's (creation order), so the two can be compared.

-- Wireshark also loads this file on its own when it sits in a plugin
-- folder: find the sibling module from this file's directory.
local here = (debug.getinfo(1, "S").source or ""):match("^@(.*[/\\])")
if here then package.path = here .. "?.lua;" .. package.path end
local W = require("sctpho_wire")

local Core = {}
Core.__index = Core

-- The pre-scan runs the code below for every packet of a capture: byte
-- reads, constants and library functions are locals, the packet being
-- analysed is one reused table, and nothing is allocated per packet or
-- per DATA chunk that can be kept per path.
local byte, floor, min, type = string.byte, math.floor, math.min, type
local decode_chunk, sack_fields, addr_string = W.decode_chunk, W.sack_fields, W.addr_string
local DATA, INIT, INIT_ACK, SACK, HEARTBEAT, HEARTBEAT_ACK = W.DATA, W.INIT, W.INIT_ACK, W.SACK, W.HEARTBEAT, W.HEARTBEAT_ACK
local ABORT, SHUTDOWN, SHUTDOWN_COMPLETE, NR_SACK, I_DATA = W.ABORT, W.SHUTDOWN, W.SHUTDOWN_COMPLETE, W.NR_SACK, W.I_DATA
local ASCONF_ACK, ASCONF = W.ASCONF_ACK, W.ASCONF

local TWO32, TWO31 = 4294967296, 2147483648
local function sgt(a, b) local d = (a - b) % TWO32; return d ~= 0 and d < TWO31 end
local function sle(a, b) return not sgt(a, b) end
local function plus(a, k) return (a + k) % TWO32 end
-- (Defined with the DATA handling below.)
local note_skip, note_retransmission

-- Milliseconds between two (sec, nsec) stamps, exact for µs captures.
local function ms(s0, n0, s1, n1)
  return ((s1 - s0) * 1000000000 + (n1 - n0)) / 1000000
end
Core.ms = ms

local OP_EVENT = { add_ip = "asconf_add_ip", delete_ip = "asconf_del_ip", set_primary = "asconf_set_primary" }
local CAUSES = {
  [0x00a0] = "delete_last_remaining_address", [0x00a1] = "operation_refused_resource_shortage",
  [0x00a2] = "delete_source_address", [0x00a3] = "illegal_asconf_ack",
  [0x00a4] = "request_refused_no_authorization", [8] = "unrecognized_parameters",
}

-- The thresholds of the inferred path state (docs/metrics.md, "Inferred
-- path state"), as the analyzer's options: Path.Max.Retrans (--pmr), the
-- potentially-failed threshold PFMR (--pf-retrans; nil or false: --no-pf)
-- and RTO.Max in ms (--rto-max-ms).
Core.DEFAULTS = { pmr = 5, pf_retrans = 0, rto_max_ms = 60000 }

-- How late a T3 timer may fire after its deadline (the analyzer's
-- T3_SLACK): one tick of a HZ = 100 kernel and some processing, in ns.
local T3_SLACK = 15000000

-- A count from an option: a whole number >= 0, else the default.
local function count_option(v, default)
  if type(v) ~= "number" or v ~= v or v < 0 or v == math.huge then return default end
  return floor(v)
end

-- opts: the thresholds (see Core.DEFAULTS; any left out take its value),
-- and capture_point ("mn", "cn"; nil: not said), as the analyzer's
-- --capture-point (see Core:switch).
function Core.new(opts)
  opts = opts or {}
  local D = Core.DEFAULTS
  local pf = opts.pf_retrans
  if pf == nil then pf = D.pf_retrans end
  if pf ~= false then pf = count_option(pf, D.pf_retrans) else pf = nil end
  return setmetatable({
    pmr = count_option(opts.pmr, D.pmr),
    pf_retrans = pf,
    capture_point = opts.capture_point,
    rto_max_ns = count_option(opts.rto_max_ms, D.rto_max_ms) * 1000000,
    t0 = nil,          -- the first packet's second: times are kept as ns since then
    acked_list = {}, acked_set = {}, -- paths a SACK newly acknowledges DATA of (reused)
    assocs = {},       -- 0-based ids: assocs[id + 1]
    by_tag = {},       -- [sport*65536+dport][tag] -> {id, sender}
    by_init = {},      -- [sport*65536+dport][tag] -> id
    by_ports = {},     -- "lo:hi" -> {ids}
    views = {},        -- frame -> its packet's view (see view_of): every SCTP frame
    ann = {},          -- frame -> annotation beyond the view: events, expert, ... (few frames)
    switches = {},     -- in order
    malformed = 0,
    finished = false,
    ctx = {},          -- the packet under analysis
  }, Core)
end

-- Two-level tables keyed by (port pair, tag): no string building per packet.
local function get3(t, a, b, c)
  local inner = t[a * 65536 + b]
  return inner and inner[c]
end
local function set3(t, a, b, c, v)
  local k = a * 65536 + b
  local inner = t[k]
  if not inner then inner = {}; t[k] = inner end
  inner[c] = v
end
local function pair(a, b) if a < b then return a .. ":" .. b end return b .. ":" .. a end

-- Empty lists are shared until something is added (most frames carry no
-- events): see add_event / add_expert.
local NONE = setmetatable({}, { __newindex = function() error("shared empty list") end })

-- A frame's annotation beyond its view, created when something is added.
function Core:annotation(frame)
  local a = self.ann[frame]
  if not a then
    a = { events = NONE, expert = NONE }
    self.ann[frame] = a
  end
  return a
end

-- kind, when given, names the expert info (sctpho.lua's E table);
-- otherwise the binding tells it from the text.
local function add_expert(ann, severity, text, kind)
  if ann.expert == NONE then ann.expert = {} end
  local e = ann.expert
  e[#e + 1] = { severity, text, kind }
end
Core.add_expert = add_expert

-- The annotation of the packet under analysis.
local function ann_of(self, ctx)
  local ann = ctx.ann
  if not ann then
    ann = self:annotation(ctx.frame)
    ctx.ann = ann
  end
  return ann
end

local function new_direction()
  return {
    highest = nil, cum = nil, base = nil,
    -- rec[tsn]: the path a TSN not yet cumulatively acked was last sent
    -- on; a table {last_path, gap, miss} once a SACK reported it in a gap
    -- block or missing (few TSNs), so that most TSNs cost no table.
    rec = {},
    -- How many TSNs rec holds, and how many of them are gap-acknowledged:
    -- whether DATA is outstanding (see outstanding) without a walk.
    rec_n = 0, gap_n = 0,
    -- abandoned[path]: left by a switch; failed[path]: left by a switch
    -- classed failover (docs/metrics.md, "Data path switch")
    current = nil, abandoned = {}, failed = {}, seg_first_frame = nil,
    -- per path: the last DATA {frame, sec, nsec} (one table per path,
    -- updated in place), the first DATA of the current segment (a copy),
    -- and the DATA in the segment
    last_data = {}, first_in_segment = {}, in_segment = {},
    -- sent[tsn]: when a TSN in rec was last sent (ns, see Core:packet);
    -- copies[tsn]: its transmissions, once it was sent more than once;
    -- timeouts: the latest timeout-driven first retransmissions {tsn,
    -- path charged, frame of its expiry} (nil until the first), for
    -- spurious expiries (docs/metrics.md, "Spurious timeouts").
    sent = {}, copies = {}, timeouts = nil,
    -- For the latency components (docs/metrics.md, "Handover latency
    -- components"), kept where they cost nothing per packet: new_t, when
    -- the latest new DATA was sent (ns); first_sent[tsn], a TSN's first
    -- transmission as new DATA (ns; false: first seen below the highest),
    -- noted at its first retransmission; expiries: the T3 expiries in
    -- order {path charged, frame, t, first_t: first transmission of the
    -- TSN that timed out}, the latest EXPIRY_HISTORY (the analyzer's
    -- Direction::expiries).
    new_t = nil, first_sent = {}, expiries = {},
    -- The total handover latency (the analyzer's handover/latency.rs and
    -- tsn_history.rs): first_tsn, the first new TSN (the start of the
    -- analyzer's TSN history), and skips, the runs of TSNs new DATA
    -- skipped over {first, last} (never seen as new DATA: not in that
    -- history), the latest SKIPS; seg_first_tsn, the first new TSN of the
    -- current segment, and seg_lowest, its lowest TSN retransmitted
    -- unacknowledged; pending, the switches waiting for their total
    -- latency {s, tsn, seg_first, lowest, network_ns}. A TSN's effective
    -- transmission (the last before its first acknowledgement) is its
    -- sent[tsn] until acknowledged cumulatively, or effx[tsn] when it was
    -- sent again after a gap block acknowledged it; then cum_sent for the
    -- cumulative ack, pinned[tsn] for those a switch may ask for (see
    -- Core.pin).
    first_tsn = nil, skips = {}, seg_first_tsn = nil, seg_lowest = nil, pending = {}, effx = {},
    cum_sent = nil, pinned = {}, pin_open = false, effx_any = false,
    -- SFR-CACC as Linux runs it (the analyzer's track::tsn, Cacc):
    -- primary (address) once a SET-PRIMARY or a deleted primary set it;
    -- cacc[address] = {active, cycling, next, saw}; last_new_path: the
    -- path of the latest new DATA (Linux's active path); fr_exit: while in
    -- fast recovery, the highest TSN sent when it began.
    primary = nil, cacc = {}, last_new_path = nil, fr_exit = nil,
    -- hs_primary: the primary the handshake gave (the INIT's destination
    -- for its sender, its source for the receiver; TsnLedger::seed_primary),
    -- else the destination of first_new_path stands for it; miss_from:
    -- miss indications are counted from this TSN on, the TSNs before it
    -- being past counting until sent again (TsnLedger's miss_scan_from);
    -- gap_ranges: the last SACK's gap blocks as TSN ranges {first, last},
    -- where every gap-acknowledged TSN lies (reneging, see
    -- Core:gap_blocks); stale_sacks: SACKs discarded as stale (see
    -- Core:sack).
    hs_primary = nil, first_new_path = nil, miss_from = nil, gap_ranges = nil, stale_sacks = 0,
    -- t3_epoch: T3 expiries so far; t3_log[address]: the epochs of its
    -- expiries, ascending (a record's miss indications, counted at epoch
    -- r.ep, are 0 once its destination expired since: see misses_now).
    -- dels: the receiver's address deletions in order {address, active
    -- path after it, T3 epoch then}, and dels_by[address] their indexes,
    -- applied to a TSN's record when it is next read (resolve): r.dk (a
    -- table) or dk[tsn] (a path), the deletions already applied.
    t3_epoch = 0, t3_log = {}, dels = nil, dels_by = nil, dk = nil,
    -- SFR-CACC's set-aside TSNs (see aside_put): aside[tsn] the set
    -- holding it, sets[key] the sets, aside_n how many TSNs they hold;
    -- base_pos: the position of base (see position). scan_from: where the
    -- miss scan resumes past the set-aside TSNs (miss_from stays where the
    -- scan would stop at them, as without the sets).
    aside = {}, sets = {}, aside_n = 0, base_pos = 0, scan_from = nil,
  }
end

function Core:create(ports, frame)
  local id = #self.assocs
  local a = {
    id = id, ports = ports, tags = {},
    -- ep[e].conf[addr]: the address's confirmation (see confirmation());
    -- ep[e].rank[addr]: its place in the peer's list of destinations (see
    -- rank()); ep[e].deleted[addr]: the frame of its DELETE-IP's ACK.
    -- ep[e].sources[addr]: e's first packet from addr {frame, t} and its
    -- last packet from another address before it (before_t); last_t: the
    -- time of e's latest packet (see Core:packet).
    ep = { [0] = { addrs = {}, conf = {}, rank = {}, ranked = 0, sources = {} },
      [1] = { addrs = {}, conf = {}, rank = {}, ranked = 0, sources = {} } },
    paths = {}, path_index = {},
    dir = { [0] = new_direction(), [1] = new_direction() },
    -- pending_asconf: the outstanding requests, oldest first, at most
    -- MAX_PENDING_ASCONFS (each at its last transmission, the one an
    -- ASCONF-ACK answers; answered: a copy sent after its serial was
    -- answered); asconfs: one exchange per serial
    -- (first frame, transmissions, last frame, ACK frame); sent_asconf
    -- [sender]: that endpoint's latest serial (see Core:asconf); mobile:
    -- the first endpoint to send ADD-IP or DELETE-IP.
    -- pending_hb["sender|info"]: the HEARTBEATs with that information
    -- still unanswered, oldest first; hb_out[path]: its last HEARTBEAT
    -- while unanswered; failed_paths[path]: the frame at which the path
    -- was first inferred potentially failed or inactive (docs/metrics.md,
    -- "Inferred path state"; the error counter is kept per path, see
    -- Core:path_error).
    pending_hb = {}, hb_out = {}, failed_paths = {},
    -- heartbeats: the HEARTBEATs in order (the same records as pending_hb's,
    -- with ack_t once answered), pruned at each switch as the analyzer
    -- prunes its own (see prune_heartbeats), for the path confirmation and
    -- the link availability recognition.
    heartbeats = {},
    pending_asconf = {}, asconfs = {}, sent_asconf = {}, mobile = nil,
    handshake = {}, ended = false, first_frame = frame,
  }
  self.assocs[id + 1] = a
  local pk = pair(ports[0], ports[1])
  self.by_ports[pk] = self.by_ports[pk] or {}
  table.insert(self.by_ports[pk], id)
  return a
end

function Core:set_tag(a, endpoint, tag)
  a.tags[endpoint] = tag
  set3(self.by_tag, a.ports[1 - endpoint], a.ports[endpoint], tag, { a.id, 1 - endpoint })
end

-- The endpoint that sent a packet from src to dst by the addresses each
-- endpoint is known to have: the one that has the source address (and not
-- both), else the peer of the one that has the destination address (and not
-- both); nil when the addresses do not tell. Mirrors the analyzer's
-- track::demux::sender_by_addresses.
local function sender_by_addresses(a, src, dst)
  local s0, s1 = a.ep[0].addrs[src] ~= nil, a.ep[1].addrs[src] ~= nil
  if s0 ~= s1 then return s0 and 0 or 1 end
  local d0, d1 = a.ep[0].addrs[dst] ~= nil, a.ep[1].addrs[dst] ~= nil
  if d0 ~= d1 then return d0 and 1 or 0 end
  return nil
end

-- The sending endpoint of a packet whose tag-table entry named `found`.
-- With the same port on both sides, the tag table's key (ports, tag) is the
-- same for both directions when both endpoints use the same tag (equal
-- Initiate Tags, RFC 9260 §5.3.1) or one tag is still unknown (mid-stream):
-- only the addresses tell the directions apart, and with neither address
-- known to exactly one endpoint, endpoint 0 sent it (docs/metrics.md).
-- Mirrors the analyzer's Tracker::sender_on_equal_ports.
function Core:sender_on_equal_ports(a, found, reflected, sport, dport, vtag, src, dst)
  if sport ~= dport then return found end
  local other = 1 - found
  -- The tag a packet sent by `other` would carry: its peer's tag, or with
  -- the T bit its own (RFC 9260 §8.5.1).
  local tag_for_other
  if reflected then tag_for_other = a.tags[other] else tag_for_other = a.tags[found] end
  if tag_for_other ~= nil and tag_for_other ~= vtag then return found end
  local sender = sender_by_addresses(a, src, dst) or 0
  if sender == other and tag_for_other == nil then
    -- The first packet the other way supplies that direction's tag.
    if reflected then self:set_tag(a, other, vtag) else self:set_tag(a, found, vtag) end
  end
  return sender
end

-- Finds or creates the association of a packet; returns it and the
-- sending endpoint. ftype, fflags, finit: the first chunk's type, flags and
-- initiate tag when it is a well-formed INIT, INIT ACK, ABORT or SHUTDOWN
-- COMPLETE (nothing else places a packet). Mirrors the analyzer's
-- track::Tracker::locate.
function Core:locate(sport, dport, vtag, ftype, fflags, finit, src, dst, frame)
  if ftype == INIT and finit then
    local known = get3(self.by_init, sport, dport, finit)
    if known then return self.assocs[known + 1], 0 end
    for _, id in ipairs(self.by_ports[pair(sport, dport)] or {}) do
      local o = self.assocs[id + 1]
      if not o.ended and (o.ep[0].addrs[src] or o.ep[1].addrs[src] or o.ep[0].addrs[dst] or o.ep[1].addrs[dst]) then
        o.ended = true
      end
    end
    local a = self:create({ [0] = sport, [1] = dport }, frame)
    set3(self.by_init, sport, dport, finit, a.id)
    self:set_tag(a, 0, finit)
    return a, 0
  end
  if ftype == INIT_ACK and finit then
    local hit = get3(self.by_tag, sport, dport, vtag)
    if hit then
      local a = self.assocs[hit[1] + 1]
      local sender = self:sender_on_equal_ports(a, hit[2], false, sport, dport, vtag, src, dst)
      self:set_tag(a, sender, finit)
      return a, sender
    end
    local a = self:create({ [0] = dport, [1] = sport }, frame)
    self:set_tag(a, 0, vtag)
    self:set_tag(a, 1, finit)
    return a, 1
  end
  local reflected = (ftype == ABORT or ftype == SHUTDOWN_COMPLETE) and fflags % 2 == 1
  if reflected then
    local hit = get3(self.by_tag, dport, sport, vtag)
    if hit then
      local a = self.assocs[hit[1] + 1]
      return a, self:sender_on_equal_ports(a, 1 - hit[2], true, sport, dport, vtag, src, dst)
    end
  else
    local hit = get3(self.by_tag, sport, dport, vtag)
    if hit then
      local a = self.assocs[hit[1] + 1]
      return a, self:sender_on_equal_ports(a, hit[2], false, sport, dport, vtag, src, dst)
    end
  end
  local ids = self.by_ports[pair(sport, dport)] or {}
  for i = #ids, 1, -1 do
    local a = self.assocs[ids[i] + 1]
    if not a.ended then
      for sender = 0, 1 do
        local receiver = 1 - sender
        local ports_match = a.ports[sender] == sport and a.ports[receiver] == dport
        local unknown
        if reflected then unknown = a.tags[sender] == nil else unknown = a.tags[receiver] == nil end
        local se = a.ep[sender].addrs
        local addr_match = (next(se) == nil or se[src]) or a.ep[receiver].addrs[dst]
        if ports_match and unknown and addr_match then
          if reflected then self:set_tag(a, sender, vtag) else self:set_tag(a, receiver, vtag) end
          return a, sender
        end
      end
    end
  end
  local a = self:create({ [0] = sport, [1] = dport }, frame)
  if reflected then self:set_tag(a, 0, vtag) else self:set_tag(a, 1, vtag) end
  return a, 0
end

-- The path (a source / destination pair) of an association: its record.
function Core:path(a, sender, src, dst)
  local by_dst = a.path_index[src]
  if not by_dst then by_dst = {}; a.path_index[src] = by_dst end
  local p = by_dst[dst]
  if not p then
    local id = #a.paths
    -- The inferred state (docs/metrics.md, "Inferred path state"), as the
    -- analyzer's track::path::PathState: the error counter, active
    -- (not inactive), potentially failed; the latest T3 expiry (time of
    -- its first retransmission, frame) and the last two times the counter
    -- was cleared; changes: {state, frame} in order, for the summary.
    p = { id = id, src = src, dst = dst, sender = sender, views = {},
      errors = 0, active = true, pf = false, last_expiry = nil, last_expiry_frame = nil,
      last_clear = nil, previous_clear = nil, changes = {}, clears = 0, spurious = 0, last_frame = nil }
    a.paths[id + 1] = p
    by_dst[dst] = p
  end
  return p
end

-- What a packet on path p sent by `sender` shows (the same for every such
-- packet, so made once and shared by their frames): association, path,
-- addresses as raw bytes and as text, sending endpoint and direction.
local function view_of(a, p, sender)
  local v = p.views[sender]
  if not v then
    v = {
      assoc = a.id, path = p.id, src = p.src, dst = p.dst, sender = sender,
      src_text = addr_string(p.src), dst_text = addr_string(p.dst),
      direction = sender .. ">" .. (1 - sender),
    }
    p.views[sender] = v
  end
  return v
end

local function malformed(self, frame, why)
  self.malformed = self.malformed + 1
  add_expert(self:annotation(frame), "note", "malformed SCTP: " .. why)
end

-- Chunks decoded to a table for Core:chunk (DATA and SACK are read in
-- place).
local DECODED = { [INIT] = true, [INIT_ACK] = true, [HEARTBEAT] = true, [HEARTBEAT_ACK] = true,
  [ASCONF] = true, [ASCONF_ACK] = true, [SHUTDOWN] = true }

-- One SCTP packet: frame number, time, raw addresses, and the SCTP packet
-- s[i0..n] (the whole of s when i0, n are not given). Chunks are taken as
-- they are decoded: those before a malformed one count, as in the analyzer.
function Core:packet(frame, sec, nsec, src, dst, s, i0, n)
  i0 = i0 or 1
  n = n or #s
  if n - i0 + 1 < 12 then return malformed(self, frame, "SCTP common header truncated") end
  local p1, p2, p3, p4, v1, v2, v3, v4 = byte(s, i0, i0 + 7)
  local i = i0 + 12
  local first, ftype, fflags, finit
  if i + 3 <= n then
    local t = byte(s, i)
    if t == INIT or t == INIT_ACK or t == ABORT or t == SHUTDOWN_COMPLETE then
      first = decode_chunk(s, i, n)
      if first then ftype, fflags, finit = first.type, first.flags, first.initiate_tag end
    end
  end
  local sport, dport, vtag = p1 * 256 + p2, p3 * 256 + p4, ((v1 * 256 + v2) * 256 + v3) * 256 + v4
  local a, sender
  if not ftype then
    -- Most packets: an association's known tag (locate's first lookup).
    -- With equal ports the key does not tell the directions apart: locate
    -- decides.
    local by_ports = sport ~= dport and self.by_tag[sport * 65536 + dport]
    local hit = by_ports and by_ports[vtag]
    if hit then a, sender = self.assocs[hit[1] + 1], hit[2] end
  end
  if not a then a, sender = self:locate(sport, dport, vtag, ftype, fflags, finit, src, dst, frame) end
  local sent, received = a.ep[sender].addrs, a.ep[1 - sender].addrs
  if not sent[src] then sent[src] = {}; Core.rank(a.ep[sender], src) end
  if not received[dst] then received[dst] = {}; Core.rank(a.ep[1 - sender], dst) end
  local by_dst = a.path_index[src]
  local p = by_dst and by_dst[dst] or self:path(a, sender, src, dst)
  p.last_frame = frame
  -- Times compared by the error counter and the latency components are
  -- ns since the first packet's second: exact as integers (or doubles,
  -- under 2^53 ns: 104 days).
  local t0 = self.t0
  if not t0 then t0 = sec; self.t0 = sec end
  local t = (sec - t0) * 1000000000 + nsec
  local v = p.views[sender]
  local ep = a.ep[sender]
  if not v then
    v = view_of(a, p, sender)
    -- The sender's first packet on this path: maybe its first from src.
    -- Every packet it sent before came from another address, so the last
    -- of them is where the network-layer disconnection begins when src is
    -- its new address (the analyzer's Sources::packet and debut).
    if not ep.sources[src] then ep.sources[src] = { frame = frame, t = t, before_t = ep.last_t } end
  end
  ep.last_t = t
  self.views[frame] = v
  local ctx = self.ctx
  ctx.frame, ctx.sec, ctx.nsec, ctx.a, ctx.sender, ctx.path, ctx.src, ctx.dst, ctx.ann =
    frame, sec, nsec, a, sender, p.id, src, dst, self.ann[frame]
  ctx.t = t
  while i + 3 <= n do
    local t, _, l1, l2 = byte(s, i, i + 3)
    local len = l1 * 256 + l2
    if len < 4 then return malformed(self, frame, "chunk length below 4") end
    if i + len - 1 > n then return malformed(self, frame, "chunk length runs past the packet") end
    local v = i + 4
    if t == DATA or t == I_DATA then
      if len < (t == DATA and 16 or 20) then return malformed(self, frame, "chunk shorter than its fixed fields") end
      local b1, b2, b3, b4 = byte(s, v, v + 3)
      self:data(ctx, ((b1 * 256 + b2) * 256 + b3) * 256 + b4)
    elseif t == SACK or t == NR_SACK then
      local cum, at, ngaps, ndups = sack_fields(s, v, t, len)
      if not cum then return malformed(self, frame, at) end
      self:sack(ctx, cum, s, at, ngaps, ndups)
    elseif DECODED[t] then
      local c, err = first, nil
      if not (c and i == i0 + 12) then c, err = decode_chunk(s, i, n) end
      if not c then return malformed(self, frame, err) end
      self:chunk(ctx, c)
    elseif t == ABORT or t == SHUTDOWN_COMPLETE then
      a.ended = true
    end
    -- Other chunks (COOKIE ECHO, ERROR, FORWARD TSN, ...) have nothing
    -- to check beyond their length, and nothing to track.
    i = i + floor((len + 3) / 4) * 4
  end
end

local function add_event(ann, e)
  if ann.events == NONE then ann.events = {} end
  for _, x in ipairs(ann.events) do if x == e then return end end
  table.insert(ann.events, e)
end

-- The inferred path state (docs/metrics.md, "Inferred path state" and
-- "Spurious timeouts and counter resets"), as the analyzer's
-- track::path::PathState and the tracker's events: the same events,
-- states and expert infos on the same frames as the C tier's.

-- "path 1 (192.0.2.1 -> 198.51.100.2)"
local function path_label(p)
  return string.format("path %d (%s -> %s)", p.id, addr_string(p.src), addr_string(p.dst))
end
Core.path_label = path_label

-- An event of path p on the packet under analysis; state (when given) is
-- its new state, shown as sctpho.path.state with sctpho.path.state_path
-- (the packet may be on another path: a SACK or HEARTBEAT ACK coming
-- back, a retransmission sent elsewhere).
local function path_event(self, ctx, p, event, state, severity, text, kind)
  local ann = ann_of(self, ctx)
  add_event(ann, event)
  if state then
    local states = ann.path_states
    if not states then states = {}; ann.path_states = states end
    states[#states + 1] = { state, p.id }
    p.changes[#p.changes + 1] = { state, ctx.frame }
    if state ~= "active" and not ctx.a.failed_paths[p.id] then ctx.a.failed_paths[p.id] = ctx.frame end
  end
  add_expert(ann, severity, text, kind)
end

-- Address confirmation (RFC 9260 §5.4), per endpoint and address as the
-- analyzer's track::assoc::AddressInfo: confirmed implicitly by the
-- handshake (the source or destination of an INIT or INIT ACK), confirmed
-- by a HEARTBEAT ACK since it was (last) added, and awaiting confirmation
-- (listed in an INIT or INIT ACK, or added by ASCONF, and neither).
-- An address only seen in packets is taken as confirmed.
local function confirmation(a, endpoint, addr)
  local conf = a.ep[endpoint].conf
  local c = conf[addr]
  if not c then
    c = { handshake = false, confirmed = false, unconfirmed = false }
    conf[addr] = c
  end
  return c
end

local function await_confirmation(c)
  if not c.handshake and not c.confirmed then c.unconfirmed = true end
end

-- The peer's list of destinations of endpoint ep (Linux's
-- transport_addr_list, the analyzer's AddressInfo::transport_rank): an
-- address takes the next place when first known (again when the peer
-- makes a new transport for it: see renew_transport); `again` moves it
-- last.
function Core.rank(ep, addr, again)
  if ep.rank[addr] and not again then return end
  ep.ranked = ep.ranked + 1
  ep.rank[addr] = ep.ranked
end

-- The first address of the list not deleted: the one Linux's
-- sctp_assoc_rm_peer makes primary (and active) when the primary (the
-- active path) was deleted (the analyzer's Endpoint::first_transport).
local function first_transport(ep)
  local best, best_rank
  local deleted = ep.deleted or {}
  for addr, r in pairs(ep.rank) do
    if not deleted[addr] and (best_rank == nil or r < best_rank) then best, best_rank = addr, r end
  end
  return best
end

-- Whether the peer of endpoint e already had a transport for e's address
-- addr (not deleted) before an ASCONF whose first transmission found
-- `paths_before` paths asked to add it: one whose confirmation is kept
-- (the handshake's, listed in an INIT, added before, confirmed by a
-- HEARTBEAT ACK), or a destination of the peer's packets before the
-- request (the analyzer's Association::in_use_at_peer).
local function in_use_at_peer(a, e, addr, paths_before)
  local ep = a.ep[e]
  if ep.deleted and ep.deleted[addr] then return false end
  if ep.conf[addr] then return true end
  for i = 1, paths_before do
    local p = a.paths[i]
    if p and p.sender ~= e and p.dst == addr then return true end
  end
  return false
end

-- The peer of endpoint e made a new transport for addr (an acknowledged
-- ADD-IP of an address it had none for): unconfirmed and last in its
-- list; after a DELETE-IP (its ACK at frame `deleted`), the peer's paths
-- to it start afresh and a HEARTBEAT sent to it before the deletion is
-- forgotten (the analyzer's Association::renew_transport).
local function renew_transport(a, e, addr, deleted)
  local conf = confirmation(a, e, addr)
  conf.handshake, conf.confirmed, conf.unconfirmed = false, false, true
  Core.rank(a.ep[e], addr, true)
  if not deleted then return end
  for _, p in ipairs(a.paths) do
    if p.sender ~= e and p.dst == addr then
      p.errors, p.active, p.pf, p.last_clear, p.previous_clear = 0, true, false, nil, nil
      local hb = a.hb_out[p.id]
      if hb and hb.frame < deleted then
        a.hb_out[p.id] = nil
        local list = a.pending_hb[hb.key]
        if list then
          for i = #list, 1, -1 do
            if list[i] == hb then table.remove(list, i) end
          end
          if #list == 0 then a.pending_hb[hb.key] = nil end
        end
      end
    end
  end
end

-- An unanswered HEARTBEAT or a T3 expiry of DATA last sent on p (RFC 9260
-- §8.2), with Linux's thresholds (sctp_do_8_2_transport_strike): an active
-- path past PFMR and still below Path.Max.Retrans is potentially failed
-- (RFC 7829 §4), past Path.Max.Retrans inactive; a count equal to
-- Path.Max.Retrans changes nothing, so a PFMR at or above
-- Path.Max.Retrans - 1 never applies. A path to an unconfirmed address counts the error and changes
-- no state, as Linux leaves an UNCONFIRMED transport; an inactive path
-- counts nothing more, as Linux raises no INACTIVE transport's count (the
-- analyzer's PathState::record_error).
function Core:path_error(ctx, p)
  if not p.active then return end
  local n = p.errors + 1
  p.errors = n
  local c = ctx.a.ep[1 - p.sender].conf[p.dst]
  if c and c.unconfirmed then return end
  if p.active and n > self.pmr then
    p.active, p.pf = false, false
    path_event(self, ctx, p, "path_inactive", "inactive", "warning",
      string.format("%s inactive: error count %d exceeds Path.Max.Retrans %d", path_label(p), n, self.pmr),
      "inactive")
  elseif p.active and not p.pf and self.pf_retrans and n > self.pf_retrans and n < self.pmr then
    p.pf = true
    path_event(self, ctx, p, "path_potentially_failed", "potentially_failed", "warning",
      string.format("%s potentially failed: error count %d exceeds PFMR %d", path_label(p), n, self.pf_retrans),
      "potentially_failed")
  end
end

-- A HEARTBEAT ACK for p ("heartbeat_ack"), or a SACK newly acknowledging
-- DATA last sent on it ("sack"), clears its error counter (RFC 9260 §8.3)
-- and makes it active again (the analyzer's PathState::record_success).
function Core:path_success(ctx, p, by)
  local before, t = p.errors, ctx.t
  p.errors = 0
  if p.last_clear ~= t then p.previous_clear, p.last_clear = p.last_clear, t end
  if before > 0 then
    p.clears = p.clears + 1
    path_event(self, ctx, p, "error_counter_cleared", nil, "chat",
      string.format("%s error counter cleared from %d by a %s", path_label(p), before,
        by == "sack" and "SACK" or "HEARTBEAT ACK"), "counter_cleared")
  end
  if not p.active or p.pf then
    local was = p.active and "potentially failed" or "inactive"
    p.active, p.pf = true, false
    path_event(self, ctx, p, "path_active", "active", "note",
      string.format("%s active again (was %s)", path_label(p), was), "active")
  end
end

-- A timeout-driven retransmission, on the packet under analysis, of DATA
-- last sent on p at `sent` (ns): one error per T3 expiry. An expiry marks
-- every TSN outstanding on its path, so a TSN belongs to the first expiry
-- of its path after it was last sent: the retransmission starts a new
-- expiry only when p had none since `sent`. An expiry whose TSNs were sent
-- more than RTO.Max (+ T3_SLACK) before the last clear of p (counted from
-- the clear before it, if later) came before that clear and is not
-- charged (the analyzer's PathState::record_timeout). Returns whether it
-- is a new expiry.
function Core:path_timeout(ctx, p, sent)
  local last = p.last_expiry
  if sent and last and last > sent then return false end
  p.last_expiry, p.last_expiry_frame = ctx.t, ctx.frame
  local cleared = p.last_clear
  if sent and cleared and sent < cleared then
    local started, previous = sent, p.previous_clear
    if previous and previous > sent then started = previous end
    if started + self.rto_max_ns + T3_SLACK < cleared then return true end
  end
  self:path_error(ctx, p)
  return true
end

-- Timeout-driven copies remembered per direction (the analyzer's
-- TIMEOUT_COPIES): a duplicate report comes one round trip after the copy.
local TIMEOUT_COPIES = 64

-- T3 expiries remembered per direction for the failover components (the
-- analyzer's EXPIRY_HISTORY).
local EXPIRY_HISTORY = 256

-- A timeout-driven copy of tsn charged to path `path`'s expiry at frame
-- `expiry`: remembered when it is the TSN's first retransmission, and any
-- earlier copy of the TSN forgotten (a duplicate report after three
-- copies could be of any two).
local function forget_copy(d, tsn)
  local list = d.timeouts
  if not list then return end
  for i = #list, 1, -1 do
    if list[i][1] == tsn then table.remove(list, i) end
  end
end

local function note_copy(d, tsn, path, expiry, first)
  forget_copy(d, tsn)
  if not first then return end
  local list = d.timeouts
  if not list then list = {}; d.timeouts = list end
  if #list == TIMEOUT_COPIES then table.remove(list, 1) end
  list[#list + 1] = { tsn, path, expiry }
end

-- The duplicate TSNs of a SACK (dups of them at s[at..]): a TSN whose only
-- retransmission was a timeout's shows that expiry spurious (its first
-- transmission had arrived), each expiry once.
function Core:spurious(ctx, d, s, at, dups)
  local list = d.timeouts
  if not list or #list == 0 then return end
  local a = ctx.a
  for i = 0, dups - 1 do
    local o = at + 4 * i
    local b1, b2, b3, b4 = byte(s, o, o + 3)
    local dup = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    local found
    for _, c in ipairs(list) do
      if c[1] == dup then found = c; break end
    end
    if found then
      local path, expiry = found[2], found[3]
      for k = #list, 1, -1 do
        if list[k][3] == expiry and list[k][2] == path then table.remove(list, k) end
      end
      local p = a.paths[path + 1]
      p.spurious = p.spurious + 1
      path_event(self, ctx, p, "spurious_expiry", nil, "note",
        string.format("spurious T3 expiry of %s in frame %d: TSN %d was reported as a duplicate",
          path_label(p), expiry, dup), "spurious_expiry")
    end
  end
end

-- The chunks of DECODED (decoded to a table by decode_chunk; DATA, SACK,
-- ABORT and SHUTDOWN COMPLETE are handled in Core:packet).
function Core:chunk(ctx, c)
  local t = c.type
  if t == SHUTDOWN and c.cum then
    self:sack(ctx, c.cum, nil, 0, 0, 0)
  elseif t == INIT or t == INIT_ACK then
    local a = ctx.a
    a.handshake[ctx.src], a.handshake[ctx.dst] = true, true
    -- The association's first packet (its INIT, or its INIT ACK when only
    -- that was captured): its sender's primary is its destination, the
    -- other endpoint's its source (the analyzer's handshake_primary).
    if ctx.frame == a.first_frame and a.dir[ctx.sender].hs_primary == nil then
      a.dir[ctx.sender].hs_primary, a.dir[1 - ctx.sender].hs_primary = ctx.dst, ctx.src
    end
    -- The handshake's own addresses are confirmed implicitly; the others
    -- its sender lists await a HEARTBEAT ACK (the analyzer's
    -- Tracker::init).
    local hs = confirmation(a, ctx.sender, ctx.src)
    hs.handshake, hs.unconfirmed = true, false
    hs = confirmation(a, 1 - ctx.sender, ctx.dst)
    hs.handshake, hs.unconfirmed = true, false
    for _, listed in ipairs(c.addresses or {}) do
      await_confirmation(confirmation(a, ctx.sender, listed))
      Core.rank(a.ep[ctx.sender], listed)
    end
  elseif t == HEARTBEAT and c.info then
    local a, path = ctx.a, ctx.path
    add_event(ann_of(self, ctx), "heartbeat")
    -- A HEARTBEAT on a path whose last one is still unanswered: that one
    -- is unanswered (no longer matched), an error of the path.
    local previous = a.hb_out[path]
    local k = ctx.sender .. "|" .. c.info
    local hb = { frame = ctx.frame, sec = ctx.sec, nsec = ctx.nsec, t = ctx.t, path = path, key = k }
    local listed = a.heartbeats
    listed[#listed + 1] = hb
    local pending = a.pending_hb[k]
    if not pending then pending = {}; a.pending_hb[k] = pending end
    pending[#pending + 1] = hb
    a.hb_out[path] = hb
    if previous then
      local list = a.pending_hb[previous.key]
      if list then
        for i = #list, 1, -1 do
          if list[i] == previous then table.remove(list, i) end
        end
        if #list == 0 then a.pending_hb[previous.key] = nil end
      end
      self:path_error(ctx, a.paths[path + 1])
    end
  elseif t == HEARTBEAT_ACK and c.info then
    local a, ann = ctx.a, ann_of(self, ctx)
    local k = (1 - ctx.sender) .. "|" .. c.info
    -- The latest HEARTBEAT with this information still unanswered.
    local pending = a.pending_hb[k]
    local hb = pending and pending[#pending]
    add_event(ann, "heartbeat_ack")
    if hb then
      pending[#pending] = nil
      if #pending == 0 then a.pending_hb[k] = nil end
      if a.hb_out[hb.path] == hb then a.hb_out[hb.path] = nil end
      ann.hb_request = hb.frame
      ann.hb_rtt = ms(hb.sec, hb.nsec, ctx.sec, ctx.nsec)
      ann.hb_path = hb.path
      self:annotation(hb.frame).hb_ack = ctx.frame
      -- (The analyzer's handover engine answers only a HEARTBEAT it still
      -- holds: see prune_heartbeats.)
      if not hb.pruned then hb.ack_t = ctx.t end
      local probed = a.paths[hb.path + 1].dst
      local info = a.ep[ctx.sender].addrs[probed]
      if info and not info.confirmed then info.confirmed = ctx.frame end
      local conf = confirmation(a, ctx.sender, probed)
      conf.confirmed, conf.unconfirmed = true, false
      self:path_success(ctx, a.paths[hb.path + 1], "heartbeat_ack")
    end
  elseif t == ASCONF and c.serial then
    self:asconf(ctx, c)
  elseif t == ASCONF_ACK and c.serial then
    self:asconf_ack(ctx, c)
  end
end

-- The expert note on an ASCONF sent again (first_frame nil: a serial older
-- than its sender's latest, whose first transmission is not remembered).
function Core.retransmission_note(transmission, serial, first_frame)
  return string.format("ASCONF retransmission %d of serial %d", transmission, serial)
    .. (first_frame and string.format(" (first sent in frame %d)", first_frame) or " (first transmission not known)")
end

-- The tracker's cap on outstanding ASCONFs per association
-- (MAX_PENDING_ASCONFS in analyzer/src/track/asconf.rs): the oldest is
-- forgotten beyond it, unanswered without a warning in either tier.
Core.MAX_PENDING_ASCONFS = 64

-- The index in pending_asconf of sender's request with serial, or nil.
local function pending_index(a, sender, serial)
  for i, p in ipairs(a.pending_asconf) do
    if p.serial == serial and p.sender == sender then return i end
  end
end

-- An ASCONF. RFC 5061 §5.1: the sender gives each new ASCONF the next
-- serial and sends an unanswered one again (T-4 timer) with the same
-- serial, so a serial its sender already sent is a retransmission whether
-- or not an ASCONF-ACK was seen in between. Per sender only the latest
-- serial is remembered (first frame, transmissions, answered); an older one
-- counts as transmission 2 with no first frame. Mirrors the analyzer's
-- track::asconf and the handover engine's exchanges.
function Core:asconf(ctx, c)
  local a, ann, sender, serial, frame = ctx.a, ann_of(self, ctx), ctx.sender, c.serial, ctx.frame
  local reqs = {}
  for _, r in ipairs(c.requests or {}) do
    local addr = r.wildcard and ctx.src or r.address
    reqs[#reqs + 1] = { op = r.op, corr = r.corr, address = addr }
    add_event(ann, OP_EVENT[r.op])
    if a.mobile == nil and (r.op == "add_ip" or r.op == "delete_ip") then a.mobile = sender end
  end
  local sent = a.sent_asconf[sender]
  -- answered: an ASCONF-ACK for the serial came before this copy (a
  -- sender moves to a new serial only once the last is answered, RFC 5061
  -- §5.1): the request is not unanswered (the tracker's `answered`).
  local transmission, first_frame, answered
  if sent and sent.serial == serial then
    sent.transmissions = sent.transmissions + 1
    transmission, first_frame, answered = sent.transmissions, sent.first_frame, sent.answer_seen
  elseif sent and sle(serial, sent.serial) then
    transmission, answered = 2, true
  else
    a.sent_asconf[sender] = { serial = serial, first_frame = frame, transmissions = 1, acknowledged = false,
      answer_seen = false }
    transmission, first_frame, answered = 1, frame, false
  end
  -- One exchange per serial: a copy sent again joins the latest exchange
  -- of its sender and serial.
  local x
  if transmission > 1 then
    for i = #a.asconfs, 1, -1 do
      local y = a.asconfs[i]
      if y.serial == serial and y.sender == sender then x = y; break end
    end
  end
  if x then
    x.transmissions, x.last_frame = transmission, frame
  else
    -- paths_before: the paths there were at its first transmission (see
    -- in_use_at_peer).
    x = { serial = serial, sender = sender, frame = frame, sec = ctx.sec, nsec = ctx.nsec, t = ctx.t, requests = reqs,
      transmissions = transmission, last_frame = frame, paths_before = #a.paths }
    table.insert(a.asconfs, x)
  end
  -- The request an ASCONF-ACK answers moves to the latest transmission
  -- (its round trip is measured from it: Karn's rule).
  local pending = a.pending_asconf
  local i = pending_index(a, sender, serial)
  if i then
    answered = table.remove(pending, i).answered
  elseif #pending == Core.MAX_PENDING_ASCONFS then
    table.remove(pending, 1)
  end
  pending[#pending + 1] = { sender = sender, serial = serial, frame = frame, sec = ctx.sec, nsec = ctx.nsec,
    requests = reqs, exchange = x, answered = answered }
  ann.asconf_serial = serial
  ann.asconf_transmission = transmission
  ann.asconf_first_frame = first_frame
  if transmission > 1 then
    add_expert(ann, "note", Core.retransmission_note(transmission, serial, first_frame))
  end
end

-- SFR-CACC (Linux's sctp_assoc_set_primary, net/sctp/associola.c; the
-- analyzer's TsnLedger::set_primary): direction d's primary is now
-- `address`; a change while DATA is outstanding starts a changeover on it
-- (cycling when one to it is still active).
local set_primary, destination_deleted
local function current_primary(a, d)
  if d.primary then return d.primary end
  if d.hs_primary then return d.hs_primary end
  local p = d.first_new_path and a.paths[d.first_new_path + 1]
  return p and p.dst
end

-- Whether `address` had a T3 expiry at an epoch in (after, upto].
local function expired_between(d, address, after, upto)
  local log = address ~= nil and d.t3_log[address]
  if not log then return false end
  local lo, hi = 1, #log
  while lo <= hi do
    local m = floor((lo + hi) / 2)
    if log[m] <= after then lo = m + 1 else hi = m - 1 end
  end
  return log[lo] ~= nil and log[lo] <= upto
end

-- The miss indications of record r (a table, resolved) now: as last
-- counted, at T3 epoch r.ep, or 0 when a T3 expiry of the destination it
-- is credited to came since (Linux's sctp_retransmit_mark sets them to 0;
-- the analyzer's TsnLedger::miss_reports). Read so, an expiry costs
-- nothing per TSN. A deletion that moves it (resolve) and a gap
-- acknowledgement, which ends the marking, settle the count first.
local function misses_now(a, d, r)
  local m = r.miss
  if m == 0 or m >= 3 or r.gap or r.fast_done or (r.ep or 0) == d.t3_epoch then return m end
  if expired_between(d, a.paths[(r.credit or r.last_path) + 1].dst, r.ep or 0, d.t3_epoch) then return 0 end
  return m
end

local function settle_misses(a, d, r)
  if (r.ep or 0) ~= d.t3_epoch then
    r.miss = misses_now(a, d, r)
    r.ep = d.t3_epoch
  end
end

-- TSN t's record with every deletion since it was last sent applied, as
-- Linux's sctp_assoc_rm_peer applies it at the deletion (the analyzer's
-- TsnLedger::orphaned): the first deletion of the destination it is
-- credited to makes it orphaned and credits it to the active path then,
-- and so on from there. O(log n) per deletion that moves it, so a
-- deletion costs nothing per outstanding TSN.
local function resolve(a, d, t)
  local r = d.rec[t]
  local dels = d.dels
  if dels == nil or r == nil then return r end
  local table_r = type(r) == "table"
  local k = (table_r and r.dk) or d.dk[t] or 0
  local n = #dels
  if k >= n then return r end
  while true do
    local x = a.paths[(type(r) == "table" and (r.credit or r.last_path) or r) + 1].dst
    local idx = d.dels_by[x]
    if not idx then break end
    local lo, hi = 1, #idx
    while lo <= hi do
      local m = floor((lo + hi) / 2)
      if idx[m] <= k then lo = m + 1 else hi = m - 1 end
    end
    local j = idx[lo]
    if j == nil then break end
    local del = dels[j]
    if type(r) ~= "table" then r = { last_path = r, gap = false, miss = 0 }; d.rec[t] = r end
    -- T3 expiries of x before the deletion marked it.
    local m = r.miss
    if m > 0 and m < 3 and not r.gap and not r.fast_done and (r.ep or 0) < del.ep then
      if expired_between(d, x, r.ep or 0, del.ep) then r.miss = 0 end
      r.ep = del.ep
    end
    r.orphan = true
    if del.active ~= nil then r.credit = del.active end
    k = j
  end
  if type(r) == "table" then r.dk = n else d.dk[t] = n end
  return r
end
Core.resolve = resolve

-- TSN t's miss indications now (for tests).
function Core.misses(a, d, t)
  local r = resolve(a, d, t)
  return type(r) == "table" and misses_now(a, d, r) or 0
end

-- A record (re)started at TSN t: no deletion so far applies to it.
local function sent_now(d, t, r)
  if d.dels == nil then return end
  if type(r) == "table" then r.dk = #d.dels else d.dk[t] = #d.dels end
end

-- TSNs SFR-CACC keeps from a miss indication while a changeover lasts
-- (cacc_skips), set aside from the miss scan by the path they were last
-- sent on (ASIDE_ORPHAN: their destination was deleted), as the
-- analyzer's Sidelined sets (TsnLedger::on_sack): a SACK whose rules skip
-- a destination skips its set whole, so a changeover costs nothing per
-- skipped TSN and SACK. A TSN leaves its set when it is acknowledged,
-- sent again or reaches the fast-retransmit threshold (aside_take), so
-- every TSN in a set can still be counted. Each set is an AVL tree of
-- positions, for the TSNs a SACK reaches (below its limit, from the
-- next TSN at a cycling change): O(log n) per TSN set aside, counted or
-- taken out; a SACK costs the TSNs it counts, not the TSNs it skips.
local ASIDE_ORPHAN = -1

-- A TSN's place in the sets: base_pos + its distance from base (negative
-- below it), the same for the same TSN whatever base is since (see
-- Core:sack), so that the sets stay ordered across wrap-around.
local function position(d, t)
  local off = (t - d.base) % TWO32
  if off >= TWO31 then off = off - TWO32 end
  return d.base_pos + off
end

local function avl_height(n) return n and n.h or 0 end
local function avl_fix(n)
  local hl, hr = avl_height(n.l), avl_height(n.r)
  n.h = (hl > hr and hl or hr) + 1
end
local function avl_rotate_right(n)
  local l = n.l
  n.l, l.r = l.r, n
  avl_fix(n); avl_fix(l)
  return l
end
local function avl_rotate_left(n)
  local r = n.r
  n.r, r.l = r.l, n
  avl_fix(n); avl_fix(r)
  return r
end
local function avl_balance(n)
  local hl, hr = avl_height(n.l), avl_height(n.r)
  if hl > hr + 1 then
    if avl_height(n.l.l) < avl_height(n.l.r) then n.l = avl_rotate_left(n.l) end
    return avl_rotate_right(n)
  elseif hr > hl + 1 then
    if avl_height(n.r.r) < avl_height(n.r.l) then n.r = avl_rotate_right(n.r) end
    return avl_rotate_left(n)
  end
  n.h = (hl > hr and hl or hr) + 1
  return n
end
-- Node n's tree with key k (position) for TSN t added; the new root.
local function avl_insert(n, k, t)
  if not n then return { k = k, t = t, h = 1 } end
  if k < n.k then n.l = avl_insert(n.l, k, t) else n.r = avl_insert(n.r, k, t) end
  return avl_balance(n)
end
local function avl_remove_min(n)
  if not n.l then return n.r, n end
  local m
  n.l, m = avl_remove_min(n.l)
  return avl_balance(n), m
end
local function avl_remove(n, k)
  if not n then return nil end
  if k < n.k then
    n.l = avl_remove(n.l, k)
  elseif k > n.k then
    n.r = avl_remove(n.r, k)
  else
    if not n.l then return n.r end
    if not n.r then return n.l end
    local rest, m = avl_remove_min(n.r)
    m.l, m.r = n.l, rest
    return avl_balance(m)
  end
  return avl_balance(n)
end
-- The TSNs at keys lo <= k < hi, ascending, appended to out.
local function avl_collect(n, lo, hi, out)
  while n do
    if n.k < lo then
      n = n.r
    elseif n.k >= hi then
      n = n.l
    else
      avl_collect(n.l, lo, hi, out)
      out[#out + 1] = n.t
      n = n.r
    end
  end
end
-- The lowest key >= lo, or nil.
local function avl_first_from(n, lo)
  local best
  while n do
    if n.k >= lo then best = n.k; n = n.l else n = n.r end
  end
  return best
end

-- The set a record skipped by SFR-CACC belongs in: its destination's (the
-- path it was last sent on), or ASIDE_ORPHAN (cacc_skips gives it none).
local function aside_key(r)
  if type(r) ~= "table" then return r end
  if r.orphan then return ASIDE_ORPHAN end
  return r.last_path
end

local function aside_put(d, t, key)
  local g = d.sets[key]
  if not g then g = { key = key, root = nil, n = 0 }; d.sets[key] = g end
  g.root = avl_insert(g.root, position(d, t), t)
  g.n = g.n + 1
  d.aside[t] = g
  d.aside_n = d.aside_n + 1
end

-- TSN t leaves the set holding it (if any).
local function aside_take(d, t)
  local g = d.aside[t]
  if not g then return end
  g.root = avl_remove(g.root, position(d, t))
  g.n = g.n - 1
  if g.n == 0 then d.sets[g.key] = nil end
  d.aside[t] = nil
  d.aside_n = d.aside_n - 1
end

-- The TSNs set aside by a path to `address`, which was deleted: they have
-- no destination now (resolve makes them orphaned when next read).
local function aside_orphan(a, d, address)
  local moved
  for key, g in pairs(d.sets) do
    if key ~= ASIDE_ORPHAN and a.paths[key + 1].dst == address then
      moved = moved or {}
      moved[#moved + 1] = g
    end
  end
  for _, g in ipairs(moved or {}) do
    local tsns = {}
    avl_collect(g.root, -math.huge, math.huge, tsns)
    for _, t in ipairs(tsns) do
      aside_take(d, t)
      aside_put(d, t, ASIDE_ORPHAN)
    end
  end
end

-- TSN t may get miss indications again (sent again, reneged, newly
-- remembered): the scan must not start past it (see Core:gap_blocks).
local function rescan_from(d, t)
  if d.miss_from and sgt(d.miss_from, t) then d.miss_from = t end
  if d.scan_from and sgt(d.scan_from, t) then d.scan_from = t end
end

-- Whether DATA is outstanding: rec holds a TSN not gap-acknowledged (the
-- analyzer's seen_in_window > gap_acked_in_window). Counted, not walked:
-- each SET-PRIMARY asks, and a long run of gap-acknowledged TSNs would be
-- walked at each.
local function outstanding(d)
  return d.rec_n > d.gap_n
end

set_primary = function(a, d, address)
  local previous = current_primary(a, d)
  local changeover = previous ~= nil and previous ~= address
  d.primary = address
  if d.highest == nil or not outstanding(d) then return end
  local c = d.cacc[address]
  if not c then c = { active = false, cycling = false, next = 0, saw = false }; d.cacc[address] = c end
  if c.active then c.cycling = changeover end
  c.active = changeover
  c.next = plus(d.highest, 1)
end

-- The receiver's address `address` is deleted (Linux's sctp_assoc_rm_peer;
-- the analyzer's TsnLedger::destination_deleted): the first transport of
-- the peer's list not deleted (first_transport) replaces a deleted
-- primary and active path, whatever its state, through the sender's
-- latest path to it; the TSNs last sent to the address lose their
-- destination and are credited to the active path.
destination_deleted = function(a, sender, address)
  local d = a.dir[sender]
  local to = first_transport(a.ep[1 - sender])
  local successor
  for _, p in ipairs(a.paths) do
    if p.sender == sender and to ~= nil and p.dst == to
      and (successor == nil or (p.last_frame or 0) > (successor.last_frame or 0)) then
      successor = p
    end
  end
  -- Linux first makes the first transport primary, and so active
  -- (sctp_assoc_set_primary; its state taken as ACTIVE or UNKNOWN), when
  -- the primary was deleted, and active when the active path was; else
  -- the active path stays. New DATA goes there until some is seen
  -- elsewhere.
  local primary_deleted = current_primary(a, d) == address
  if primary_deleted and to ~= nil then set_primary(a, d, to) end
  local active = d.last_new_path
  if active == nil or a.paths[active + 1].dst == address or (primary_deleted and successor ~= nil) then
    active = successor and successor.id
  end
  d.last_new_path = active
  -- Every deletion moves the chunks credited to the address (last sent
  -- there, or moved there by an earlier deletion) again: logged, applied
  -- when a TSN is read (resolve).
  if d.dels == nil then d.dels, d.dels_by, d.dk = {}, {}, {} end
  local dels = d.dels
  dels[#dels + 1] = { address = address, active = active, ep = d.t3_epoch }
  local idx = d.dels_by[address]
  if not idx then idx = {}; d.dels_by[address] = idx end
  idx[#idx + 1] = #dels
  -- The TSNs set aside by their path now have no destination.
  if d.aside_n > 0 then aside_orphan(a, d, address) end
  d.cacc[address] = nil
end

function Core:asconf_ack(ctx, c)
  local a, ann = ctx.a, ann_of(self, ctx)
  add_event(ann, "asconf_ack")
  ann.asconf_serial = c.serial
  local requester = 1 - ctx.sender
  local sent = a.sent_asconf[requester]
  local i = pending_index(a, requester, c.serial)
  if not i then
    -- The answer to a request forgotten beyond the cap: a copy after it
    -- is of an answered request.
    if sent and sent.serial == c.serial then sent.answer_seen = true end
    return
  end
  local req = table.remove(a.pending_asconf, i)
  req.exchange.ack_frame, req.exchange.ack_t = ctx.frame, ctx.t
  -- A second answer to the serial (to a copy sent again after the first
  -- answer, which the requester did not get): its results took effect
  -- with the first and are not applied again.
  local repeated = false
  if sent and sent.serial == c.serial then
    repeated = sent.acknowledged
    sent.acknowledged, sent.answer_seen = true, true
  end
  if repeated then ann.asconf_repeated = true end
  ann.asconf_request = req.frame
  ann.asconf_rtt = ms(req.sec, req.nsec, ctx.sec, ctx.nsec)
  self:annotation(req.frame).asconf_ack = ctx.frame
  -- RFC 5061 §5.3: explicit results; implied success before the first
  -- error; not processed after it.
  local results, seen_error = {}, false
  for _, r in ipairs(req.requests) do
    local resp
    for _, x in ipairs(c.responses or {}) do if x.corr == r.corr then resp = x end end
    local outcome
    if resp and resp.cause then
      seen_error = true
      outcome = "error " .. (CAUSES[resp.cause] or tostring(resp.cause))
      add_expert(ann, "warning", "ASCONF-ACK reports an error for " .. r.op .. " " .. addr_string(r.address) .. ": " .. (CAUSES[resp.cause] or tostring(resp.cause)))
    elseif resp then
      outcome = "success"
    elseif seen_error then
      outcome = "not_processed"
    else
      outcome = "implied_success"
    end
    results[#results + 1] = string.format("%d %s %s: %s", r.corr, r.op, addr_string(r.address), outcome)
    if not repeated and (outcome == "success" or outcome == "implied_success") then
      local ep = a.ep[1 - ctx.sender]
      if r.op == "add_ip" then
        -- Linux's sctp_assoc_add_peer: a transport the peer already has
        -- is unchanged; a new one (again after a deletion) awaits a
        -- HEARTBEAT ACK (the analyzer's Tracker::asconf_ack).
        local deleted = ep.deleted and ep.deleted[r.address]
        if not in_use_at_peer(a, requester, r.address, req.exchange.paths_before or #a.paths) then
          renew_transport(a, requester, r.address, deleted)
        end
        ep.addrs[r.address] = ep.addrs[r.address] or {}
        if ep.deleted then ep.deleted[r.address] = nil end
      end
      -- The answering endpoint's primary changed, or one of its
      -- destinations is gone: SFR-CACC (see Core:sack).
      if r.op == "set_primary" then set_primary(a, a.dir[ctx.sender], r.address) end
      if r.op == "delete_ip" then
        ep.deleted = ep.deleted or {}
        ep.deleted[r.address] = ctx.frame
        destination_deleted(a, ctx.sender, r.address)
      end
    end
  end
  ann.asconf_results = results
end

-- The analyzer's TSN history (handover/tsn_history.rs) holds at most
-- TSN_HISTORY TSNs below the highest, and starts afresh after a jump of
-- that many; SKIPS: the runs of skipped TSNs remembered.
local TSN_HISTORY, SKIPS = 65536, 64

-- New DATA tsn after `highest`, not the next TSN: those between were never
-- seen as new DATA.
function note_skip(d, highest, tsn)
  local skipped = (tsn - highest - 1) % TWO32
  if skipped >= TSN_HISTORY then
    d.first_tsn, d.skips = tsn, {}
    return
  end
  local skips = d.skips
  if #skips == SKIPS then table.remove(skips, 1) end
  skips[#skips + 1] = { plus(highest, 1), plus(tsn, TWO32 - 1) }
end

-- A retransmission of tsn, not acknowledged: a candidate for L+1 (the
-- lowest TSN lost in the switch) of the current segment and of the
-- switches still waiting (the analyzer's Direction::note_retransmission).
function note_retransmission(d, tsn)
  local first = d.seg_first_tsn
  if first ~= nil and sle(first, tsn) and (d.seg_lowest == nil or sgt(d.seg_lowest, tsn)) then
    d.seg_lowest, d.pin_open = tsn, true
  end
  for _, p in ipairs(d.pending) do
    if sgt(p.tsn, tsn) and sle(p.seg_first, tsn) and (p.lowest == nil or sgt(p.lowest, tsn)) then
      p.lowest, d.pin_open = tsn, true
    end
  end
end

-- TSN t's effective transmission (ns), once it was seen as new DATA (and
-- is still in the analyzer's history) and is acknowledged; nil otherwise.
-- Also whether it was seen as new DATA at all.
function Core.effective(d, t)
  local first, highest = d.first_tsn, d.highest
  if first == nil or sgt(first, t) or sgt(t, highest) or (highest - t) % TWO32 >= TSN_HISTORY then
    return nil, false
  end
  for _, k in ipairs(d.skips) do
    if sle(k[1], t) and sle(t, k[2]) then return nil, false end
  end
  local r = d.rec[t]
  local acked = (d.cum ~= nil and sle(t, d.cum)) or (type(r) == "table" and r.gap)
  if not acked then return nil, true end
  local v = d.effx[t] or d.sent[t] or d.pinned[t]
  if v == nil and t == d.cum then v = d.cum_sent end
  return v, true
end

-- The total handover latency of each waiting switch whose TSNs around the
-- sequence gap are acknowledged (the analyzer's resolve_pending): L+1 the
-- lowest TSN lost in the switch, else the switch TSN; L the one before; the
-- effective transmission of L+1 minus that of L, once the switch TSN is
-- acknowledged too. The transport-layer latency follows from it and the
-- network-layer disconnection. A switch whose L was never seen as new DATA
-- has none.
function Core.resolve_pending(d)
  local pending = d.pending
  local i = 1
  while i <= #pending do
    local p = pending[i]
    local gap = p.lowest or p.tsn
    local before = plus(gap, TWO32 - 1)
    local l, in_history = Core.effective(d, before)
    local l1 = Core.effective(d, gap)
    local switch_acked = Core.effective(d, p.tsn) ~= nil
    if l and l1 and switch_acked then
      local c = p.s.components
      c.total_handover_latency = (l1 - l) / 1000000
      if p.network_ns then c.transport_latency = (l1 - l - p.network_ns) / 1000000 end
      table.remove(pending, i)
      Core.unpin(d)
    elseif l == nil and switch_acked and not in_history then
      table.remove(pending, i)
      Core.unpin(d)
    else
      i = i + 1
    end
  end
end

-- The TSNs whose effective transmission a switch may ask for (besides the
-- cumulative ack's, kept in cum_sent, and those not yet acknowledged):
-- for the current segment its lowest lost TSN and the one before (L+1 and
-- L of its switch to come), for each waiting switch its L, L+1 and switch
-- TSN. A TSN that becomes an L+1 later is not acknowledged then (above the
-- cumulative ack), its L at or above it: these are all (the analyzer's
-- Direction::lowest_needed).
local function pinned_tsns(d)
  local list = {}
  if d.seg_lowest then list[1], list[2] = plus(d.seg_lowest, TWO32 - 1), d.seg_lowest end
  for _, p in ipairs(d.pending) do
    local gap = p.lowest or p.tsn
    list[#list + 1] = plus(gap, TWO32 - 1)
    list[#list + 1] = gap
    list[#list + 1] = p.tsn
  end
  return list
end

-- A SACK moves the cumulative ack from old_cum to cum: the pinned TSNs it
-- acknowledges keep their effective transmission in `pinned` (sent[tsn]
-- goes with the record; the old cumulative ack's was cum_sent).
-- (Returns whether t is still to be acknowledged.)
local function pin(d, t, old_cum, cum)
  local pinned = d.pinned
  if pinned[t] ~= nil then return false end
  if t == old_cum then
    pinned[t] = d.cum_sent
  elseif (old_cum == nil or sgt(t, old_cum)) and sle(t, cum) then
    pinned[t] = d.effx[t] or d.sent[t]
  end
  return sgt(t, cum)
end

-- pin_open: some pinned TSN is still to be acknowledged (set again when
-- the pinned TSNs change: Core.unpin, note_retransmission); while it is
-- not, a SACK does nothing here.
function Core.pin(d, old_cum, cum)
  local open = false
  local lowest = d.seg_lowest
  if lowest then
    open = pin(d, plus(lowest, TWO32 - 1), old_cum, cum) or open
    open = pin(d, lowest, old_cum, cum) or open
  end
  for _, p in ipairs(d.pending) do
    local gap = p.lowest or p.tsn
    open = pin(d, plus(gap, TWO32 - 1), old_cum, cum) or open
    open = pin(d, gap, old_cum, cum) or open
    open = pin(d, p.tsn, old_cum, cum) or open
  end
  d.pin_open = open
end

-- Forgets the pinned transmissions no switch asks for any more (after a
-- switch, or when a waiting one got its total latency).
function Core.unpin(d)
  d.pin_open = true
  if next(d.pinned) == nil then return end
  local kept = {}
  for _, t in ipairs(pinned_tsns(d)) do kept[t] = d.pinned[t] end
  d.pinned = kept
end

-- DATA: new vs retransmitted, data path switches and their interrupt.
function Core:data(ctx, tsn)
  local a, sender, path, frame, sec, nsec = ctx.a, ctx.sender, ctx.path, ctx.frame, ctx.sec, ctx.nsec
  local d = a.dir[sender]
  local dst = ctx.dst
  local dst_info = a.ep[1 - sender].addrs[dst]
  if dst_info and not dst_info.confirmed and not a.handshake[dst] then
    add_expert(ann_of(self, ctx), "note", "DATA to " .. addr_string(dst) .. ", an address not yet confirmed by a HEARTBEAT ACK")
  end
  local highest = d.highest
  local new = highest == nil
  if not new then
    local dd = (tsn - highest) % TWO32
    new = dd ~= 0 and dd < TWO31
  end
  local last = d.last_data[path]
  if last then
    last.frame, last.sec, last.nsec = frame, sec, nsec
  else
    d.last_data[path] = { frame = frame, sec = sec, nsec = nsec }
  end
  if not d.first_in_segment[path] then d.first_in_segment[path] = { frame = frame, sec = sec, nsec = nsec } end
  local in_segment = d.in_segment
  in_segment[path] = (in_segment[path] or 0) + 1
  if new then
    if highest == nil then
      d.base, d.first_new_path = tsn, path
      d.first_tsn, d.seg_first_tsn = tsn, tsn
    elseif (tsn - highest) % TWO32 ~= 1 then
      note_skip(d, highest, tsn)
    end
    d.highest = tsn
    d.last_new_path = path
    -- A TSN still remembered from a lap of the 2^32 ring ago (hostile or
    -- wrapped input) is replaced: the counts and sets drop the old record.
    local old = d.rec[tsn]
    if old == nil then
      d.rec_n = d.rec_n + 1
    elseif type(old) == "table" and old.gap then
      d.gap_n = d.gap_n - 1
    end
    if old ~= nil then d.first_sent[tsn] = nil end
    if d.aside_n > 0 then aside_take(d, tsn) end
    d.rec[tsn] = path
    -- The scan may have run past the TSNs sent, to a SACK's highest TSN
    -- in fast recovery; a TSN not sent then is not past counting: this
    -- one is counted from now on (Linux's sctp_mark_missing walks every
    -- TSN sent; the analyzer's scan stops at the end of its window).
    rescan_from(d, tsn)
    sent_now(d, tsn, path)
    d.sent[tsn] = ctx.t
    local current = d.current
    if current == nil then
      d.current, d.seg_first_frame = path, frame
    elseif current ~= path then
      self:switch(ctx, d, current, path, tsn)
    end
    d.new_t = ctx.t
    return
  end
  local ann = ann_of(self, ctx)
  add_event(ann, "retransmission")
  local r = d.rec[tsn]
  local r_path, r_gap, r_miss
  if type(r) == "table" then
    r_path, r_gap, r_miss = r.last_path, r.gap, r.miss
  elseif r ~= nil then
    r_path, r_gap, r_miss = r, false, 0
  end
  local acked = (d.cum ~= nil and sle(tsn, d.cum)) or (r ~= nil and r_gap)
  if acked then
    add_event(ann, "duplicate")
    add_expert(ann, "note", "duplicate: TSN " .. tsn .. " was already acknowledged")
  else
    note_retransmission(d, tsn)
  end
  if r ~= nil then
    local fast = r_miss >= 3
    local sent, copies = d.sent[tsn], (d.copies[tsn] or 1) + 1
    d.copies[tsn] = copies
    -- Sent again after a gap block acknowledged it: its effective
    -- transmission was the one before.
    if r_gap and d.effx[tsn] == nil then d.effx[tsn], d.effx_any = sent, true end
    -- Its first retransmission: the copy before was its first
    -- transmission, unless it was first seen below the highest (false).
    if copies == 2 and d.first_sent[tsn] == nil then d.first_sent[tsn] = sent end
    d.sent[tsn] = ctx.t
    -- A TSN is fast retransmitted once (RFC 9260 §7.2.4 step 3): its
    -- misses are no longer counted (fast_done); sent again, it has its
    -- destination back (orphan, credit).
    local fast_done = fast or (type(r) == "table" and r.fast_done) or nil
    -- Its miss indications count again from zero: the scan for them must
    -- not start past it, nor hold it aside.
    rescan_from(d, tsn)
    if d.aside_n > 0 then aside_take(d, tsn) end
    if r_gap then
      r.last_path, r.miss, r.orphan, r.credit, r.fast_done = path, 0, nil, nil, fast_done
    elseif fast_done then
      r = { last_path = path, gap = false, miss = 0, fast_done = true }
      d.rec[tsn] = r
    else
      r = path
      d.rec[tsn] = r
    end
    sent_now(d, tsn, r)
    if not fast and not acked then
      -- A timeout-driven retransmission: charged to the path the TSN was
      -- last sent on, once per T3 expiry. Only a first retransmission can
      -- show its expiry spurious: with two copies out, a duplicate report
      -- says both arrived.
      local p = a.paths[r_path + 1]
      -- A T3 expiry ends fast recovery (Linux's sctp_transport_lower_cwnd).
      -- It also sets the miss indications of the TSNs it marks to 0: those
      -- to its destination not gap-acknowledged and below the
      -- fast-retransmit threshold (Linux's sctp_retransmit_mark; the
      -- analyzer's TsnLedger::on_t3_expiry): read so by misses_now, the
      -- expiry itself costs nothing per TSN.
      if self:path_timeout(ctx, p, sent) then
        d.fr_exit = nil
        -- A new expiry of p, with the first transmission of the TSN that
        -- timed out (for the failover's start).
        local expiries = d.expiries
        if #expiries == EXPIRY_HISTORY then table.remove(expiries, 1) end
        expiries[#expiries + 1] = { path = r_path, frame = ctx.frame, t = ctx.t, first_t = d.first_sent[tsn] or nil }
        if p.dst ~= nil then
          d.t3_epoch = d.t3_epoch + 1
          local log = d.t3_log[p.dst]
          if not log then log = {}; d.t3_log[p.dst] = log end
          log[#log + 1] = d.t3_epoch
        end
      end
      note_copy(d, tsn, r_path, p.last_expiry_frame, copies == 2)
    else
      forget_copy(d, tsn)
    end
  else
    -- Never captured before (its first copy was lost before the capture
    -- point): remembered from now on when it is above the cumulative ack
    -- (as the analyzer's TSN window).
    local base = d.base
    if base and not acked and sle(base, tsn) then
      d.rec[tsn] = path
      d.rec_n = d.rec_n + 1
      sent_now(d, tsn, path)
      d.sent[tsn] = ctx.t
      d.first_sent[tsn] = false
      rescan_from(d, tsn)
    end
    forget_copy(d, tsn)
  end
end

-- A failover as the receiver sees it (docs/metrics.md, "Data path switch"):
-- the old path carried at least three DATA in its segment, then nothing
-- until DATA came on the new path at least SILENCE_FACTOR mean intervals
-- later. Returns the silence and the interval in ns, or nil.
local SILENCE_FACTOR = 3
local function ns_between(a, b)
  return (b.sec - a.sec) * 1000000000 + (b.nsec - a.nsec)
end
local function fell_silent(d, old, new)
  local first, last, resumed = d.first_in_segment[old], d.last_data[old], d.first_in_segment[new]
  local n = d.in_segment[old] or 0
  if not (first and last and resumed) or n < 3 then return nil end
  local interval = math.floor(ns_between(first, last) / (n - 1))
  local silence = ns_between(last, resumed)
  if interval > 0 and silence >= SILENCE_FACTOR * interval then return silence, interval end
  return nil
end

-- A data path switch and its kind, in the analyzer's order
-- (analyzer/src/handover/switch.rs, docs/metrics.md "Data path switch"):
--   failover  the old path had T3 expiries in this segment, unless the
--             sender was asked to move (a SET-PRIMARY for the new address
--             in this segment, or the mobile endpoint itself sends, from a
--             new source address it sent an ADD-IP for);
--   return    back to a path that failed earlier: left by a failover, or
--             inferred potentially failed or inactive (see failed_paths;
--             with the analyzer's default thresholds, PFMR 0, the first
--             error makes a path potentially failed);
--   planned   an ASCONF of the segment added or made primary an address of
--             the new path, unless the old path fell silent and the sender
--             was not asked to move;
--   failover  seen by the receiver (the old path fell silent);
--   return    back to a path left earlier;
--   other.
function Core:switch(ctx, d, old, new, tsn)
  local a = ctx.a
  local from, to = a.paths[old + 1], a.paths[new + 1]
  local L, F = d.last_data[old], d.first_in_segment[new]
  local sender, mobile = ctx.sender, a.mobile
  -- Which endpoint moves, and between which of its addresses.
  local old_addr, new_addr
  if mobile == sender then
    old_addr, new_addr = from.src, to.src
  elseif mobile ~= nil then
    old_addr, new_addr = from.dst, to.dst
  end
  local moved = old_addr ~= new_addr
  -- Only the ASCONFs of the segment this switch ends count (docs/metrics.md).
  local since = d.seg_first_frame or 0
  local addip, setprim, planned = false, false, false
  for _, x in ipairs(a.asconfs) do
    if x.frame >= since then
      for _, r in ipairs(x.requests) do
        local op = r.op
        if op == "add_ip" or op == "set_primary" then
          if new_addr ~= nil and r.address == new_addr then
            if op == "add_ip" then addip = true else setprim = true end
          end
          if x.frame < ctx.frame and (r.address == to.src or r.address == to.dst) then planned = true end
        end
      end
    end
  end
  if moved and (addip or setprim) then planned = true end
  -- A T3 expiry of the old path in its segment (see Core:path_timeout):
  -- its latest expiry is the one to look at.
  local expired = from.last_expiry_frame ~= nil and from.last_expiry_frame >= since
  local asked_to_move = setprim or (moved and mobile == sender and addip)
  local kind, reason
  -- The receiver's capture holds no T3 expiry: an old path that fell
  -- silent stands for them, and an ADD-IP alone (no request to move) does
  -- not make such a switch planned (as the analyzer).
  local silence, interval = fell_silent(d, old, new)
  -- Only where the capture may be the receiver's: in the sender's own
  -- capture its timeouts would be there (the analyzer's
  -- captured_at_sender: at the mobile node when it sends, at the
  -- correspondent when the mobile node's peer does).
  local point = self.capture_point
  if mobile ~= nil and ((point == "mn" and mobile == sender) or (point == "cn" and mobile ~= sender)) then
    silence = nil
  end
  if expired and not asked_to_move then
    kind = "failover"
  elseif d.failed[new] or a.failed_paths[new] then
    kind = "return"
  elseif planned and (asked_to_move or not silence) then
    kind = "planned"
  else
    if silence then
      kind = "failover"
      reason = string.format("seen by the receiver: the old path fell silent for %.3f ms, %.1fx its mean DATA interval",
        silence / 1e6, silence / interval)
    elseif d.abandoned[new] then
      kind = "return"
    else
      kind = "other"
    end
  end
  local s = {
    assoc = a.id, sender = ctx.sender, from_path = old, to_path = new, frame = ctx.frame, tsn = tsn, kind = kind,
    last_old = L and L.frame, first_new = F and F.frame,
    interrupt = (L and F) and ms(L.sec, L.nsec, F.sec, F.nsec) or nil,
  }
  local network_ns
  s.components, network_ns = self:components(ctx, d, {
    old = old, new = new, kind = kind, old_addr = old_addr, new_addr = new_addr, moved = moved,
    since = since, interrupt = s.interrupt })
  table.insert(self.switches, s)
  -- Its total latency waits for the TSNs around the sequence gap to be
  -- acknowledged (Core.resolve_pending); a new segment starts.
  local lowest = d.seg_lowest
  d.pending[#d.pending + 1] = { s = s, tsn = tsn, seg_first = d.seg_first_tsn or tsn,
    lowest = (lowest ~= nil and sgt(tsn, lowest)) and lowest or nil, network_ns = network_ns }
  d.seg_first_tsn, d.seg_lowest = tsn, nil
  Core.unpin(d)
  local ann = ann_of(self, ctx)
  add_event(ann, "path_switch")
  if kind == "failover" then add_event(ann, "failover") end
  ann.switch = s
  add_expert(ann, "note", string.format("%s path switch from path %d to path %d", kind, old, new)
    .. (reason and (" (" .. reason .. ")") or ""))
  d.abandoned[old] = true
  if kind == "failover" then d.failed[old] = true end
  d.current, d.seg_first_frame = new, ctx.frame
  d.first_in_segment = { [new] = { frame = ctx.frame, sec = ctx.sec, nsec = ctx.nsec } }
  d.in_segment = { [new] = 1 }
  -- HEARTBEATs before every direction's current segment that no later
  -- switch can use are forgotten, as the analyzer forgets them.
  local begin
  for e = 0, 1 do
    local x = a.dir[e]
    if x.current ~= nil and (begin == nil or x.seg_first_frame < begin) then begin = x.seg_first_frame end
  end
  if begin then Core.prune_heartbeats(a.heartbeats, begin) end
end

-- The latency components of a switch (docs/metrics.md, "Handover latency
-- components"; the analyzer's handover/switch.rs, latency.rs, failover.rs,
-- recognition.rs), each in ms by its name in the analyzer's descriptors
-- (COMPONENTS), computed once, at the switch, from what the capture showed
-- by then. Absent (nil) where the analyzer has none; the plugins take no
-- --events, so the components anchored on one (ADDIP sent, link up → ...)
-- are never there, in either tier. The total handover latency and the
-- transport-layer latency are added later, once the TSNs around the
-- sequence gap are acknowledged (Core.resolve_pending). w: old and new
-- path, class, the mobile endpoint's old and new address and whether it
-- moved, the frame the segment began, the data interrupt. Returns the
-- components and the network-layer disconnection in ns.
function Core:components(ctx, d, w)
  local a, t0 = ctx.a, self.t0
  local switch_t, switch_frame = ctx.t, ctx.frame
  local function t_of(m) return m and ((m.sec - t0) * 1000000000 + m.nsec) end
  local function between(from, to)
    if from and to then return (to - from) / 1000000 end
    return nil
  end
  local c = { data_interrupt = w.interrupt }
  -- New-data gap: the last new DATA on the old path (every new DATA since
  -- the segment began went there) → the switch frame.
  c.new_data_gap = between(d.new_t, switch_t)
  local mobile, sender = a.mobile, ctx.sender
  -- Network-layer disconnection (no events): the mobile endpoint's last
  -- packet from another address → its first from the new one.
  local network_ns
  if mobile ~= nil and w.moved and w.new_addr ~= nil then
    local src = a.ep[mobile].sources[w.new_addr]
    if src and src.before_t then
      network_ns = src.t - src.before_t
      c.network_disconnection = network_ns / 1000000
    end
  end
  -- The ADD-IP and SET-PRIMARY for the new address the switch rests on.
  local addip = Core.asconf_for(a.asconfs, w.since, switch_frame, "add_ip", w.new_addr)
  local setprim = Core.asconf_for(a.asconfs, w.since, switch_frame, "set_primary", w.new_addr)
  local addip_ack_t = addip and addip.ack_t
  if setprim then c.setprim_sent = between(addip_ack_t, setprim.t) end
  if mobile == sender then
    c.sender_recovery = between(addip_ack_t, switch_t)
  elseif setprim then
    c.sender_recovery = between(setprim.t, switch_t)
  end
  c.path_confirmation = Core.path_confirmation(a.heartbeats, w.new, switch_frame)
  local F = t_of(d.first_in_segment[w.new])
  local old_first = d.first_in_segment[w.old]
  -- Failover: the T3 expiries charged to the old path in its segment; the
  -- failure starts at the first one's first unanswered transmission.
  if old_first then
    for _, e in ipairs(d.expiries) do
      if e.path == w.old and e.frame >= old_first.frame then
        local start = e.first_t
        if start then
          c.failover_detection = between(start, (F and F >= start) and F or switch_t)
          c.failover_time = between(start, switch_t)
        end
        break
      end
    end
  end
  -- Link availability recognition of a return: the first HEARTBEAT on
  -- the path since the old path's segment began → the first DATA on it.
  if w.kind == "return" then
    local since_t = t_of(old_first)
    for _, h in ipairs(a.heartbeats) do
      if h.path == w.new and (since_t == nil or h.t >= since_t) and h.frame <= switch_frame then
        c.recognition_heartbeat_to_data = between(h.t, F or switch_t)
        break
      end
    end
  end
  return c, network_ns
end

-- The latest exchange of `asconfs` since frame `since` carrying `op` for
-- `address` that was acknowledged before the switch frame, else the latest
-- sent (the analyzer's asconf_for in handover/switch.rs).
function Core.asconf_for(asconfs, since, switch_frame, op, address)
  if address == nil then return nil end
  local latest, acked
  for _, x in ipairs(asconfs) do
    if x.frame >= since then
      for _, r in ipairs(x.requests) do
        if r.op == op and r.address == address then
          latest = x
          if x.ack_frame and x.ack_frame < switch_frame then acked = x end
          break
        end
      end
    end
  end
  return acked or latest
end

-- Path confirmation: the last HEARTBEAT on path `to` before the switch
-- frame that was answered → its HEARTBEAT ACK (ms), or nil.
function Core.path_confirmation(heartbeats, to, switch_frame)
  for i = #heartbeats, 1, -1 do
    local h = heartbeats[i]
    if h.path == to and h.frame < switch_frame and h.ack_t then return (h.ack_t - h.t) / 1000000 end
  end
  return nil
end

-- Forgets the HEARTBEATs sent before frame `begin` (where every direction's
-- current segment began) but, per path, the last sent (an answer may still
-- match it) and the last answered (a path confirmation), as the analyzer's
-- prune_heartbeats; an answer to one forgotten is not noted (pruned).
function Core.prune_heartbeats(list, begin)
  local before = 0
  while before < #list and list[before + 1].frame < begin do before = before + 1 end
  if before == 0 then return end
  local keep, last_sent, last_answered = {}, {}, {}
  for i = before, 1, -1 do
    local h = list[i]
    if not last_sent[h.path] then last_sent[h.path] = true; keep[i] = true end
    if h.ack_t and not last_answered[h.path] then last_answered[h.path] = true; keep[i] = true end
  end
  local n = 0
  for i = 1, #list do
    local h = list[i]
    if i > before or keep[i] then
      n = n + 1
      list[n] = h
    else
      h.pruned = true
    end
  end
  for i = #list, n + 1, -1 do list[i] = nil end
end

-- A SACK (or SHUTDOWN: s nil, no gap blocks) from the receiver of
-- direction 1 - sender: its cumulative TSN ack, and ngaps gap blocks (start,
-- end: 16 bits each) at s[gaps..].
-- The TSNs from..to (no wrap), cumulatively acknowledged: forgotten; the
-- paths they were last sent on (unless a gap block acknowledged them
-- before) added to list / set.
local function forget_acked(a, d, from, to, list, set)
  local rec, sent, copies, first_sent, dk = d.rec, d.sent, d.copies, d.first_sent, d.dk
  -- (Most TSNs were sent once, on the path of the one before.)
  local any_copies, previous = next(copies) ~= nil, nil
  -- (A TSN first seen below the highest has a first-transmission mark
  -- and no copies: it must go too, or the marks grow with the file.)
  local any_first = next(first_sent) ~= nil
  local any_aside = d.aside_n > 0
  for t = from, to do
    local r = rec[t]
    if dk and r ~= nil then
      r = resolve(a, d, t)
      dk[t] = nil
    end
    if any_aside and r ~= nil then aside_take(d, t) end
    if r ~= nil then
      local lp = r
      if type(r) == "table" then lp = not r.gap and (r.credit or r.last_path) or nil end
      if lp ~= previous and lp and not set[lp] then set[lp] = true; list[#list + 1] = lp end
      previous = lp
      d.rec_n = d.rec_n - 1
      if type(r) == "table" and r.gap then d.gap_n = d.gap_n - 1 end
      rec[t], sent[t] = nil, nil
      if any_copies then copies[t] = nil end
      if any_first then first_sent[t] = nil end
    end
  end
end

function Core:sack(ctx, cum, s, gaps, ngaps, dups)
  local a = ctx.a
  local d = a.dir[1 - ctx.sender]
  if dups > 0 then add_event(ann_of(self, ctx), "duplicate_report") end
  -- A SACK whose cumulative ack is below the one already seen is stale
  -- (overtaken on another path): Linux drops it (sctp_sf_eat_sack_6_2),
  -- and so does the analyzer (TsnLedger::on_sack). Its duplicate reports
  -- are still the receiver's.
  -- (Linux's TSN_lt: also exactly 2^31 apart, which RFC 1982 leaves
  -- undefined.)
  if d.cum ~= nil and (cum - d.cum) % TWO32 >= TWO31 then
    d.stale_sacks = d.stale_sacks + 1
    if dups > 0 and s then self:spurious(ctx, d, s, gaps + 4 * ngaps, dups) end
    return
  end
  -- SFR-CACC 1) and 2 A) (the analyzer's TsnLedger::on_sack): the
  -- primary's changeover ends when this SACK's cumulative ack reaches its
  -- next TSN, and the new-ack flags start afresh.
  local change = d.primary and d.cacc[d.primary]
  if change and change.active then
    local ended = sle(change.next, cum)
    for _, c in pairs(d.cacc) do
      if ended then c.cycling = false end
      c.saw = false
    end
    if ended then change.active = false end
  end
  local dcum = d.cum
  -- The paths credited with DATA this SACK newly acknowledges, in the
  -- analyzer's order (cumulatively acknowledged TSNs in order, then gap
  -- blocks): for SFR-CACC and their error counters. Reused from SACK to
  -- SACK.
  local list, set = self.acked_list, self.acked_set
  for i = #list, 1, -1 do set[list[i]] = nil; list[i] = nil end
  local advances = dcum == nil or sgt(cum, dcum)
  if advances then
    -- The transmissions of the TSNs acknowledged now go with their
    -- records, but those a switch may ask for (its total latency): the
    -- cumulative ack's (the L of the next switch) and the pinned ones.
    if d.pin_open then Core.pin(d, dcum, cum) end
    if d.effx_any then
      local effx = d.effx
      d.cum_sent = effx[cum] or d.sent[cum]
      for t in pairs(effx) do
        if sle(t, cum) then effx[t] = nil end
      end
      d.effx_any = next(effx) ~= nil
    else
      d.cum_sent = d.sent[cum]
    end
    d.cum, dcum = cum, cum
    local base = d.base
    if base then
      local steps = (cum - base) % TWO32
      if steps < TWO31 then
        -- The TSNs base..cum are acknowledged: forgotten.
        local rec, sent, copies = d.rec, d.sent, d.copies
        if steps > 1048576 then
          -- Past any window: the TSNs remembered, in order.
          local tsns = {}
          for t in pairs(rec) do
            if (t - base) % TWO32 <= steps then tsns[#tsns + 1] = t end
          end
          table.sort(tsns, function(x, y) return (x - base) % TWO32 < (y - base) % TWO32 end)
          for _, t in ipairs(tsns) do
            local r = resolve(a, d, t)
            if d.dk then d.dk[t] = nil end
            aside_take(d, t)
            local lp = r
            if type(r) == "table" then lp = not r.gap and (r.credit or r.last_path) or nil end
            if lp and not set[lp] then set[lp] = true; list[#list + 1] = lp end
            d.rec_n = d.rec_n - 1
            if type(r) == "table" and r.gap then d.gap_n = d.gap_n - 1 end
            rec[t], sent[t], copies[t], d.first_sent[t] = nil, nil, nil, nil
          end
        elseif base + steps < TWO32 then
          forget_acked(a, d, base, base + steps, list, set)
        else
          forget_acked(a, d, base, TWO32 - 1, list, set)
          forget_acked(a, d, 0, (base + steps) % TWO32, list, set)
        end
        d.base_pos = d.base_pos + steps + 1
        d.base = (cum + 1) % TWO32
      end
    end
  end
  self:gap_blocks(a, d, cum, dcum, advances, s, gaps, ngaps)
  -- Switches waiting for their total latency.
  if #d.pending > 0 then Core.resolve_pending(d) end
  -- A TSN reported received twice whose last copy was a timeout's: its
  -- first transmission had arrived, so that expiry was spurious.
  if dups > 0 and s then self:spurious(ctx, d, s, gaps + 4 * ngaps, dups) end
  -- Error counters cleared: of the first 8 paths (as the analyzer).
  local paths = a.paths
  for i = 1, min(#list, 8) do
    self:path_success(ctx, paths[list[i] + 1], "sack")
  end
end

-- Whether SFR-CACC keeps TSN t (record r) from a miss indication while the
-- primary's changeover `change` is active (Linux's sctp_cacc_skip; the
-- analyzer's cacc_skips): rule 3.2 when cycling, else 3.1 d (two or more
-- destinations newly acknowledged: only TSNs last sent to the primary
-- count) and f (fewer: a TSN whose destination saw no new ack does not; a
-- TSN whose destination was deleted has none, and is not skipped by f).
local function cacc_skips(a, d, change, r, t, count)
  if change.cycling then return sgt(change.next, t) end
  local dest
  if type(r) == "table" then
    if not r.orphan then dest = a.paths[r.last_path + 1].dst end
  else
    dest = a.paths[r + 1].dst
  end
  if count >= 2 then return dest ~= d.primary end
  if dest == nil then return false end
  local c = d.cacc[dest]
  return not (c and c.saw)
end

-- Miss indications for the TSNs set aside in start..limit (the miss
-- scan's range; the analyzer's count_sidelined): per set, SFR-CACC skips
-- the whole set (rule 3.1 d or f for its destination) or, cycling, its
-- TSNs below the next TSN at the change (3.2); every TSN visited gets an
-- indication (or leaves its set at the threshold), so a SACK costs what
-- it changes. Returns whether one reached the fast-retransmit threshold.
local function count_aside(a, d, change, count, start, limit)
  local lo, hi = position(d, start), position(d, limit)
  if change and change.cycling then
    local next_at_change = position(d, change.next)
    if next_at_change > lo then lo = next_at_change end
  end
  if lo >= hi then return false end
  local visits = {}
  for key, g in pairs(d.sets) do
    local skipped = false
    if change and not change.cycling then
      local dest = key ~= ASIDE_ORPHAN and a.paths[key + 1].dst or nil
      if count >= 2 then
        skipped = dest ~= d.primary
      elseif dest ~= nil then
        local c = d.cacc[dest]
        skipped = not (c and c.saw)
      end
    end
    if not skipped then avl_collect(g.root, lo, hi, visits) end
  end
  local reached, rec = false, d.rec
  for _, t in ipairs(visits) do
    local r = resolve(a, d, t)
    -- Each TSN is checked as the scan checks it, though neither branch
    -- below is taken: a TSN past counting left its set (aside_take), and
    -- the rule a set was visited by is that of each TSN in it.
    if r == nil or (type(r) == "table" and (r.gap or r.fast_done or r.miss >= 3)) then
      aside_take(d, t)
    elseif change and cacc_skips(a, d, change, r, t, count) then
      aside_take(d, t)
      aside_put(d, t, aside_key(r))
    else
      if type(r) == "table" then
        settle_misses(a, d, r)
        r.miss = r.miss + 1
      else
        r = { last_path = r, gap = false, miss = 1, ep = d.t3_epoch }
        rec[t] = r
      end
      if r.miss >= 3 then
        reached = true
        aside_take(d, t)
      end
    end
  end
  return reached
end

-- The gap blocks of a SACK (ngaps of them at s[gaps..]; its cumulative ack
-- cum, the direction's dcum): TSNs newly acknowledged, and miss
-- indications as the analyzer's TsnLedger::on_sack counts them (HTNA, fast
-- recovery, one fast retransmission per TSN, SFR-CACC).
function Core:gap_blocks(a, d, cum, dcum, advances, s, gaps, ngaps)
  local list, set = self.acked_list, self.acked_set
  local ncum = #list
  local rec = d.rec
  -- HTNA: the highest TSN this SACK newly acknowledges; the SACK's highest
  -- TSN (its last block's end).
  local highest_new, highest_in_sack = cum, cum
  -- This SACK's blocks as offsets {first, last} from dcum (for reneging).
  local ranges = {}
  for g = 0, ngaps - 1 do
    local o = gaps + 4 * g
    local s1, s2, e1, e2 = byte(s, o, o + 3)
    local first, last = s1 * 256 + s2, e1 * 256 + e2
    highest_in_sack = plus(cum, last)
    if last >= first then
      ranges[#ranges + 1] = { first, last }
      for k = first, min(last, first + 65535) do
        local t = (dcum + k) % TWO32
        local r = resolve(a, d, t)
        local newly = false
        if type(r) == "table" then
          if not r.gap then
            newly = true
            d.gap_n = d.gap_n + 1
            if d.aside_n > 0 then aside_take(d, t) end
            -- No longer marked by a T3 expiry: its count as now.
            settle_misses(a, d, r)
            local lp = r.credit or r.last_path
            if not set[lp] then set[lp] = true; list[#list + 1] = lp end
          end
          r.gap = true
        elseif r ~= nil then
          newly = true
          if d.aside_n > 0 then aside_take(d, t) end
          if not set[r] then set[r] = true; list[#list + 1] = r end
          rec[t] = { last_path = r, gap = true, miss = 0 }
          d.gap_n = d.gap_n + 1
        end
        if newly and sgt(t, highest_new) then highest_new = t end
      end
    end
  end
  -- RFC 9260 §6.2.1: a TSN a gap block of the last SACK acknowledged that
  -- this one does not (reneged) is outstanding again, as Linux's
  -- sctp_check_transmitted (and the analyzer's TsnLedger::renege) does it.
  -- Merged (the analyzer's merge_ranges), so that the binary search alone
  -- answers: overlapping blocks would need a scan of every range for each
  -- TSN that is not covered, exactly the reneged ones.
  table.sort(ranges, function(x, y) return x[1] < y[1] end)
  local merged = 0
  for i = 1, #ranges do
    local r = ranges[i]
    local m = ranges[merged]
    if merged > 0 and r[1] <= m[2] + 1 then
      if r[2] > m[2] then m[2] = r[2] end
    else
      merged = merged + 1
      ranges[merged] = r
    end
  end
  for i = #ranges, merged + 1, -1 do ranges[i] = nil end
  local function covered(t)
    local off = (t - dcum) % TWO32
    local lo, hi = 1, #ranges
    while lo <= hi do
      local m = floor((lo + hi) / 2)
      local r = ranges[m]
      if off < r[1] then hi = m - 1 elseif off > r[2] then lo = m + 1 else return true end
    end
    return false
  end
  for _, pr in ipairs(d.gap_ranges or {}) do
    for k = 0, pr[2] do
      local t = plus(pr[1], k)
      local r = rec[t]
      if type(r) == "table" and r.gap and not covered(t) then
        r.gap = false
        d.gap_n = d.gap_n - 1
        d.effx[t] = nil
        -- Marked by T3 expiries again from now on.
        r.ep = d.t3_epoch
        rescan_from(d, t)
      end
    end
  end
  local kept = {}
  for i, r in ipairs(ranges) do kept[i] = { plus(dcum, r[1]), min(r[2] - r[1], 65535) } end
  d.gap_ranges = kept
  -- Fast recovery ends with a SACK that acknowledges DATA up to where it
  -- began (Linux's sctp_transport_raise_cwnd).
  if d.fr_exit and #list > 0 and sle(d.fr_exit, cum) then d.fr_exit = nil end
  if ngaps == 0 then return end
  -- SFR-CACC 2 B) and C): the destinations credited with a TSN this SACK
  -- acknowledged cumulatively, and how many.
  local change = d.primary and d.cacc[d.primary]
  if not (change and change.active) then change = nil end
  local count = 0
  if change then
    for i = 1, ncum do
      local dest = a.paths[list[i] + 1].dst
      local c = d.cacc[dest]
      if not c then c = { active = false, cycling = false, next = 0, saw = false }; d.cacc[dest] = c end
      if not c.saw then c.saw = true; count = count + 1 end
    end
  end
  -- TSNs below the limit and not acknowledged: reported missing (RFC 9260
  -- §7.2.4), unless SFR-CACC skips them.
  local limit = highest_new
  if d.fr_exit and advances then limit = highest_in_sack end
  -- The scan starts after the TSNs past counting (as the analyzer's
  -- miss_scan_from), and no further back than the analyzer's window of
  -- 2^20 TSNs.
  local t = plus(dcum, 1)
  local from = d.miss_from
  if from and sgt(from, t) then t = from end
  if (limit - t) % TWO32 > 1048576 and sgt(limit, t) then t = plus(limit, TWO32 - 1048576) end
  if not sgt(limit, t) then return end
  local start = t
  -- The TSNs set aside first (those set aside below are skipped by this
  -- SACK anyway), then the others from where the scan resumes.
  local reached = d.aside_n > 0 and count_aside(a, d, change, count, start, limit)
  if d.scan_from and sgt(d.scan_from, t) then t = d.scan_from end
  local aside = d.aside
  -- prefix: the TSNs so far are past counting or set aside (scan_from
  -- follows it); open: the first that is neither past counting nor, as
  -- without the sets, set aside (where miss_from stops).
  local prefix, open = true, nil
  while sgt(limit, t) do
    local r
    if aside[t] == nil then
      r = resolve(a, d, t)
      if r ~= nil and not (type(r) == "table" and (r.gap or r.fast_done or r.miss >= 3)) then
        if change and cacc_skips(a, d, change, r, t, count) then
          -- Kept from an indication while the changeover lasts, maybe for
          -- many SACKs: set aside, it no longer holds the scan back.
          aside_put(d, t, aside_key(r))
        else
          if type(r) == "table" then
            settle_misses(a, d, r)
            r.miss = r.miss + 1
          else
            r = { last_path = r, gap = false, miss = 1, ep = d.t3_epoch }
            rec[t] = r
          end
          if r.miss >= 3 then reached = true end
        end
      end
    end
    r = rec[t]
    local past = r == nil or (type(r) == "table" and (r.gap or r.fast_done or r.miss >= 3))
    if prefix and (past or aside[t]) then
      d.scan_from = plus(t, 1)
    else
      prefix = false
    end
    if not past and open == nil then open = t end
    t = plus(t, 1)
  end
  -- miss_from: where the scan would have stopped without the sets, at
  -- the first TSN in start..limit not past counting (a set-aside one is
  -- not), so that it means what it meant before them.
  local stop = open
  if d.aside_n > 0 then
    local lo, hi = position(d, start), position(d, limit)
    local first = open and position(d, open)
    for _, g in pairs(d.sets) do
      local k = avl_first_from(g.root, lo)
      if k and k < hi and (first == nil or k < first) then first = k end
    end
    stop = first and (d.base + (first - d.base_pos)) % TWO32
  end
  if stop == nil then
    d.miss_from = limit
  elseif stop ~= start then
    d.miss_from = stop
  end
  -- A fast retransmission begins fast recovery, unless one is under way.
  if reached and d.fr_exit == nil then d.fr_exit = d.highest end
end

Core.NO_ACK = "ASCONF without ASCONF-ACK by the end of the capture"

-- After the whole capture: requests never answered get their warning,
-- on their last transmission (the analyzer's unanswered_asconf_frames).
function Core:finish()
  if self.finished then return end
  self.finished = true
  for _, a in ipairs(self.assocs) do
    for _, req in ipairs(a.pending_asconf) do
      if not req.answered then add_expert(self:annotation(req.frame), "warning", Core.NO_ACK) end
    end
  end
end

-- How many ASCONFs of `frame` (association `id`) are unanswered so far:
-- the warnings finish() would add, for a capture read incrementally.
function Core:unanswered(frame, id)
  local a = id and self.assocs[id + 1]
  local n = 0
  if a and not self.finished then
    for _, req in ipairs(a.pending_asconf) do
      if req.frame == frame and not req.answered then n = n + 1 end
    end
  end
  return n
end

-- A plain-text summary for the Statistics window and `tshark -z sctpho`.
function Core:summary()
  local out = {}
  local function line(...) out[#out + 1] = string.format(...) end
  line("SCTP Handover: %d association(s), %d data path switch(es)", #self.assocs, #self.switches)
  for _, a in ipairs(self.assocs) do
    line("")
    line("association %d  ports %d <-> %d  (first frame %d)", a.id, a.ports[0], a.ports[1], a.first_frame)
    for _, p in ipairs(a.paths) do
      line("  path %d  %s -> %s  (sent by endpoint %d)", p.id, W.addr_string(p.src), W.addr_string(p.dst), p.sender)
      -- The inferred state: its changes, counter resets, spurious expiries.
      if #p.changes > 0 or p.clears > 0 or p.spurious > 0 then
        local changes = {}
        for _, c in ipairs(p.changes) do changes[#changes + 1] = string.format("%s (frame %d)", c[1], c[2]) end
        line("    state: %s; error counter cleared %d time(s); %d spurious T3 expir%s",
          #changes > 0 and table.concat(changes, ", ") or "active throughout", p.clears, p.spurious,
          p.spurious == 1 and "y" or "ies")
      end
    end
    for _, x in ipairs(a.asconfs) do
      local ops = {}
      for _, r in ipairs(x.requests) do ops[#ops + 1] = r.op .. " " .. W.addr_string(r.address) end
      local sent = ""
      if x.transmissions > 1 then
        sent = string.format(", sent %d times (last frame %d)", x.transmissions, x.last_frame)
      end
      line("  ASCONF frame %d serial %d from endpoint %d: %s%s -> ACK %s", x.frame, x.serial, x.sender,
        table.concat(ops, ", "), sent, x.ack_frame and ("frame " .. x.ack_frame) or "none")
    end
  end
  if #self.switches > 0 then
    line("")
    line("%-6s %-4s %-9s %-9s %7s %9s %9s %12s", "assoc", "dir", "paths", "kind", "frame", "last old", "first new", "interrupt ms")
    for _, s in ipairs(self.switches) do
      line("%-6d %-4s %-9s %-9s %7d %9s %9s %12s", s.assoc, s.sender .. ">" .. (1 - s.sender),
        s.from_path .. "->" .. s.to_path, s.kind, s.frame, tostring(s.last_old or "-"),
        tostring(s.first_new or "-"), s.interrupt and string.format("%.3f", s.interrupt) or "-")
    end
  end
  return table.concat(out, "\n")
end

-- Pre-scans a whole capture file (pcap/pcapng); returns true or nil, why.
-- lengths, when given, gets every frame's captured length (to recognise
-- the frames Wireshark reads as this file's).
function Core:scan_file(path, lengths)
  local span, NON_PACKET = W.sctp_span_in_frame, W.NON_PACKET
  local ok, err = W.read_capture(path, function(number, sec, nsec, link, data, first, last)
    if lengths then lengths[number] = last - first + 1 end
    if link == NON_PACKET then return end
    local src, dst, a, b = span(link, data, first, last)
    if src then self:packet(number, sec, nsec, src, dst, data, a, b) end
  end)
  if ok then self:finish() end
  return ok, err
end

return Core
