-- Unit tests for the TSN ledger of sctpho_core (the analyzer's
-- track::tsn tests of the same names): stale SACKs, reneging, the
-- primary through a failover, and a T3 expiry's reset of miss
-- indications. Built from literal SCTP bytes, as test_core.lua.
local t = require("tests.harness")
local Core = require("sctpho_core")
local B = require("tests.bytes")
local be32, be16, chunk, data, sack_gaps, init, ap, asconf, ack, pkt = B.be32, B.be16, B.chunk, B.data, B.sack_gaps, B.init, B.ap, B.asconf, B.ack, B.pkt

local ADD, SETPRIM = "\192\1", "\192\4"

local FS, OLD, NEW = "\192\168\0\100", "\192\168\0\101", "\192\168\0\102"
local TMT, TFS = 0x11111111, 0x22222222

-- FS sends DATA to the mobile node at OLD; its SACKs come back.
local function data_sender()
  local c = Core.new()
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

local function has(c, frame, event)
  for _, e in ipairs(c.ann[frame] and c.ann[frame].events or {}) do if e == event then return true end end
  return false
end

-- TSN tsn's miss indications now (a T3 expiry's reset is read lazily).
local function misses(c, d, tsn)
  return Core.misses(c.assocs[1], d, tsn)
end

t.test("a stale SACK is discarded", function()
  local c, send = data_sender()
  for k = 1, 6 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  send(20, OLD, FS, pkt(TFS, sack_gaps(502, {})))
  -- Cum 501 after 502: applied, its block (TSN 503) would be placed from
  -- 502 and acknowledge 504.
  send(21, OLD, FS, pkt(TFS, sack_gaps(501, { { 2, 2 } })))
  local d = c.assocs[1].dir[1]
  t.eq(d.stale_sacks, 1)
  t.eq(d.cum, 502)
  local f = send(400, FS, OLD, pkt(TMT, data(504)))
  t.eq(has(c, f, "duplicate"), false, "504 was never acknowledged")
  -- Exactly 2^31 away: Linux's TSN_lt calls it less, stale.
  send(401, OLD, FS, pkt(TFS, sack_gaps((502 + 2 ^ 31) % 2 ^ 32, {})))
  t.eq(d.stale_sacks, 2)
  t.eq(d.cum, 502)
end)

t.test("reneged TSNs are outstanding again", function()
  local c, send = data_sender()
  for k = 1, 8 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  send(20, OLD, FS, pkt(TFS, sack_gaps(501, { { 2, 2 }, { 4, 5 } })))
  send(21, OLD, FS, pkt(TFS, sack_gaps(501, { { 4, 5 } })))
  local f = send(22, FS, OLD, pkt(TMT, data(503)))
  t.eq(has(c, f, "duplicate"), false, "503 reneged")
  -- A SHUTDOWN's cumulative ack reneges 505 and 506 too.
  send(23, OLD, FS, pkt(TFS, chunk(7, be32(501))))
  local d = c.assocs[1].dir[1]
  t.eq(d.rec[505].gap, false)
  send(24, OLD, FS, pkt(TFS, sack_gaps(501, { { 6, 7 }, { 4, 6 } })))
  t.eq(d.rec[505].gap, true, "blocks out of order still cover it")
  -- 502 got one indication from the first SACK, lost to the T3 expiry
  -- 503's copy was (a timeout's), and one from this SACK (newly acking
  -- 505..508); 503's copy one.
  t.eq(misses(c, d, 502), 1)
  t.eq(misses(c, d, 503), 1)
end)

