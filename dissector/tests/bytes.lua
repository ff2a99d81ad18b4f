-- SCTP packets from literal bytes for the Lua core's tests and cost
-- measurements (RFC 9260 §3 chunk layout; RFC 5061 §4.1 ASCONF): one
-- copy of the builders test_core.lua, test_tsn.lua and cost.lua share.
local B = {}

function B.be32(v)
  return string.char(math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256, math.floor(v / 256) % 256, v % 256)
end
function B.be16(v) return string.char(math.floor(v / 256) % 256, v % 256) end
-- A chunk padded to 4 bytes; DATA gets the B and E flags (one fragment).
function B.chunk(kind, value)
  local len = 4 + #value
  local c = string.char(kind, kind == 0 and 3 or 0, math.floor(len / 256), len % 256) .. value
  while #c % 4 ~= 0 do c = c .. "\0" end
  return c
end
function B.data(tsn) return B.chunk(0, B.be32(tsn) .. "\0\0\0\0\0\0\0\0data") end
function B.sack(cum) return B.chunk(3, B.be32(cum) .. "\0\1\0\0\0\0\0\0") end
-- A SACK with gap blocks {{start, end}, ...} (offsets from `cum`).
function B.sack_gaps(cum, gaps)
  local g = {}
  for _, x in ipairs(gaps) do g[#g + 1] = B.be16(x[1]) .. B.be16(x[2]) end
  return B.chunk(3, B.be32(cum) .. "\0\1\0\0" .. B.be16(#gaps) .. "\0\0" .. table.concat(g))
end
function B.init(kind, tag, tsn) return B.chunk(kind, B.be32(tag) .. "\0\1\0\0\0\10\0\10" .. B.be32(tsn)) end
-- An IPv4 Address Parameter.
function B.ap(a) return "\0\5\0\8" .. a end
-- An ASCONF of one request (its correlation id the serial).
function B.asconf(serial, lookup, req, addr)
  return B.chunk(0xc1, B.be32(serial) .. B.ap(lookup) .. req .. "\0\16" .. B.be32(serial) .. B.ap(addr))
end
function B.ack(serial) return B.chunk(0x80, B.be32(serial)) end
-- A packet between ports 5000 and 5000, checksum zero.
function B.pkt(vtag, ...) return "\19\136\19\136" .. B.be32(vtag) .. "\0\0\0\0" .. table.concat({ ... }) end

return B
