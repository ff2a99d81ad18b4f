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

local TWO32, TWO31 = 4294967296, 2147483648
local function sdiff(a, b) return (a - b) % TWO32 end
local function sgt(a, b) local d = sdiff(a, b); return d ~= 0 and d < TWO31 end
local function sle(a, b) return not sgt(a, b) end
local function plus(a, k) return (a + k) % TWO32 end

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

function Core.new()
  return setmetatable({
    assocs = {},       -- 0-based ids: assocs[id + 1]
    by_tag = {},       -- [sport*65536+dport][tag] -> {id, sender}
    by_init = {},      -- [sport*65536+dport][tag] -> id
    by_ports = {},     -- "lo:hi" -> {ids}
    ann = {},          -- frame -> annotation
    switches = {},     -- in order
    malformed = 0,
    finished = false,
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

function Core:annotation(frame)
  local a = self.ann[frame]
  if not a then
    a = { events = NONE, expert = NONE }
    self.ann[frame] = a
  end
  return a
end

local function add_expert(ann, severity, text)
  if ann.expert == NONE then ann.expert = {} end
  local e = ann.expert
  e[#e + 1] = { severity, text }
end
Core.add_expert = add_expert

local function new_direction()
  return {
    highest = nil, cum = nil, base = nil, rec = {},
    current = nil, abandoned = {}, seg_first_frame = nil,
    last_data = {}, last_new = {}, first_in_segment = {}, in_segment = {},
    expiries = {},
  }
end

function Core:create(ports, frame)
  local id = #self.assocs
  local a = {
    id = id, ports = ports, tags = {},
    ep = { [0] = { addrs = {} }, [1] = { addrs = {} } },
    paths = {}, path_index = {},
    dir = { [0] = new_direction(), [1] = new_direction() },
    pending_hb = {}, pending_asconf = {}, asconfs = {},
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

-- Finds or creates the association of a packet; returns it and the
-- sending endpoint. Mirrors the analyzer's track::Tracker::locate.
function Core:locate(p, src, dst, frame)
  local sport, dport, vtag = p.sport, p.dport, p.vtag
  local first = p.chunks[1]
  local ftype = first and first.type
  if ftype == W.INIT and first.initiate_tag then
    local known = get3(self.by_init, sport, dport, first.initiate_tag)
    if known then return self.assocs[known + 1], 0 end
    for _, id in ipairs(self.by_ports[pair(sport, dport)] or {}) do
      local o = self.assocs[id + 1]
      if not o.ended and (o.ep[0].addrs[src] or o.ep[1].addrs[src] or o.ep[0].addrs[dst] or o.ep[1].addrs[dst]) then
        o.ended = true
      end
    end
    local a = self:create({ [0] = sport, [1] = dport }, frame)
    set3(self.by_init, sport, dport, first.initiate_tag, a.id)
    self:set_tag(a, 0, first.initiate_tag)
    return a, 0
  end
  if ftype == W.INIT_ACK and first.initiate_tag then
    local hit = get3(self.by_tag, sport, dport, vtag)
    if hit then
      local a = self.assocs[hit[1] + 1]
      self:set_tag(a, hit[2], first.initiate_tag)
      return a, hit[2]
    end
    local a = self:create({ [0] = dport, [1] = sport }, frame)
    self:set_tag(a, 0, vtag)
    self:set_tag(a, 1, first.initiate_tag)
    return a, 1
  end
  local reflected = (ftype == W.ABORT or ftype == W.SHUTDOWN_COMPLETE) and first.flags % 2 == 1
  if reflected then
    local hit = get3(self.by_tag, dport, sport, vtag)
    if hit then return self.assocs[hit[1] + 1], 1 - hit[2] end
  else
    local hit = get3(self.by_tag, sport, dport, vtag)
    if hit then return self.assocs[hit[1] + 1], hit[2] end
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

function Core:path(a, sender, src, dst)
  local by_dst = a.path_index[src]
  if not by_dst then by_dst = {}; a.path_index[src] = by_dst end
  local id = by_dst[dst]
  if not id then
    id = #a.paths
    a.paths[id + 1] = { id = id, src = src, dst = dst, sender = sender }
    by_dst[dst] = id
  end
  return id
end

-- One SCTP packet: frame number, time, raw addresses, SCTP bytes.
function Core:packet(frame, sec, nsec, src, dst, bytes)
  local p, err = W.parse_sctp(bytes)
  if not p then
    self.malformed = self.malformed + 1
    add_expert(self:annotation(frame), "note", "malformed SCTP: " .. err)
    return
  end
  local a, sender = self:locate(p, src, dst, frame)
  local receiver = 1 - sender
  a.ep[sender].addrs[src] = a.ep[sender].addrs[src] or {}
  a.ep[receiver].addrs[dst] = a.ep[receiver].addrs[dst] or {}
  local path = self:path(a, sender, src, dst)
  local ann = self:annotation(frame)
  ann.assoc, ann.path, ann.src, ann.dst, ann.sender = a.id, path, src, dst, sender
  local ctx = { frame = frame, sec = sec, nsec = nsec, a = a, sender = sender, path = path, src = src, dst = dst, ann = ann }
  for _, c in ipairs(p.chunks) do self:chunk(ctx, c) end
  if err then
    self.malformed = self.malformed + 1
    add_expert(ann, "note", "malformed SCTP: " .. err)
  end
end

local function add_event(ann, e)
  if ann.events == NONE then ann.events = {} end
  for _, x in ipairs(ann.events) do if x == e then return end end
  table.insert(ann.events, e)
end

function Core:chunk(ctx, c)
  local t = c.type
  if t == W.DATA or t == W.I_DATA then
    if c.tsn then self:data(ctx, c.tsn) end
  elseif (t == W.SACK or t == W.NR_SACK) and c.cum then
    self:sack(ctx, c.cum, c.gaps or {}, c.dups or 0)
  elseif t == W.SHUTDOWN and c.cum then
    self:sack(ctx, c.cum, {}, 0)
  elseif t == W.INIT or t == W.INIT_ACK then
    ctx.a.handshake[ctx.src], ctx.a.handshake[ctx.dst] = true, true
  elseif t == W.HEARTBEAT and c.info then
    local a = ctx.a
    a.pending_hb[ctx.sender .. "|" .. c.info] = { frame = ctx.frame, sec = ctx.sec, nsec = ctx.nsec, path = ctx.path }
    add_event(ctx.ann, "heartbeat")
  elseif t == W.HEARTBEAT_ACK and c.info then
    local a = ctx.a
    local k = (1 - ctx.sender) .. "|" .. c.info
    local hb = a.pending_hb[k]
    add_event(ctx.ann, "heartbeat_ack")
    if hb then
      a.pending_hb[k] = nil
      ctx.ann.hb_request = hb.frame
      ctx.ann.hb_rtt = ms(hb.sec, hb.nsec, ctx.sec, ctx.nsec)
      ctx.ann.hb_path = hb.path
      self:annotation(hb.frame).hb_ack = ctx.frame
      local probed = a.paths[hb.path + 1].dst
      local info = a.ep[ctx.sender].addrs[probed]
      if info and not info.confirmed then info.confirmed = ctx.frame end
    end
  elseif t == W.ASCONF and c.serial then
    local reqs = {}
    for _, r in ipairs(c.requests or {}) do
      local addr = r.wildcard and ctx.src or r.address
      reqs[#reqs + 1] = { op = r.op, corr = r.corr, address = addr }
      add_event(ctx.ann, OP_EVENT[r.op])
    end
    local rec = { serial = c.serial, sender = ctx.sender, frame = ctx.frame, sec = ctx.sec, nsec = ctx.nsec, requests = reqs }
    ctx.a.pending_asconf[ctx.sender .. "|" .. c.serial] = rec
    table.insert(ctx.a.asconfs, rec)
    ctx.ann.asconf_serial = c.serial
  elseif t == W.ASCONF_ACK and c.serial then
    self:asconf_ack(ctx, c)
  elseif t == W.ABORT or t == W.SHUTDOWN_COMPLETE then
    ctx.a.ended = true
  end
end

function Core:asconf_ack(ctx, c)
  local a, ann = ctx.a, ctx.ann
  add_event(ann, "asconf_ack")
  ann.asconf_serial = c.serial
  local k = (1 - ctx.sender) .. "|" .. c.serial
  local req = a.pending_asconf[k]
  if not req then return end
  a.pending_asconf[k] = nil
  req.ack_frame = ctx.frame
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
      add_expert(ann, "warning", "ASCONF-ACK reports an error for " .. r.op .. " " .. W.addr_string(r.address) .. ": " .. (CAUSES[resp.cause] or tostring(resp.cause)))
    elseif resp then
      outcome = "success"
    elseif seen_error then
      outcome = "not_processed"
    else
      outcome = "implied_success"
    end
    results[#results + 1] = string.format("%d %s %s: %s", r.corr, r.op, W.addr_string(r.address), outcome)
    if outcome == "success" or outcome == "implied_success" then
      local ep = a.ep[1 - ctx.sender]
      if r.op == "add_ip" then ep.addrs[r.address] = ep.addrs[r.address] or {} end
    end
  end
  ann.asconf_results = results
end

-- DATA: new vs retransmitted, data path switches and their interrupt.
function Core:data(ctx, tsn)
  local a, d, ann = ctx.a, ctx.a.dir[ctx.sender], ctx.ann
  local mark = { frame = ctx.frame, sec = ctx.sec, nsec = ctx.nsec }
  local dst_info = a.ep[1 - ctx.sender].addrs[ctx.dst]
  if not a.handshake[ctx.dst] and dst_info and not dst_info.confirmed then
    add_expert(ann, "note", "DATA to " .. W.addr_string(ctx.dst) .. ", an address not yet confirmed by a HEARTBEAT ACK")
  end
  local new = d.highest == nil or sgt(tsn, d.highest)
  d.last_data[ctx.path] = mark
  if not d.first_in_segment[ctx.path] then d.first_in_segment[ctx.path] = mark end
  d.in_segment[ctx.path] = (d.in_segment[ctx.path] or 0) + 1
  if new then
    if d.highest == nil then d.base = tsn end
    d.highest = tsn
    d.rec[tsn] = { first = mark, last_path = ctx.path, tx = 1, gap = false, miss = 0 }
    d.last_new[ctx.path] = mark
    if d.current == nil then
      d.current, d.seg_first_frame = ctx.path, ctx.frame
    elseif d.current ~= ctx.path then
      self:switch(ctx, d, d.current, ctx.path, tsn, mark)
    end
    return
  end
  add_event(ann, "retransmission")
  local r = d.rec[tsn]
  local acked = (d.cum ~= nil and sle(tsn, d.cum)) or (r ~= nil and r.gap)
  if acked then
    add_event(ann, "duplicate")
    add_expert(ann, "note", "duplicate: TSN " .. tsn .. " was already acknowledged")
  end
  if r then
    local fast = r.miss >= 3
    if not fast and not acked then
      -- A T3 expiry charged to the path the TSN was last sent on.
      local ex = d.expiries[#d.expiries]
      if not (ex and ex.path == r.last_path and ms(ex.sec, ex.nsec, ctx.sec, ctx.nsec) <= 100) then
        d.expiries[#d.expiries + 1] = { path = r.last_path, frame = ctx.frame, sec = ctx.sec, nsec = ctx.nsec }
      else
        ex.sec, ex.nsec = ctx.sec, ctx.nsec
      end
    end
    r.tx, r.last_path, r.miss = r.tx + 1, ctx.path, 0
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

function Core:switch(ctx, d, old, new, tsn, mark)
  local a = ctx.a
  local from, to = a.paths[old + 1], a.paths[new + 1]
  local L, F = d.last_data[old], d.first_in_segment[new]
  local kind = "other"
  -- Only the ASCONFs of the segment this switch ends count (docs/metrics.md).
  local since = d.seg_first_frame or 0
  for _, x in ipairs(a.asconfs) do
    if x.frame < ctx.frame and x.frame >= since then
      for _, r in ipairs(x.requests) do
        if (r.op == "add_ip" or r.op == "set_primary") and (r.address == to.src or r.address == to.dst) then
          kind = "planned"
        end
      end
    end
  end
  if kind ~= "planned" then
    for _, e in ipairs(d.expiries) do
      if e.path == old and e.frame >= (d.seg_first_frame or 0) then kind = "failover" end
    end
  end
  local reason
  if kind == "other" then
    local silence, interval = fell_silent(d, old, new)
    if silence then
      kind = "failover"
      reason = string.format("seen by the receiver: the old path fell silent for %.3f ms, %.1fx its mean DATA interval",
        silence / 1e6, silence / interval)
    end
  end
  if kind == "other" and d.abandoned[new] then kind = "return" end
  local s = {
    assoc = a.id, sender = ctx.sender, from_path = old, to_path = new, frame = ctx.frame, tsn = tsn, kind = kind,
    last_old = L and L.frame, first_new = F and F.frame,
    interrupt = (L and F) and ms(L.sec, L.nsec, F.sec, F.nsec) or nil,
  }
  table.insert(self.switches, s)
  local ann = ctx.ann
  add_event(ann, "path_switch")
  if kind == "failover" then add_event(ann, "failover") end
  ann.switch = s
  add_expert(ann, "note", string.format("%s path switch from path %d to path %d", kind, old, new)
    .. (reason and (" (" .. reason .. ")") or ""))
  d.abandoned[old] = true
  d.current, d.seg_first_frame = new, ctx.frame
  d.first_in_segment = { [new] = mark }
  d.in_segment = { [new] = 1 }
end

function Core:sack(ctx, cum, gaps, dups)
  local d = ctx.a.dir[1 - ctx.sender]
  if dups > 0 then add_event(ctx.ann, "duplicate_report") end
  if d.cum == nil or sgt(cum, d.cum) then
    d.cum = cum
    if d.base then
      local steps = sdiff(cum, d.base)
      if steps < TWO31 then
        if steps > 1048576 then
          d.rec = {}
          d.base = plus(cum, 1)
        else
          while d.base ~= nil and sle(d.base, cum) do
            d.rec[d.base] = nil
            d.base = plus(d.base, 1)
          end
        end
      end
    end
  end
  local highest_gap
  for _, g in ipairs(gaps) do
    local s, e = g[1], g[2]
    if e >= s then
      for k = s, math.min(e, s + 65535) do
        local r = d.rec[plus(d.cum, k)]
        if r then r.gap = true end
      end
      local last = plus(d.cum, e)
      if not highest_gap or sgt(last, highest_gap) then highest_gap = last end
    end
  end
  if highest_gap then
    local t = plus(d.cum, 1)
    local guard = 0
    while sle(t, highest_gap) and guard < 65536 do
      local r = d.rec[t]
      if r and not r.gap then r.miss = r.miss + 1 end
      t, guard = plus(t, 1), guard + 1
    end
  end
end

Core.NO_ACK = "ASCONF without ASCONF-ACK by the end of the capture"

-- After the whole capture: requests never answered get their warning.
function Core:finish()
  if self.finished then return end
  self.finished = true
  for _, a in ipairs(self.assocs) do
    for _, req in pairs(a.pending_asconf) do
      add_expert(self:annotation(req.frame), "warning", Core.NO_ACK)
    end
  end
end

-- How many ASCONFs of `frame` (association `id`) are unanswered so far:
-- the warnings finish() would add, for a capture read incrementally.
function Core:unanswered(frame, id)
  local a = id and self.assocs[id + 1]
  local n = 0
  if a and not self.finished then
    for _, req in pairs(a.pending_asconf) do
      if req.frame == frame then n = n + 1 end
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
    end
    for _, x in ipairs(a.asconfs) do
      local ops = {}
      for _, r in ipairs(x.requests) do ops[#ops + 1] = r.op .. " " .. W.addr_string(r.address) end
      line("  ASCONF frame %d serial %d from endpoint %d: %s -> ACK %s", x.frame, x.serial, x.sender,
        table.concat(ops, ", "), x.ack_frame and ("frame " .. x.ack_frame) or "none")
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
function Core:scan_file(path, on_frame)
  local ok, err = W.read_capture(path, function(number, sec, nsec, link, data, first, last)
    if on_frame then on_frame(number, last - first + 1) end
    if link == W.NON_PACKET then return end
    local src, dst, sctp = W.sctp_in_frame(link, data, first, last)
    if src then self:packet(number, sec, nsec, src, dst, sctp) end
  end)
  if ok then self:finish() end
  return ok, err
end

return Core