t.test("overlapping gap blocks are merged for the renege check", function()
  -- Blocks 2-5 and 4-7, out of order, and 9-9 are kept as 502..507 and
  -- 509 (the analyzer's merge_ranges): a binary search alone then tells
  -- whether a TSN is still covered (a scan of every block per reneged TSN
  -- made a SACK cost gap-acked TSNs x blocks).
  local c, send = data_sender()
  for k = 1, 10 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  send(20, OLD, FS, pkt(TFS, sack_gaps(500, { { 4, 7 }, { 2, 5 }, { 9, 9 } })))
  local d = c.assocs[1].dir[1]
  t.eq(#d.gap_ranges, 2)
  t.eq(d.gap_ranges[1][1], 502); t.eq(d.gap_ranges[1][2], 5)
  t.eq(d.gap_ranges[2][1], 509); t.eq(d.gap_ranges[2][2], 0)
  -- Only 509 reneged.
  send(21, OLD, FS, pkt(TFS, sack_gaps(500, { { 2, 3 }, { 3, 7 } })))
  t.eq(d.rec[505].gap, true); t.eq(d.rec[507].gap, true); t.eq(d.rec[509].gap, false)
end)

t.test("the primary is the handshake's through a failover", function()
  local c, send = data_sender()
  local d = c.assocs[1].dir[1]
  t.eq(d.hs_primary, OLD)
  t.eq(c.assocs[1].dir[0].hs_primary, FS)
  send(5, NEW, FS, pkt(TFS, asconf(1, NEW, ADD, NEW)))
  send(6, FS, NEW, pkt(TMT, ack(1)))
  for k = 1, 3 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  -- Failover: 501's T3 copy and new DATA to NEW; then SET-PRIMARY NEW.
  send(400, FS, NEW, pkt(TMT, data(501)))
  for k = 4, 6 do send(400 + k, FS, NEW, pkt(TMT, data(500 + k))) end
  send(410, NEW, FS, pkt(TFS, asconf(2, NEW, SETPRIM, NEW)))
  send(411, FS, NEW, pkt(TMT, ack(2)))
  t.eq(d.cacc[NEW].active, true, "a changeover: the primary was OLD")
  send(500, NEW, FS, pkt(TFS, sack_gaps(501, { { 2, 2 } })))
  for e = 3, 5 do send(510 + e, NEW, FS, pkt(TFS, sack_gaps(501, { { 2, e } }))) end
  t.eq(misses(c, d, 502), 0, "rule 3.1 f")
end)

t.test("a T3 expiry resets miss indications of its destination", function()
  local c, send = data_sender()
  send(5, NEW, FS, pkt(TFS, asconf(1, NEW, ADD, NEW)))
  send(6, FS, NEW, pkt(TMT, ack(1)))
  for k = 1, 6 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  for k = 7, 9 do send(10 + k, FS, NEW, pkt(TMT, data(500 + k))) end
  send(30, OLD, FS, pkt(TFS, sack_gaps(501, { { 8, 8 } })))
  send(31, OLD, FS, pkt(TFS, sack_gaps(501, { { 2, 2 }, { 8, 8 } })))
  local d = c.assocs[1].dir[1]
  t.eq(misses(c, d, 502), 2)
  t.eq(misses(c, d, 507), 1)
  -- 506's T3 copy: an expiry of OLD.
  send(400, FS, OLD, pkt(TMT, data(506)))
  t.eq(misses(c, d, 502), 0)
  t.eq(misses(c, d, 505), 0)
  t.eq(misses(c, d, 507), 1, "sent to NEW")
  send(410, OLD, FS, pkt(TFS, sack_gaps(501, { { 2, 3 }, { 8, 8 } })))
  t.eq(misses(c, d, 502), 1)
end)

-- The analyzer's a_t3_expiry_marks_the_tsns_credited_to_its_destination_then:
-- an expiry marks the TSNs credited to its destination when it expires,
-- both read lazily (an expiry and a deletion cost nothing per TSN).
t.test("a T3 expiry marks the TSNs credited to its destination then", function()
  local c, send = data_sender()
  local DEL = "\192\2"
  send(5, NEW, FS, pkt(TFS, asconf(1, NEW, ADD, NEW)))
  send(6, FS, NEW, pkt(TMT, ack(1)))
  for k = 1, 5 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  for k = 6, 9 do send(10 + k, FS, NEW, pkt(TMT, data(500 + k))) end
  -- Cum 501, gap 5-5 (TSN 506): 502..505 missing once.
  send(30, OLD, FS, pkt(TFS, sack_gaps(501, { { 5, 5 } })))
  local d = c.assocs[1].dir[1]
  local function all() return table.concat({ misses(c, d, 502), misses(c, d, 503), misses(c, d, 504), misses(c, d, 505) }, ",") end
  t.eq(all(), "1,1,1,1")
  -- 509's T3 copy: an expiry of NEW, to which none of them was sent.
  send(500, FS, NEW, pkt(TMT, data(509)))
  t.eq(all(), "1,1,1,1")
  -- OLD deleted: NEW (the first transport) becomes primary and active,
  -- and 502..505 move there.
  send(510, NEW, FS, pkt(TFS, asconf(2, NEW, DEL, OLD)))
  send(511, FS, NEW, pkt(TMT, ack(2)))
  t.eq(all(), "1,1,1,1", "the earlier expiry of NEW came before the move")
  -- 502's T3 copy (to NEW): an expiry of OLD, where it was last sent
  -- (its own count restarts); 503..505 are NEW's now.
  send(1500, FS, NEW, pkt(TMT, data(502)))
  t.eq(all(), "0,1,1,1")
  -- 509's second copy: an expiry of NEW marks them.
  send(4000, FS, NEW, pkt(TMT, data(509)))
  t.eq(all(), "0,0,0,0")
  -- Gap 5-6, 5-7 (507, 508 newly acknowledged): two indications each
  -- for 503..505; 502, sent again to NEW while the changeover the
  -- deletion began lasts, is skipped (SFR-CACC rule 3.1 f: NEW saw no new
  -- cumulative ack; 503..505 lost their destination and are not). 5-8:
  -- the third, and 503's next copy is a fast retransmission (no T3 expiry
  -- charged).
  send(4010, NEW, FS, pkt(TFS, sack_gaps(501, { { 5, 6 } })))
  send(4011, NEW, FS, pkt(TFS, sack_gaps(501, { { 5, 7 } })))
  t.eq(all(), "0,2,2,2")
  send(4012, NEW, FS, pkt(TFS, sack_gaps(501, { { 5, 8 } })))
  t.eq(all(), "0,3,3,3")
  local epoch = d.t3_epoch
  send(4013, FS, NEW, pkt(TMT, data(503)))
  t.eq(d.rec[503].fast_done, true)
  t.eq(d.t3_epoch, epoch, "no T3 expiry")
end)

-- SFR-CACC (rule 3.1 f) keeps the TSNs to OLD from miss indications
-- while the changeover to NEW lasts and OLD sees no new cumulative ack:
-- they are set aside (the analyzer's Sidelined sets), so the SACKs that
-- skip them resume the scan past them, and are counted once OLD does.
local function changeover_to_new()
  local c, send = data_sender()
  send(5, NEW, FS, pkt(TFS, asconf(1, NEW, ADD, NEW)))
  send(6, FS, NEW, pkt(TMT, ack(1)))
  for k = 1, 5 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  send(20, NEW, FS, pkt(TFS, asconf(2, NEW, SETPRIM, NEW)))
  send(21, FS, NEW, pkt(TMT, ack(2)))
  for k = 6, 9 do send(20 + k, FS, NEW, pkt(TMT, data(500 + k))) end
  -- 506 gap-acknowledged, nothing cumulatively: 501..505 skipped.
  send(40, NEW, FS, pkt(TFS, sack_gaps(500, { { 6, 6 } })))
  return c, send, c.assocs[1].dir[1]
end
local function misses_of(c, d, from, to)
  local out = {}
  for tsn = from, to do out[#out + 1] = misses(c, d, tsn) end
  return table.concat(out, ",")
end

t.test("TSNs SFR-CACC skips are set aside until their destination sees a new ack", function()
  local c, send, d = changeover_to_new()
  t.eq(d.cacc[NEW].active, true)
  t.eq(d.cacc[NEW].next, 506)
  t.eq(misses_of(c, d, 501, 505), "0,0,0,0,0")
  t.eq(d.aside_n, 5)
  -- The scan resumes at 506; without the sets it stops at 501.
  t.eq(d.scan_from, 506)
  t.eq(d.miss_from, nil)
  send(41, NEW, FS, pkt(TFS, sack_gaps(500, { { 6, 7 } })))
  t.eq(misses_of(c, d, 501, 505), "0,0,0,0,0")
  t.eq(d.scan_from, 507)
  -- 501 acknowledged cumulatively (OLD saw a new ack: rule 2 B), 508 and
  -- 509 newly in a gap block: 502..505 get their first indication.
  send(42, NEW, FS, pkt(TFS, sack_gaps(501, { { 5, 8 } })))
  t.eq(misses_of(c, d, 502, 505), "1,1,1,1")
  t.eq(d.aside_n, 4, "501 acknowledged")
  -- 503 sent again leaves its set (its count starts afresh).
  send(400, FS, OLD, pkt(TMT, data(503)))
  t.eq(d.aside_n, 3)
  t.eq(d.aside[503], nil)
  t.eq(misses(c, d, 503), 0)
end)

t.test("TSNs set aside by a deleted destination are counted, credited to the active path", function()
  local c, send, d = changeover_to_new()
  t.eq(d.aside_n, 5)
  send(50, NEW, FS, pkt(TFS, asconf(3, NEW, "\192\2", OLD)))
  send(51, FS, NEW, pkt(TMT, ack(3)))
  -- No destination: rule 3.1 f does not skip them (508 newly acked).
  send(60, NEW, FS, pkt(TFS, sack_gaps(500, { { 6, 8 } })))
  t.eq(misses_of(c, d, 501, 505), "1,1,1,1,1")
  local to_new = c.assocs[1].path_index[FS][NEW].id
  t.eq(Core.resolve(c.assocs[1], d, 501).credit, to_new)
  send(61, FS, NEW, pkt(TMT, data(510)))
  send(62, NEW, FS, pkt(TFS, sack_gaps(500, { { 6, 9 } })))
  send(63, NEW, FS, pkt(TFS, sack_gaps(500, { { 6, 10 } })))
  t.eq(misses_of(c, d, 501, 505), "3,3,3,3,3")
  -- At the fast-retransmit threshold they leave their set, and fast
  -- recovery begins (exit at the highest TSN sent, 510).
  t.eq(d.aside_n, 0)
  t.eq(d.fr_exit, 510)
end)

t.test("a cycling changeover sets aside every TSN below its next TSN", function()
  -- OLD -> NEW (next 504), NEW -> OLD (next 506), OLD -> NEW again while
  -- NEW's changeover is active: cycling (rule 3.2), next 507.
  local c, send = data_sender()
  local d = c.assocs[1].dir[1]
  send(5, NEW, FS, pkt(TFS, asconf(1, NEW, ADD, NEW)))
  send(6, FS, NEW, pkt(TMT, ack(1)))
  for k = 1, 3 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  send(20, NEW, FS, pkt(TFS, asconf(2, NEW, SETPRIM, NEW)))
  send(21, FS, NEW, pkt(TMT, ack(2)))
  for k = 4, 5 do send(20 + k, FS, NEW, pkt(TMT, data(500 + k))) end
  send(30, NEW, FS, pkt(TFS, asconf(3, NEW, SETPRIM, OLD)))
  send(31, FS, NEW, pkt(TMT, ack(3)))
  send(32, FS, OLD, pkt(TMT, data(506)))
  send(40, NEW, FS, pkt(TFS, asconf(4, NEW, SETPRIM, NEW)))
  send(41, FS, NEW, pkt(TMT, ack(4)))
  t.eq(d.cacc[NEW].cycling, true)
  t.eq(d.cacc[NEW].next, 507)
  for k = 7, 11 do send(40 + k, FS, NEW, pkt(TMT, data(500 + k))) end
  -- 507 and 511 newly acknowledged: 501..506 skipped, 508..510 counted.
  send(60, NEW, FS, pkt(TFS, sack_gaps(500, { { 7, 7 }, { 11, 11 } })))
  t.eq(misses_of(c, d, 501, 510), "0,0,0,0,0,0,0,1,1,1")
  t.eq(d.aside_n, 6)
  -- Cumulatively acknowledged, they leave their sets; 512 newly
  -- acknowledged (HTNA): 508..510 missing again.
  send(61, FS, NEW, pkt(TMT, data(512)))
  send(62, NEW, FS, pkt(TFS, sack_gaps(506, { { 1, 1 }, { 5, 6 } })))
  t.eq(d.aside_n, 0)
  t.eq(misses_of(c, d, 508, 510), "2,2,2")
end)

t.test("new DATA below a fast-recovery SACK's highest TSN gets miss indications", function()
  -- The analyzer's track::tsn test of the same name. 501 lost: three
  -- SACKs fast retransmit it (fast recovery until 505 is acknowledged).
  local c, send = data_sender()
  local d = c.assocs[1].dir[1]
  for k = 1, 5 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  for last = 2, 4 do send(20 + last, OLD, FS, pkt(TFS, sack_gaps(500, { { 2, last } }))) end
  t.eq(d.fr_exit, 505)
  send(30, FS, OLD, pkt(TMT, data(501)))
  -- In fast recovery a SACK that advances the cumulative ack counts below
  -- its highest TSN, 510: above every TSN the capture saw sent (506..509
  -- were missed). Nothing below it is left to count.
  send(40, OLD, FS, pkt(TFS, sack_gaps(501, { { 1, 4 }, { 9, 9 } })))
  t.eq(d.fr_exit, 505, "505 is not acknowledged cumulatively")
  -- 506..508 sent after it: 507 newly acknowledged (HTNA), 506 missing
  -- (Linux's sctp_mark_missing: every TSN on the transmitted queue below
  -- it), then 508 and 509: 506 at the threshold.
  for k = 6, 9 do send(40 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  send(50, OLD, FS, pkt(TFS, sack_gaps(501, { { 1, 4 }, { 6, 6 }, { 9, 9 } })))
  t.eq(misses_of(c, d, 506, 508), "1,0,0")
  send(51, OLD, FS, pkt(TFS, sack_gaps(501, { { 1, 4 }, { 6, 7 }, { 9, 9 } })))
  send(52, OLD, FS, pkt(TFS, sack_gaps(501, { { 1, 4 }, { 6, 8 } })))
  t.eq(misses_of(c, d, 506, 509), "3,0,0,0")
  -- Its next copy is a fast retransmission, not its T3 timer's.
  send(60, FS, OLD, pkt(TMT, data(506)))
  t.eq(d.rec[506].fast_done, true)
  local to_old = c.assocs[1].path_index[FS][OLD].id
  t.eq(c.assocs[1].paths[to_old + 1].errors, 0, "no T3 expiry charged")
end)

t.test("a SET-PRIMARY starts a changeover only while DATA is outstanding", function()
  local c, send = data_sender()
  local d = c.assocs[1].dir[1]
  send(5, NEW, FS, pkt(TFS, asconf(1, NEW, ADD, NEW)))
  send(6, FS, NEW, pkt(TMT, ack(1)))
  -- 501 never captured; 502..505 gap-acknowledged: nothing outstanding.
  for k = 2, 5 do send(10 + k, FS, OLD, pkt(TMT, data(500 + k))) end
  send(20, OLD, FS, pkt(TFS, sack_gaps(500, { { 2, 5 } })))
  t.eq(d.rec_n, 4)
  t.eq(d.gap_n, 4)
  send(30, NEW, FS, pkt(TFS, asconf(2, NEW, SETPRIM, NEW)))
  send(31, FS, NEW, pkt(TMT, ack(2)))
  t.eq(d.primary, NEW)
  t.eq(d.cacc[NEW], nil, "no changeover")
  -- 504 and 505 reneged: outstanding again.
  send(40, OLD, FS, pkt(TFS, sack_gaps(500, { { 2, 3 } })))
  t.eq(d.gap_n, 2)
  send(50, NEW, FS, pkt(TFS, asconf(3, NEW, SETPRIM, OLD)))
  send(51, FS, NEW, pkt(TMT, ack(3)))
  t.eq(d.cacc[OLD].active, true)
  t.eq(d.cacc[OLD].next, 506)
  -- Acknowledged cumulatively, they are forgotten.
  send(60, OLD, FS, pkt(TFS, sack_gaps(505, {})))
  t.eq(d.rec_n, 0)
  t.eq(d.gap_n, 0)
end)

-- DELETE-IPs against Linux's sctp_assoc_rm_peer (the analyzer's
-- track::script tests of the same names): the deleted destination's
-- chunks move to the active path after the deletion (the first transport
-- when the primary or the active path was deleted), again at every
-- deletion. The mobile node (endpoint 0) at A1 lists A1, A2, A3; the
-- correspondent C's paths to A2 and A3 are confirmed with one error each.
local A1, A2, A3, C = "\10\0\0\1", "\10\0\0\2", "\10\0\0\3", "\10\0\1\1"
local DEL = "\192\2"
local function sack(cum) return sack_gaps(cum, {}) end
local function hb(kind, info) return chunk(kind, "\0\1\0\8" .. info) end
local function three_addresses()
  local c = Core.new({ pf_retrans = false })
  c:packet(1, 0, 0, A1, C, pkt(0, chunk(1, be32(TMT) .. "\0\1\0\0\0\10\0\10" .. be32(100) .. ap(A1) .. ap(A2) .. ap(A3))))
  c:packet(2, 0, 1000000, C, A1, pkt(TMT, init(2, TFS, 500)))
  local f = 2
  local function send(us, src, dst, bytes)
    f = f + 1
    c:packet(f, math.floor(us / 1000000), (us % 1000000) * 1000, src, dst, bytes)
    return f
  end
  local us = 10000
  for _, x in ipairs({ { A2, "2" }, { A3, "3" } }) do
    local to, tag = x[1], x[2]
    send(us, C, to, pkt(TMT, hb(4, tag .. "aaa")))
    send(us + 100, to, C, pkt(TFS, hb(5, tag .. "aaa")))
    send(us + 1000, C, to, pkt(TMT, hb(4, tag .. "bbb")))
    send(us + 2000, C, to, pkt(TMT, hb(4, tag .. "ccc")))
    us = us + 10000
  end
  return c, send, us
end
local function errors_to(c, list)
  local out = {}
  for _, dst in ipairs(list) do
    for _, p in ipairs(c.assocs[1].paths) do
      if p.sender == 1 and p.dst == dst then out[#out + 1] = p.errors end
    end
  end
  return table.concat(out, ",")
end

t.test("a deleted primary moves its data to the first transport, not the active path", function()
  -- New DATA went to A3 while A1 is still the primary: deleting A1 makes
  -- A2 primary and active, and 500 moves there.
  local c, send, us = three_addresses()
  send(us, C, A1, pkt(TMT, data(500)))
  send(us + 50, C, A3, pkt(TMT, data(501)))
  send(us + 100, A3, C, pkt(TFS, asconf(1, A3, DEL, A1)))
  send(us + 200, C, A3, pkt(TMT, ack(1)))
  t.eq(errors_to(c, { A2, A3 }), "1,1")
  send(us + 500, A3, C, pkt(TFS, sack(501)))
  t.eq(errors_to(c, { A2, A3 }), "0,0")
end)

t.test("a second deletion moves the data again", function()
  local c, send, us = three_addresses()
  send(us, C, A1, pkt(TMT, data(500)))
  send(us + 100, A2, C, pkt(TFS, asconf(1, A2, DEL, A1)))
  send(us + 200, C, A2, pkt(TMT, ack(1)))
  send(us + 300, A3, C, pkt(TFS, asconf(2, A3, DEL, A2)))
  send(us + 400, C, A3, pkt(TMT, ack(2)))
  send(us + 500, A3, C, pkt(TFS, sack(500)))
  t.eq(errors_to(c, { A2, A3 }), "1,0")
end)

t.test("a deletion of another address moves its data to the active path the first deletion chose", function()
  local c, send, us = three_addresses()
  send(us, C, A1, pkt(TMT, data(500)))
  send(us + 10, C, A1, pkt(TMT, data(501)))
  us = us + 1000000
  send(us, C, A3, pkt(TMT, data(500)))
  send(us + 100, A2, C, pkt(TFS, asconf(1, A2, DEL, A1)))
  send(us + 200, C, A2, pkt(TMT, ack(1)))
  send(us + 300, A2, C, pkt(TFS, asconf(2, A2, DEL, A3)))
  send(us + 400, C, A2, pkt(TMT, ack(2)))
  t.eq(errors_to(c, { A1, A2, A3 }), "1,1,1")
  send(us + 500, A2, C, pkt(TFS, sack(500)))
  t.eq(errors_to(c, { A1, A2, A3 }), "1,0,1")
end)

t.test("a TSN sent again a lap of the 2^32 ring later replaces its record", function()
  -- New DATA whose TSN walks the ring in steps below 2^31 comes back to a
  -- TSN still remembered: counted once, so the records and the count of
  -- outstanding ones agree, and SACKs that acknowledge them all leave none.
  local c, send = data_sender()
  for i, tsn in ipairs({ 0, 0x7FFFFFFF, 0xFFFFFFFE, 0 }) do send(10 + i, FS, OLD, pkt(TMT, data(tsn))) end
  local d = c.assocs[1].dir[1]
  local function records() local n = 0 for _ in pairs(d.rec) do n = n + 1 end return n end
  t.eq(records(), 3)
  t.eq(d.rec_n, 3)
  send(20, OLD, FS, pkt(TFS, sack_gaps(0, {})))
  send(21, OLD, FS, pkt(TFS, sack_gaps(0x7FFFFFFF, {})))
  send(22, OLD, FS, pkt(TFS, sack_gaps(0xFFFFFFFE, {})))
  t.eq(records(), 0)
  t.eq(d.rec_n, 0)
  t.eq(d.gap_n, 0)
end)

return t
