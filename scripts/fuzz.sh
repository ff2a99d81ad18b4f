#!/usr/bin/env bash
# make fuzz: coverage-guided fuzzing of the analyzer with AFL++ on a stable
# toolchain (the afl crate through cargo-afl; docs/robustness.md).
#
# Installs what is missing (cargo-afl, pinned, from crates.io; it builds its
# own AFL++ from the source it bundles, which needs gcc and make), builds the
# targets in fuzz/, builds seed corpora from the sample captures, one sample
# sweep run and ../shared/public-captures/, then runs each target in turn for
# FUZZ_SECONDS and prints what afl-fuzz recorded.
#
#   FUZZ_SECONDS=600            time per target
#   FUZZ_TARGETS="capture decode pipeline"
#   FUZZ_SEED_MAX_BYTES=65536   larger captures are cut to this size as seeds
#   FUZZ_OUT=fuzz/out           corpora, queues, crashes (gitignored)
#   PUBLIC_CAPTURES=../shared/public-captures/files
#
# Targets run one after the other (one fuzzer process at a time). Exits
# non-zero when any target recorded a crash or a hang.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_AFL_VERSION=0.18.2
FUZZ_SECONDS=${FUZZ_SECONDS:-600}
FUZZ_TARGETS=${FUZZ_TARGETS:-capture decode pipeline}
FUZZ_SEED_MAX_BYTES=${FUZZ_SEED_MAX_BYTES:-65536}
FUZZ_OUT=${FUZZ_OUT:-fuzz/out}
PUBLIC_CAPTURES=${PUBLIC_CAPTURES:-../shared/public-captures/files}
# Separate from the workspace's builds: cargo-afl compiles with its own
# RUSTFLAGS, which would otherwise rebuild the shared dependencies each time.
TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}/afl

# --- setup (the fuzz command's own; make setup does not need any of it) ---
for tool in gcc make python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz: $tool is needed (apt-get install gcc make python3)" >&2
    exit 1
  fi
done
if ! cargo afl --version 2>/dev/null | grep -q "^cargo-afl $CARGO_AFL_VERSION "; then
  echo "fuzz: installing cargo-afl $CARGO_AFL_VERSION (builds AFL++ too)"
  cargo install --quiet --locked cargo-afl --version "$CARGO_AFL_VERSION"
fi
# AFL++'s runtime is built per Rust version; build it if this one lacks it.
if ! config=$(cargo afl config --build 2>&1); then
  if ! grep -q "already built" <<<"$config"; then
    echo "$config" >&2
    exit 1
  fi
fi

echo "fuzz: building targets ($TARGET_DIR)"
(cd fuzz && CARGO_TARGET_DIR=$TARGET_DIR cargo afl build --release --quiet)

# --- seeds ---
seeds=(sample-captures/*/*.pcap)
# One run of the sample sweep (the others are the same scenario).
sweep_run=$(find sample-sweeps -name mn.pcap -printf '%h\n' 2>/dev/null | sort | head -n 1)
if [[ -n $sweep_run ]]; then
  seeds+=("$sweep_run"/*.pcap)
fi
if [[ -d $PUBLIC_CAPTURES ]]; then
  while IFS= read -r -d '' f; do seeds+=("$f"); done \
    < <(find "$PUBLIC_CAPTURES" -type f -print0 | sort -z)
else
  echo "fuzz: $PUBLIC_CAPTURES not found; seeding with the sample captures only" >&2
fi
rm -rf "$FUZZ_OUT/seeds"
python3 scripts/fuzz-seeds.py "$FUZZ_OUT/seeds" "$FUZZ_SEED_MAX_BYTES" "${seeds[@]}"

# --- fuzzing ---
# No CPU frequency governor, core_pattern or free core to bind to in a
# container shared with others: tell afl-fuzz not to insist.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
export AFL_NO_UI=1 AFL_FAST_CAL=1
status=0
summary=()
for target in $FUZZ_TARGETS; do
  case $target in
    capture | pipeline) corpus=$FUZZ_OUT/seeds/capture ;;
    decode) corpus=$FUZZ_OUT/seeds/decode ;;
    *)
      echo "fuzz: unknown target $target" >&2
      exit 2
      ;;
  esac
  out=$FUZZ_OUT/$target
  rm -rf "$out"
  echo "fuzz: $target for ${FUZZ_SECONDS}s (log: $out.log)"
  cargo afl fuzz -i "$corpus" -o "$out" -V "$FUZZ_SECONDS" -t 1000 \
    -- "$TARGET_DIR/release/$target" >"$out.log" 2>&1 || {
    echo "fuzz: afl-fuzz failed for $target; the end of $out.log:" >&2
    tail -n 30 "$out.log" >&2
    exit 1
  }
  stats=$out/default/fuzzer_stats
  get() { sed -n "s/^$1 *: //p" "$stats"; }
  crashes=$(get saved_crashes)
  hangs=$(get saved_hangs)
  execs=$(get execs_done)
  summary+=("$(printf '%-9s %12s %10s %8s %8s %12s %8s %7s %10s' "$target" "$execs" \
    "$(get execs_per_sec)" "$(get run_time)" "$(get corpus_count)" \
    "$(get edges_found)/$(get total_edges)" "$crashes" "$hangs" "$(get stability)")")
  if ((execs < 1000000)); then
    echo "fuzz: $target: fewer than 10^6 executions; raise FUZZ_SECONDS for the 10^6 of docs/robustness.md" >&2
  fi
  if ((crashes + hangs > 0)); then
    status=1
    echo "fuzz: $target: $crashes crash(es), $hangs hang(s) in $out/default/{crashes,hangs}/" >&2
  fi
done

echo
printf '%-9s %12s %10s %8s %8s %12s %8s %7s %10s\n' target execs exec/s seconds paths edges crashes hangs stability
printf '%s\n' "${summary[@]}"
exit $status
