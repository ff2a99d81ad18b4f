-- SCTP Handover: a Wireshark / tshark (4.0+) post-dissector that annotates
-- ASCONF / ASCONF-ACK pairs, heartbeat pairs with per-path RTT, path
-- identity, data path switches with their interrupt and latency
-- components, retransmissions and duplicates, and the inferred path state
-- (potentially failed, inactive, active, error counter cleared, spurious
-- T3 expiry). The logic lives in
-- the pure-Lua core (sctpho_core.lua, sctpho_wire.lua) and the field table
-- generated from the analyzer's descriptors (sctpho_fields.lua); this file
-- is the thin Wireshark binding.
--
--   tshark -X lua_script:dissector/sctpho.lua -r capture.pcap -Y sctpho
--   (or `make install-plugin`: this file into the personal plugins folder,
--   ~/.local/lib/wireshark/plugins, the modules beside it in
--   ~/.local/lib/wireshark/sctpho-lua, where `require` finds them and
--   Wireshark, which loads every .lua file under the plugins folder as a
--   plugin of its own, does not look)

local here = (debug.getinfo(1, "S").source or ""):match("^@(.*[/\\])") or "./"
-- The modules beside this file (a checkout's dissector/), or installed.
package.path = here .. "?.lua;" .. here .. "../sctpho-lua/?.lua;" .. package.path
local Core = require("sctpho_core")
local W = require("sctpho_wire")
local DESCRIPTORS = require("sctpho_fields")

local proto = Proto("sctpho", "SCTP Handover")

-- The fields and expert infos, from the descriptors the C tier registers
-- too: F[key] and E[key], in the descriptors' order.
local function protofield(d)
  local t = d.type
  if t == "uint16" or t == "uint32" then
    return ProtoField[t](d.abbrev, d.name, base.DEC, nil, nil, d.blurb)
  elseif t == "double" then
    return ProtoField.double(d.abbrev, d.name, d.blurb)
  elseif t == "string" then
    -- (BASE_NONE, as the C tier registers it: a display must be given for
    -- the description to be taken as one)
    return ProtoField.string(d.abbrev, d.name, base.ASCII or base.NONE, d.blurb)
  elseif t == "bool" then
    return ProtoField.bool(d.abbrev, d.name, nil, nil, nil, d.blurb)
  elseif t == "framenum" then
    -- (frametype: Wireshark 3.6 and later)
    local kind = frametype and d.frametype and frametype[d.frametype] or nil
    return ProtoField.framenum(d.abbrev, d.name, base.NONE, kind, nil, d.blurb)
  end
  error("sctpho_fields.lua: field " .. d.abbrev .. " of unknown type " .. tostring(t))
end

local F, list = {}, {}
-- The latency components' fields, in the descriptors' order: {key, the
-- component's name}.
local COMPONENT_FIELDS = {}
for _, d in ipairs(DESCRIPTORS.fields) do
  F[d.key] = protofield(d)
  list[#list + 1] = F[d.key]
  local component = d.abbrev:match("^sctpho%.component%.(.+)$")
  if component then COMPONENT_FIELDS[#COMPONENT_FIELDS + 1] = { d.key, component } end
end
proto.fields = list

local E, experts = {}, {}
for _, d in ipairs(DESCRIPTORS.experts) do
  E[d.key] = ProtoExpert.new(d.abbrev, d.summary, expert.group[d.group], expert.severity[d.severity])
  experts[#experts + 1] = E[d.key]
end
proto.experts = experts

proto.prefs.prescan = Pref.bool("Pre-scan the capture file", true,
  "Read the whole capture file (named on the command line) once at the start, so that "
  .. "look-ahead annotations (ASCONF-ACK frame, unanswered ASCONF) are complete in a single pass.")
proto.prefs.lazy = Pref.bool("Analyse only when the output is used (tshark)", true,
  "In tshark, analyse the capture only when something uses this plugin's output (a tree, the "
  .. "columns, a filter or tap on its fields, -z sctpho): a run that uses none of it pays almost nothing.")
proto.prefs.unconfirmed_note = Pref.bool("Note DATA to unconfirmed addresses", true,
  "Add an expert note to DATA sent to an address not yet confirmed by a HEARTBEAT ACK.")
-- The thresholds of the inferred path state, as the analyzer's options
-- (--pmr, --pf-retrans, --no-pf, --rto-max-ms): pass the sender's.
local D = Core.DEFAULTS
proto.prefs.pmr = Pref.uint("Path.Max.Retrans", D.pmr,
  "Errors (T3 expiries, unanswered HEARTBEATs) after which a path is inferred inactive: "
  .. "inactive when its error counter exceeds this (RFC 9260 Path.Max.Retrans, Linux's net.sctp.path_max_retrans).")
proto.prefs.pf = Pref.bool("Infer the potentially-failed state", true,
  "Infer RFC 7829's potentially-failed state (Linux's net.sctp.pf_enable); off for a sender with the state off.")
proto.prefs.pf_retrans = Pref.uint("Potentially-failed threshold (PFMR)", D.pf_retrans,
  "A path is inferred potentially failed when its error counter exceeds this (RFC 7829 PFMR, Linux's "
  .. "net.sctp.pf_retrans), while below Path.Max.Retrans: at or above Path.Max.Retrans - 1 the state is off, "
  .. "as in Linux.")
proto.prefs.rto_max_ms = Pref.uint("RTO.Max (ms)", D.rto_max_ms,
  "The sender's RTO.Max: a T3 expiry whose DATA was sent more than RTO.Max before a reset of the path's "
  .. "error counter came before that reset and is not charged (docs/metrics.md).")

-- This process's command line (argv).
local ARGS = {}
do
  local f = io.open("/proc/self/cmdline", "rb")
  if f then
    local raw = f:read("*a") or ""
    f:close()
    for a in raw:gmatch("([^%z]*)%z") do ARGS[#ARGS + 1] = a end
  end
end

local function cmdline_file()
  for i, a in ipairs(ARGS) do
    local file = (a == "-r" and ARGS[i + 1]) or a:match("^%-r(.+)$")
    -- "-" is the standard input (a pipe): read incrementally.
    if file then return file ~= "-" and file or nil end
  end
  -- `wireshark capture.pcapng`: a last argument naming a readable file.
  local last = ARGS[#ARGS]
  if last and #ARGS > 1 and not last:match("^%-") then
    local probe = io.open(last, "rb")
    if probe then probe:close(); return last end
  end
  return nil
end

-- tshark dissects every frame of a pass alike: with or without a tree
-- (visible, or "fake" for filters and taps), with or without columns, the
-- same fields referenced. Wireshark's GUI and sharkd do not (the packet
-- list, the details pane and their taps each ask differently).
local TSHARK = not gui_enabled() and ((ARGS[1] or ""):match("([^/\\]*)$") or ""):match("^tshark") ~= nil
-- Frames on which nothing of this plugin is shown, filtered on or tapped
-- are skipped: in tshark, unless its command line may ask for what Lua
-- cannot see being asked for. Lua can ask whether a field of ours is
-- referenced (TreeItem:referenced) but not whether the expert tap has a
-- listener (`-z expert`: no tree, yet it gets every expert info) or an
-- `_ws.expert` field is referenced, nor whether the protocol hierarchy
-- (`-z io,phs`, which counts the protocols in a tree that references
-- nothing) is taken; a display filter macro may hide any of these.
local SKIP_QUIET = TSHARK
-- A frame with nothing of its own beyond its path (most frames) needs no
-- sctpho item in a tree that is not printed and references none of the
-- path fields, unless the protocol itself is referenced (`-Y sctpho`),
-- which Lua cannot tell from a field of it being referenced: skipped only
-- if the command line names no `sctpho` but as a field prefix (nor asks
-- for colouring rules, which may).
local SKIP_BARE = true
-- Unless two passes are asked for (-2, alone or among other one-letter
-- options: any such argument with a 2), tshark dissects each frame once
-- and never again, so pinfo.visited (a C call per frame) need not be read.
local ONE_PASS = TSHARK
for i = 2, #ARGS do
  local a = ARGS[i]:lower()
  if a:match("^%-[^%-]") and a:find("2", 1, true) then ONE_PASS = false end
  if a:find("expert", 1, true) or a:find("phs", 1, true) or a:find("$", 1, true) then SKIP_QUIET = false end
  for at in a:gmatch("()sctpho") do
    if a:sub(at + 6, at + 6) ~= "." then SKIP_BARE = false end
  end
  if a:find("color", 1, true) then SKIP_BARE = false end
end

-- State, reset whenever a file is (re)opened. mode: "prescanned" (the file
-- named on the command line, analysed at once), "deferred" (that file, to
-- be analysed when something asks for the plugin's output), "incremental"
-- (frames analysed as Wireshark first dissects them).
local core, mode, lengths, deferred_path
local skip_quiet = false
-- Per pass (index 1: first pass, 2: re-dissection), in tshark: whether the
-- plugin's output is wanted, and which fields.
local pass_wanted, pass_fields = {}, {}

local handle -- this dissector, for TreeItem:referenced

-- Is anything of this plugin shown or filtered on in this dissection? A
-- visible tree, a field of ours referenced by a filter or a tap (any
-- sctpho field, expert or the protocol: `tree:referenced` of the protocol,
-- i.e. proto_field_is_referenced; false for a NULL tree), or columns (with
-- no column info, Wireshark's Lua Column prints as "(info)").
local function wanted(tree, pinfo)
  if tree:referenced(handle) then return true end
  return tostring(pinfo.cols.info) ~= "(info)" or tostring(pinfo.cols.protocol) ~= "(protocol)"
end

-- A new analysis with the preferences' thresholds.
local function new_core()
  local prefs = proto.prefs
  return Core.new({ pmr = prefs.pmr, pf_retrans = prefs.pf and prefs.pf_retrans or false,
    rto_max_ms = prefs.rto_max_ms })
end

local function prescan(path)
  local ok, done = pcall(core.scan_file, core, path, lengths)
  if ok and done then
    mode = "prescanned"
  else
    core, lengths, mode = new_core(), {}, "incremental"
  end
end

local function start(tvb, pinfo, tree)
  core, lengths, deferred_path = new_core(), {}, nil
  skip_quiet = SKIP_QUIET and proto.prefs.lazy
  mode = "incremental"
  if not proto.prefs.prescan then return end
  local path = cmdline_file()
  if not path then return end
  if skip_quiet and pinfo.number == 1 and not wanted(tree, pinfo) then
    -- Nothing asks for the plugin's output yet (e.g. `tshark -q -z
    -- conv,sctp`): the pre-scan waits until something does, if ever. The
    -- file is the one Wireshark reads (its first frame matches), so no
    -- frame need be fed meanwhile.
    local length, sec, nsec = W.first_frame(path)
    if length == tvb:len() and math.abs(sec + nsec / 1e9 - pinfo.abs_ts) < 1e-5 then
      mode, deferred_path = "deferred", path
      return
    end
  end
  prescan(path)
end

function proto.init()
  core, mode, lengths, deferred_path = nil, nil, nil, nil
  pass_wanted, pass_fields = {}, {}
end

-- The IP header inside a frame of another link type: the first offset at
-- which a consistent IPv4/IPv6 header carrying SCTP starts.
local OFFSETS = { 14, 18, 22, 16, 20, 4, 0 }
local function guess_sctp(bytes)
  for _, off in ipairs(OFFSETS) do
    local ip = bytes:sub(off + 1)
    local v = #ip > 0 and math.floor(ip:byte(1) / 16) or 0
    local ok = false
    if v == 4 and #ip >= 20 then
      ok = W.u16be(ip, 3) <= #ip and W.u16be(ip, 3) >= 20 and (ip:byte(1) % 16) >= 5
    elseif v == 6 and #ip >= 40 then
      ok = W.u16be(ip, 5) + 40 <= #ip
    end
    if ok then
      local src, dst, sctp = W.sctp_of_ip(ip)
      if src then return src, dst, sctp end
    end
  end
  return nil
end

-- The frame's link type, from Wireshark's encapsulation: frames are then
-- decoded as the pre-scan decodes them (snaplen-cut ones included). Only
-- asked for where frames may be read one by one (no file named on the
-- command line: a pipe, a live capture, the GUI's File > Open): a Lua
-- field extractor makes tshark dissect every frame, even with `-q` and
-- nothing to print (30 times plain tshark's time on 100 MB), and a file
-- named is pre-scanned. Read one by one otherwise, a frame's link type is
-- guessed.
local encap_type = not cmdline_file() and Field.new("frame.encap_type") or nil
local LINK_OF_ENCAP = {}
for name, link in pairs({ ETHERNET = W.LINK_ETHERNET, SLL = W.LINK_SLL, SLL2 = W.LINK_SLL2,
    RAW_IP = W.LINK_RAW, RAW_IP4 = W.LINK_IPV4, RAW_IP6 = W.LINK_IPV6, NULL = W.LINK_NULL,
    LOOP = W.LINK_LOOP }) do
  local encap = wtap_encaps and wtap_encaps[name]
  if encap then LINK_OF_ENCAP[encap] = link end
end

local function feed_frame(tvb, pinfo)
  local bytes = tvb:raw()
  local encap = encap_type and encap_type()
  local link = encap and LINK_OF_ENCAP[encap.value]
  local src, dst, sctp
  if link then
    src, dst, sctp = W.sctp_in_frame(link, bytes)
  else
    src, dst, sctp = guess_sctp(bytes)
  end
  if src then
    -- (to the microsecond: see W.split_abs_ts)
    local sec, nsec = W.split_abs_ts(pinfo.abs_ts)
    core:packet(pinfo.number, sec, nsec, src, dst, sctp)
  end
end

local function feed(tvb, pinfo)
  local ok, err = pcall(feed_frame, tvb, pinfo)
  if not ok then
    Core.add_expert(core:annotation(pinfo.number), "note", "plugin could not decode this frame: " .. tostring(err))
  end
end

local function add_expert(tree, kind, text, name)
  local e = E.malformed
  if name and E[name] then e = E[name]
  elseif text:find("path switch", 1, true) then e = E.switch
  elseif text:find("without ASCONF%-ACK") then e = E.no_ack
  elseif text:find("reports an error", 1, true) then e = E.ack_error
  elseif text:find("ASCONF retransmission", 1, true) then e = E.asconf_retransmission
  elseif text:find("not yet confirmed", 1, true) then
    if not proto.prefs.unconfirmed_note then return end
    e = E.unconfirmed
  elseif text:find("duplicate", 1, true) then e = E.duplicate
  end
  tree:add_proto_expert_info(e, text)
end

-- Which fields are shown or filtered on, and whether a frame with nothing
-- beyond its path can be left out (see SKIP_BARE; a NULL tree keeps
-- nothing, so there only expert infos and the Info column text matter).
-- In tshark, the same for every frame of a pass: asked once per pass (a
-- field not referenced by a tree that is not printed would not be kept
-- anyway). Elsewhere, or with `-o sctpho.lazy:FALSE`: everything.
local EVERYTHING = { fields = setmetatable({}, { __index = function() return true end }), bare = false }
local VIEW_FIELDS = { "assoc", "path", "path_src", "path_dst", "direction" }
local function wanted_here(tree, pass)
  if not skip_quiet then return EVERYTHING end
  local w = pass_fields[pass]
  if not w then
    local fields = {}
    for name, f in pairs(F) do fields[name] = tree:referenced(f) end
    local view = false
    for _, name in ipairs(VIEW_FIELDS) do view = view or fields[name] end
    -- A NULL tree has no item (the wslua fake item's text is nil).
    local null_tree = tree.text == nil
    w = { fields = fields, bare = null_tree or (SKIP_BARE and not view) }
    pass_fields[pass] = w
  end
  return w
end

-- Per frame, nothing is built that could be built once: a packet's view
-- (association, path, addresses as text, direction) is shared by the
-- frames of its path.
local NO_RESULTS = {}
-- TreeItem's add, looked up once: every TreeItem has the same, and wslua
-- resolves t:add through a C __index function on each call.
local tree_add

local function annotate(v, a, pinfo, tree, unanswered, w)
  local add = tree_add
  local t = add(tree, proto)
  if v then
    if w.assoc then add(t, F.assoc, v.assoc) end
    if w.path then add(t, F.path, v.path) end
    if w.path_src then add(t, F.path_src, v.src_text) end
    if w.path_dst then add(t, F.path_dst, v.dst_text) end
    if w.direction then add(t, F.direction, v.direction) end
  end
  if a then
    if w.event then
      for _, e in ipairs(a.events) do add(t, F.event, e) end
    end
    if a.asconf_serial and w.asconf_serial then add(t, F.asconf_serial, a.asconf_serial) end
    if a.asconf_ack and w.asconf_ack_frame then add(t, F.asconf_ack_frame, a.asconf_ack) end
    local transmission = a.asconf_transmission
    if transmission then
      if w.asconf_retransmission then add(t, F.asconf_retransmission, transmission > 1) end
      if w.asconf_transmission then add(t, F.asconf_transmission, transmission) end
      if a.asconf_first_frame and w.asconf_first_frame then add(t, F.asconf_first_frame, a.asconf_first_frame) end
    end
    if a.asconf_request then
      if w.asconf_request_frame then add(t, F.asconf_request_frame, a.asconf_request) end
      if w.asconf_rtt then add(t, F.asconf_rtt, a.asconf_rtt) end
      if a.asconf_repeated and w.asconf_repeated then add(t, F.asconf_repeated, true) end
    end
    if w.asconf_result then
      for _, r in ipairs(a.asconf_results or NO_RESULTS) do add(t, F.asconf_result, r) end
    end
    if a.hb_ack and w.hb_ack_frame then add(t, F.hb_ack_frame, a.hb_ack) end
    if a.hb_request then
      if w.hb_request_frame then add(t, F.hb_request_frame, a.hb_request) end
      if w.hb_rtt then add(t, F.hb_rtt, a.hb_rtt) end
      if w.hb_path then add(t, F.hb_path, a.hb_path) end
    end
    local s = a.switch
    if s then
      if w.switch_from_path then add(t, F.switch_from_path, s.from_path) end
      if w.switch_to_path then add(t, F.switch_to_path, s.to_path) end
      if w.switch_kind then add(t, F.switch_kind, s.kind) end
      if s.interrupt and w.switch_interrupt then add(t, F.switch_interrupt, s.interrupt) end
      if s.last_old and w.switch_last_old_frame then add(t, F.switch_last_old_frame, s.last_old) end
      if s.first_new and w.switch_first_new_frame then add(t, F.switch_first_new_frame, s.first_new) end
      -- The latency components the Lua core has for the switch: all but
      -- those anchored on --events, the total handover latency and the
      -- transport-layer latency once the TSNs around the gap are
      -- acknowledged (dissector/README.md).
      local values = s.components
      for _, c in ipairs(COMPONENT_FIELDS) do
        local v = values[c[2]]
        if v and w[c[1]] then add(t, F[c[1]], v) end
      end
      pinfo.cols.info:append(string.format(" [%s path switch %d->%d]", s.kind, s.from_path, s.to_path))
    end
    for _, state in ipairs(a.path_states or NO_RESULTS) do
      if w.path_state then add(t, F.path_state, state[1]) end
      if w.path_state_path then add(t, F.path_state_path, state[2]) end
    end
    for _, x in ipairs(a.expert) do add_expert(t, x[1], x[2], x[3]) end
  end
  for _ = 1, unanswered do add_expert(t, "warning", Core.NO_ACK) end
end

local tvb_len -- Tvb's len, looked up once (see tree_add)

function proto.dissector(tvb, pinfo, tree)
  if not core then
    tree_add, tvb_len = tree.add, tvb.len
    start(tvb, pinfo, tree)
  end
  local visited = not ONE_PASS and pinfo.visited
  local pass = visited and 2 or 1
  if skip_quiet then
    local on = pass_wanted[pass]
    if on == nil then
      on = wanted(tree, pinfo)
      pass_wanted[pass] = on
    end
    if not on then
      -- Nothing to show: only frame-by-frame analysis must go on.
      if mode == "incremental" and not visited then feed(tvb, pinfo) end
      return
    end
  end
  if mode == "deferred" then prescan(deferred_path) end
  local number = pinfo.number
  if mode == "prescanned" and lengths[number] ~= tvb_len(tvb) then
    -- Not the file we pre-scanned (e.g. another file opened in the GUI).
    core, lengths, mode = new_core(), {}, "incremental"
  end
  if mode == "incremental" and not visited then feed(tvb, pinfo) end
  local v, a = core.views[number], core.ann[number]
  local here = (v or a) and wanted_here(tree, pass)
  if a or (v and not here.bare) then
    -- Read incrementally, a re-dissection (the GUI, `-2`) comes after the
    -- frames read so far: ASCONFs still unanswered get the warning that a
    -- pre-scan gives.
    local unanswered = 0
    if mode == "incremental" and visited and a and a.asconf_serial and v then
      unanswered = core:unanswered(number, v.assoc)
    end
    local ok, err = pcall(annotate, v, a, pinfo, tree, unanswered, here.fields)
    if not ok then
      tree:add_proto_expert_info(E.malformed, "sctpho: " .. tostring(err))
    end
  end
end

register_postdissector(proto)
handle = Dissector.get("sctpho")

-- Statistics: a GUI window, and `tshark -z sctpho` for the same text.
local function summary_text()
  if not core then return "SCTP Handover: no capture analysed yet" end
  if mode == "deferred" then prescan(deferred_path) end
  core:finish()
  return core:summary()
end

if gui_enabled() then
  register_menu("SCTP Handover", function()
    local w = TextWindow.new("SCTP Handover")
    w:set(summary_text())
  end, MENU_STAT_UNSORTED)
end

register_stat_cmd_arg("sctpho", function()
  local tap = Listener.new("frame")
  function tap.draw() print(summary_text()) end
end)
