#!/usr/bin/env bash
# The live capture benchmark of docs/watch.md ("Keeping up"): a generated
# capture of SCTP signalling (2 300 associations, 25 MB, planned switches
# and failovers) replayed by tcpreplay into one end of a veth pair that
# lives in a network namespace of its own, captured at the other end by
# `tcpdump -w` (its defaults) and by `sctp-handover watch` (its defaults:
# text, JSON lines, JSON lines with --write); at top speed and at fixed
# rates. Prints, per rate and capturer, the frames sent, received and
# dropped (by cause), watch's switch latency percentiles (JSON lines:
# printed − completed_by.time, one clock), whether the handovers watch
# printed equal `analyze` on the file its --write kept, and the highest
# rate each capturer kept up with. Raw outputs and bench-live.txt/.csv in a
# results directory (printed). Not part of `make test`.
#
# Traffic never leaves the namespace: both veth ends are in it, frames
# are addressed to 10.x addresses and MACs nothing in it owns.
#
# Environment:
#   BENCH_DIR=DIR            captures and results (default /tmp/sctp-handover-bench;
#                            the capture is kept, regenerated when the generator changes)
#   BENCH_LIVE_RATES="..."   replay rates in frames/s, `top` for tcpreplay --topspeed
#                            (default "top 50000 100000 200000 400000")
#   BENCH_LIVE_REPS=N        runs per rate and capturer (default 1)
#   BENCH_LIVE_CAPTURERS="..."  subset of: tcpdump watch-text watch-jsonl watch-write
#   BENCH_LIVE_BIN=PATH      another sctp-handover binary to measure (e.g. an older build)
#   BENCH_LIVE_ARGS="..."    extra arguments for every watch (e.g. "-s 2048")
#   BENCH_LIVE_LOOPS=N       replay the capture N times per run (default 1): a
#                            sustained load beyond what the buffers hold
#   BENCH_LIVE_STALL=SECONDS stop the capturer (SIGSTOP) for this long 0.1 s into
#                            each replay: a capturer left unscheduled, which only
#                            the kernel's buffer covers
#   BENCH_KEEP=1             keep the --write files and captured outputs
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
: "${CARGO_TARGET_DIR:=$HOME/.cache/sctp-handover/target}"
export CARGO_TARGET_DIR

if [[ $(id -u) != 0 ]]; then
  echo "bench-live: needs root (a network namespace, raw capture)" >&2
  exit 1
fi
for tool in tcpreplay tcpdump capinfos ip python3; do
  command -v "$tool" >/dev/null || {
    echo "bench-live: $tool is missing (make setup installs it)" >&2
    exit 1
  }
done

bench=${BENCH_DIR:-/tmp/sctp-handover-bench}
rates=(${BENCH_LIVE_RATES:-top 50000 100000 200000 400000})
reps=${BENCH_LIVE_REPS:-1}
capturers=(${BENCH_LIVE_CAPTURERS:-tcpdump watch-text watch-jsonl watch-write})
loops=${BENCH_LIVE_LOOPS:-1}
watch_args=(${BENCH_LIVE_ARGS:-})
stall=${BENCH_LIVE_STALL:-}
if ! [[ $loops =~ ^[1-9][0-9]*$ && $reps =~ ^[1-9][0-9]*$ ]]; then
  # tcpreplay --loop=0 would replay for ever.
  echo "bench-live: BENCH_LIVE_LOOPS and BENCH_LIVE_REPS must be positive" >&2
  exit 1
fi

echo "building (release) ..."
cargo build --release -q -p sctp-handover-cli -p sctp-handover -p sctp-handover-lab --examples --bin gen_workload
bin=${BENCH_LIVE_BIN:-$CARGO_TARGET_DIR/release/sctp-handover}
gen=$CARGO_TARGET_DIR/release/gen_workload
# `analyze` of the same binary: its own --write file, its own analysis.
analyzer=$bin

caps=$bench/captures
results=$bench/results/live-$(date +%Y%m%d-%H%M%S)
mkdir -p "$caps" "$results"
# The load: long-lived associations between two multihomed nodes with
# signalling-sized messages (gen_workload long, Ethernet), 2 300 of them in
# 25 MB: one renumbering (a planned switch per direction) and one outage
# (failovers) each. Replayed at top speed the capture's 200 s of traffic
# take well under a second.
capture=$caps/live-2300.pcap
if [[ ! -s $capture || $gen -nt $capture ]]; then
  "$gen" long "$capture" --megabytes 25 --associations 2300 --rate 0.05 --seed 1
fi
frames=$(capinfos -c -M "$capture" | awk '/Number of packets/ {print $NF}')

