#!/usr/bin/env bash
# The figures of docs/scale-out.md: `analyze --out` at -j 1 and 2 against
# `python -m sctp_handover.cluster` on Dask and Ray at 1 and 2 workers, over
# COPIES copies (symbolic links: distinct inputs) of sample-captures,
# sample-sweeps and ../shared/public-captures. Needs `make python`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/sctp-handover/target}
PROFILE=${PROFILE:-debug}
bin=$CARGO_TARGET_DIR/$PROFILE/sctp-handover
py=$(realpath "${SCTPHO_DOT_VENV:-.venv}")/bin/python
COPIES=${COPIES:-4}
ENGINES=${ENGINES:-dask ray}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

shared=$(cd .. && pwd)/shared/public-captures
for c in $(seq 1 "$COPIES"); do
  for d in sample-captures sample-sweeps "$shared"; do
    [[ -d $d ]] || continue
    (cd "$d" && find . -type f \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.cap' \)) | while read -r f; do
      mkdir -p "$tmp/in/c$c/$(basename "$d")/$(dirname "$f")"
      ln -s "$(cd "$d" && pwd)/$f" "$tmp/in/c$c/$(basename "$d")/$f"
    done
  done
done
n=$(find "$tmp/in" -type l | wc -l)
mb=$(find -L "$tmp/in" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.1f", s / 1e6}')
echo "inputs: $n captures, $mb MB ($COPIES copies); build: $PROFILE"
printf '%-28s %8s %10s %8s\n' run seconds inputs/s MB/s
cd "$tmp"
for j in 1 2; do
  rm -rf out; s=$(date +%s.%N)
  "$bin" analyze in --out out -q -j "$j" > /dev/null 2>&1 || true
  e=$(echo "$(date +%s.%N) - $s" | bc)
  printf '%-28s %8.1f %10.1f %8.2f\n' "analyze --out -j $j" "$e" "$(echo "$n / $e" | bc -l)" "$(echo "$mb / $e" | bc -l)"
done
for engine in $ENGINES; do
  for w in 1 2; do
    rm -rf out
    line=$("$py" -m sctp_handover.cluster --engine "$engine" in --out out -q --workers "$w" | tail -1)
    # "… X s in all: Y s starting E, Z s of tasks (…)"
    all=$(sed -E 's/.*; ([0-9.]+) s in all.*/\1/' <<< "$line")
    start=$(sed -E 's/.* ([0-9.]+) s starting.*/\1/' <<< "$line")
    tasks=$(sed -E 's/.* ([0-9.]+) s of tasks.*/\1/' <<< "$line")
    printf '%-28s %8.1f %10.1f %8.2f   (start-up %.1f s, tasks %.1f s)\n' "cluster $engine, $w workers" "$all" \
      "$(echo "$n / $tasks" | bc -l)" "$(echo "$mb / $tasks" | bc -l)" "$start" "$tasks"
  done
  # A rerun: every input already complete.
  s=$(date +%s.%N)
  "$py" -m sctp_handover.cluster --engine "$engine" in --out out -q --workers 2 > /dev/null
  printf '%-28s %8.1f\n' "rerun $engine (all done)" "$(echo "$(date +%s.%N) - $s" | bc)"
done
