-- Unit tests for sctpho_core: Koh & Kim's Fig. 6 exchange in miniature,
-- built from literal SCTP bytes.
local t = require("tests.harness")
local Core = require("sctpho_core")
local B = require("tests.bytes")
local be32, be16, chunk, data, sack, sack_gaps, init, ap, asconf, ack, pkt = B.be32, B.be16, B.chunk, B.data, B.sack, B.sack_gaps, B.init, B.ap, B.asconf, B.ack, B.pkt


local FS, OLD, NEW = "\192\168\0\100", "\192\168\0\101", "\192\168\0\102"
local TMT, TFS = 0x11111111, 0x22222222

t.test("ASCONF pairs, switches and the interrupt", function()
  local c = Core.new()
  local f = 0
  local function send(us, src, dst, bytes) f = f + 1; c:packet(f, 1000, us * 1000, src, dst, bytes) end
  send(0, OLD, FS, pkt(0, init(1, TMT, 100)))
  send(310, FS, OLD, pkt(TMT, init(2, TFS, 500)))
  send(1136, OLD, FS, pkt(TFS, data(100)))
  send(1304, FS, OLD, pkt(TMT, sack(100)))
  send(2189, FS, OLD, pkt(TMT, data(500)))
  send(2600, OLD, FS, pkt(TFS, asconf(1, OLD, "\192\1", NEW)))      -- frame 6
  send(2081, FS, OLD, pkt(TMT, chunk(0x80, be32(1))))              -- frame 7
  send(11279, FS, OLD, pkt(TMT, data(501)))                        -- frame 8
  send(103424, NEW, FS, pkt(TFS, data(101)))                       -- frame 9
  send(103721, NEW, FS, pkt(TFS, asconf(2, NEW, "\192\4", NEW)))   -- frame 10
  send(103932, FS, NEW, pkt(TMT, chunk(0x80, be32(2))))            -- frame 11
  send(104939, FS, NEW, pkt(TMT, data(502)))                       -- frame 12
  send(105000, FS, NEW, pkt(TMT, data(501)))                       -- frame 13: retransmission
  send(105100, NEW, FS, pkt(TFS, sack(502)))                       -- frame 14
  send(105200, FS, NEW, pkt(TMT, data(502)))                       -- frame 15: duplicate
  c:finish()
  t.eq(#c.assocs, 1)
  t.eq(c.ann[6].asconf_ack, 7)
  t.eq(c.ann[7].asconf_request, 6)
  t.near(c.ann[7].asconf_rtt, -0.519, 1e-9, "negative RTT from the out-of-order stamp")
  t.eq(c.ann[7].asconf_results[1], "1 add_ip 192.168.0.102: implied_success")
  t.eq(#c.switches, 2)
  local mt, fs = c.switches[1], c.switches[2]
  t.eq(mt.frame, 9); t.eq(mt.kind, "planned"); t.eq(mt.last_old, 3)
  t.near(mt.interrupt, 103.424 - 1.136, 1e-9)
  t.eq(fs.frame, 12); t.eq(fs.last_old, 8); t.eq(fs.first_new, 12)
  t.near(fs.interrupt, 104.939 - 11.279, 1e-9, "Koh & Kim's 93 ms")
  t.eq(c.ann[13].events[1], "retransmission")
  t.eq(c.ann[15].events[2], "duplicate")
  t.eq(c.ann[12].switch.kind, "planned")
end)

t.test("unanswered ASCONF is flagged only after finish", function()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 1)))
  c:packet(2, 0, 1, OLD, FS, pkt(TFS, asconf(9, OLD, "\192\1", NEW)))
  t.eq(#c.ann[2].expert, 0)
  t.eq(c:unanswered(2, 0), 1, "unanswered so far")
  t.eq(c:unanswered(1, 0), 0)
  c:finish()
  t.eq(c.ann[2].expert[1][1], "warning")
  t.eq(c:unanswered(2, 0), 0, "finish() flagged it")
end)

t.test("an answered ASCONF is not unanswered", function()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 1)))
  c:packet(2, 0, 1, FS, OLD, pkt(TMT, init(2, TFS, 1)))
  c:packet(3, 0, 2, OLD, FS, pkt(TFS, asconf(9, OLD, "\192\1", NEW)))
  t.eq(c:unanswered(3, 0), 1)
  c:packet(4, 0, 3, FS, OLD, pkt(TMT, chunk(0x80, be32(9))))
  t.eq(c:unanswered(3, 0), 0)
  t.eq(c.ann[3].asconf_ack, 4)
end)

-- The analyzer's unanswered ASCONFs (Association::unanswered_asconf_frames):
-- per serial, on its last transmission; a copy sent after the serial was
-- answered is of an answered request.
local function warnings(c, frame)
  local n = 0
  for _, e in ipairs(c.ann[frame] and c.ann[frame].expert or {}) do
    if e[2] == Core.NO_ACK then n = n + 1 end
  end
  return n
end

t.test("a copy sent after its serial was answered, its own answer missing, is not unanswered", function()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 1)))
  c:packet(2, 0, 1, FS, OLD, pkt(TMT, init(2, TFS, 1)))
  c:packet(3, 0, 2, OLD, FS, pkt(TFS, asconf(9, OLD, "\192\1", NEW)))
  c:packet(4, 0, 3, FS, OLD, pkt(TMT, ack(9)))
  c:packet(5, 1, 0, OLD, FS, pkt(TFS, asconf(9, OLD, "\192\1", NEW)))   -- copy, never answered
  t.eq(c:unanswered(5, 0), 0, "not unanswered so far")
  c:finish()
  t.eq(c.ann[5].asconf_transmission, 2)
  t.eq(warnings(c, 3) + warnings(c, 5), 0, "no warning on either transmission")
end)

