#!/usr/bin/env bash
# `make bench-cluster`, the figures of docs/scale-out.md: `analyze --out -j
# WORKERS` against `python -m sctp_handover.cluster --workers WORKERS` on
# each engine (a local cluster on the same cores), over two archives built
# in a temporary directory (never in the repository):
#
#   small  SMALL (10 000) small captures: symbolic links (distinct inputs)
#          to pieces cut from the 44 captures of sample-captures and
#          sample-sweeps (PIECES of PIECE_PACKETS packets each: 4 × 40,
#          about 6 kB a piece; PIECE_PACKETS=0: the whole captures, 150 kB
#          on average), in turn
#   large  the large captures of BIG_DIR (/tmp/bench: long-100.pcap and
#          short-100.pcap, written by gen_workload when missing), each
#          linked BIG_COPIES (2) times
#
# For each run: seconds in all, the engine's start-up, and inputs/s and MB/s
# of the tasks (start-up left out), the ratio of the engine's inputs/s to
# the command line's, and the load average (1 min) as the run ended. Not a
# test: the machine's load moves the figures (compare rows of similar load).
#
#   ARCHIVES="small large"  ENGINES="dask ray spark"  WORKERS=2  SMALL=10000
#   BATCH_ONE=1   also each engine with --batch-files 1 (one input a task)
#   PROFILE=debug (default; the wheel of `make python` is a dev build too,
#   so both sides run the same code compiled the same way)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/sctp-handover/target}
PROFILE=${PROFILE:-debug}
bin=$CARGO_TARGET_DIR/$PROFILE/sctp-handover
py=$(realpath "${SCTPHO_DOT_VENV:-.venv}")/bin/python
ARCHIVES=${ARCHIVES:-small large}
ENGINES=${ENGINES:-dask ray spark}
WORKERS=${WORKERS:-2}
SMALL=${SMALL:-10000}
BIG_DIR=${BIG_DIR:-/tmp/bench}
BIG_COPIES=${BIG_COPIES:-2}
PIECES=${PIECES:-4}
PIECE_PACKETS=${PIECE_PACKETS:-40}
[[ -x $bin ]] || { echo "bench-cluster: no $bin (cargo build -p sctp-handover-cli${PROFILE/debug/})" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_small() {
  local dir=$1 i=0 f p from
  mapfile -t captures < <(find "$repo/sample-captures" "$repo/sample-sweeps" -name '*.pcap' | sort)
  if ((PIECE_PACKETS > 0)); then
    # Cut pieces: each sample's first packets, in runs of PIECE_PACKETS
    # (editcap -r keeps whole packets), PIECES of them per sample.
    mkdir -p "$tmp/pieces"
    for f in "${captures[@]}"; do
      for p in $(seq 0 $((PIECES - 1))); do
        from=$((p * PIECE_PACKETS + 1))
        editcap -r "$f" "$tmp/pieces/$(echo "${f#"$repo"/}" | tr / _)-$p.pcap" "$from-$((from + PIECE_PACKETS - 1))"
      done
    done
    mapfile -t captures < <(find "$tmp/pieces" -name '*.pcap' -size +24c | sort)
  fi
  while ((i < SMALL)); do
    mkdir -p "$dir/d$((i / 1000))"
    ln -s "${captures[i % ${#captures[@]}]}" "$dir/d$((i / 1000))/s$i.pcap"
    i=$((i + 1))
  done
}

make_large() {
  local dir=$1 f c
  mkdir -p "$dir" "$BIG_DIR"
  for f in long-100 short-100; do
    if [[ ! -f $BIG_DIR/$f.pcap ]]; then
      local gen=$CARGO_TARGET_DIR/release/gen_workload
      [[ -x $gen ]] || cargo build --quiet --release -p sctp-handover-lab --bin gen_workload
      "$gen" "${f%-100}" "$BIG_DIR/$f.pcap" --megabytes 100
    fi
    for c in $(seq 1 "$BIG_COPIES"); do ln -s "$BIG_DIR/$f.pcap" "$dir/$f-$c.pcap"; done
  done
}

row() { printf '%-34s %8s %8s %10s %8s %8s %6s\n' "$@"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

for archive in $ARCHIVES; do
  in=$tmp/$archive
  case $archive in
    small) make_small "$in" ;;
    large) make_large "$in" ;;
    *) echo "bench-cluster: unknown archive $archive" >&2; exit 2 ;;
  esac
  n=$(find "$in" -type l | wc -l)
  mb=$(find -L "$in" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.1f", s / 1e6}')
  echo
  echo "$archive archive: $n captures, $mb MB; $WORKERS workers; build: $PROFILE; load $(cut -d' ' -f1-3 /proc/loadavg)"
  row run "s (all)" start-up inputs/s MB/s "/ CLI" load
  rm -rf "$tmp/out"
  s=$(date +%s.%N)
  "$bin" analyze "$in" --out "$tmp/out" -q -j "$WORKERS" > /dev/null 2>&1 || true
  e=$(echo "$(date +%s.%N) - $s" | bc)
  cli_rate=$(echo "$n / $e" | bc -l)
  row "analyze --out -j $WORKERS" "$(printf %.1f "$e")" - "$(printf %.1f "$cli_rate")" \
    "$(printf %.2f "$(echo "$mb / $e" | bc -l)")" 1.00 "$(load1)"
  for engine in $ENGINES; do
    variants=("")
    [[ ${BATCH_ONE:-} == 1 ]] && variants+=("--batch-files 1")
    for v in "${variants[@]}"; do
      rm -rf "$tmp/out"
      # shellcheck disable=SC2086 # $v: zero or two words
      (cd "$tmp" && "$py" -m sctp_handover.cluster --engine "$engine" "$in" --out out -q \
        --workers "$WORKERS" $v > "$tmp/log" 2> "$tmp/err") || true
      line=$(tail -1 "$tmp/log")
      tasks_of=$(grep -o -m1 'in [0-9]* tasks' "$tmp/log" | cut -d' ' -f2)
      # "… X s in all: Y s starting E, Z s of tasks (…)"
      if ! [[ $line =~ ([0-9.]+)\ s\ in\ all:\ ([0-9.]+)\ s\ starting.*\ ([0-9.]+)\ s\ of\ tasks ]]; then
        echo "bench-cluster: $engine: $line $(tail -3 "$tmp/err")" >&2
        continue
      fi
      all=${BASH_REMATCH[1]} start=${BASH_REMATCH[2]} tasks=${BASH_REMATCH[3]}
      rate=$(echo "$n / $tasks" | bc -l)
      row "cluster $engine, $tasks_of tasks" "$all" "$start" "$(printf %.1f "$rate")" \
        "$(printf %.2f "$(echo "$mb / $tasks" | bc -l)")" "$(printf %.2f "$(echo "$rate / $cli_rate" | bc -l)")" "$(load1)"
    done
  done
done
