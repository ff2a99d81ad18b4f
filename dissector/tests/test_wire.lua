-- Unit tests for sctpho_wire under plain lua5.2, from literal bytes.
local t = require("tests.harness")
local W = require("sctpho_wire")

t.test("byte readers", function()
  t.eq(W.u16be("\1\2", 1), 258)
  t.eq(W.u32be("\0\0\1\0", 1), 256)
  t.eq(W.u32le("\0\1\0\0", 1), 256)
end)

t.test("addresses print numerically", function()
  t.eq(W.addr_string("\198\51\100\101"), "198.51.100.101")
  t.eq(W.addr_string("\32\1\13\184" .. string.rep("\0", 10) .. "\1\2"), "2001:db8::102")
end)

t.test("exact nanosecond stamps", function()
  -- 1795342932.769014659 s in ns = 0x18ea56e2_9db48383 (python: hex())
  local sec, nsec = W.stamp(0x18ea56e2, 0x9db48383, 1e9)
  t.eq(sec, 1795342932); t.eq(nsec, 769014659)
  local s2, n2 = W.stamp(0, 1500000, 1e6)
  t.eq(s2, 1); t.eq(n2, 500000000)
end)

t.test("ASCONF with ADD-IP and its ACK", function()
  local asconf = "\19\136\19\136" .. "\0\0\0\7" .. "\0\0\0\0"
    .. "\193\0\0\32" .. "\0\0\0\1" .. "\0\5\0\8\10\0\0\1"
    .. "\192\1\0\16\0\0\0\5\0\5\0\8\10\0\1\1"
  local p, err = W.parse_sctp(asconf)
  t.eq(err, nil)
  t.eq(p.vtag, 7)
  local c = p.chunks[1]
  t.eq(c.type, W.ASCONF); t.eq(c.serial, 1); t.eq(#c.requests, 1)
  t.eq(c.requests[1].op, "add_ip"); t.eq(c.requests[1].corr, 5)
  t.eq(W.addr_string(c.requests[1].address), "10.0.1.1")
  local ack = "\19\136\19\136\0\0\0\7\0\0\0\0" .. "\128\0\0\8\0\0\0\1"
  local q = W.parse_sctp(ack)
  t.eq(q.chunks[1].serial, 1); t.eq(#q.chunks[1].responses, 0)
end)

t.test("malformed chunk keeps earlier chunks and names the problem", function()
  local s = "\0\1\0\2\0\0\0\1\0\0\0\0" .. "\11\0\0\4" .. "\3\0\0\40\0\0"
  local p, err = W.parse_sctp(s)
  t.eq(#p.chunks, 1); t.eq(p.chunks[1].type, 11)
  t.eq(err, "chunk length runs past the packet")
  local _, e2 = W.parse_sctp("\0\1")
  t.eq(e2, "SCTP common header truncated")
end)

t.test("IPv4 and IPv6 to SCTP", function()
  local sctp = "\0\1\0\2\0\0\0\1\0\0\0\0"
  local v4 = "\69\0\0\32\0\0\64\0\64\132\0\0\10\0\0\1\10\0\0\2" .. sctp
  local src, dst, bytes = W.sctp_of_ip(v4)
  t.eq(W.addr_string(src), "10.0.0.1"); t.eq(W.addr_string(dst), "10.0.0.2"); t.eq(bytes, sctp)
  local frag = "\69\0\0\32\0\0\32\0\64\132\0\0\10\0\0\1\10\0\0\2" .. sctp
  t.eq(W.sctp_of_ip(frag), nil)
  local v6 = "\96\0\0\0\0\12\132\64" .. string.rep("\0", 15) .. "\1" .. string.rep("\0", 15) .. "\2" .. sctp
  local s6, d6, b6 = W.sctp_of_ip(v6)
  t.eq(W.addr_string(s6), "::1"); t.eq(b6, sctp)
  -- The same IPv4 packet behind an 802.1Q-tagged Ethernet header and
  -- behind SLL2, located by offset.
  local eth = string.rep("\0", 12) .. "\129\0\0\10\8\0" .. v4
  local a, b, c = W.sctp_in_frame(W.LINK_ETHERNET, eth, 1, #eth)
  t.eq(W.addr_string(a), "10.0.0.1"); t.eq(W.addr_string(b), "10.0.0.2"); t.eq(c, sctp)
  local sll2 = "\8\0" .. string.rep("\0", 18) .. v4
  local _, _, c2 = W.sctp_in_frame(W.LINK_SLL2, "junk" .. sll2, 5, 4 + #sll2)
  t.eq(c2, sctp)
  t.eq(W.sctp_in_frame(W.LINK_SLL2, sll2, 1, 10), nil)
end)

t.test("the first frame of a pcap file, and a frame's SCTP span", function()
  local function le32(v) return string.char(v % 256, math.floor(v / 256) % 256, math.floor(v / 65536) % 256, math.floor(v / 16777216)) end
  local sctp = "\0\1\0\2\0\0\0\1\0\0\0\0"
  local frame = "\8\0" .. string.rep("\0", 18) .. "\69\0\0\32\0\0\64\0\64\132\0\0\10\0\0\1\10\0\0\2" .. sctp
  local header = "\212\195\178\161\2\0\4\0" .. string.rep("\0", 8) .. le32(65535) .. le32(W.LINK_SLL2)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(header, le32(1700000000), le32(250), le32(#frame), le32(#frame), frame)
  f:close()
  local len, sec, nsec = W.first_frame(path)
  t.eq(len, #frame); t.eq(sec, 1700000000); t.eq(nsec, 250000)
  local seen = 0
  t.eq(W.read_capture(path, function(_, _, _, link, data, first, last)
    seen = seen + 1
    local src, dst, a, b = W.sctp_span_in_frame(link, data, first, last)
    t.eq(W.addr_string(src), "10.0.0.1"); t.eq(W.addr_string(dst), "10.0.0.2")
    t.eq(data:sub(a, b), sctp)
  end), true)
  t.eq(seen, 1)
  os.remove(path)
  t.eq(W.first_frame(path), nil, "no file")
end)

-- Every frame of a capture file as (number, sec, nsec, link, bytes).
local function frames_of(path)
  local out = {}
  local ok, err = W.read_capture(path, function(n, sec, nsec, link, data, first, last)
    out[#out + 1] = table.concat({ n, sec, nsec, link, data:sub(first, last) }, "|")
  end)
  return out, ok, err
end

t.test("files read a chunk at a time give the same frames, at any chunk size", function()
  local function le16(v) return string.char(v % 256, math.floor(v / 256)) end
  local function le32(v) return le16(v % 65536) .. le16(math.floor(v / 65536)) end
  local function block(kind, body)
    while #body % 4 ~= 0 do body = body .. "\0" end
    return le32(kind) .. le32(#body + 12) .. body .. le32(#body + 12)
  end
  local shb = block(0x0a0d0d0a, le32(0x1a2b3c4d) .. le16(1) .. le16(0) .. string.rep("\255", 8))
  local idb = block(1, le16(W.LINK_ETHERNET) .. le16(0) .. le32(65535) .. le16(9) .. le16(1) .. "\9\0\0\0" .. le32(0))
  local epbs = {}
  for k = 1, 5 do
    local frame = string.rep(string.char(k), 10 * k + 3)
    epbs[k] = block(6, le32(0) .. le32(k) .. le32(1000 * k) .. le32(#frame) .. le32(#frame) .. frame)
  end
  local pcapng = os.tmpname()
  local f = assert(io.open(pcapng, "wb"))
  f:write(shb, idb, table.concat(epbs))
  f:close()
  local default = W.chunk
  for _, path in ipairs({ pcapng, "../sample-captures/koh-kim-1/mn.pcap" }) do
    local want, ok = frames_of(path)
    t.eq(ok, true, path)
    t.eq(#want > 4, true, path)
    for _, size in ipairs({ 1, 3, 7, 64, 1000 }) do
      W.chunk = size
      local got = frames_of(path)
      W.chunk = default
      t.eq(#got, #want, path .. " chunk " .. size)
      for k = 1, #want do t.eq(got[k], want[k], path .. " chunk " .. size .. " frame " .. k) end
    end
  end
  W.chunk = default
  local got = frames_of(pcapng)
  t.eq(got[2], "2|8|589936592|1|" .. string.rep("\2", 23), "2 * 2^32 + 2000 ns (if_tsresol 9)")
  os.remove(pcapng)
end)

t.test("wireshark times split into integer seconds and nanoseconds", function()
  -- 2023-11-14T22:13:20.123457 UTC as a double; "%s" shows a float as
  -- "123457000.0" under Lua 5.3+.
  local sec, nsec = W.split_abs_ts(1700000000.123457)
  t.eq(string.format("%s|%s", sec, nsec), "1700000000|123457000")
  sec, nsec = W.split_abs_ts(1700000000.9999996)
  t.eq(string.format("%s|%s", sec, nsec), "1700000001|0", "rounded up to the next second")
end)

return t
