-- Unit tests for sctpho_core: Koh & Kim's Fig. 6 exchange in miniature,
-- built from literal SCTP bytes.
local t = require("tests.harness")
local Core = require("sctpho_core")

local function be32(v)
  return string.char(math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256, math.floor(v / 256) % 256, v % 256)
end
local function chunk(kind, value)
  local len = 4 + #value
  local c = string.char(kind, kind == 0 and 3 or 0, math.floor(len / 256), len % 256) .. value
  while #c % 4 ~= 0 do c = c .. "\0" end
  return c
end
local function data(tsn) return chunk(0, be32(tsn) .. "\0\0\0\0\0\0\0\0data") end
local function sack(cum) return chunk(3, be32(cum) .. "\0\1\0\0\0\0\0\0") end
local function init(kind, tag, tsn) return chunk(kind, be32(tag) .. "\0\1\0\0\0\10\0\10" .. be32(tsn)) end
local function ap(a) return "\0\5\0\8" .. a end
local function asconf(serial, lookup, req, addr)
  return chunk(0xc1, be32(serial) .. ap(lookup) .. req .. "\0\16" .. be32(serial) .. ap(addr))
end
local function pkt(vtag, ...) return "\19\136\19\136" .. be32(vtag) .. "\0\0\0\0" .. table.concat({ ... }) end

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

local function be16(v) return string.char(math.floor(v / 256) % 256, v % 256) end
local function sack_gaps(cum, gaps)
  local g = {}
  for _, x in ipairs(gaps) do g[#g + 1] = be16(x[1]) .. be16(x[2]) end
  return chunk(3, be32(cum) .. "\0\1\0\0" .. be16(#gaps) .. "\0\0" .. table.concat(g))
end

t.test("a TSN reported in a gap block and sent again is a duplicate", function()
  local c = Core.new()
  c:packet(1, 0, 0, OLD, FS, pkt(0, init(1, TMT, 100)))
  c:packet(2, 0, 1, FS, OLD, pkt(TMT, init(2, TFS, 500)))
  for k = 0, 3 do c:packet(3 + k, 0, 2 + k, OLD, FS, pkt(TFS, data(100 + k))) end
  c:packet(7, 0, 10, FS, OLD, pkt(TMT, sack_gaps(100, { { 2, 3 } })))  -- 102, 103 received
  c:packet(8, 0, 20, OLD, FS, pkt(TFS, data(102)))
  c:packet(9, 0, 21, OLD, FS, pkt(TFS, data(101)))
  t.eq(c.ann[8].events[2], "duplicate", "102 was in a gap block")
  t.eq(#c.ann[9].events, 1, "101 only retransmitted")
  t.eq(c.ann[9].events[1], "retransmission")
  c:packet(10, 0, 30, FS, OLD, pkt(TMT, sack_gaps(103, {})))
  c:packet(11, 0, 31, OLD, FS, pkt(TFS, data(101)))
  t.eq(c.ann[11].events[2], "duplicate", "101 cumulatively acked")
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

return t
