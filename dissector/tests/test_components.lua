-- Unit tests for the latency components of sctpho_core (docs/metrics.md,
-- "Handover latency components"; the analyzer's tests of the same cases in
-- handover/latency.rs, switch.rs and failover.rs), from literal SCTP bytes
-- as test_core.lua: each component on a switch, in ms, worked out by hand
-- from the times below.
local t = require("tests.harness")
local Core = require("sctpho_core")
local B = require("tests.bytes")
local chunk, data, sack, sack_gaps, init, asconf, ack, pkt = B.chunk, B.data, B.sack, B.sack_gaps, B.init, B.asconf, B.ack, B.pkt

local ADD, SETPRIM = "\192\1", "\192\4"
-- FS: the correspondent, sending DATA; the mobile node MN at OLD, then NEW.
local FS, OLD, NEW = "\192\168\0\100", "\192\168\0\101", "\192\168\0\102"
local TMT, TFS = 0x11111111, 0x22222222

local function hb(kind, info) return chunk(kind, "\0\1\0\8" .. info) end

-- The MN's handshake with FS; send(ms, src, dst, bytes) then sends the
-- next frame at `ms` (µs precision) and returns its number.
local function association()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 100)))
  c:packet(2, 0, 1000000, FS, OLD, pkt(TMT, init(2, TFS, 500)))
  local f = 2
  local function send(ms, src, dst, bytes)
    f = f + 1
    local ns = math.floor(ms * 1000 + 0.5) * 1000
    c:packet(f, math.floor(ns / 1000000000), ns % 1000000000, src, dst, bytes)
    return f
  end
  return c, send
end

-- FS sends TSNs 500..502 to OLD (10, 20, 30 ms), the MN's SACK of 500
-- from OLD (25 ms) is its last packet from there; the MN adds NEW (ADD-IP
-- from NEW at 36 ms, acknowledged at 37), FS probes NEW (HEARTBEAT at 38
-- ms, answered at 40.5), the MN makes NEW primary (45 ms, acknowledged at
-- 46) and FS switches with TSN 503 at 60 ms.
local function planned()
  local c, send = association()
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(20, FS, OLD, pkt(TMT, data(501)))
  send(25, OLD, FS, pkt(TFS, sack(500)))
  send(30, FS, OLD, pkt(TMT, data(502)))
  send(36, NEW, FS, pkt(TFS, asconf(1, OLD, ADD, NEW)))
  send(37, FS, NEW, pkt(TMT, ack(1)))
  send(38, FS, NEW, pkt(TMT, hb(4, "nnnn")))
  send(40.5, NEW, FS, pkt(TFS, hb(5, "nnnn")))
  send(45, NEW, FS, pkt(TFS, asconf(2, OLD, SETPRIM, NEW)))
  send(46, FS, NEW, pkt(TMT, ack(2)))
  local switch = send(60, FS, NEW, pkt(TMT, data(503)))
  return c, send, switch
end

local function components(c, i) return c.switches[i or 1].components end

