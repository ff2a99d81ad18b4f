#!/usr/bin/env bash
# The benchmark of docs/performance.md ("Benchmark (`make bench`)"): on the
# same generated captures, in one run, the analyzer (one file, one thread;
# a directory with -j 1 and -j all cores; text, JSON lines and --out
# tables) against the limits of the machine (cat from the page cache, a
# bare pcap-parser record loop) and against tshark (sctp,stat, -T fields
# with the fields the analysis needs; -q, -q -z io,stat,0, -V and -Y on a
# field, each plain, with the Lua and with the C plugin).
# Prints a table of wall time, MB/s, packets/s, CPU time and peak RSS, then
# the ratios against the targets of the performance issue; the same as
# bench.txt, bench.csv and bench.json in a results directory (printed).
#
# Environment:
#   BENCH_DIR=DIR     captures and results (default /tmp/sctp-handover-bench;
#                     captures are kept and regenerated only when the
#                     generator changes)
#   BENCH_BIG=1       also a multi-GB long-association file (4 GB) and a
#                     16 GB one written into a pipe, for the memory check
#   BENCH_MB=M        size of the long and short files (default 100; the
#                     -j directory holds 4 long files of 10 x M / 4, the
#                     memory check files are a long and a short one of
#                     10 x M, BENCH_BIG's a long one of 40 x M)
#   BENCH_REPS=N      runs per case (default 5; the best wall time and the
#                     highest RSS are kept); tshark cases run twice
#                     (BENCH_TSHARK_REPS), the 10 x M files' cases twice,
#                     BENCH_BIG's once
#   BENCH_PERF=1      also perf record the single-threaded text run of the
#                     long file (perf.data and perf-report.txt in the results)
# tshark runs as an unprivileged user when this runs as root (Wireshark
# loads no binary plugin for root), as the C plugin's test does, with a
# HOME of its own: without plugins, or with the C plugin installed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
: "${CARGO_TARGET_DIR:=$HOME/.cache/sctp-handover/target}"
export CARGO_TARGET_DIR
bench=${BENCH_DIR:-/tmp/sctp-handover-bench}
reps=${BENCH_REPS:-5}
mb=${BENCH_MB:-100}
L=long-$mb S=short-$mb D=long-4x$((10 * mb / 4)) B=long-$((10 * mb))
tshark_reps=${BENCH_TSHARK_REPS:-2}
cores=$(nproc)

echo "building (release) ..."
cargo build --release -q -p sctp-handover-cli -p sctp-handover -p sctp-handover-lab --examples --bins
c_plugin=$(SCTPHO_PROFILE=release dissector/c/build.sh)
bin=$CARGO_TARGET_DIR/release/sctp-handover
gen=$CARGO_TARGET_DIR/release/gen_workload
iterate=$CARGO_TARGET_DIR/release/examples/iterate

results=$bench/results/$(date +%Y%m%d-%H%M%S)
caps=$bench/captures
mkdir -p "$caps" "$results"
chmod 755 "$bench" "$caps" "$bench/results" "$results"

# --- the unprivileged tshark user and its two homes ----------------------
user=""
if [[ $(id -u) == 0 ]]; then
  user=sctpho-test
  id "$user" >/dev/null 2>&1 || useradd -m "$user"
