-- sctpho_wire: pure-Lua (5.2) decoding of capture files, link layers, IP
-- and SCTP chunks. No Wireshark API here, so it runs under plain lua5.2.
-- Follows docs/metrics.md and the Rust analyzer's wire/ and decode/.

local M = {}

local byte, sub = string.byte, string.sub

-- Byte readers (1-based offsets into Lua strings).
function M.u8(s, i) return byte(s, i) end
function M.u16be(s, i) local a, b = byte(s, i, i + 1); return a * 256 + b end
function M.u32be(s, i)
  local a, b, c, d = byte(s, i, i + 3)
  return ((a * 256 + b) * 256 + c) * 256 + d
end
function M.u16le(s, i) local a, b = byte(s, i, i + 1); return b * 256 + a end
function M.u32le(s, i)
  local a, b, c, d = byte(s, i, i + 3)
  return ((d * 256 + c) * 256 + b) * 256 + a
end
local u8, u16be, u32be, u16le, u32le = M.u8, M.u16be, M.u32be, M.u16le, M.u32le

-- Addresses: raw bytes are the identity (never resolved names). Printed
-- forms are cached: a capture has few addresses and many packets.
local printed = {}
local addr_format

function M.addr_string(raw)
  local p = printed[raw]
  if not p then
    p = addr_format(raw)
    printed[raw] = p
  end
  return p
end

