#!/usr/bin/env bash
# `make reproduce`: the seeds' experiments replayed on the kernel, analysed
# in batch and written up as reports/reproduction/ (docs/reproduction.md).
#
#   1. every run of scripts/reproduce.sweeps with sctp-harness (release),
#      one harness call per parameter combination (per repetition when the
#      scenario changes from one repetition to the next); a combination
#      whose runs all finished (meta.json "ok": true) is skipped unless
#      FORCE=1. REPRO_JOBS (default 2) combinations run side by side;
#   2. `sctp-handover analyze RUNS --out RUNS/tables` (resumable itself);
#      a few runs also get tsn.csv (every DATA chunk of a capture, by
#      tshark) for the TSN-against-time figures;
#   3. every run's analysis set beside its kernel's log (kernel_agreement,
#      written to kernel-agreement.txt beside the report);
#   4. `sctp-handover-lab reproduction` (lab/) copies the tables (CSV), each run's
#      events.jsonl/meta.json/scenario.toml/tsn.csv, the sweeps file and
#      the provenance lines into reports/reproduction/ and draws the report
#      from that copy (captures are not copied: this script regenerates them).
#
# Sweep keys the harness does not know (scripts/reproduce.sweeps):
#   at_ACTION=V1,V2  the first timeline action ACTION (set_peer_primary, …)
#                    moves to at_ms = V; the key stays in the group name
#   handoff_rate=R   the scenario's timeline is replaced by handovers
#                    back and forth between its two MN addresses, R per
#                    second from +1 s to 1 s before the end, each an ADD-IP,
#                    a SET-PRIMARY and a DELETE-IP 20 ms apart; the key stays
#                    in the group name
#   phase=link_up    not a group key: repetition k of n brings the link_up
#                    action (k − 0.5)/n of a heartbeat period
#                    (HB.Interval + RTO.max) later, and the run lasts that
#                    much plus one heartbeat period longer, so that the
#                    link comes up at evenly spread phases of the heartbeat
#                    timer
# Either makes a derived scenario file per run (RUNS/.scenarios/); the
# run's own scenario.toml is what was replayed.
#
# Environment: REPRO_RUNS (default reproduce-output/runs), FORCE=1 (redo
# every run), REPRO_ONLY=SWEEP (only that sweep's runs, for development),
# REPRO_REPEAT=N (at most N repetitions per combination, for development),
# REPRO_JOBS=N (combinations replayed at once, default 2: one UML guest per
# core), REPRO_SKIP_RUNS=1 (analyse and write the report only),
# REPRO_RUNS_ONLY=1 (replay, then stop: no analysis, no report).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CARGO_TARGET_DIR:=$HOME/.cache/sctp-handover/target}"
bin=$CARGO_TARGET_DIR/release
runs=${REPRO_RUNS:-reproduce-output/runs}
out=reports/reproduction
sweeps=scripts/reproduce.sweeps
jobs=${REPRO_JOBS:-2}
mkdir -p "$runs"

