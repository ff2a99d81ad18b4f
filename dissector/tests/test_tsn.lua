-- Unit tests for the TSN ledger of sctpho_core (the analyzer's
-- track::tsn tests of the same names): stale SACKs, reneging, the
-- primary through a failover, and a T3 expiry's reset of miss
-- indications. Built from literal SCTP bytes, as test_core.lua.
local t = require("tests.harness")
local Core = require("sctpho_core")

local function be32(v)
  return string.char(math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256, math.floor(v / 256) % 256, v % 256)
end
local function be16(v) return string.char(math.floor(v / 256) % 256, v % 256) end
local function chunk(kind, value)
  local len = 4 + #value
  local c = string.char(kind, kind == 0 and 3 or 0, math.floor(len / 256), len % 256) .. value
  while #c % 4 ~= 0 do c = c .. "\0" end
  return c
end
local function data(tsn) return chunk(0, be32(tsn) .. "\0\0\0\0\0\0\0\0data") end
local function sack_gaps(cum, gaps)
  local g = {}
  for _, x in ipairs(gaps) do g[#g + 1] = be16(x[1]) .. be16(x[2]) end
  return chunk(3, be32(cum) .. "\0\1\0\0" .. be16(#gaps) .. "\0\0" .. table.concat(g))
end
local function init(kind, tag, tsn) return chunk(kind, be32(tag) .. "\0\1\0\0\0\10\0\10" .. be32(tsn)) end
local function ap(a) return "\0\5\0\8" .. a end
local function asconf(serial, lookup, req, addr)
  return chunk(0xc1, be32(serial) .. ap(lookup) .. req .. "\0\16" .. be32(serial) .. ap(addr))
end
local function ack(serial) return chunk(0x80, be32(serial)) end
local function pkt(vtag, ...) return "\19\136\19\136" .. be32(vtag) .. "\0\0\0\0" .. table.concat({ ... }) end
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

local function misses(d, tsn)
  local r = d.rec[tsn]
  return type(r) == "table" and r.miss or 0
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
  t.eq(misses(d, 502), 1)
  t.eq(misses(d, 503), 1)
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
  t.eq(misses(d, 502), 0, "rule 3.1 f")
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
  t.eq(misses(d, 502), 2)
  t.eq(misses(d, 507), 1)
  -- 506's T3 copy: an expiry of OLD.
  send(400, FS, OLD, pkt(TMT, data(506)))
  t.eq(misses(d, 502), 0)
  t.eq(misses(d, 505), 0)
  t.eq(misses(d, 507), 1, "sent to NEW")
  send(410, OLD, FS, pkt(TFS, sack_gaps(501, { { 2, 3 }, { 8, 8 } })))
  t.eq(misses(d, 502), 1)
end)

return t
