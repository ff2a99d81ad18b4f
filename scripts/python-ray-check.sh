#!/usr/bin/env bash
# `make python-ray-check`: `python -m sctp_handover.cluster --engine ray`
# over the sample captures writes the dataset `analyze --out` writes, and
# how long each took (docs/scale-out.md). RAY_INPUTS to check other inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/sctp-handover/target}
cargo build --quiet -p sctp-handover-cli
bin=$CARGO_TARGET_DIR/debug/sctp-handover
py=${SCTPHO_DOT_VENV:-.venv}/bin/python
read -r -a inputs <<< "${RAY_INPUTS:-sample-captures}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

t0=$(date +%s.%N)
"$bin" analyze "${inputs[@]}" --out "$tmp/cli" -q > /dev/null || true
t1=$(date +%s.%N)
"$py" -m sctp_handover.cluster --engine ray "${inputs[@]}" --out "$tmp/ray" -q ${RAY_WORKERS:+--workers $RAY_WORKERS} || true
t2=$(date +%s.%N)
"$py" python/tests/compare.py "$tmp/cli" "$tmp/ray"
printf 'analyze --out: %.1f s; cluster --engine ray (with start-up): %.1f s\n' \
  "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
