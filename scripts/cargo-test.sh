#!/usr/bin/env bash
# Runs the workspace tests and ends with one total line, so the last line
# a reader (or CI) sees is not the last crate's doc-test block.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# --no-fail-fast: every failing test binary is reported, not only the first.
cargo test --workspace --no-fail-fast "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# Cargo shows a passing test's output only on failure, so the tests' own
# skip lines are not seen: say here what a clone without ../shared skips.
shared="$(dirname "$0")/../../shared/public-captures"
if [[ ! -f $shared/INDEX.tsv ]]; then
  echo "skipped: the parts of the tests that read ../shared/public-captures (not found beside this clone; the samples were tested; CI=true makes this a failure)"
fi
awk '/^test result:/ {
       for (i = 1; i <= NF; i++) {
         if ($(i) ~ /^passed;?$/) p += $(i-1)
         if ($(i) ~ /^failed;?$/) f += $(i-1)
       }
     }
     END { printf "total: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
