-- Measures what the Lua core's per-TSN costs come to on adversarial
-- input (docs/robustness.md): prints seconds, asserts nothing.
--   cd dissector && lua5.4 tests/cost.lua
-- (another core: SCTPHO_CORE_DIR=/that/dir lua5.4 tests/cost.lua)
package.path = (os.getenv("SCTPHO_CORE_DIR") or ".") .. "/?.lua;./?.lua;" .. package.path
local Core = require("sctpho_core")
local B = require("tests.bytes")
local be32, be16, chunk, data, sack_gaps, init, ap, ack, pkt = B.be32, B.be16, B.chunk, B.data, B.sack_gaps, B.init, B.ap, B.ack, B.pkt

-- An ASCONF of (request type, address) pairs, correlation ids 1, 2, ...
local function asconf(serial, lookup, requests)
  local v = { be32(serial), ap(lookup) }
  for i, r in ipairs(requests) do v[#v + 1] = r[1] .. "\0\16" .. be32(i) .. ap(r[2]) end
  return chunk(0xc1, table.concat(v))
end
local ADD, DEL, SETPRIM = "\192\1", "\192\2", "\192\4"
local FS, OLD, NEW = "\192\168\0\100", "\192\168\0\101", "\192\168\0\102"
local TMT, TFS = 0x11111111, 0x22222222

-- FS sends DATA to the mobile node at OLD (NEW added); times in ms.
local function data_sender()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 100)))
  c:packet(2, 0, 1000000, FS, OLD, pkt(TMT, init(2, TFS, 500)))
  local f = 2
  local function send(ms, src, dst, bytes)
    f = f + 1
    c:packet(f, math.floor(ms / 1000), math.floor(ms % 1000) * 1000000, src, dst, bytes)
  end
  send(5, NEW, FS, pkt(TFS, asconf(1, NEW, { { ADD, NEW } })))
  send(6, FS, NEW, pkt(TMT, ack(1)))
  return c, send
end

local function seconds(what, fn)
  local started = os.clock()
  fn()
  print(string.format("%s: %.3f s", what, os.clock() - started))
end

-- T3 expiries: TSNs 501..500+n to OLD, one SACK reports n-1 of them
-- missing, then TSN 502 is sent again r times, each a T3 expiry of OLD.
for _, x in ipairs({ { 20000, 1000 }, { 20000, 4000 } }) do
  local n, r = x[1], x[2]
  local c, send = data_sender()
  for k = 1, n do send(10, FS, OLD, pkt(TMT, data(500 + k))) end
  seconds(string.format("%d TSNs reported missing, %d T3 expiries", n, r), function()
    send(20, OLD, FS, pkt(TFS, sack_gaps(501, { { n - 1, n - 1 } })))
    for k = 1, r do send(1000 * k, FS, OLD, pkt(TMT, data(502))) end
  end)
end

-- DELETE-IPs: n TSNs outstanding, then asconfs ASCONFs of 1 000
-- DELETE-IPs each, of distinct addresses, each answered.
for _, x in ipairs({ { 5000, 4 }, { 5000, 20 } }) do
  local n, asconfs = x[1], x[2]
  local c, send = data_sender()
  for k = 1, n do send(10, FS, OLD, pkt(TMT, data(500 + k))) end
  seconds(string.format("%d TSNs outstanding, %d DELETE-IPs", n, asconfs * 1000), function()
    for s = 1, asconfs do
      local requests = {}
      for i = 1, 1000 do requests[i] = { DEL, "\10" .. string.char(s, math.floor(i / 256), i % 256) } end
      send(20 + s, NEW, FS, pkt(TFS, asconf(1 + s, NEW, requests)))
      send(20 + s, FS, NEW, pkt(TMT, ack(1 + s)))
    end
  end)
end

-- SFR-CACC: n TSNs to OLD outstanding, SET-PRIMARY NEW (a changeover),
-- new DATA to NEW, and s SACKs gap-acknowledging only NEW's TSNs (no
-- destination newly acknowledged cumulatively: rule 3.1 f skips every
-- TSN to OLD, at every SACK). Cycling: SET-PRIMARY NEW, OLD, NEW (the
-- last while the first changeover lasts: rule 3.2 skips every TSN below
-- the next TSN at the change).
for _, x in ipairs({ { 10000, 500 }, { 20000, 1000 }, { 20000, 1000, "cycling" } }) do
  local n, s, cycling = x[1], x[2], x[3]
  local c, send = data_sender()
  for k = 1, n do send(10, FS, OLD, pkt(TMT, data(500 + k))) end
  local primaries = cycling and { NEW, OLD, NEW } or { NEW }
  for i, p in ipairs(primaries) do
    send(11, NEW, FS, pkt(TFS, asconf(1 + i, NEW, { { SETPRIM, p } })))
    send(12, FS, NEW, pkt(TMT, ack(1 + i)))
  end
  for k = 1, s do send(13, FS, NEW, pkt(TMT, data(500 + n + k))) end
  seconds(string.format("%d TSNs skipped by SFR-CACC%s, %d SACKs", n, cycling and " (cycling)" or "", s), function()
    for k = 1, s do send(20, NEW, FS, pkt(TFS, sack_gaps(500, { { n + 1, n + k } }))) end
  end)
end

-- SET-PRIMARYs: TSNs 502..500+n to OLD, all gap-acknowledged (501 was
-- never captured, so none is outstanding: no changeover starts), then s
-- SET-PRIMARYs alternating NEW and OLD, each asking whether DATA is
-- outstanding.
for _, x in ipairs({ { 20000, 1000 }, { 20000, 4000 } }) do
  local n, s = x[1], x[2]
  local c, send = data_sender()
  for k = 2, n do send(10, FS, OLD, pkt(TMT, data(500 + k))) end
  send(20, OLD, FS, pkt(TFS, sack_gaps(500, { { 2, n } })))
  seconds(string.format("%d TSNs gap-acknowledged, %d SET-PRIMARYs", n - 1, s), function()
    for i = 1, s do
      send(30, NEW, FS, pkt(TFS, asconf(1 + i, NEW, { { SETPRIM, i % 2 == 1 and NEW or OLD } })))
      send(31, FS, NEW, pkt(TMT, ack(1 + i)))
    end
  end)
end
