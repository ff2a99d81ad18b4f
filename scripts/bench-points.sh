#!/usr/bin/env bash
# Memory of `sctp-handover analyze --point` against the size of the pair of
# captures (issue 32: "memory stays bounded by the associations alive in
# all points together"; docs/points.md). Not a timed test: it prints, for a
# pair of captures of about BENCH_POINTS_MB MB and for one a tenth of it,
# the packets, the wall seconds and the peak RSS, so that one sees whether
# memory grows with the size.
#
# The pair is one long association: a sample run (sample-captures/
# koh-kim-1: the MN's and the CN's captures of one handover, 3.5 s) whose
# steady part before the handover (DATA both ways every 50 ms, SACKs,
# HEARTBEATs) is repeated as often as the size asks, each copy later by
# the part's length and with its DATA TSNs and SACK acks moved on by the
# TSNs the part uses; the handshake comes once before, the handover and
# the shutdown once after. So the pair has one association and the same
# handovers at any size: only the packets grow. The checksums are left as
# they were: both points see the same bytes, and the analysis does not
# verify them by default. Captures are written to $TMPDIR (default /tmp)
# and deleted at the end.
#
# The binary: the release build when it is newer than every source file,
# else a debug build (`cargo build -p sctp-handover-cli`; the output says
# so): memory is the figure here, and a debug analysis of the 1 GB pair
# takes under 2 minutes.
#
# Environment:
#   BENCH_POINTS_MB=M   size of the larger pair, both captures together
#                       (default 1000)
#   TMPDIR              where the captures go (keep 1.1 x M MB free)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CARGO_TARGET_DIR:=$HOME/.cache/sctp-handover/target}"
export CARGO_TARGET_DIR

release=$CARGO_TARGET_DIR/release/sctp-handover
newer=$(find analyzer points cli tables report live harness-formats Cargo.toml Cargo.lock \
    -newer "$release" \( -name '*.rs' -o -name 'Cargo.*' \) -print -quit 2>/dev/null || echo missing)
if [[ -x $release && -z $newer ]]; then
    bin=$release build=release
else
    cargo build -q -p sctp-handover-cli
    bin=$CARGO_TARGET_DIR/debug/sctp-handover build=debug
    echo "release binary missing or older than the sources ($newer): a debug build"