t.test("a planned switch's components at the switch", function()
  local c, _, switch = planned()
  t.eq(#c.switches, 1)
  t.eq(c.switches[1].frame, switch)
  t.eq(c.switches[1].kind, "planned")
  local x = components(c)
  t.near(x.data_interrupt, 30, 1e-9, "last DATA on OLD 30 ms → first on NEW 60 ms")
  t.near(x.new_data_gap, 30, 1e-9, "last new DATA on OLD 30 ms → switch 60 ms")
  t.near(x.network_disconnection, 11, 1e-9, "the MN's SACK from OLD 25 ms → its ADD-IP from NEW 36 ms")
  t.near(x.setprim_sent, 8, 1e-9, "ADD-IP's ASCONF-ACK 37 ms → SET-PRIMARY 45 ms")
  t.near(x.sender_recovery, 15, 1e-9, "FS is not mobile: SET-PRIMARY 45 ms → switch 60 ms")
  t.near(x.path_confirmation, 2.5, 1e-9, "HEARTBEAT on NEW 38 ms → its ACK 40.5 ms")
  -- Anchored on --events (ADDIP sent, link up → ...), a failover's or a
  -- return's, or not yet known (the TSNs around the gap unacknowledged).
  for _, name in ipairs({ "addip_sent", "failover_detection", "failover_time", "total_handover_latency",
    "transport_latency", "recognition_link_up_to_heartbeat", "recognition_heartbeat_to_data",
    "recognition_link_up_to_data" }) do
    t.eq(x[name], nil, name)
  end
end)

t.test("without loss the total handover latency is the switch TSN's effective transmission minus the one before", function()
  local c, send = planned()
  send(70, NEW, FS, pkt(TFS, sack(502)))
  t.eq(components(c).total_handover_latency, nil, "the switch TSN not acknowledged yet")
  send(80, NEW, FS, pkt(TFS, sack(503)))
  local x = components(c)
  -- L+1 = 503 (60 ms), L = 502 (30 ms); transport: 30 - 11 ms.
  t.near(x.total_handover_latency, 30, 1e-9)
  t.near(x.transport_latency, 19, 1e-9)
  t.eq(#c.assocs[1].dir[1].pending, 0, "settled")
end)

t.test("a TSN lost in the switch is L+1, its retransmission its effective transmission", function()
  local c, send = planned()
  -- 501 and 502, lost on OLD, sent again to NEW at 300 and 301 ms: L+1 =
  -- 501 (effective at 300 ms), L = 500 (10 ms).
  send(300, FS, NEW, pkt(TMT, data(501)))
  send(301, FS, NEW, pkt(TMT, data(502)))
  send(320, NEW, FS, pkt(TFS, sack(503)))
  local x = components(c)
  t.near(x.total_handover_latency, 290, 1e-9)
  t.near(x.transport_latency, 279, 1e-9)
end)

t.test("the effective transmission of a TSN sent again after a gap block acknowledged it is the one before", function()
  local c, send = planned()
  -- 502 gap-acknowledged at 70 ms (its copy of 30 ms), sent again at 90
  -- ms; 501 lost, sent again at 100 ms: L+1 = 501 (100 ms), L = 500 (10).
  send(70, NEW, FS, pkt(TFS, sack_gaps(500, { { 2, 2 } })))
  send(90, FS, NEW, pkt(TMT, data(502)))
  local d = c.assocs[1].dir[1]
  t.eq(Core.effective(d, 502), 30 * 1000000, "the gap block's copy (ns since the first packet's second)")
  send(100, FS, NEW, pkt(TMT, data(501)))
  send(120, NEW, FS, pkt(TFS, sack(503)))
  t.near(components(c).total_handover_latency, 90, 1e-9)
  t.eq(Core.effective(d, 502), nil, "forgotten once no switch can ask about it")
end)

t.test("a TSN lost before the switch and acknowledged before it is still its L+1", function()
  local c, send = association()
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(20, FS, OLD, pkt(TMT, data(501)))
  send(40, FS, OLD, pkt(TMT, data(501)))             -- sent again: the segment's lowest lost TSN
  send(50, OLD, FS, pkt(TFS, sack(501)))             -- both acknowledged before the switch
  send(60, FS, OLD, pkt(TMT, data(502)))
  send(65, OLD, FS, pkt(TFS, sack(502)))             -- and past them
  send(70, FS, NEW, pkt(TMT, data(503)))             -- switch
  send(80, NEW, FS, pkt(TFS, sack(503)))
  -- L+1 = 501 (effective at 40 ms), L = 500 (10 ms).
  t.near(components(c).total_handover_latency, 30, 1e-9)
end)

t.test("a switch whose L was never seen as new DATA has no total latency", function()
  local c, send = association()
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(20, FS, OLD, pkt(TMT, data(502)))             -- 501 never seen
  send(30, FS, NEW, pkt(TMT, data(501)))             -- first seen below the highest
  send(40, FS, NEW, pkt(TMT, data(503)))             -- switch: L+1 = 501, L = 500?
  send(50, NEW, FS, pkt(TFS, sack(503)))
  t.eq(#c.switches, 1)
  -- L+1 = 501 is not in the history: the analyzer waits for ever.
  t.eq(components(c).total_handover_latency, nil)
  t.eq(#c.assocs[1].dir[1].pending, 1, "still waiting, as the analyzer")
end)

t.test("a failover's detection and failover time run from the first unanswered transmission", function()
  local c, send = association()
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(20, FS, OLD, pkt(TMT, data(501)))
  send(30, OLD, FS, pkt(TFS, sack(500)))
  send(1020, FS, OLD, pkt(TMT, data(501)))           -- T3 expiry 1 of FS -> OLD
  send(3020, FS, NEW, pkt(TMT, data(501)))           -- T3 expiry 2, sent to NEW
  send(3050, FS, NEW, pkt(TMT, data(502)))           -- switch
  t.eq(c.switches[1].kind, "failover")
  local x = components(c)
  t.near(x.failover_detection, 3000, 1e-9, "501 first sent 20 ms → first DATA on NEW 3020 ms")
  t.near(x.failover_time, 3030, 1e-9, "20 ms → the switch 3050 ms")
  t.near(x.data_interrupt, 2000, 1e-9, "last on OLD 1020 ms → first on NEW 3020 ms")
  t.near(x.new_data_gap, 3030, 1e-9, "last new DATA on OLD 20 ms → 3050 ms")
  t.eq(x.network_disconnection, nil, "no endpoint changed its addresses by ASCONF")
  t.eq(x.sender_recovery, nil)
  local expiries = c.assocs[1].dir[1].expiries
  t.eq(#expiries, 2)
  t.eq(expiries[1].first_t, 20 * 1000000, "501's first transmission")
end)

t.test("a return's HEARTBEAT → DATA runs from the first HEARTBEAT on the path since the old segment began", function()
  local c, send = association()
  send(5, FS, OLD, pkt(TMT, hb(4, "aaaa")))          -- before NEW's segment: not it
  send(6, OLD, FS, pkt(TFS, hb(5, "aaaa")))
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(20, FS, NEW, pkt(TMT, data(501)))             -- switch 1: to NEW
  send(30, FS, OLD, pkt(TMT, hb(4, "bbbb")))         -- unanswered
  local back = send(40, FS, OLD, pkt(TMT, data(502))) -- switch 2: back to OLD
  t.eq(c.switches[2].frame, back)
  t.eq(c.switches[2].kind, "return")
  local x = components(c, 2)
  t.near(x.recognition_heartbeat_to_data, 10, 1e-9, "HEARTBEAT 30 ms → DATA 40 ms")
  t.near(x.path_confirmation, 1, 1e-9, "the last answered HEARTBEAT on OLD: 5 → 6 ms")
  t.eq(components(c, 1).recognition_heartbeat_to_data, nil, "not a return")
end)

t.test("the ADD-IP a switch rests on is the latest acknowledged before it, else the latest sent", function()
  local x1 = { frame = 10, requests = { { op = "add_ip", address = NEW } }, ack_frame = 11 }
  local x2 = { frame = 12, requests = { { op = "add_ip", address = NEW } } }
  local x3 = { frame = 13, requests = { { op = "set_primary", address = NEW } }, ack_frame = 14 }
  local x4 = { frame = 15, requests = { { op = "add_ip", address = OLD } }, ack_frame = 16 }
  local list = { x1, x2, x3, x4 }
  t.eq(Core.asconf_for(list, 0, 20, "add_ip", NEW), x1, "acknowledged before the switch")
  t.eq(Core.asconf_for(list, 0, 11, "add_ip", NEW), x2, "its ACK is the switch frame's: the latest sent")
  t.eq(Core.asconf_for(list, 11, 20, "add_ip", NEW), x2, "only the segment's")
  t.eq(Core.asconf_for(list, 0, 20, "set_primary", NEW), x3)
  t.eq(Core.asconf_for(list, 0, 20, "add_ip", nil), nil, "no new address (no mobile endpoint)")
end)

t.test("path confirmation is the last answered HEARTBEAT on the new path before the switch", function()
  local h = function(path, frame, ms, ack_ms)
    return { path = path, frame = frame, t = ms * 1000000, ack_t = ack_ms and ack_ms * 1000000 }
  end
  local list = { h(1, 10, 100, 130), h(1, 20, 200, 245), h(1, 30, 300), h(0, 31, 310, 311), h(1, 41, 400, 401) }
  t.near(Core.path_confirmation(list, 1, 40), 45, 1e-9)
  t.eq(Core.path_confirmation(list, 2, 40), nil)
  t.eq(Core.path_confirmation({ list[3] }, 1, 40), nil, "unanswered")
end)

t.test("HEARTBEATs before every segment are forgotten but each path's last sent and last answered", function()
  local h = function(path, frame, answered) return { path = path, frame = frame, ack_t = answered and 1 or nil } end
  local a1, a2, s1, b1, late = h(1, 10, true), h(1, 11, false), h(1, 12, false), h(2, 13, true), h(1, 30, false)
  local list = { a1, a2, s1, b1, late }
  Core.prune_heartbeats(list, 20)
  t.eq(#list, 4)
  t.eq(list[1], a1, "path 1's last answered")
  t.eq(list[2], s1, "path 1's last sent")
  t.eq(list[3], b1)
  t.eq(list[4], late, "in the segments")
  t.eq(a2.pruned, true)
end)

t.test("a TSN first seen below the highest forgets its first-transmission mark once acknowledged", function()
  -- Ten TSNs a round, the highest first (the others' first copies lost
  -- before the capture point), then a SACK of all: nothing stays.
  local c, send = association()
  local ms = 10
  send(ms, FS, OLD, pkt(TMT, data(100)))
  local d = c.assocs[1].dir[1]
  for round = 1, 20 do
    local top = 100 + round * 10
    ms = ms + 1; send(ms, FS, OLD, pkt(TMT, data(top)))
    for tsn = top - 1, top - 9, -1 do ms = ms + 1; send(ms, FS, OLD, pkt(TMT, data(tsn))) end
    ms = ms + 1; send(ms, OLD, FS, pkt(TFS, sack_gaps(top, {})))
  end
  t.eq(d.cum, 300)
  t.eq(d.rec_n, 0)
  t.eq(next(d.first_sent), nil, "no first-transmission mark left")
  t.eq(next(d.copies), nil)
end)
