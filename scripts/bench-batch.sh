#!/usr/bin/env bash
# Prints the batch figures of docs/performance.md: -j 2 vs -j 1 over eight
# 25 MB captures, peak memory at 100 MB vs 300 MB of short associations, and
# 20 000 associations that never end. Release build; generated captures go
# to $BENCH_DIR (default: a temporary directory, removed afterwards).
# Usage: scripts/bench-batch.sh    (or make bench-batch)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CARGO_TARGET_DIR:=$HOME/.cache/sctp-handover/target}"
export CARGO_TARGET_DIR
cargo build --release -q -p sctp-handover-cli -p sctp-handover -p sctp-handover-lab --examples --bins
bin=$CARGO_TARGET_DIR/release/sctp-handover
gen=$CARGO_TARGET_DIR/release/gen_workload
dir=${BENCH_DIR:-$(mktemp -d)}
[[ -n ${BENCH_DIR:-} ]] || trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/eight"
for i in 1 2 3 4 5 6 7 8; do
  [[ -f $dir/eight/c$i.pcap ]] || "$gen" short "$dir/eight/c$i.pcap" --megabytes 25 --seed "$i" >/dev/null
done
[[ -f $dir/short100.pcap ]] || "$gen" short "$dir/short100.pcap" --megabytes 100 >/dev/null
[[ -f $dir/short300.pcap ]] || "$gen" short "$dir/short300.pcap" --megabytes 300 >/dev/null
[[ -f $dir/open20k.pcap ]] || "$gen" never-ending "$dir/open20k.pcap" --associations 20000 >/dev/null
cat "$dir"/eight/*.pcap "$dir"/short*.pcap "$dir/open20k.pcap" > /dev/null  # page cache

# measure NAME -- COMMAND...: wall seconds and peak RSS (MB) of the command,
# the best wall time of three runs (files in the page cache), the highest RSS.
printf '%-44s %10s %12s\n' case "wall s" "peak RSS MB"
csv=$dir/bench-batch.csv
echo "case,wall_s,peak_rss_mb" > "$csv"
measure() {
  local name=$1; shift 2
  local t; t=$(mktemp)
  local wall="" rss=""
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %M' -o "$t" "$@" >/dev/null 2>&1 || true
    local w r; read -r w r < "$t"
    if [[ -z $wall ]] || awk -v a="$w" -v b="$wall" 'BEGIN { exit !(a < b) }'; then wall=$w; fi
    if [[ -z $rss ]] || (( r > rss )); then rss=$r; fi
  done
  rm -f "$t"
  local mb; mb=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
  printf '%-44s %10s %12s\n' "$name" "$wall" "$mb"
  echo "$name,$wall,$mb" >> "$csv"
}
measure "8 x 25 MB, --out, -j 1" -- "$bin" analyze "$dir/eight" --out "$dir/t1" --force -q -j 1
measure "8 x 25 MB, --out, -j 2" -- "$bin" analyze "$dir/eight" --out "$dir/t2" --force -q -j 2
measure "100 MB short associations, --out" -- "$bin" analyze "$dir/short100.pcap" --out "$dir/t100" --force -q
measure "300 MB short associations, --out" -- "$bin" analyze "$dir/short300.pcap" --out "$dir/t300" --force -q
measure "100 MB short associations, text" -- "$bin" analyze "$dir/short100.pcap"
measure "300 MB short associations, text" -- "$bin" analyze "$dir/short300.pcap"
measure "100 MB short associations, json" -- "$bin" analyze --format json "$dir/short100.pcap"
measure "300 MB short associations, json" -- "$bin" analyze --format json "$dir/short300.pcap"
measure "20 000 open associations (7.8 MB), text" -- "$bin" analyze "$dir/open20k.pcap"
measure "20 000 open associations (7.8 MB), --out" -- "$bin" analyze "$dir/open20k.pcap" --out "$dir/t20k" --force -q
echo "(figures also in $csv; $(nproc) cores)"