t.test("a request never answered: one warning, on its last transmission", function()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 1)))
  c:packet(2, 0, 1, FS, OLD, pkt(TMT, init(2, TFS, 1)))
  c:packet(3, 0, 2, OLD, FS, pkt(TFS, asconf(9, OLD, "\192\1", NEW)))
  c:packet(4, 1, 0, OLD, FS, pkt(TFS, asconf(9, OLD, "\192\1", NEW)))
  c:packet(5, 2, 0, OLD, FS, pkt(TFS, asconf(9, OLD, "\192\1", NEW)))
  t.eq(c:unanswered(3, 0), 0); t.eq(c:unanswered(5, 0), 1, "the last transmission so far")
  c:finish()
  t.eq(c.ann[5].asconf_transmission, 3)
  t.eq(warnings(c, 3), 0); t.eq(warnings(c, 4), 0)
  t.eq(warnings(c, 5), 1, "one warning, on frame 5")
end)

t.test("beyond 64 outstanding ASCONFs the oldest is forgotten, without a warning (the tracker's cap)", function()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 1)))
  c:packet(2, 0, 1, FS, OLD, pkt(TMT, init(2, TFS, 1)))
  -- 65 serials, none answered: frames 3..67.
  for i = 1, 65 do c:packet(2 + i, i, 0, OLD, FS, pkt(TFS, asconf(i, OLD, "\192\1", NEW))) end
  t.eq(#c.assocs[1].pending_asconf, 64)
  c:finish()
  t.eq(warnings(c, 3), 0, "serial 1 forgotten")
  t.eq(warnings(c, 4), 1); t.eq(warnings(c, 67), 1)
end)

local ADD, SETPRIM = "\192\1", "\192\4"

-- The handshake: endpoint 0 (the mobile node) at OLD, endpoint 1 at FS.
local function handshake()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 100)))
  c:packet(2, 0, 1, FS, OLD, pkt(TMT, init(2, TFS, 500)))
  return c
end