fi
home_plain=$bench/home-plain
home_c=$bench/home-c
ws_version=$(tshark -v 2>/dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+' | head -1)
rm -rf "$home_plain" "$home_c"
mkdir -p "$home_plain/lua" "$home_c/.local/lib/wireshark/plugins/$ws_version/epan"
cp dissector/sctpho.lua dissector/sctpho_core.lua dissector/sctpho_wire.lua dissector/sctpho_fields.lua "$home_plain/lua/"
cp "$c_plugin" "$home_c/.local/lib/wireshark/plugins/$ws_version/epan/sctpho.so"
[[ -z $user ]] || chown -R "$user" "$home_plain" "$home_c"
lua=$home_plain/lua/sctpho.lua
# "${as_user[@]}" HOME=... tshark ...: as the unprivileged user.
as_user=(env)
[[ -z $user ]] || as_user=(runuser -u "$user" -- env)
ts() {
  local home=$1
  shift
  "${as_user[@]}" HOME="$home" tshark "$@"
}
ts "$home_c" -G plugins 2>/dev/null | grep -q sctpho.so || {
  echo "bench: the C plugin is not loaded by tshark (as ${user:-$USER})" >&2
  exit 1
}
ts "$home_plain" -G plugins 2>/dev/null | grep -q sctpho && {
  echo "bench: the plain tshark HOME loads an sctpho plugin" >&2
  exit 1
}

# --- captures --------------------------------------------------------------
# make_capture NAME ARGS...: gen_workload ARGS into captures/NAME unless it
# is there and newer than the generator.
make_capture() {
  local name=$1
  shift
  local f=$caps/$name
  if [[ ! -s $f || $gen -nt $f ]]; then
    "$gen" "$1" "$f" "${@:2}"
  fi
}
make_capture "$L.pcap" long --megabytes "$mb" --seed 1
make_capture "$S.pcap" short --megabytes "$mb" --seed 1
mkdir -p "$caps/$D"
chmod 755 "$caps/$D"
for i in 1 2 3 4; do make_capture "$D/l$i.pcap" long --megabytes $((10 * mb / 4)) --seed $((10 + i)); done
make_capture "$B.pcap" long --megabytes $((10 * mb)) --seed 2
make_capture "short-$((10 * mb)).pcap" short --megabytes $((10 * mb)) --seed 2
big_keys=("$B" "short-$((10 * mb))")
if [[ ${BENCH_BIG:-0} == 1 ]]; then
  make_capture "long-$((40 * mb)).pcap" long --megabytes $((40 * mb)) --seed 3
  big_keys+=("long-$((40 * mb))")
fi
chmod 644 "$caps"/*.pcap "$caps/$D"/*.pcap
if [[ -n $user ]] && ! runuser -u "$user" -- test -r "$caps/$L.pcap"; then
  echo "bench: $user cannot read $caps (choose a BENCH_DIR it can reach)" >&2
  exit 1
fi

# Size (bytes) and frames of each input, for the rates.
declare -A bytes frames path
for key in "$L" "$S" "${big_keys[@]}"; do
  path[$key]=$caps/$key.pcap
done
path[$D]=$caps/$D
for key in "${!path[@]}"; do
  p=${path[$key]}
  cat "$p" >/dev/null 2>&1 || cat "$p"/* >/dev/null # page cache
  b=0 n=0
  for f in $( [[ -d $p ]] && ls "$p"/*.pcap || echo "$p"); do
    read -r fr _ < <("$iterate" "$f")
    n=$((n + fr))
    b=$((b + $(stat -c %s "$f")))
  done
  bytes[$key]=$b frames[$key]=$n
done

# --- measuring ---------------------------------------------------------------
rows=()
# measure CASE INPUT REPS -- COMMAND...: best wall time of REPS runs (files
# in the page cache, stdout to /dev/null), highest peak RSS, CPU time
# (user + system) of the best run.
measure() {
  local name=$1 key=$2 n=$3
  shift 4
  local best="" rss=0 cpu="" t0 t1 m u s tf
  tf=$(mktemp)
  for ((r = 0; r < n; r++)); do
    t0=$(date +%s%N)
    if ! /usr/bin/time -f '%M %U %S' -o "$tf" "$@" >/dev/null 2>>"$results/stderr.log"; then
      echo "bench: failed: $*" >&2
      tail -5 "$results/stderr.log" >&2
      exit 1
    fi
    t1=$(date +%s%N)
    read -r m u s < <(tail -1 "$tf")
    ((m > rss)) && rss=$m
    if [[ -z $best ]] || ((t1 - t0 < best)); then
      best=$((t1 - t0))
      cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
    fi
  done
  rm -f "$tf"
  local row
  row=$(awk -v name="$name" -v key="$key" -v ns="$best" -v b="${bytes[$key]}" -v f="${frames[$key]}" \
    -v rss="$rss" -v cpu="$cpu" -v n="$n" 'BEGIN {
      w = ns / 1e9
      printf "%s\t%s\t%d\t%.1f\t%d\t%.3f\t%.0f\t%.3f\t%s\t%.1f", name, key, n, b / 1e6, f, w, b / 1e6 / w, f / w / 1e6, cpu, rss / 1024
    }')
  rows+=("$row")
  awk -F'\t' '{ printf "%-44s %-10s %9.3f s %8.0f MB/s %7.3f Mpkt/s %6s cpu s %8.1f MB\n", $1, $2, $6, $7, $8, $9, $10 }' <<<"$row"
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "results in $results ($cores cores)"
if pgrep -x afl-fuzz >/dev/null; then
  echo "note: afl-fuzz is running; figures are disturbed"
fi
tables=$results/tables
for key in "$L" "$S"; do
  f=${path[$key]}
  measure "cat (page cache)" "$key" "$reps" -- cat "$f"
  measure "pcap-parser record loop" "$key" "$reps" -- "$iterate" "$f" parser
  measure "capture reader record loop" "$key" "$reps" -- "$iterate" "$f" reader
  measure "analyze -j 1, text" "$key" "$reps" -- "$bin" analyze -q -j 1 "$f"
  measure "analyze -j 1, json" "$key" "$reps" -- "$bin" analyze -q -j 1 --format json "$f"
  measure "analyze -j 1, --out tables" "$key" "$reps" -- "$bin" analyze -q -j 1 --force --out "$tables/$key" "$f"
done
d=${path[$D]}
for j in 1 "$cores"; do
  measure "analyze -j $j, text" "$D" "$reps" -- "$bin" analyze -q -j "$j" "$d"
  measure "analyze -j $j, json" "$D" "$reps" -- "$bin" analyze -q -j "$j" --format json "$d"
  measure "analyze -j $j, --out tables" "$D" "$reps" -- "$bin" analyze -q -j "$j" --force --out "$tables/dir-$j" "$d"
done
for key in "${big_keys[@]}"; do
  f=${path[$key]}
  n=2
  [[ $key != long-$((40 * mb)) ]] || n=1
  measure "cat (page cache)" "$key" "$n" -- cat "$f"
  measure "pcap-parser record loop" "$key" "$n" -- "$iterate" "$f" parser
  measure "analyze -j 1, text" "$key" "$n" -- "$bin" analyze -q -j 1 "$f"
  measure "analyze -j 1, --out tables" "$key" "$n" -- "$bin" analyze -q -j 1 --force --out "$tables/$key" "$f"
done
if [[ ${BENCH_BIG:-0} == 1 ]]; then
  # Memory over 16 x M GB without the disk: the generator writes into a pipe
  # the analyzer reads as it goes (one run; the wall time is the generator's,
  # so its rates are not speed figures).
  P=long-$((160 * mb))-pipe
  pipe=$results/$P.pcap
  bytes[$P]=$((160 * mb * 1000000)) frames[$P]=0
  for out in text tables; do
    rm -f "$pipe"
    mkfifo "$pipe"
    "$gen" long "$pipe" --megabytes $((160 * mb)) --seed 4 2>"$results/$P.generator.log" &
    generator=$!
    # A failed measurement exits: the generator would wait on the pipe.
    trap 'kill $generator 2>/dev/null' EXIT
    if [[ $out == text ]]; then
      measure "analyze -j 1, text" "$P" 1 -- "$bin" analyze -q -j 1 "$pipe"
    else
      measure "analyze -j 1, --out tables" "$P" 1 -- "$bin" analyze -q -j 1 --force --out "$tables/$P" "$pipe"
    fi
    wait $generator
    trap - EXIT
  done
  rm -f "$pipe"
  # The frames are known once the generator is done ("F: N frames, ...").
  frames[$P]=$(grep -oE '[0-9]+ frames' "$results/$P.generator.log" | head -1 | cut -d' ' -f1)
  for i in "${!rows[@]}"; do
    IFS=$'\t' read -r c k r m _ w mbs _ cpu rss <<<"${rows[$i]}"
    [[ $k == "$P" ]] || continue
    rows[i]=$(awk -v OFS='\t' -v c="$c" -v k="$k" -v r="$r" -v m="$m" -v n="${frames[$P]}" -v w="$w" \
      -v mbs="$mbs" -v cpu="$cpu" -v rss="$rss" 'BEGIN { print c, k, r, m, n, w, mbs, sprintf("%.3f", n / w / 1e6), cpu, rss }')
  done
  big_keys+=("$P")
fi
# The fields the analysis reads from each packet (see docs/performance.md).
fields=(frame.number frame.time_epoch ip.src ip.dst sctp.srcport sctp.dstport
  sctp.verification_tag sctp.chunk_type sctp.data_tsn sctp.sack_cumulative_tsn_ack)
field_args=()
for x in "${fields[@]}"; do field_args+=(-e "$x"); done
for key in "$L" "$S"; do
  f=${path[$key]}
  plain=("${as_user[@]}" HOME="$home_plain" tshark)
  with_lua=("${as_user[@]}" HOME="$home_plain" tshark -X "lua_script:$lua")
  with_c=("${as_user[@]}" HOME="$home_c" tshark)
  measure "tshark -q -z sctp,stat" "$key" "$tshark_reps" -- "${plain[@]}" -r "$f" -q -z sctp,stat
  measure "tshark -T fields (10 fields)" "$key" "$tshark_reps" -- "${plain[@]}" -r "$f" -T fields "${field_args[@]}"
  # -r F -q alone reads the file without dissecting it (no tap, filter
  # or output asks for it), so the plugins are never called there;
  # -z io,stat,0 dissects every frame (no tree), -V prints every tree.
  for run in "-q" "-q -z io,stat,0" "-V"; do
    read -ra a <<<"$run"
    measure "tshark $run" "$key" "$tshark_reps" -- "${plain[@]}" -r "$f" "${a[@]}"
    measure "tshark $run, Lua plugin" "$key" "$tshark_reps" -- "${with_lua[@]}" -r "$f" "${a[@]}"
    measure "tshark $run, C plugin" "$key" "$tshark_reps" -- "${with_c[@]}" -r "$f" "${a[@]}"
  done
  # The plugins' output used without printing trees: a display filter on
  # their field (the frames of a data path switch; the plugins analyse the
  # capture only when their output is used, so the rows above without a
  # tree of theirs do not show that cost). Plain tshark runs the same kind
  # of command on a field it has: the frames with an ASCONF chunk (a filter
  # on an SCTP field: a tree built for every frame, a few lines printed).
  measure "tshark -Y filter" "$key" "$tshark_reps" -- "${plain[@]}" -r "$f" -Y "sctp.chunk_type == 193"
  measure "tshark -Y filter, Lua plugin" "$key" "$tshark_reps" -- "${with_lua[@]}" -r "$f" -Y 'sctpho.event == "path_switch"'
  measure "tshark -Y filter, C plugin" "$key" "$tshark_reps" -- "${with_c[@]}" -r "$f" -Y 'sctpho.event == "path_switch"'
done

# --- outputs -------------------------------------------------------------------
tsv=$results/bench.tsv
printf 'case\tinput\truns\tmb\tframes\twall_s\tmb_per_s\tmpkt_per_s\tcpu_s\tpeak_rss_mb\n' >"$tsv"
printf '%s\n' "${rows[@]}" >>"$tsv"
# Ratios against the issue's targets; target "" = for information.
awk -F'\t' -v cores="$cores" -v keys="$L $S" -v dir="$D" -v bigs="${big_keys[*]}" -v mb="$mb" '
  NR == 1 { next }
  { wall[$1 "|" $2] = $6; mbs[$1 "|" $2] = $7; mps[$1 "|" $2] = $8; rss[$1 "|" $2] = $10 }
  function out(name, v, op, target, unit) {
    verdict = ""
    if (target != "") verdict = ((op == ">=" && v >= target) || (op == "<=" && v <= target)) ? "met" : "not met"
    printf "%s\t%.3f\t%s\t%s\t%s\n", name, v, (target == "" ? "" : op " " target unit), verdict, unit
  }
  function r(a, b, k) { return wall[a "|" k] / wall[b "|" k] }
  END {
    printf "ratio\tvalue\ttarget\tverdict\tunit\n"
    split(keys, ks, " ")
    L = ks[1]
    for (i = 1; i <= 2; i++) {
      k = ks[i]
      t = "analyze -j 1, text"
      out(k ": analyze text throughput (MB/s)", mbs[t "|" k], ">=", 1000, "")
      out(k ": analyze text packets (M/s)", mps[t "|" k], ">=", 3, "")
      out(k ": analyze text / pcap-parser loop", r(t, "pcap-parser record loop", k), "<=", 2, "x")
      out(k ": analyze text / capture reader loop", r(t, "capture reader record loop", k), "", "", "x")
      out(k ": analyze text / cat", r(t, "cat (page cache)", k), "", "", "x")
      out(k ": tshark -T fields / analyze --out tables", r("tshark -T fields (10 fields)", "analyze -j 1, --out tables", k), ">=", 100, "x")
      out(k ": tshark -T fields / analyze json", r("tshark -T fields (10 fields)", "analyze -j 1, json", k), "", "", "x")
      out(k ": tshark sctp,stat / analyze text", r("tshark -q -z sctp,stat", t, k), "", "", "x")
      split("-q -z io,stat,0|-V|-Y filter|-q", runs, "|")
      for (j = 1; j <= 4; j++) {
        t = "tshark " runs[j]
        note = (j == 4 ? " (no dissection)" : "")
        out(k ": " t ": Lua plugin / plain" note, r(t ", Lua plugin", t, k), (j == 4 ? "" : "<="), (j == 4 ? "" : 2), "x")
        out(k ": " t ": C plugin / plain" note, r(t ", C plugin", t, k), (j == 4 ? "" : "<="), (j == 4 ? "" : 1.15), "x")
      }
    }
    split("text json --out_tables", fm, " ")
    for (i = 1; i <= 3; i++) {
      f = fm[i]; gsub("_", " ", f)
      out(dir ": -j " cores " speedup over -j 1, " f, wall["analyze -j 1, " f "|" dir] / wall["analyze -j " cores ", " f "|" dir], "", "", "x")
    }
    nb = split(bigs, big, " ")
    for (i = 1; i <= nb; i++) {
      b = big[i]
      s = (b ~ /^short/ ? "short-" mb : L)
      out(b " vs " s ": peak RSS ratio, text", rss["analyze -j 1, text|" b] / rss["analyze -j 1, text|" s], "<=", 1.1, "x")
      if (b ~ /^long/) {
        # The long 100 MB capture has a tenth of a batch of rows
        # (FLUSH_BYTES) and writes them after its analysis has freed its
        # state; from 1 GB on, batches are written while the analysis runs,
        # beside its state: a step of one batch, for information here; the
        # 4 and 16 GB files are held to <= 1.1x the 1 GB one below
        # (docs/performance.md, eighth round).
        out(b " vs " s ": peak RSS ratio, --out tables (from rows written after the analysis to batches written during it)", rss["analyze -j 1, --out tables|" b] / rss["analyze -j 1, --out tables|" s], "", "", "x")
      } else {
        out(b " vs " s ": peak RSS ratio, --out tables", rss["analyze -j 1, --out tables|" b] / rss["analyze -j 1, --out tables|" s], "<=", 1.1, "x")
      }
      if (i > 2) {
        # BENCH_BIG (40 x M file, 160 x M through a pipe): beyond the 10 x M
        # file, where long associations have filled their bounded state.
        s = big[1]
        out(b " vs " s ": peak RSS ratio, text", rss["analyze -j 1, text|" b] / rss["analyze -j 1, text|" s], "<=", 1.1, "x")
        out(b " vs " s ": peak RSS ratio, --out tables", rss["analyze -j 1, --out tables|" b] / rss["analyze -j 1, --out tables|" s], "<=", 1.1, "x")
      }
    }
  }' "$tsv" >"$results/ratios.tsv"
# The same as CSV (fields with commas quoted).
tsv2csv() {
  awk -F'\t' '{ for (i = 1; i <= NF; i++) { f = $i; if (f ~ /[,"]/) { gsub(/"/, "\"\"", f); f = "\"" f "\"" }; printf "%s%s", f, (i < NF ? "," : "\n") } }' "$1"
}
tsv2csv "$tsv" >"$results/bench.csv"
tsv2csv "$results/ratios.tsv" >"$results/ratios.csv"

{
  echo "sctp-handover make bench, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo '+changes')"
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores, $(free -g | awk '/Mem:/ { print $2 }') GiB; $(tshark -v 2>/dev/null | head -1)"
  pgrep -x afl-fuzz >/dev/null && echo "afl-fuzz was running at the end: figures disturbed"
  echo "load average (1, 5, 15 min) before the measurements: $load_start; after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "inputs (page cache): $(for k in "$L" "$S" "$D" "${big_keys[@]}"; do printf '%s %.1f MB %d frames; ' "$k" "$(awk -v b="${bytes[$k]}" 'BEGIN { print b / 1e6 }')" "${frames[$k]}"; done)"
  echo
  awk -F'\t' 'NR == 1 { printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n|---|---|---|---|---|---|---|---|\n", "case", "input", "wall s", "MB/s", "Mpkt/s", "CPU s", "peak RSS MB", "runs"; next }
    { printf "| %s | %s | %.3f | %.0f | %.3f | %.2f | %.1f | %d |\n", $1, $2, $6, $7, $8, $9, $10, $3 }' "$tsv"
  echo
  awk -F'\t' 'NR == 1 { print "| ratio | value | target | |\n|---|---|---|---|"; next }
    { printf "| %s | %.3g%s | %s | %s |\n", $1, $2, $5, $3, $4 }' "$results/ratios.tsv"
} >"$results/bench.txt"

# JSON: the machine, every measurement and every ratio.
awk -F'\t' -v date="$(date -u +%Y-%m-%dT%H:%M:%SZ)" -v commit="$(git rev-parse HEAD)" -v cores="$cores" \
  -v cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
  -v tshark="$(tshark -v 2>/dev/null | head -1)" -v afl="$(pgrep -x afl-fuzz >/dev/null && echo true || echo false)" '
  FNR == 1 { file++; next }
  file == 1 { m[++nm] = sprintf("{\"case\": \"%s\", \"input\": \"%s\", \"runs\": %d, \"mb\": %s, \"frames\": %d, \"wall_s\": %s, \"mb_per_s\": %s, \"mpkt_per_s\": %s, \"cpu_s\": %s, \"peak_rss_mb\": %s}", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) }
  file == 2 { q[++nq] = sprintf("{\"ratio\": \"%s\", \"value\": %s, \"target\": \"%s\", \"verdict\": \"%s\"}", $1, $2, $3, $4) }
  END {
    printf "{\n  \"date\": \"%s\",\n  \"commit\": \"%s\",\n  \"cpu\": \"%s\",\n  \"cores\": %d,\n  \"tshark\": \"%s\",\n  \"afl_fuzz_running\": %s,\n  \"measurements\": [\n", date, commit, cpu, cores, tshark, afl
    for (i = 1; i <= nm; i++) printf "    %s%s\n", m[i], (i < nm ? "," : "")
    printf "  ],\n  \"ratios\": [\n"
    for (i = 1; i <= nq; i++) printf "    %s%s\n", q[i], (i < nq ? "," : "")
    printf "  ]\n}\n"
  }' "$tsv" "$results/ratios.tsv" >"$results/bench.json"

if [[ ${BENCH_PERF:-0} == 1 ]]; then
  # Ten runs in one profile, for about ten thousand samples.
  perf record -q -F 10000 -o "$results/perf.data" -- bash -c \
    "for i in 1 2 3 4 5 6 7 8 9 10; do '$bin' analyze -q -j 1 '${path[$L]}' >/dev/null; done" 2>>"$results/stderr.log"
  perf report -i "$results/perf.data" --stdio --no-children --comm sctp-handover --sort dso,symbol --percent-limit 0.5 2>/dev/null \
    | grep -v '^#' | grep -v '^$' >"$results/perf-report.txt"
fi

echo
cat "$results/bench.txt"
echo
echo "bench: results in $results (bench.txt, bench.csv, bench.json, ratios.csv, the same as .tsv${BENCH_PERF:+, perf-report.txt})"