fi
mb=${BENCH_POINTS_MB:-1000}

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-points.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Writes DIR/mn.pcap and DIR/cn.pcap of about MB megabytes together;
# prints the packets written (both captures).
generate() {
    python3 - "$1" "$2" <<'EOF'
import struct, sys
out, mb = sys.argv[1], float(sys.argv[2])
SRC = "sample-captures/koh-kim-1"
DATA, SACK, ASCONF = 0, 3, 0xC1

def load(path):
    d = open(path, "rb").read()
    magic, _, _, _, _, _, link = struct.unpack("<IHHiIII", d[:24])
    assert magic == 0xA1B2C3D4 and link == 276, "a microsecond LINUX_SLL2 pcap"
    packets, i = [], 24
    while i + 16 <= len(d):
        sec, usec, incl, orig = struct.unpack_from("<IIII", d, i)
        data = d[i + 16:i + 16 + incl]
        i += 16 + incl
        ethertype = struct.unpack_from(">H", data, 0)[0]
        ip = 20  # the SLL2 header
        if ethertype == 0x0800:
            proto, sctp = data[ip + 9], ip + (data[ip] & 0x0F) * 4
        elif ethertype == 0x86DD:
            proto, sctp = data[ip + 6], ip + 40
        else:
            proto = None
        tag, tsns, acks, types = None, [], [], []  # offsets to move on
        if proto == 132:
            tag = struct.unpack_from(">I", data, sctp + 4)[0]
            c = sctp + 12
            while c + 4 <= len(data):
                ctype, _, clen = struct.unpack_from(">BBH", data, c)
                types.append(ctype)
                if ctype == DATA and c + 8 <= len(data):
                    tsns.append(c + 4)
                elif ctype == SACK and c + 16 <= len(data):
                    acks.append(c + 4)
                    gaps, dups = struct.unpack_from(">HH", data, c + 12)
                    for n in range(dups):
                        acks.append(c + 16 + 4 * gaps + 4 * n)
                if clen < 4:
                    break
                c += (clen + 3) & ~3
        packets.append((sec * 1_000_000 + usec, orig, data, tag, tsns, acks, types))
    return d[:24], packets

points = {name: load(f"{SRC}/{name}.pcap") for name in ("mn", "cn")}
every = sorted((p for _, ps in points.values() for p in ps), key=lambda p: p[0])
tags = sorted({p[3] for p in every if p[3]})
assert len(tags) == 2, tags
# The steady part: from the first quiet moment after the first DATA to the
# last one before the first ASCONF, a quiet moment being a gap of at least
# 20 ms with no packet at either point (the links' one-way delay is 5 ms),
# so that every packet sent before it has arrived: both points cut the
# same packets.
first_data = min(p[0] for p in every if DATA in p[6])
first_asconf = min(p[0] for p in every if ASCONF in p[6])
times = [p[0] for p in every]
quiet = [(a + b) // 2 for a, b in zip(times, times[1:]) if b - a >= 20_000]
t0 = min(t for t in quiet if t > first_data)
t1 = max(t for t in quiet if t < first_asconf)
span = t1 - t0
# Each copy moves the TSNs on by as many as the steady part uses: DATA in
# packets with tag v is in the TSN space of v's owner's peer, SACKs in
# packets with tag v acknowledge the other tag's DATA.
step = {}
for v in tags:
    ts = [struct.unpack_from(">I", p[2], o)[0]
          for p in every if p[3] == v and t0 <= p[0] < t1 for o in p[4]]
    step[v] = (max(ts) - min(ts) + 1) if ts else 0
other = {tags[0]: tags[1], tags[1]: tags[0]}
steady_bytes = sum(16 + len(p[2]) for p in every if t0 <= p[0] < t1)
copies = max(1, int(mb * 1e6 / steady_bytes))

def write(f, p, k):
    t, orig, data, tag, tsns, acks = p[:6]
    b = bytearray(data)
    if tag is not None and k:
        for o in tsns:
            v = struct.unpack_from(">I", b, o)[0]
            struct.pack_into(">I", b, o, (v + k * step[tag]) & 0xFFFFFFFF)
        for o in acks:
            v = struct.unpack_from(">I", b, o)[0]
            struct.pack_into(">I", b, o, (v + k * step[other[tag]]) & 0xFFFFFFFF)
    t += k * span
    f.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(b), orig))
    f.write(b)

total = 0
for name, (header, packets) in points.items():
    with open(f"{out}/{name}.pcap", "wb", buffering=1 << 20) as f:
        f.write(header)
        steady = [p for p in packets if t0 <= p[0] < t1]
        for p in packets:
            if p[0] < t0:
                write(f, p, 0)
        for k in range(copies):
            for p in steady:
                write(f, p, k)
        # The handover and the end, after the last copy.
        for p in packets:
            if p[0] >= t1:
                write(f, p, copies - 1)
        total += len(packets) + (copies - 1) * len(steady)
print(total)
EOF
}

printf '%-10s %10s %10s %10s %12s\n' build MB packets seconds "peak RSS MB"
for size in $((mb / 10)) "$mb"; do
    dir=$work/pair-$size
    mkdir -p "$dir"
    packets=$(generate "$dir" "$size")
    bytes=$(($(stat -c %s "$dir/mn.pcap") + $(stat -c %s "$dir/cn.pcap")))
    /usr/bin/time -v -o "$dir/time.txt" \
        "$bin" analyze --point "mn=$dir/mn.pcap" --point "cn=$dir/cn.pcap" >"$dir/out.txt"
    seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$dir/time.txt")
    rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
    awk -v b="$build" -v bytes="$bytes" -v p="$packets" -v s="$seconds" -v r="$rss_kb" \
        'BEGIN { printf "%-10s %10.1f %10d %10.1f %12.1f\n", b, bytes / 1e6, p, s, r / 1024 }'
    echo "  two-sided handover records: $(grep -c '^two-sided handover' "$dir/out.txt" || true)"
    rm -f "$dir"/*.pcap
done
