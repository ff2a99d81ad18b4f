#!/usr/bin/env bash
# Runs the workspace tests and ends with one total line, so the last line
# a reader (or CI) sees is not the last crate's doc-test block.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
awk '/^test result:/ {
       for (i = 1; i <= NF; i++) {
         if ($(i) ~ /^passed;?$/) p += $(i-1)
         if ($(i) ~ /^failed;?$/) f += $(i-1)
       }
     }
     END { printf "total: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