t.test("an ASCONF sent again after its ACK is a retransmission, its second ACK repeated", function()
  -- The correspondent's view: the ACK reached it, the mobile node sent
  -- the ASCONF again (its T-4 timer) and got a second ACK.
  local c = handshake()
  c:packet(3, 0, 2, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  c:packet(4, 0, 3, FS, OLD, pkt(TMT, ack(9)))
  c:packet(5, 0, 1000000, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  c:packet(6, 0, 1010000, FS, OLD, pkt(TMT, ack(9)))
  c:finish()
  t.eq(c.ann[3].asconf_transmission, 1)
  t.eq(c.ann[3].asconf_first_frame, 3)
  t.eq(#c.ann[3].expert, 0, "no note on the first transmission")
  t.eq(c.ann[5].asconf_transmission, 2, "retransmission 2")
  t.eq(c.ann[5].asconf_first_frame, 3)
  t.eq(c.ann[5].expert[1][1], "note")
  t.eq(c.ann[5].expert[1][2], "ASCONF retransmission 2 of serial 9 (first sent in frame 3)")
  t.eq(#c.ann[5].expert, 1, "answered: no warning")
  t.eq(c.ann[3].asconf_ack, 4)
  t.eq(c.ann[5].asconf_ack, 6)
  t.eq(c.ann[4].asconf_request, 3)
  t.eq(c.ann[4].asconf_repeated, nil, "the first answer")
  t.eq(c.ann[6].asconf_request, 5)
  t.eq(c.ann[6].asconf_repeated, true, "the serial was answered before")
  t.near(c.ann[6].asconf_rtt, 0.010, 1e-9)
  t.eq(c.ann[6].asconf_results[1], "9 add_ip 192.168.0.102: implied_success", "results still shown")
  local x = c.assocs[1].asconfs
  t.eq(#x, 1, "one exchange per serial")
  t.eq(x[1].frame, 3); t.eq(x[1].transmissions, 2); t.eq(x[1].last_frame, 5); t.eq(x[1].ack_frame, 6)
  local summary = c:summary()
  local _, lines = summary:gsub("ASCONF frame", "")
  t.eq(lines, 1, "the summary lists the exchange once")
  t.eq(summary:find("ASCONF frame 3 serial 9 from endpoint 0: add_ip 192.168.0.102, sent 2 times (last frame 5) -> ACK frame 6", 1, true) ~= nil, true, summary)
end)

t.test("an ASCONF sent twice before its ACK: the ACK answers the second", function()
  -- The mobile node's view: the first copy went unanswered.
  local c = handshake()
  c:packet(3, 0, 2, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  c:packet(4, 0, 1002000, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  t.eq(c:unanswered(3, 0), 0, "the pending request moved to the last transmission")
  t.eq(c:unanswered(4, 0), 1)
  c:packet(5, 0, 1012000, FS, OLD, pkt(TMT, ack(9)))
  c:finish()
  t.eq(c.ann[4].asconf_transmission, 2)
  t.eq(c.ann[4].asconf_first_frame, 3)
  t.eq(c.ann[4].expert[1][2], "ASCONF retransmission 2 of serial 9 (first sent in frame 3)")
  t.eq(c.ann[5].asconf_request, 4, "Karn: the last transmission")
  t.near(c.ann[5].asconf_rtt, 0.010, 1e-9)
  t.eq(c.ann[5].asconf_repeated, nil, "the first answer")
  t.eq(c.ann[3].asconf_ack, nil)
  t.eq(c.ann[4].asconf_ack, 5)
  t.eq(#c.ann[3].expert, 0, "no warning on the first copy")
  local x = c.assocs[1].asconfs
  t.eq(#x, 1); t.eq(x[1].transmissions, 2); t.eq(x[1].ack_frame, 5)
end)

t.test("an unanswered serial sent again is warned about on its last transmission", function()
  local c = handshake()
  c:packet(3, 0, 2, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  c:packet(4, 0, 1002, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  c:packet(5, 0, 3002, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  c:finish()
  t.eq(#c.ann[3].expert, 0)
  t.eq(#c.ann[4].expert, 1, "the retransmission note only")
  t.eq(c.ann[5].asconf_transmission, 3)
  t.eq(c.ann[5].expert[1][2], "ASCONF retransmission 3 of serial 9 (first sent in frame 3)")
  t.eq(c.ann[5].expert[2][2], Core.NO_ACK)
end)

t.test("a serial older than the sender's latest is a retransmission of unknown first frame", function()
  local c = handshake()
  c:packet(3, 0, 2, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  c:packet(4, 0, 3, FS, OLD, pkt(TMT, ack(9)))
  c:packet(5, 0, 4, OLD, FS, pkt(TFS, asconf(10, OLD, SETPRIM, NEW)))
  c:packet(6, 0, 5, OLD, FS, pkt(TFS, asconf(9, OLD, ADD, NEW)))
  c:packet(7, 0, 6, FS, OLD, pkt(TMT, ack(9)))
  t.eq(c.ann[5].asconf_transmission, 1)
  t.eq(c.ann[6].asconf_transmission, 2)
  t.eq(c.ann[6].asconf_first_frame, nil)
  t.eq(c.ann[6].expert[1][2], "ASCONF retransmission 2 of serial 9 (first transmission not known)")
  t.eq(c.ann[7].asconf_request, 6)
  t.eq(c.ann[7].asconf_repeated, nil, "only the latest serial's answers are remembered")
  t.eq(#c.assocs[1].asconfs, 2, "the copy joins serial 9's exchange")
  t.eq(c.assocs[1].asconfs[1].transmissions, 2)
end)

-- The correspondent (FS) sends DATA to the mobile node at OLD, which adds
-- NEW (and, with setprim, makes it the primary); the DATA to OLD times
-- out (sent again on its path) and new DATA goes to NEW.
local function moved_after_timeout(setprim)
  local c = handshake()
  local f = 2
  local function send(src, dst, bytes) f = f + 1; c:packet(f, 0, f * 1000, src, dst, bytes) end
  send(FS, OLD, pkt(TMT, data(500)))
  send(OLD, FS, pkt(TFS, asconf(1, OLD, ADD, NEW)))
  send(FS, OLD, pkt(TMT, ack(1)))
  if setprim then
    send(OLD, FS, pkt(TFS, asconf(2, OLD, SETPRIM, NEW)))
    send(FS, OLD, pkt(TMT, ack(2)))
  end
  send(FS, OLD, pkt(TMT, data(500)))   -- a T3 expiry on the old path
  send(FS, NEW, pkt(TMT, data(501)))   -- the switch
  return c, send
end

t.test("a timed-out old path makes a failover unless SET-PRIMARY moved the DATA", function()
  local c = moved_after_timeout(false)
  t.eq(#c.switches, 1)
  t.eq(c.switches[1].kind, "failover", "ADD-IP alone does not move the peer's DATA")
  c = moved_after_timeout(true)
  t.eq(c.switches[1].kind, "planned", "asked to move by SET-PRIMARY")
end)

t.test("back to a path left by a failover is a return, whatever ASCONF came before", function()
  local c, send = moved_after_timeout(false)
  -- The mobile node makes OLD its primary again: it would be planned.
  send(OLD, FS, pkt(TFS, asconf(3, OLD, SETPRIM, OLD)))
  send(FS, NEW, pkt(TMT, ack(3)))
  send(FS, OLD, pkt(TMT, data(502)))
  t.eq(#c.switches, 2)
  t.eq(c.switches[2].kind, "return")
end)

local function hb(kind, info) return chunk(kind, "\0\1\0\8" .. info) end

t.test("a switch to a path that had an error is a return, whatever ASCONF came before", function()
  -- With the analyzer's default thresholds (PFMR 0) one error makes a
  -- path potentially failed: here an unanswered HEARTBEAT on FS -> NEW,
  -- once a HEARTBEAT ACK has confirmed NEW (RFC 9260 §5.4).
  local c = handshake()
  c:packet(3, 0, 3000, FS, OLD, pkt(TMT, data(500)))
  c:packet(4, 0, 4000, OLD, FS, pkt(TFS, asconf(1, OLD, ADD, NEW)))
  c:packet(5, 0, 5000, FS, OLD, pkt(TMT, ack(1)))
  c:packet(6, 0, 6000, FS, NEW, pkt(TMT, hb(4, "cccc")))
  c:packet(7, 0, 7000, NEW, FS, pkt(TFS, hb(5, "cccc")))     -- NEW confirmed
  c:packet(8, 0, 8000, FS, NEW, pkt(TMT, hb(4, "aaaa")))
  c:packet(9, 0, 9000, FS, NEW, pkt(TMT, hb(4, "bbbb")))     -- the first went unanswered
  c:packet(10, 0, 10000, NEW, FS, pkt(TFS, hb(5, "aaaa")))   -- too late: not matched
  c:packet(11, 0, 11000, NEW, FS, pkt(TFS, hb(5, "bbbb")))
  local path = c.views[6].path
  t.eq(c.assocs[1].failed_paths[path], 9, "the path's first error")
  t.eq(c.ann[9].events[2], "path_potentially_failed")
  t.eq(c.ann[10].hb_request, nil, "as the analyzer: an unanswered HEARTBEAT is not matched later")
  t.eq(c.ann[11].hb_request, 9)
  t.eq(table.concat(c.ann[11].events, ","), "heartbeat_ack,error_counter_cleared,path_active")
  t.eq(c.ann[11].expert[1][2], "path 2 (192.168.0.100 -> 192.168.0.102) error counter cleared from 1 by a HEARTBEAT ACK")
  t.eq(c.ann[11].path_states[1][1], "active")
  c:packet(12, 0, 12000, OLD, FS, pkt(TFS, asconf(2, OLD, SETPRIM, NEW)))
  c:packet(13, 0, 13000, FS, OLD, pkt(TMT, ack(2)))
  c:packet(14, 0, 14000, FS, NEW, pkt(TMT, data(501)))
  t.eq(c.switches[1].kind, "return", "not planned")
  -- Without the error the same switch is planned.
  c = handshake()
  c:packet(3, 0, 3000, FS, OLD, pkt(TMT, data(500)))
  c:packet(4, 0, 4000, OLD, FS, pkt(TFS, asconf(1, OLD, ADD, NEW)))
  c:packet(5, 0, 5000, FS, OLD, pkt(TMT, ack(1)))
  c:packet(6, 0, 6000, FS, NEW, pkt(TMT, hb(4, "aaaa")))
  c:packet(7, 0, 7000, NEW, FS, pkt(TFS, hb(5, "aaaa")))
  c:packet(8, 0, 8000, FS, NEW, pkt(TMT, data(501)))
  t.eq(c.switches[1].kind, "planned")
end)

t.test("errors on a path to an address never confirmed change no state", function()
  -- NEW added by ASCONF and never confirmed: Linux counts the unanswered
  -- HEARTBEATs to it but leaves it UNCONFIRMED, with no notification
  -- (the analyzer's PathState::record_error).
  local c = handshake()
  c:packet(3, 0, 3000, FS, OLD, pkt(TMT, data(500)))
  c:packet(4, 0, 4000, OLD, FS, pkt(TFS, asconf(1, OLD, ADD, NEW)))
  c:packet(5, 0, 5000, FS, OLD, pkt(TMT, ack(1)))
  for i = 0, 7 do
    c:packet(6 + i, 0, 6000 + 1000 * i, FS, NEW, pkt(TMT, hb(4, "hb" .. i .. "x")))
  end
  local p = c.assocs[1].paths[c.views[6].path + 1]
  t.eq(p.errors, 7, "seven HEARTBEATs went unanswered")
  t.eq(p.active, true)
  t.eq(p.pf, false)
  t.eq(c.assocs[1].failed_paths[p.id], nil, "no potentially failed or inactive state")
  -- Its first HEARTBEAT ACK confirms it and clears the counter; the next
  -- errors count as for any path.
  c:packet(14, 0, 14000, NEW, FS, pkt(TFS, hb(5, "hb7x")))
  t.eq(table.concat(c.ann[14].events, ","), "heartbeat_ack,error_counter_cleared")
  c:packet(15, 0, 15000, FS, NEW, pkt(TMT, hb(4, "hb8x")))
  c:packet(16, 0, 16000, FS, NEW, pkt(TMT, hb(4, "hb9x")))
  t.eq(c.ann[16].events[2], "path_potentially_failed")
end)

t.test("the mobile node moving its own source after ADD-IP is planned despite a timeout", function()
  local c = handshake()
  c:packet(3, 0, 3000, OLD, FS, pkt(TFS, data(100)))
  c:packet(4, 0, 4000, OLD, FS, pkt(TFS, asconf(1, OLD, ADD, NEW)))
  c:packet(5, 0, 5000, FS, OLD, pkt(TMT, ack(1)))
  c:packet(6, 0, 6000, OLD, FS, pkt(TFS, data(100)))   -- a T3 expiry
  c:packet(7, 0, 7000, NEW, FS, pkt(TFS, data(101)))
  t.eq(c.switches[1].kind, "planned")
  -- The same move by the peer of the mobile node would be a failover: see above.
end)


t.test("a TSN reported in a gap block and sent again is a duplicate", function()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 100)))
  c:packet(2, 0, 1, FS, OLD, pkt(TMT, init(2, TFS, 500)))
  for k = 0, 3 do c:packet(3 + k, 0, 2 + k, OLD, FS, pkt(TFS, data(100 + k))) end
  c:packet(7, 0, 10, FS, OLD, pkt(TMT, sack_gaps(100, { { 2, 3 } })))  -- 102, 103 received
  c:packet(8, 0, 20, OLD, FS, pkt(TFS, data(102)))
  c:packet(9, 0, 21, OLD, FS, pkt(TFS, data(101)))
  t.eq(c.ann[8].events[2], "duplicate", "102 was in a gap block")
  t.eq(c.ann[9].events[1], "retransmission")
  t.eq(c.ann[9].events[2], "path_potentially_failed", "101 not a duplicate: a T3 expiry")
  t.eq(#c.ann[9].events, 2)
  c:packet(10, 0, 30, FS, OLD, pkt(TMT, sack_gaps(103, {})))
  c:packet(11, 0, 31, OLD, FS, pkt(TFS, data(101)))
  t.eq(c.ann[11].events[2], "duplicate", "101 cumulatively acked")
end)

-- The inferred path state (docs/metrics.md, "Inferred path state"): the
-- correspondent (FS) sends DATA to the mobile node at OLD (path 1), the
-- mobile node's SACKs come back on path 0. ms: packet times in ms.
local function data_sender(opts)
  local c = Core.new(opts)
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 100)))
  c:packet(2, 0, 1000000, FS, OLD, pkt(TMT, init(2, TFS, 500)))
  local f = 2
  local function send(ms, src, dst, bytes)
    f = f + 1
    c:packet(f, math.floor(ms / 1000), (ms % 1000) * 1000000, src, dst, bytes)
    return f
  end
  return c, send
end

local function events(c, frame)
  local a = c.ann[frame]
  return a and table.concat(a.events, ",") or ""
end

-- The texts of the expert infos of `frame` of `kind` (sctpho.lua's E).
local function experts(c, frame, kind)
  local out = {}
  for _, x in ipairs(c.ann[frame] and c.ann[frame].expert or {}) do
    if x[3] == kind then out[#out + 1] = x[2] end
  end
  return out
end

local PATH1 = "path 1 (192.168.0.100 -> 192.168.0.101)"

t.test("a path is potentially failed at its first T3 expiry and inactive past Path.Max.Retrans", function()
  local c, send = data_sender()
  send(10, FS, OLD, pkt(TMT, data(500)))
  -- Each copy times out: one T3 expiry each (RTO doubling).
  local frames, at = {}, 10
  for k = 1, 6 do
    at = at + 1000 * 2 ^ (k - 1)
    frames[k] = send(at, FS, OLD, pkt(TMT, data(500)))
  end
  t.eq(events(c, frames[1]), "retransmission,path_potentially_failed", "PFMR 0: the first expiry")
  t.eq(experts(c, frames[1], "potentially_failed")[1], PATH1 .. " potentially failed: error count 1 exceeds PFMR 0")
  t.eq(c.ann[frames[1]].expert[1][1], "warning")
  t.eq(c.ann[frames[1]].path_states[1][1], "potentially_failed")
  t.eq(c.ann[frames[1]].path_states[1][2], 1)
  for k = 2, 5 do t.eq(events(c, frames[k]), "retransmission", "expiry " .. k) end
  t.eq(events(c, frames[6]), "retransmission,path_inactive", "the sixth expiry: count 6 > PMR 5")
  t.eq(experts(c, frames[6], "inactive")[1], PATH1 .. " inactive: error count 6 exceeds Path.Max.Retrans 5")
  t.eq(c.ann[frames[6]].path_states[1][1], "inactive")
  t.eq(c.assocs[1].failed_paths[1], frames[1], "failed from the first transition")
  local p = c.assocs[1].paths[2]
  t.eq(p.errors, 6); t.eq(p.active, false); t.eq(p.pf, false)
end)

t.test("one error per T3 expiry however many packets its retransmissions take", function()
  local c, send = data_sender({ pmr = 1, pf_retrans = false })
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(11, FS, OLD, pkt(TMT, data(501)))
  send(12, FS, OLD, pkt(TMT, data(502)))
  local first = send(1010, FS, OLD, pkt(TMT, data(500)))
  send(1020, FS, OLD, pkt(TMT, data(501)))     -- the same expiry, held back by the window
  send(1300, FS, OLD, pkt(TMT, data(502)))     -- still the same: sent before it
  local p = c.assocs[1].paths[2]
  t.eq(p.errors, 1, "one expiry")
  t.eq(p.last_expiry_frame, first)
  t.eq(events(c, first), "retransmission", "PF off: nothing at the first")
  local second = send(3010, FS, OLD, pkt(TMT, data(500)))   -- its own copy timed out
  t.eq(events(c, second), "retransmission,path_inactive", "count 2 > PMR 1")
end)

t.test("a SACK newly acknowledging DATA last sent on the path clears its counter", function()
  local c, send = data_sender()
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(11, FS, OLD, pkt(TMT, data(501)))
  local e1 = send(1010, FS, OLD, pkt(TMT, data(500)))
  send(3010, FS, OLD, pkt(TMT, data(500)))
  local ack = send(3100, OLD, FS, pkt(TFS, sack(500)))
  t.eq(events(c, ack), "error_counter_cleared,path_active")
  t.eq(experts(c, ack, "counter_cleared")[1], PATH1 .. " error counter cleared from 2 by a SACK")
  t.eq(experts(c, ack, "active")[1], PATH1 .. " active again (was potentially failed)")
  t.eq(c.ann[ack].path_states[1][1], "active")
  t.eq(c.ann[ack].path_states[1][2], 1, "the path whose state changed, not the SACK's")
  t.eq(c.views[ack].path, 0)
  t.eq(c.assocs[1].failed_paths[1], e1, "failed earlier")
  -- A SACK that acknowledges nothing new clears nothing. 501, outstanding
  -- at the first expiry, belongs to it however late it is sent again; the
  -- next expiry (of 502, sent after the last one) makes the path
  -- potentially failed again.
  local again = send(3200, OLD, FS, pkt(TFS, sack(500)))
  t.eq(events(c, again), "")
  send(3300, FS, OLD, pkt(TMT, data(502)))
  t.eq(events(c, send(4010, FS, OLD, pkt(TMT, data(501)))), "retransmission")
  t.eq(c.assocs[1].paths[2].errors, 0)
  local e3 = send(4300, FS, OLD, pkt(TMT, data(502)))
  t.eq(events(c, e3), "retransmission,path_potentially_failed")
  t.eq(c.assocs[1].paths[2].errors, 1)
end)

t.test("with the potentially-failed state off (or PFMR >= PMR) only inactive is inferred", function()
  for _, opts in ipairs({ { pf_retrans = false, pmr = 2 }, { pf_retrans = 2, pmr = 2 } }) do
    local c, send = data_sender(opts)
    send(10, FS, OLD, pkt(TMT, data(500)))
    local f1 = send(1010, FS, OLD, pkt(TMT, data(500)))
    local f2 = send(3010, FS, OLD, pkt(TMT, data(500)))
    local f3 = send(7010, FS, OLD, pkt(TMT, data(500)))
    t.eq(events(c, f1), "retransmission")
    t.eq(events(c, f2), "retransmission")
    t.eq(events(c, f3), "retransmission,path_inactive")
    t.eq(experts(c, f3, "inactive")[1], PATH1 .. " inactive: error count 3 exceeds Path.Max.Retrans 2")
    local ack = send(7100, OLD, FS, pkt(TFS, sack(500)))
    t.eq(experts(c, ack, "active")[1], PATH1 .. " active again (was inactive)")
  end
  -- PFMR 1: potentially failed at the second error.
  local c, send = data_sender({ pf_retrans = 1 })
  send(10, FS, OLD, pkt(TMT, data(500)))
  t.eq(events(c, send(1010, FS, OLD, pkt(TMT, data(500)))), "retransmission")
  t.eq(events(c, send(3010, FS, OLD, pkt(TMT, data(500)))), "retransmission,path_potentially_failed")
end)

t.test("a count equal to Path.Max.Retrans is not potentially failed (Linux's strike)", function()
  -- sctp_do_8_2_transport_strike: PF needs pf_retrans < count < pathmaxrxt.
  -- PMR 1 with the default PFMR 0, and PMR 2 with PFMR 1: the path goes
  -- from active straight to inactive (the analyzer's
  -- a_count_equal_to_path_max_retrans_is_not_potentially_failed).
  for _, opts in ipairs({ { pmr = 1 }, { pmr = 2, pf_retrans = 1 } }) do
    local c, send = data_sender(opts)
    send(10, FS, OLD, pkt(TMT, data(500)))
    local at, last = 10, nil
    for k = 1, opts.pmr do
      at = at + 1000 * 2 ^ (k - 1)
      last = send(at, FS, OLD, pkt(TMT, data(500)))
      t.eq(events(c, last), "retransmission", "PMR " .. opts.pmr .. " expiry " .. k)
    end
    t.eq(c.assocs[1].paths[2].pf, false)
    last = send(at + 1000 * 2 ^ opts.pmr, FS, OLD, pkt(TMT, data(500)))
    t.eq(events(c, last), "retransmission,path_inactive", "PMR " .. opts.pmr)
    t.eq(c.assocs[1].failed_paths[1], last, "never potentially failed before")
  end
end)

-- Addresses and the peer's list of them (Linux's transport_addr_list; the
-- analyzer's track::asconf tests): the mobile node (endpoint 0) at A1
-- listing A1, A2, A3 in its INIT, the correspondent at C.
local A1, A2, A3, C = "\10\0\0\1", "\10\0\0\2", "\10\0\0\3", "\10\0\1\1"
local DEL = "\192\2"
local function listing_handshake(opts, listed)
  local c = Core.new(opts)
  local params = {}
  for _, a in ipairs(listed) do params[#params + 1] = ap(a) end
  c:packet(1, 0, 0, A1, C, pkt(0, chunk(1, be32(TMT) .. "\0\1\0\0\0\10\0\10" .. be32(100) .. table.concat(params))))
  c:packet(2, 0, 1000000, C, A1, pkt(TMT, init(2, TFS, 500)))
  local f = 2
  local function send(us, src, dst, bytes)
    f = f + 1
    c:packet(f, math.floor(us / 1000000), (us % 1000000) * 1000, src, dst, bytes)
    return f
  end
  return c, send
end

local function path_to(c, sender, dst)
  for _, p in ipairs(c.assocs[1].paths) do
    if p.sender == sender and p.dst == dst then return p end
  end
end

t.test("a deleted active destination is replaced by the first address added", function()
  -- The correspondent's paths to A3 and A2 were first used in that order,
  -- its list is A1, A2, A3: the SACK for DATA 500, outstanding to A1 when
  -- A1 was deleted, clears A2's error counter (Linux's sctp_assoc_rm_peer
  -- moved it to A2), not A3's.
  local c, send = listing_handshake({ pf_retrans = false }, { A1, A2, A3 })
  local us = 10000
  for _, x in ipairs({ { A3, "3" }, { A2, "2" } }) do
    local to, tag = x[1], x[2]
    send(us, C, to, pkt(TMT, hb(4, tag .. "aaa")))
    send(us + 100, to, C, pkt(TFS, hb(5, tag .. "aaa")))
    send(us + 1000, C, to, pkt(TMT, hb(4, tag .. "bbb")))
    send(us + 2000, C, to, pkt(TMT, hb(4, tag .. "ccc")))
    us = us + 10000
  end
  send(us, C, A1, pkt(TMT, data(500)))
  send(us + 100, A2, C, pkt(TFS, asconf(1, A2, DEL, A1)))
  send(us + 200, C, A2, pkt(TMT, ack(1)))
  local f = send(us + 300, A2, C, pkt(TFS, sack(500)))
  local to_a2, to_a3 = path_to(c, 1, A2), path_to(c, 1, A3)
  t.eq(to_a3.id < to_a2.id, true, "the path to A3 came first")
  t.eq(to_a2.errors, 0); t.eq(to_a3.errors, 1)
  t.eq(experts(c, f, "counter_cleared")[1],
    "path " .. to_a2.id .. " (10.0.1.1 -> 10.0.0.2) error counter cleared from 1 by a SACK")
end)

t.test("an address added again is a new transport", function()
  -- C -> A2 inactive (PMR 1), A2 deleted and added again: active, error
  -- count 0, unconfirmed, and the HEARTBEAT outstanding before the
  -- deletion is no error of the new transport.
  local c, send = listing_handshake({ pmr = 1, pf_retrans = false }, { A1, A2 })
  send(10000, C, A2, pkt(TMT, hb(4, "h0xx")))
  send(10100, A2, C, pkt(TFS, hb(5, "h0xx")))
  for i = 1, 3 do send(10000 + 10000 * i, C, A2, pkt(TMT, hb(4, "h" .. i .. "xx"))) end
  local p = path_to(c, 1, A2)
  t.eq(p.active, false); t.eq(p.errors, 2)
  send(50000, A1, C, pkt(TFS, asconf(1, A1, DEL, A2)))
  send(50100, C, A1, pkt(TMT, ack(1)))
  send(60000, A1, C, pkt(TFS, asconf(2, A1, ADD, A2)))
  send(60100, C, A1, pkt(TMT, ack(2)))
  t.eq(p.active, true); t.eq(p.pf, false); t.eq(p.errors, 0)
  t.eq(c.assocs[1].ep[0].conf[A2].unconfirmed, true)
  send(70000, C, A2, pkt(TMT, hb(4, "h4xx")))
  t.eq(p.errors, 0, "its first HEARTBEAT finds none outstanding")
end)

t.test("an ADD-IP of an address in use leaves it confirmed", function()
  -- From mid-stream: the correspondent sends to A1 and A2 (taken as
  -- confirmed); ADD-IP of A2 finds its transport (Linux's
  -- sctp_assoc_add_peer returns it unchanged); ADD-IP of A3, so far only
  -- the ASCONF's source, makes a new, unconfirmed one.
  local c = Core.new()
  local f = 0
  local function send(src, dst, bytes) f = f + 1; c:packet(f, 0, f * 1000, src, dst, bytes) end
  send(A1, C, pkt(TFS, data(100)))
  send(C, A1, pkt(TMT, sack(100), data(500)))
  send(A1, C, pkt(TFS, sack(500)))
  send(C, A2, pkt(TMT, data(501)))
  send(A2, C, pkt(TFS, sack(501)))
  send(A3, C, pkt(TFS, asconf(1, A3, ADD, A2)))
  send(C, A2, pkt(TMT, ack(1)))
  send(A3, C, pkt(TFS, asconf(2, A3, ADD, A3)))
  send(C, A3, pkt(TMT, ack(2)))
  local conf = c.assocs[1].ep[0].conf
  t.eq(conf[A2] == nil or not conf[A2].unconfirmed, true, "A2 was in use")
  t.eq(conf[A3].unconfirmed, true, "A3 is new to the correspondent")
end)

t.test("the receiver-silence rule is not applied in the sender's own capture", function()
  -- The analyzer's the_receiver_silence_rule_is_not_applied_in_the_senders_own_capture:
  -- the mobile node adds A2 and asks nothing more; the correspondent's
  -- DATA to A1 every 10 ms stops for 200 ms, then goes to A2 without a T3
  -- expiry.
  local function kind_at(point)
    local c, send = listing_handshake({ capture_point = point }, { A1 })
    for k = 0, 3 do send(10000 + 10000 * k, C, A1, pkt(TMT, data(500 + k))) end
    send(45000, A2, C, pkt(TFS, asconf(1, A2, ADD, A2)))
    send(45100, C, A1, pkt(TMT, ack(1)))
    send(240000, C, A2, pkt(TMT, data(504)))
    t.eq(#c.switches, 1)
    return c.switches[1].kind
  end
  t.eq(kind_at("cn"), "planned", "at the sender: a pause, and the ADD-IP")
  t.eq(kind_at("mn"), "failover", "at the receiver")
  t.eq(kind_at(nil), "failover", "not said")
end)

local function sack_dups(cum, dups)
  local d = {}
  for _, x in ipairs(dups) do d[#d + 1] = be32(x) end
  return chunk(3, be32(cum) .. "\0\1\0\0" .. be16(0) .. be16(#dups) .. table.concat(d))
end

t.test("a duplicate report of a timeout's only retransmission shows its expiry spurious", function()
  local c, send = data_sender()
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(11, FS, OLD, pkt(TMT, data(501)))
  local expiry = send(1010, FS, OLD, pkt(TMT, data(500)))
  send(1011, FS, OLD, pkt(TMT, data(501)))
  local report = send(1100, OLD, FS, pkt(TFS, sack_dups(501, { 501 })))
  t.eq(events(c, report), "duplicate_report,spurious_expiry,error_counter_cleared,path_active")
  t.eq(experts(c, report, "spurious_expiry")[1],
    "spurious T3 expiry of " .. PATH1 .. " in frame " .. expiry .. ": TSN 501 was reported as a duplicate")
  t.eq(c.ann[report].expert[1][1], "note")
  -- Once per expiry; a TSN sent three times says nothing.
  send(1200, FS, OLD, pkt(TMT, data(502)))
  send(2200, FS, OLD, pkt(TMT, data(502)))
  send(4200, FS, OLD, pkt(TMT, data(502)))
  local three = send(4300, OLD, FS, pkt(TFS, sack_dups(502, { 502 })))
  t.eq(#experts(c, three, "spurious_expiry"), 0, "three copies: which two arrived is not known")
end)

t.test("an expiry held back past a clear is not charged with the sender's RTO.Max", function()
  -- The analyzer's an_expiry_held_back_past_a_clear_is_not_charged
  -- (bokor-failover, RTO.Min = RTO.Max = 200 ms, PMR 2), on the path
  -- directly: ctx stands for the packet under analysis.
  local function run(rto_max_ms)
    local c = data_sender({ pmr = 2, pf_retrans = false, rto_max_ms = rto_max_ms })
    local a = c.assocs[1]
    local p = a.paths[2]
    local frame = 10
    local function at(ms) frame = frame + 1; return { a = a, frame = frame, t = ms * 1000000 } end
    local ms = function(m) return m * 1000000 end
    c:path_success(at(97), p, "sack")
    t.eq(c:path_timeout(at(307), p, ms(0)), true)
    t.eq(p.errors, 1)
    c:path_success(at(587), p, "sack")
    t.eq(c:path_timeout(at(587), p, ms(348)), true, "a new expiry")
    return c, p, at, ms
  end
  local c, p, at, ms = run(200)
  t.eq(p.errors, 0, "it timed out before the clear")
  c:path_timeout(at(797), p, ms(587))
  c:path_timeout(at(1008), p, ms(797))
  local third = at(1217)
  c:path_timeout(third, p, ms(1008))
  t.eq(p.errors, 3)
  t.eq(events(c, third.frame), "path_inactive")
  t.eq(c:path_timeout(at(1437), p, ms(589)), false, "a TSN of an earlier expiry")
  -- With the default RTO.Max (60 s) it counts.
  _, p = run(nil)
  t.eq(p.errors, 1)
  -- Nor does the rule apply when an acknowledgement after the send may
  -- have restarted the timer.
  c = data_sender({ pmr = 2, pf_retrans = false, rto_max_ms = 200 })
  p = c.assocs[1].paths[2]
  local ctx = function(frame, m) return { a = c.assocs[1], frame = frame, t = m * 1000000 } end
  c:path_success(ctx(20, 500), p, "sack")
  c:path_success(ctx(21, 587), p, "sack")
  c:path_timeout(ctx(22, 700), p, 348000000)
  t.eq(p.errors, 1)
end)

t.test("a packet inside a larger string reads as the string alone", function()
  local bytes = pkt(TFS, asconf(9, OLD, "\192\1", NEW))
  local a, b = Core.new(), Core.new()
  for _, x in ipairs({ a, b }) do x:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 1))) end
  a:packet(2, 0, 1, OLD, FS, bytes)
  b:packet(2, 0, 1, OLD, FS, "junk" .. bytes .. "more", 5, 4 + #bytes)
  t.eq(b.ann[2].asconf_serial, a.ann[2].asconf_serial)
  t.eq(b.ann[2].events[1], "asconf_add_ip")
  t.eq(b.views[2], b.views[1], "one view per path and sender")
  t.eq(b.views[2].src_text, "192.168.0.101")
  t.eq(b.views[2].direction, "0>1")
end)

t.test("equal tags on equal ports: the addresses tell the directions apart", function()
  local A1, A2, B1, B2 = "\10\0\0\1", "\10\0\0\2", "\10\0\1\1", "\10\0\1\2"
  local T = 0x15fb59e2
  local function check(c, want)
    t.eq(#c.assocs, 1)
    for f, d in ipairs(want) do
      t.eq(c.views[f].direction, d, "frame " .. f)
      for _, e in ipairs(c.ann[f] and c.ann[f].events or {}) do
        t.eq(e ~= "retransmission", true, "frame " .. f .. " retransmission")
      end
    end
  end
  -- Mid-stream, both peers multihomed: a new source address is placed by
  -- its destination, known to one endpoint.
  local c = Core.new()
  c:packet(1, 0, 1, A1, B1, pkt(T, data(10)))
  c:packet(2, 0, 2, B1, A1, pkt(T, sack(10), data(70)))
  c:packet(3, 0, 3, A1, B1, pkt(T, sack(70)))
  c:packet(4, 0, 4, A2, B1, pkt(T, data(11)))
  c:packet(5, 0, 5, B2, A1, pkt(T, sack(11)))
  c:packet(6, 0, 6, B2, A2, pkt(T, data(71)))
  c:packet(7, 0, 7, A2, B2, pkt(T, sack(71)))
  check(c, { "0>1", "1>0", "0>1", "0>1", "1>0", "1>0", "0>1" })
  -- From the INIT, Initiate Tags equal by chance; an ABORT with the T bit
  -- (its sender's own tag) from the INIT's receiver.
  c = Core.new()
  c:packet(1, 0, 1, A1, B1, pkt(0, init(1, T, 100)))
  c:packet(2, 0, 2, B1, A1, pkt(T, init(2, T, 500)))
  c:packet(3, 0, 3, A1, B1, pkt(T, chunk(10, "\1\2\3\4")))
  c:packet(4, 0, 4, B1, A1, pkt(T, chunk(11, "")))
  c:packet(5, 0, 5, A1, B1, pkt(T, data(100)))
  c:packet(6, 0, 6, B1, A1, pkt(T, sack(100), data(500)))
  c:packet(7, 0, 7, A1, B1, pkt(T, sack(500), data(101)))
  c:packet(8, 0, 8, B1, A1, pkt(T, "\6\1\0\4"))
  check(c, { "0>1", "1>0", "0>1", "1>0", "0>1", "1>0", "0>1", "1>0" })
end)

t.test("garbage never raises", function()
  local c = Core.new()
  for i = 1, 200 do
    local junk = {}
    for k = 1, (i * 7) % 90 do junk[k] = string.char((i * 31 + k * 17) % 256) end
    c:packet(i, 0, i, OLD, FS, table.concat(junk))
  end
  t.eq(c.malformed > 0, true)
end)


-- SFR-CACC as Linux runs it (the analyzer's
-- sfr_cacc_skips_the_old_destination_until_it_is_deleted; koh-kim-2-lan,
-- SET-PRIMARY 250 ms after the cut): FS's DATA 501 and 502 to the cut OLD
-- address get no miss indication while the changeover to NEW is active
-- (rule 3.1 f: SACKs acknowledge only NEW's DATA, by gap blocks); once
-- DELETE-IP removed OLD they have no destination, and three SACKs make
-- 501's copy a fast retransmission, not a T3 expiry of path 1.
t.test("SFR-CACC skips the old destination until it is deleted", function()
  local c, send = data_sender()
  local DEL = "\192\2"
  send(10, FS, OLD, pkt(TMT, data(500)))
  send(11, OLD, FS, pkt(TFS, sack(500)))
  send(20, FS, OLD, pkt(TMT, data(501)))
  send(21, FS, OLD, pkt(TMT, data(502)))
  send(30, NEW, FS, pkt(TFS, asconf(1, NEW, ADD, NEW)))
  send(31, FS, NEW, pkt(TMT, ack(1)))
  send(40, NEW, FS, pkt(TFS, asconf(2, NEW, SETPRIM, NEW)))
  send(41, FS, NEW, pkt(TMT, ack(2)))
  for k = 0, 9 do send(50 + k, FS, NEW, pkt(TMT, data(503 + k))) end
  for e = 3, 6 do send(60 + e, NEW, FS, pkt(TFS, sack_gaps(500, { { 3, e } }))) end
  local d = c.assocs[1].dir[1]
  local r = d.rec[501]
  t.eq(type(r) == "table" and r.miss or 0, 0, "rule 3.1 f: no miss indication")
  send(70, NEW, FS, pkt(TFS, asconf(3, NEW, DEL, OLD)))
  send(71, FS, NEW, pkt(TMT, ack(3)))
  for e = 7, 9 do send(80 + e, NEW, FS, pkt(TFS, sack_gaps(500, { { 3, e } }))) end
  t.eq(d.rec[501].miss, 3, "no destination: three miss indications")
  send(90, FS, NEW, pkt(TMT, data(501)))
  t.eq(c.assocs[1].paths[2].errors, 0, "a fast retransmission: no T3 expiry charged to FS -> OLD")
  t.eq(d.rec[501].fast_done, true)
end)

return t