ns=sctpho-bench-$$
cleanup() {
  # Only what this run started: its capturer (if still running) and its
  # namespace (which takes the veth pair with it).
  if [[ -n ${capturer_pid:-} ]] && kill -0 "$capturer_pid" 2>/dev/null; then
    kill -INT "$capturer_pid" 2>/dev/null || true
    wait "$capturer_pid" 2>/dev/null || true
  fi
  ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$ns"
# Run in the namespace. Capturers are started with `ip netns exec` itself
# (not through a function, whose subshell would be what $! names and what
# SIGINT reached).
in_ns() { ip netns exec "$ns" "$@"; }
# No IPv6 autoconfiguration: nothing but the replay crosses the link, so
# every frame counted is one tcpreplay sent.
in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
in_ns ip link add shb0 type veth peer name shb1
in_ns ip link set lo up
in_ns ip link set shb0 up
in_ns ip link set shb1 up

{
  echo "host: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), kernel $(uname -r)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "capture: $capture ($frames frames, $(stat -c %s "$capture") bytes), replayed $loops time(s) per run"
  [[ -z $stall ]] || echo "each capturer stopped for $stall s, 0.1 s into each replay"
  echo "watch: $bin ${watch_args[*]}"
  echo "tcpdump: $(tcpdump --version 2>&1 | head -1), $(tcpdump --version 2>&1 | grep -i libpcap | head -1)"
  echo "tcpreplay: $(tcpreplay -V 2>&1 | head -1)"
} | tee "$results/host.txt"

# wait_for FILE TEXT PID: until FILE holds TEXT (the capturer is live).
wait_for() {
  local i
  for ((i = 0; i < 300; i++)); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

for rate in "${rates[@]}"; do
  for who in "${capturers[@]}"; do
    for ((rep = 1; rep <= reps; rep++)); do
      run=$results/runs/$rate-$who-$rep
      mkdir -p "$run"
      echo "$rate" >"$run/rate"
      echo "$who" >"$run/capturer"
      case $who in
        tcpdump)
          ip netns exec "$ns" tcpdump -i shb1 -w "$run/tcpdump.pcap" 2>"$run/capture.err" &
          ready="listening on"
          ;;
        watch-text)
          ip netns exec "$ns" "$bin" watch -i shb1 -q "${watch_args[@]}" >"$run/out.txt" 2>"$run/capture.err" &
          ready="capturing on"
          ;;
        watch-jsonl)
          ip netns exec "$ns" "$bin" watch -i shb1 -q --format jsonl "${watch_args[@]}" >"$run/out.jsonl" 2>"$run/capture.err" &
          ready="capturing on"
          ;;
        watch-write)
          ip netns exec "$ns" "$bin" watch -i shb1 -q --format jsonl --write "$run/write.pcapng" "${watch_args[@]}" \
            >"$run/out.jsonl" 2>"$run/capture.err" &
          ready="capturing on"
          ;;
        *)
          echo "bench-live: unknown capturer $who" >&2
          exit 1
          ;;
      esac
      capturer_pid=$!
      if ! wait_for "$run/capture.err" "$ready" "$capturer_pid"; then
        echo "bench-live: $who did not start:" >&2
        cat "$run/capture.err" >&2
        exit 1
      fi
      sleep 0.5
      if [[ $rate == top ]]; then
        speed=(--topspeed)
      else
        speed=(--pps="$rate")
      fi
      # Bounded: one pass of the file (or BENCH_LIVE_LOOPS), and a time limit.
      timeout 300 ip netns exec "$ns" tcpreplay -i shb0 "${speed[@]}" --loop="$loops" "$capture" \
        >"$run/replay.txt" 2>&1 &
      replay_pid=$!
      if [[ -n $stall ]]; then
        # A capturer the scheduler leaves aside: stopped for $stall s
        # shortly after the replay started; only the kernel's buffer
        # holds what arrives meanwhile.
        sleep 0.1
        kill -STOP "$capturer_pid"
        sleep "$stall"
        kill -CONT "$capturer_pid"
      fi
      wait "$replay_pid" || {
        echo "bench-live: tcpreplay failed:" >&2
        cat "$run/replay.txt" >&2
        exit 1
      }
      # tcpdump hands blocks over after its 1 s buffer timeout and loses an
      # unfinished block when interrupted; watch reads its ring to the end
      # when stopped, but is given the same time.
      sleep 2
      kill -INT "$capturer_pid"
      wait "$capturer_pid" || {
        echo "bench-live: $who failed:" >&2
        cat "$run/capture.err" >&2
        exit 1
      }
      capturer_pid=""
      if [[ $who == watch-write ]]; then
        # The handovers of the file watch kept, for the comparison.
        "$analyzer" analyze --format json "$run/write.pcapng" >"$run/analyze.jsonl"
      fi
      python3 scripts/bench-live.py --digest "$run"
      if [[ ${BENCH_KEEP:-0} != 1 ]]; then
        rm -f "$run/write.pcapng" "$run/tcpdump.pcap" "$run/out.jsonl" "$run/analyze.jsonl" "$run/out.txt"
      fi
    done
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$results/host.txt"
python3 scripts/bench-live.py "$results" "$((frames * loops))" | tee "$results/bench-live.txt"
echo "results in $results"