function addr_format(raw)
  if #raw == 4 then
    return string.format("%d.%d.%d.%d", byte(raw, 1, 4))
  end
  local groups = {}
  for i = 1, 16, 2 do groups[#groups + 1] = string.format("%x", u16be(raw, i)) end
  -- Compress the longest run of zero groups (RFC 5952).
  local best_s, best_l, s, l = 0, 0, 0, 0
  for i = 1, 8 do
    if groups[i] == "0" then
      if l == 0 then s = i end
      l = l + 1
      if l > best_l then best_s, best_l = s, l end
    else
      l = 0
    end
  end
  if best_l < 2 then return table.concat(groups, ":") end
  local head = table.concat(groups, ":", 1, best_s - 1)
  local tail = table.concat(groups, ":", best_s + best_l, 8)
  return head .. "::" .. tail
end

-- Link types (LINKTYPE_*).
local LINK_NULL, LINK_ETHERNET, LINK_RAW12, LINK_RAW14 = 0, 1, 12, 14
local LINK_RAW, LINK_LOOP, LINK_SLL, LINK_IPV4 = 101, 108, 113, 228
local LINK_IPV6, LINK_SLL2 = 229, 276
M.LINK_NULL, M.LINK_ETHERNET, M.LINK_RAW12, M.LINK_RAW14 = LINK_NULL, LINK_ETHERNET, LINK_RAW12, LINK_RAW14
M.LINK_RAW, M.LINK_LOOP, M.LINK_SLL, M.LINK_IPV4 = LINK_RAW, LINK_LOOP, LINK_SLL, LINK_IPV4
M.LINK_IPV6, M.LINK_SLL2 = LINK_IPV6, LINK_SLL2
M.NON_PACKET = -1

local floor, min = math.floor, math.min

-- Offset where the IP header starts inside s[first..last] (a frame of the
-- given link type), or nil. Offsets, not copies: the pre-scan walks a whole
-- capture file held in one string. (Run for every frame of the pre-scan:
-- constants are locals and bytes are read a pair at a time.)
local function ip_start(link, s, first, last)
  local n = last - first + 1
  if link == LINK_ETHERNET then
    if n < 14 then return nil end
    local h, l = byte(s, first + 12, first + 13)
    local et, off, tags = h * 256 + l, first + 14, 0
    while (et == 0x8100 or et == 0x88a8 or et == 0x9100) and tags < 4 do
      if last < off + 3 then return nil end
      h, l = byte(s, off + 2, off + 3)
      et, off, tags = h * 256 + l, off + 4, tags + 1
    end
    if et == 0x0800 or et == 0x86dd then return off end
  elseif link == LINK_SLL or link == LINK_SLL2 then
    -- Linux cooked headers (v1: protocol at 14, 16 bytes; v2: at 0, 20),
    -- then VLAN tags as behind an Ethernet header.
    local hl, at = 16, first + 14
    if link == LINK_SLL2 then hl, at = 20, first end
    if n < hl then return nil end
    local et, off, tags = u16be(s, at), first + hl, 0
    while (et == 0x8100 or et == 0x88a8 or et == 0x9100) and tags < 4 do
      if last < off + 3 then return nil end
      et, off, tags = u16be(s, off + 2), off + 4, tags + 1
    end
    if et == 0x0800 or et == 0x86dd then return off end
  elseif link == LINK_RAW or link == LINK_RAW12 or link == LINK_RAW14
      or link == LINK_IPV4 or link == LINK_IPV6 then
    return first
  elseif link == LINK_NULL or link == LINK_LOOP then
    if n >= 4 then return first + 4 end
  end
  return nil
end

-- From an IP header at s[i], up to s[last]: src, dst (raw address
-- strings), and the first and last offsets of the SCTP packet; or nil.
-- ICMP errors quoting SCTP are not SCTP traffic (not parsed here); IP
-- fragments are not reassembled here (the analyzer does).
local function sctp_span(s, i, last)
  local n = last - i + 1
  if n < 1 then return nil end
  local b1 = byte(s, i)
  if b1 >= 64 and b1 < 80 then -- version 4
    if n < 20 then return nil end
    local _, _, l1, l2, _, _, f1, f2, _, proto = byte(s, i, i + 9)
    local hl = (b1 - 64) * 4
    if proto ~= 132 or hl < 20 or n < hl then return nil end
    -- A fragment: an offset, or More Fragments set.
    if f1 % 32 ~= 0 or f2 ~= 0 or floor(f1 / 32) % 2 == 1 then return nil end
    return sub(s, i + 12, i + 15), sub(s, i + 16, i + 19), i + hl, min(last, i + l1 * 256 + l2 - 1)
  elseif b1 >= 96 and b1 < 112 then -- version 6
    if n < 40 then return nil end
    local nh, off = byte(s, i + 6), i + 40
    local stop = min(last, i + 39 + u16be(s, i + 4))
    for _ = 1, 16 do
      if nh == 0 or nh == 43 or nh == 60 or nh == 135 then
        if stop < off + 1 then return nil end
        nh, off = byte(s, off), off + (byte(s, off + 1) + 1) * 8
      elseif nh == 51 then
        if stop < off + 1 then return nil end
        nh, off = byte(s, off), off + (byte(s, off + 1) + 2) * 4
      elseif nh == 44 then
        return nil
      else
        break
      end
    end
    if nh ~= 132 or off > stop + 1 then return nil end
    return sub(s, i + 8, i + 23), sub(s, i + 24, i + 39), off, stop
  end
  return nil
end

-- The SCTP packet in a frame s[first..last]: src, dst and the offsets of
-- the SCTP packet in s (no copy: the pre-scan's hot path); or nil.
function M.sctp_span_in_frame(link, s, first, last)
  local i = ip_start(link, s, first, last)
  if not i then return nil end
  return sctp_span(s, i, last)
end

-- The SCTP packet in a frame s[first..last]: src, dst, SCTP bytes; or nil.
function M.sctp_in_frame(link, s, first, last)
  local i = ip_start(link, s, first or 1, last or #s)
  if not i then return nil end
  local src, dst, a, b = sctp_span(s, i, last or #s)
  if not src then return nil end
  return src, dst, sub(s, a, b)
end

-- The SCTP packet in an IP packet (a string starting with its header).
function M.sctp_of_ip(ip)
  local src, dst, a, b = sctp_span(ip, 1, #ip)
  if not src then return nil end
  return src, dst, sub(ip, a, b)
end

-- Chunk type codes (RFC 9260 §3.3, RFC 5061 §4.1, RFC 8260).
M.DATA, M.INIT, M.INIT_ACK, M.SACK, M.HEARTBEAT, M.HEARTBEAT_ACK = 0, 1, 2, 3, 4, 5
M.ABORT, M.SHUTDOWN, M.SHUTDOWN_COMPLETE, M.NR_SACK, M.I_DATA = 6, 7, 14, 16, 64
M.ASCONF_ACK, M.ASCONF = 0x80, 0xc1

-- Parameters as {type, value} (value a string); nil,err on a bad length.
local function params(s, i, last)
  local out = {}
  while i + 3 <= last do
    local t, len = u16be(s, i), u16be(s, i + 2)
    if len < 4 or i + len - 1 > last then return nil, "parameter length runs past its chunk" end
    out[#out + 1] = { type = t, value = sub(s, i + 4, i + len - 1), len = len }
    i = i + math.floor((len + 3) / 4) * 4
  end
  return out
end
M.params = params

local function address_param(p)
  if p.type == 5 and #p.value == 4 then return p.value end
  if p.type == 6 and #p.value == 16 then return p.value end
  return nil
end

local function is_wildcard(raw)
  return raw == string.rep("\0", #raw)
end

-- A SACK or NR-SACK chunk (type t, length len) whose value starts at s[v]
-- (RFC 9260 §3.3.4; NR-SACK: draft-tuexen-tsvwg-sctp-multipath, its NR gap
-- blocks follow the gap blocks): its cumulative TSN ack, where its gap
-- blocks start in s, how many there are (NR ones included) and how many
-- duplicate TSNs it reports; or nil and why it is malformed. Shared by
-- decode_chunk and the pre-scan, which reads SACKs in place.
local function sack_fields(s, v, t, len)
  local fixed = t == M.SACK and 16 or 20
  if len < fixed then return nil, "chunk shorter than its fixed fields" end
  local b1, b2, b3, b4, _, _, _, _, g1, g2, x1, x2, y1, y2 = byte(s, v, v + 13)
  local ngap, nnr, ndup = g1 * 256 + g2, 0, x1 * 256 + x2
  if t == M.NR_SACK then nnr, ndup = ndup, y1 * 256 + y2 end
  if len < fixed + 4 * (ngap + nnr + ndup) then
    return nil, (t == M.SACK and "SACK" or "NR-SACK") .. " shorter than its lists"
  end
  return ((b1 * 256 + b2) * 256 + b3) * 256 + b4, v + fixed - 4, ngap + nnr, ndup
end
M.sack_fields = sack_fields

-- Decodes the chunk at s[i..] of an SCTP packet ending at s[n] (i + 3 <= n):
-- a table {type, flags, length, and the chunk's own fields}, or nil and
-- why it is malformed.
local function decode_chunk(s, i, n)
  local t, flags, l1, l2 = byte(s, i, i + 3)
  local len = l1 * 256 + l2
  if len < 4 then return nil, "chunk length below 4" end
  if i + len - 1 > n then return nil, "chunk length runs past the packet" end
  local c = { type = t, flags = flags, length = len }
  local v, last = i + 4, i + len - 1
  if (t == M.DATA and len >= 16) then
    c.tsn = u32be(s, v)
  elseif (t == M.I_DATA and len >= 20) then
    c.tsn = u32be(s, v)
  elseif t == M.SACK or t == M.NR_SACK then
    local cum, at, ngaps, ndups = sack_fields(s, v, t, len)
    if not cum then return nil, at end
    c.cum, c.gaps, c.dups = cum, {}, ndups
    for g = 0, ngaps - 1 do
      c.gaps[#c.gaps + 1] = { u16be(s, at + 4 * g), u16be(s, at + 2 + 4 * g) }
    end
  elseif (t == M.INIT or t == M.INIT_ACK) and len >= 20 then
    c.initiate_tag = u32be(s, v)
    local ps, perr = params(s, v + 16, last)
    if not ps then return nil, perr end
    c.addresses = {}
    for _, p in ipairs(ps) do
      local a = address_param(p)
      if a then c.addresses[#c.addresses + 1] = a end
    end
  elseif t == M.HEARTBEAT or t == M.HEARTBEAT_ACK then
    local ps, perr = params(s, v, last)
    if not ps then return nil, perr end
    for _, p in ipairs(ps) do
      if p.type == 1 then c.info = p.value end
    end
    if not c.info then return nil, "heartbeat without Heartbeat Info" end
  elseif t == M.ASCONF and len >= 8 then
    c.serial = u32be(s, v)
    local ps, perr = params(s, v + 4, last)
    if not ps then return nil, perr end
    c.requests = {}
    for _, p in ipairs(ps) do
      local op = (p.type == 0xc001 and "add_ip") or (p.type == 0xc002 and "delete_ip")
        or (p.type == 0xc004 and "set_primary") or nil
      -- Other parameters (the Address Parameter first) are not requests.
      if op then
        if #p.value < 4 then return nil, "ASCONF parameter shorter than its correlation id" end
        local nested, nerr = params(p.value, 5, #p.value)
        local address = nested and nested[1] and address_param(nested[1])
        if not address then
          return nil, nerr or "ASCONF parameter without an address"
        end
        c.requests[#c.requests + 1] = {
          op = op, corr = u32be(p.value, 1), address = address,
          wildcard = is_wildcard(address),
        }
      end
    end
  elseif t == M.ASCONF_ACK and len >= 8 then
    c.serial = u32be(s, v)
    local ps, perr = params(s, v + 4, last)
    if not ps then return nil, perr end
    c.responses = {}
    for _, p in ipairs(ps) do
      if p.type == 0xc005 and #p.value >= 4 then
        c.responses[#c.responses + 1] = { corr = u32be(p.value, 1) }
      elseif p.type == 0xc003 and #p.value >= 4 then
        local nested = params(p.value, 5, #p.value)
        c.responses[#c.responses + 1] = {
          corr = u32be(p.value, 1), cause = nested and nested[1] and nested[1].type or 0,
        }
      end
    end
  elseif (t == M.SHUTDOWN and len >= 8) then
    c.cum = u32be(s, v)
  elseif t == M.DATA or t == M.I_DATA or t == M.INIT
      or t == M.INIT_ACK or t == M.ASCONF or t == M.ASCONF_ACK or t == M.SHUTDOWN then
    return nil, "chunk shorter than its fixed fields"
  end
  return c
end
M.decode_chunk = decode_chunk

-- Decodes an SCTP packet: {sport, dport, vtag, chunks = {...}} and an
-- error string when a chunk is malformed (the chunks before it are kept).
function M.parse_sctp(s)
  local n = #s
  if n < 12 then return nil, "SCTP common header truncated" end
  local pkt = { sport = u16be(s, 1), dport = u16be(s, 3), vtag = u32be(s, 5), chunks = {} }
  local i, err = 13, nil
  while i + 3 <= n do
    local c, cerr = decode_chunk(s, i, n)
    if not c then err = cerr; break end
    pkt.chunks[#pkt.chunks + 1] = c
    i = i + floor((c.length + 3) / 4) * 4
  end
  return pkt, err
end

-- Capture files --------------------------------------------------------

-- base ^ e, an integer under Lua 5.3+ (where ^ gives a float) while it
-- fits (e <= most).
local function power(base, e, most)
  if e > most then return base ^ e end
  local u = 1
  for _ = 1, e do u = u * base end
  return u
end

-- (hi * 2^32 + lo) / units as whole seconds and nanoseconds, exactly: a
-- Lua 5.2 number holds integers only up to 2^53, so divide 16 bits at a time.
function M.stamp(hi, lo, units)
  local limbs = { math.floor(hi / 65536), hi % 65536, math.floor(lo / 65536), lo % 65536 }
  local q, r = 0, 0
  for _, limb in ipairs(limbs) do
    local cur = r * 65536 + limb
    local d = math.floor(cur / units)
    r = cur - d * units
    q = q * 65536 + d
  end
  local nsec
  if 1000000000 % units == 0 then
    -- (floor: an integer under Lua 5.3+, where / gives a float)
    nsec = r * math.floor(1000000000 / units)
  else
    nsec = math.floor(r / units * 1000000000 + 0.5)
  end
  return q, nsec
end

-- Capture files are read a chunk at a time (M.chunk bytes, a MiB; tests
-- make it small): the pre-scan of a 100 MB file holds a MiB of it, not
-- the whole file (and its copy while it is read) until it is collected.
M.chunk = 1048576

-- data[i..] and more bytes from read(n) (a string of at most n bytes, nil
-- at the end), until there are at least `need`: the new data, 1, its
-- size; nil when the input ends first.
local function refill(read, data, i, need)
  local parts = { sub(data, i) }
  local have = #parts[1]
  while have < need do
    local more = read(math.max(M.chunk, need - have))
    if not more or #more == 0 then return nil end
    parts[#parts + 1] = more
    have = have + #more
  end
  local d = table.concat(parts)
  return d, 1, #d
end

-- Walks a pcap or pcapng file given as read (see refill); calls
-- on_frame(number, sec, nsec, link, data, first, last) for every record
-- Wireshark numbers as a frame, where the frame is data[first..last] (no
-- copy; data holds a part of the file and is valid during the call),
-- until on_frame returns true. Returns true, or nil and a reason (gzip
-- and unknown formats are not read here).
local function walk(read, on_frame)
  local data, i, size = refill(read, "", 1, 4)
  if not data then return nil, "too short for a capture" end
  local magic = sub(data, 1, 4)
  if magic == "\212\195\178\161" or magic == "\161\178\195\212"
      or magic == "\77\60\178\161" or magic == "\161\178\60\77" then
    local le = (magic == "\212\195\178\161" or magic == "\77\60\178\161")
    local nanos = (magic == "\77\60\178\161" or magic == "\161\178\60\77")
    local r32 = le and u32le or u32be
    data, i, size = refill(read, data, 1, 24)
    if not data then return nil, "pcap header truncated" end
    local link, number = r32(data, 21), 0
    i = 25
    local scale = nanos and 1 or 1000
    -- One record header per frame: its 12 bytes read in one call.
    while true do
      if i + 15 > size then
        data, i, size = refill(read, data, i, 16)
        if not data then break end
      end
      local s1, s2, s3, s4, f1, f2, f3, f4, c1, c2, c3, c4 = byte(data, i, i + 11)
      local sec, frac, caplen
      if le then
        sec = ((s4 * 256 + s3) * 256 + s2) * 256 + s1
        frac = ((f4 * 256 + f3) * 256 + f2) * 256 + f1
        caplen = ((c4 * 256 + c3) * 256 + c2) * 256 + c1
      else
        sec = ((s1 * 256 + s2) * 256 + s3) * 256 + s4
        frac = ((f1 * 256 + f2) * 256 + f3) * 256 + f4
        caplen = ((c1 * 256 + c2) * 256 + c3) * 256 + c4
      end
      if i + 15 + caplen > size then
        data, i, size = refill(read, data, i, 16 + caplen)
        if not data then break end
      end
      number = number + 1
      if on_frame(number, sec, frac * scale, link, data, i + 16, i + 15 + caplen) then return true end
      i = i + 16 + caplen
    end
    return true
  elseif magic == "\10\13\13\10" then
    local number, le = 0, true
    local ifaces = {}
    local last_sec, last_nsec = 0, 0
    while true do
      if i + 11 > size then
        data, i, size = refill(read, data, i, 12)
        if not data then break end
      end
      local bt = u32le(data, i)
      if bt == 0x0a0d0d0a then
        le = (u32le(data, i + 8) == 0x1a2b3c4d)
        ifaces = {}
      end
      local r32 = le and u32le or u32be
      local r16 = le and u16le or u16be
      bt = r32(data, i)
      local len = r32(data, i + 4)
      if len < 12 then break end
      if i + len - 1 > size then
        data, i, size = refill(read, data, i, len)
        if not data then break end
      end
      if bt == 1 then
        local iface = { link = r16(data, i + 8), units = 1000000 }
        local o = i + 16
        while o + 3 <= i + len - 5 do
          local code, olen = r16(data, o), r16(data, o + 2)
          if code == 0 then break end
          if code == 9 and olen >= 1 then
            local v = byte(data, o + 4)
            if v < 128 then iface.units = power(10, v, 18) else iface.units = power(2, v - 128, 62) end
          end
          o = o + 4 + math.floor((olen + 3) / 4) * 4
        end
        ifaces[#ifaces + 1] = iface
      elseif (bt == 6 and len < 32) or (bt == 3 and len < 16) then
        break -- a packet block too short for its header: Wireshark stops here too
      elseif bt == 6 then
        local id, hi, lo, caplen = r32(data, i + 8), r32(data, i + 12), r32(data, i + 16), r32(data, i + 20)
        local iface = ifaces[id + 1]
        -- Never past the block (a corrupt length would read past the data).
        caplen = math.max(0, math.min(caplen, len - 32))
        number = number + 1
        local stop
        if iface then
          last_sec, last_nsec = M.stamp(hi, lo, iface.units)
          stop = on_frame(number, last_sec, last_nsec, iface.link, data, i + 28, i + 27 + caplen)
        else
          stop = on_frame(number, last_sec, last_nsec, M.NON_PACKET, data, i, i - 1)
        end
        if stop then return true end
      elseif bt == 3 then
        local caplen = math.max(0, math.min(r32(data, i + 8), len - 16))
        number = number + 1
        local iface = ifaces[1]
        if on_frame(number, last_sec, last_nsec, iface and iface.link or M.NON_PACKET, data, i + 12, i + 11 + caplen) then
          return true
        end
      elseif bt == 0x00000bad or bt == 0x40000bad or bt == 9 then
        number = number + 1
        if on_frame(number, last_sec, last_nsec, M.NON_PACKET, data, i, i - 1) then return true end
      end
      i = i + len
    end
    return true
  elseif sub(data, 1, 2) == "\31\139" then
    return nil, "gzip-compressed (not pre-scanned)"
  end
  return nil, "not a pcap or pcapng file"
end

-- Reads a whole pcap or pcapng file (see walk).
function M.read_capture(path, on_frame)
  local f = io.open(path, "rb")
  if not f then return nil, "cannot open " .. tostring(path) end
  local ok, err = walk(function(n) return f:read(n) end, on_frame)
  f:close()
  return ok, err
end

-- A time as Wireshark gives it to Lua (pinfo.abs_ts: seconds in a double,
-- exact to the microsecond at today's epoch, not to the nanosecond) as
-- whole seconds and nanoseconds, rounded to the microsecond. Integers under
-- Lua 5.3+ too (math.floor gives integers there, and the literals are
-- integers), as the pre-scan's times are: a float would show as "5.0".
function M.split_abs_ts(abs_ts)
  local us = floor(abs_ts * 1000000 + 0.5)
  local sec = floor(us / 1000000)
  return sec, (us - sec * 1000000) * 1000
end

-- The first frame of a capture file, from its first 64 KiB: its captured
-- length and time (sec, nsec); nil when there is none there.
function M.first_frame(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local budget = 65536
  local length, sec, nsec
  walk(function(n)
    if budget <= 0 then return nil end
    n = math.min(n, budget)
    budget = budget - n
    return f:read(n)
  end, function(_, s, ns, link, _, first, last)
    length, sec, nsec = last - first + 1, s, ns
    if link == M.NON_PACKET then length = 0 end
    return true
  end)
  f:close()
  return length, sec, nsec
end

return M
