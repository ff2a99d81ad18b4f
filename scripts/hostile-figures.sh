#!/usr/bin/env bash
# Prints wall time and peak memory of the release CLI on each crafted
# hostile capture of analyzer/tests/hostile.rs (the test writes them when
# SCTPHO_HOSTILE_OUT is set) and on cut/flipped/snaplen-cut samples: the
# "within 2 s and 100 MB" figures of docs/robustness.md. Not part of
# `make test` (timings are measured, never asserted).
# Usage: scripts/hostile-figures.sh    (or make hostile-figures)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CARGO_TARGET_DIR:=$HOME/.cache/sctp-handover/target}"
export CARGO_TARGET_DIR
cargo build --release -q -p sctp-handover-cli
bin=$CARGO_TARGET_DIR/release/sctp-handover
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
SCTPHO_HOSTILE_OUT=$dir cargo test --release -q -p sctp-handover --test hostile >/dev/null
# Samples damaged as the test damages them: cut mid-file, bytes flipped.
sample=sample-captures/bokor-failover/cn.pcap
head -c $(( $(stat -c %s $sample) / 2 + 7 )) $sample > "$dir/cut-half.pcap"
python3 - "$sample" "$dir/flipped.pcap" <<'PY'
import random, sys
b = bytearray(open(sys.argv[1], 'rb').read())
r = random.Random(7)
for _ in range(64):
    i = r.randrange(len(b)); b[i] ^= r.randrange(1, 256)
open(sys.argv[2], 'wb').write(b)
PY
printf '%-22s %10s %8s %12s  %s\n' capture bytes "wall s" "peak RSS MB" "status / first warning"
for f in "$dir"/*.pcap; do
  /usr/bin/time -o "$dir/time.txt" -f '%e %M' "$bin" analyze "$f" > "$dir/out.txt" 2> "$dir/err.txt" || true
  read -r wall rss < "$dir/time.txt"
  status=$(cat "$dir/err.txt" "$dir/out.txt" | grep -m1 -E '^ *warning:|^sctp-handover: (warning|error)' | sed -e 's/^ *//' -e "s|$dir/||" | cut -c1-90 || true)
  printf '%-22s %10s %8s %12s  %s\n' "$(basename "$f")" "$(stat -c %s "$f")" "$wall" "$((rss / 1024))" "${status:-ok}"
done