# combos "k1=a,b" "k2=c" ... → one line per combination: "k1=a k2=c"
combos() {
  if [[ $# -eq 0 ]]; then echo; return; fi
  local first=$1; shift
  local key=${first%%=*} values=${first#*=} v rest
  while IFS= read -r rest; do
    IFS=, read -ra vs <<<"$values"
    for v in "${vs[@]}"; do echo "$key=$v${rest:+ $rest}"; done
  done < <(combos "$@")
}

# The scenario of one run: the base file with at_* moves and the phase of
# repetition REP of REPEAT applied (python3's standard library only).
derive() { # base.toml out.toml "combo" phase rep repeat
  python3 - "$@" <<'PY'
import re, sys, tomllib
base, out, combo, phase, rep, repeat = sys.argv[1:7]
text = open(base).read()
sets = dict(kv.split("=", 1) for kv in combo.split())
doc = tomllib.loads(text)
blocks = text.split("[[timeline]]")
def move(action, at):
    for i, b in enumerate(blocks[1:], 1):
        if re.search(r'^action\s*=\s*"%s"' % action, b, re.M):
            blocks[i] = re.sub(r"^at_ms\s*=.*$", "at_ms = %d" % at, b, count=1, flags=re.M)
            return
    sys.exit(f"{base}: no timeline action {action}")
for k, v in sets.items():
    if k.startswith("at_"):
        move(k[3:], int(v))
if "handoff_rate" in sets:
    a, b = [i["addresses"][0] for i in doc["topology"]["mn_interfaces"]]
    period = 1000.0 / float(sets["handoff_rate"])
    dur = float(sets.get("duration_s", doc["duration_s"])) * 1000
    t, old, new, gen = 1000.0, a, b, []
    while t + 40 <= dur - 1000:
        for dt, action, addr in ((0, "bindx_add", new), (20, "set_peer_primary", new),
                                 (40, "bindx_remove", old)):
            gen.append('\nat_ms = %d\naction = "%s"\naddress = "%s"\n\n' % (round(t + dt), action, addr))
        old, new, t = new, old, t + period
    blocks = [blocks[0].rstrip() + "\n\n"] + gen
extra_s = 0.0
if phase:
    sctp = doc["sctp"]
    hb = float(sets.get("hb_interval", sctp["hb_interval_ms"]))
    rto = float(sets.get("rto", sets.get("rto_max", sctp["rto_max_ms"])))
    period = hb + rto
    offset = round((int(rep) - 0.5) / int(repeat) * period)
    at = next(a["at_ms"] for a in doc["timeline"] if a["action"] == phase)
    move(phase, at + offset)
    extra_s = (offset + period) / 1000
text = "[[timeline]]".join(blocks)
if extra_s:
    dur = float(sets.get("duration_s", doc["duration_s"])) + extra_s
    text = re.sub(r"^duration_s\s*=.*$", "duration_s = %.1f" % dur, text, count=1, flags=re.M)
open(out, "w").write(text)
PY
}

# One plan item: SWEEP|SCENARIO|REPEAT|COMBO|PHASE|INDEX|TOTAL.
run_item() {
  local sweep scenario repeat combo phase i total
  IFS='|' read -r sweep scenario repeat combo phase i total <<<"$1"
  local group; group=$(tr ' ' ',' <<<"$combo"); group=${group:-default}
  local dir=$runs/$sweep/$scenario/$group r done_runs=0
  for r in $(seq -f 'r%02g' 1 "$repeat"); do
    grep -qs '"ok": *true' "$dir/$r/meta.json" && done_runs=$((done_runs + 1))
  done
  if [[ ${FORCE:-0} != 1 && $done_runs -eq $repeat ]]; then
    printf '[%d/%d] %s %s %s: done, skipped\n' "$i" "$total" "$sweep" "$scenario" "$group"
    return 0
  fi
  printf '[%d/%d] %s %s %s: %d run(s)\n' "$i" "$total" "$sweep" "$scenario" "$group" "$repeat"
  echo "$(date -u +%FT%TZ) $(cut -d' ' -f1 /proc/loadavg) $sweep $scenario $group" >> "$runs/loads.txt"
  local args=() kv derived=0
  for kv in $combo; do
    if [[ $kv == at_* || $kv == handoff_rate=* ]]; then derived=1; else args+=(--set "$kv"); fi
  done
  [[ -n $phase ]] && derived=1
  local base=harness/scenarios/$scenario.toml status=0
  # --allow-invalid: runs whose script did not take effect are kept and
  # left out of the statistics by the report, which lists them with the
  # harness's reason (meta.json valid: false).
  if [[ $derived == 0 ]]; then
    local stage=$runs/.stage/$sweep-$i
    rm -rf "$stage"
    "$bin/sctp-harness" replay "$base" --out "$stage" --allow-invalid --repeat "$repeat" \
      "${args[@]}" 2> >(sed 's/^/    /' >&2) || status=$?
    mkdir -p "$dir"
    for r in "$stage/$scenario"/*/r*; do
      [[ -d $r ]] || continue
      rm -rf "${dir:?}/$(basename "$r")"; mv "$r" "$dir/"
    done
    rm -rf "$stage"
  else
    local rep
    for rep in $(seq 1 "$repeat"); do
      r=$(printf 'r%02d' "$rep")
      [[ ${FORCE:-0} != 1 ]] && grep -qs '"ok": *true' "$dir/$r/meta.json" && continue
      local spec=$runs/.scenarios/$sweep/$scenario/$group/$r.toml
      local stage=$runs/.stage/$sweep-$i-$rep
      mkdir -p "$(dirname "$spec")"; rm -rf "$stage"
      derive "$base" "$spec" "$combo" "$phase" "$rep" "$repeat"
      "$bin/sctp-harness" replay "$spec" --out "$stage" --allow-invalid \
        "${args[@]}" 2> >(sed 's/^/    /' >&2) || status=$?
      mkdir -p "$dir"; rm -rf "${dir:?}/$r"
      for x in "$stage/$scenario"/*/r01; do [[ -d $x ]] && mv "$x" "$dir/$r"; done
      rm -rf "$stage"
    done
  fi
  [[ $status -eq 0 ]] || echo "    (failed runs are listed by the report and rerun next time)"
}

# The list of (sweep, scenario, repeat, combination, phase) to run, in file order.
plan=()
while read -r sweep scenario repeat sets; do
  [[ -z $sweep || $sweep == \#* ]] && continue
  [[ -n ${REPRO_ONLY:-} && $sweep != "$REPRO_ONLY" ]] && continue
  [[ -n ${REPRO_REPEAT:-} && $repeat -gt $REPRO_REPEAT ]] && repeat=$REPRO_REPEAT
  phase=""; keep=()
  for kv in $sets; do
    if [[ $kv == phase=* ]]; then phase=${kv#phase=}; else keep+=("$kv"); fi
  done
  while IFS= read -r combo; do
    plan+=("$sweep|$scenario|$repeat|$combo|$phase")
  done < <(combos "${keep[@]}")
done < "$sweeps"

start=$(date +%s)
total=${#plan[@]}
if [[ ${REPRO_SKIP_RUNS:-0} != 1 ]]; then
  export -f run_item derive
  export runs bin FORCE
  items=(); n=0
  for item in "${plan[@]}"; do n=$((n + 1)); items+=("$item|$n|$total"); done
  printf '%s\n' "${items[@]}" | xargs -d '\n' -P "$jobs" -I{} bash -c 'run_item "$1"' _ {}
  echo "reproduce: $total combination(s) in $(( $(date +%s) - start )) s"
fi
[[ ${REPRO_RUNS_ONLY:-0} == 1 ]] && exit 0

# Each combination is analysed with its own sender parameters (RTO.Min,
# RTO.Max, Path.Max.Retrans and the potentially-failed state from its
# scenario.toml; docs/metrics.md, "Inferred path state"), all into one
# dataset; analyze skips inputs already done. Paths are given relative to
# the runs directory, so the tables' `source` is RUNS-relative
# (`SWEEP/SCENARIO/GROUP/rNN/side.pcap`).
echo "reproduce: analysing $runs into $runs/tables"
param() { sed -n "s/^$1 = \([0-9a-z]*\)$/\1/p" "$2" | head -1; }
for item in "${plan[@]}"; do
  IFS='|' read -r sweep scenario repeat combo phase <<<"$item"
  group=$(tr ' ' ',' <<<"$combo"); group=${group:-default}
  rel=$sweep/$scenario/$group
  toml=$runs/$rel/r01/scenario.toml
  [[ -f $toml ]] || continue
  pf=(--no-pf)
  [[ $(param pf_enable "$toml") == true ]] && pf=(--pf-retrans "$(param pf_retrans "$toml")")
  (cd "$runs" && "$bin/sctp-handover" analyze "$rel" --out tables -q \
    --rto-initial-ms "$(param rto_initial_ms "$rel/r01/scenario.toml")" \
    --rto-min-ms "$(param rto_min_ms "$rel/r01/scenario.toml")" \
    --rto-max-ms "$(param rto_max_ms "$rel/r01/scenario.toml")" \
    --pmr "$(param path_max_retrans "$rel/r01/scenario.toml")" "${pf[@]}" \
    >/dev/null) || [[ $? -eq 2 ]]
done
# TSN against time (Bokor Fig. 2, Honda Figs. 5.2-5.5) and Koh & Kim's
# message spacing around the switch: every DATA chunk of the captures the
# report reads (tsn.csv, by tshark). One spec a line: runs below
# RUNS/GLOB, the captures (SIDE or SIDE+SIDE) and a tshark display filter
# the chunks must also pass (Koh & Kim: only the correspondent's DATA).
while read -r glob sides filter; do
  for r in $runs/$glob/r*/; do
    IFS=+ read -ra caps <<<"$sides"
    fresh=1
    for side in "${caps[@]}"; do
      [[ -f $r/$side.pcap ]] || continue 2
      [[ -f $r/tsn.csv && $r/tsn.csv -nt $r/$side.pcap ]] || fresh=0
    done
    [[ $fresh == 1 ]] && continue
    { echo "frame,time,src,dst,tsn,capture"
      for side in "${caps[@]}"; do
        tshark -r "$r/$side.pcap" -Y "sctp.data_tsn${filter:+ && ($filter)}" -T fields -E separator=, \
          -E occurrence=a -E aggregator=';' -e frame.number -e frame.time_epoch -e ipv6.src -e ip.src \
          -e ipv6.dst -e ip.dst -e sctp.data_tsn 2>/dev/null |
          awk -F, -v side="$side" '{src = $3 != "" ? $3 : $4; dst = $5 != "" ? $5 : $6;
            n = split($7, t, ";"); for (k = 1; k <= n; k++) print $1 "," $2 "," src "," dst "," t[k] "," side}'
      done
    } > "$r/tsn.csv.tmp" && mv "$r/tsn.csv.tmp" "$r/tsn.csv"
  done
done <<'SPECS'
bokor-fig2/*/* cn
honda-planned/*/* mn
honda-normal/*/* mn
koh-kim-1-lan/koh-kim-1-lan/delay=0.1 mn+cn ip.src == 198.51.100.100
SPECS
# Every run's analysis against its kernel's own log (harness/tests/
# kernel_agreement.rs, docs/metrics.md "Checked against the kernel"): the
# comparison goes beside the report; a disagreement is reported, and the
# report is still written (its statistics stand on the analyzer's numbers).
echo "reproduce: comparing every run's analysis with its kernel's log"
if SCTP_KERNEL_AGREEMENT_RUNS=$(realpath "$runs") cargo test -q -p sctp-handover-harness \
    --test kernel_agreement -- --ignored --nocapture >"$runs/kernel-agreement.txt" 2>&1; then
  echo "reproduce: the analyzer agrees with the kernel on every run ($(grep -c '^\[agree' "$runs/kernel-agreement.txt") rows)"
else
  echo "reproduce: warning: the analyzer disagrees with the kernel on $(grep -c '^\[DIFFER' "$runs/kernel-agreement.txt") rows: see kernel-agreement.txt" >&2
fi
echo "reproduce: writing $out"
# The code the numbers come from (the harness and its scenarios, the
# analyzer, the tables, the report, the lab, this script) against HEAD, by file:
# commit it first and the note names the commit alone.
code_changes=$(git status --porcelain --untracked-files=all -- analyzer tables report cli harness \
  harness-formats points lab scripts Cargo.toml Cargo.lock 2>/dev/null | awk '{print $NF}' | paste -sd' ' | sed 's/ /, /g')
loads=$(awk '{print $2}' "$runs/loads.txt" 2>/dev/null | sort -n | sed -n '1p;$p' | paste -sd' ' | awk 'NF == 2 {print "min " $1 ", max " $2}')
notes=(
  --note "Generated by make reproduce (scripts/reproduce.sh) on $(date -u '+%Y-%m-%d %H:%M UTC') from commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)${code_changes:+; the code that made these numbers differed from that commit in: $code_changes}; machine: $(nproc) cores shared with other work, $jobs harness runs at a time."
  --note "Machine load while the runs were made (1-minute load average at the start of each parameter combination, min and max; harness runs measure time, so a loaded machine adds scheduling noise): ${loads:-not recorded}. Full log: loads.txt beside this report."
)
"$bin/sctp-handover-lab" reproduction "$out" --runs "$runs" --tables "$runs/tables" --sweeps "$sweeps" "${notes[@]}"
cp "$runs/loads.txt" "$out/loads.txt" 2>/dev/null || true
# (The runs' directories as the report names them: relative to runs/.)
abs_runs=$(realpath "$runs")
sed -e "s|$abs_runs/||g" -e "s|$abs_runs|runs|g" "$runs/kernel-agreement.txt" >"$out/kernel-agreement.txt" 2>/dev/null || true
echo "reproduce: done; open $out/index.html ($out/README.md)"
