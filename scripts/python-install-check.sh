#!/usr/bin/env bash
# `make python-install-check`: the README's Python lines, as a new user
# runs them — a clean checkout, a fresh virtual environment, pip:
#
#   python3 -m venv v && v/bin/pip install './python[dask]'
#   v/bin/python -c 'import sctp_handover as sh; …'
#   v/bin/sctp-handover-cluster --engine dask sample-captures --out D
#
# then checks what they give (the version, a release build, the handovers
# of a sample capture, a filtered analysis, the console script on Dask).
#
#   scripts/python-install-check.sh             the commit HEAD
#   scripts/python-install-check.sh --worktree  the working tree as it is
#                                               (uncommitted edits and new
#                                               files included), before a commit
#
# The checkout ($SCTPHO_PIP_CHECK/src) is exactly the commit's files:
# forced to it by git, untracked and ignored files removed. It is kept
# between runs so that the files a commit did not change keep their times,
# and it has a cargo target directory of its own ($SCTPHO_PIP_CHECK/target,
# never the one of the tree being worked on, whose uncommitted builds
# must not stand in for the commit's). Cargo decides by file times whether a
# path dependency changed: a clone made afresh each time would rebuild all
# of polars (the patched polars-buffer in third_party/ is a path
# dependency) in the release profile, about 30 minutes on 2 cores. The
# first run pays that once; later runs rebuild what changed (a few minutes).
# The virtual environment is new every run. pip fetches maturin (the build
# backend), pyarrow and Dask from PyPI.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

mode=commit
[[ ${1:-} == --worktree ]] && mode=worktree

CHECK=${SCTPHO_PIP_CHECK:-$HOME/.cache/sctp-handover/pip-check}
src=$CHECK/src
export CARGO_TARGET_DIR=$CHECK/target
mkdir -p "$CHECK"

commit=$(git -C "$repo" rev-parse HEAD)
if [[ ! -d $src/.git ]]; then
  git clone --quiet --no-checkout "$repo" "$src"
fi
git -C "$src" fetch --quiet "$repo" "$commit"
if [[ $mode == commit ]]; then
  git -C "$src" checkout --quiet --force --detach "$commit"
  git -C "$src" clean --quiet -ffdx
  echo "python-install-check: commit $commit"
else
  [[ $(git -C "$src" rev-parse HEAD) == "$commit" ]] || git -C "$src" checkout --quiet --force --detach "$commit"
  # The working tree's files (tracked, and new ones not ignored) over the
  # checkout: only those that differ are written (new times: cargo
  # rebuilds what they belong to), so a second run rebuilds nothing; the
  # others are removed.
  changed=0
  declare -A wanted
  while IFS= read -r -d '' f; do
    [[ -f $repo/$f ]] || continue  # deleted in the working tree
    wanted[$f]=1
    if ! cmp -s "$repo/$f" "$src/$f"; then
      mkdir -p "$(dirname "$src/$f")"
      cp "$repo/$f" "$src/$f"
      changed=$((changed + 1))
    fi
  done < <(git -C "$repo" ls-files -z --cached --others --exclude-standard)
  while IFS= read -r -d '' f; do
    [[ -n ${wanted[$f]:-} ]] || rm -f "$src/$f"
  done < <(git -C "$src" ls-files -z --cached --others --exclude-standard)
  git -C "$src" clean --quiet -ffdX  # ignored files (build leftovers)
  echo "python-install-check: the working tree over $commit ($changed files written)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"

start=$(date +%s)
python3 -m venv "$tmp/v"
# -v: the backend's output, to see the profile cargo built.
if ! "$tmp/v/bin/pip" install -v --disable-pip-version-check './python[dask]' >"$tmp/pip.log" 2>&1; then
  tail -40 "$tmp/pip.log" >&2
  echo "python-install-check: pip install './python[dask]' failed" >&2
  exit 1
fi
echo "python-install-check: pip install './python[dask]' into a new venv: $(($(date +%s) - start)) s"

fail() {
  echo "python-install-check: FAILED: $*" >&2
  exit 1
}
grep -q 'Finished `release` profile' "$tmp/pip.log" || fail "pip did not build in the release profile"

crate=$(sed -n 's/^version = "\(.*\)"$/\1/p' python/Cargo.toml | head -1)
version=$("$tmp/v/bin/python" -c 'import sctp_handover; print(sctp_handover.__version__)')
[[ $version == "$crate" ]] || fail "__version__ $version, python/Cargo.toml says $crate"

# The README's line (its output: the handovers table of the capture).
handovers=$("$tmp/v/bin/python" -c 'import sctp_handover as sh; print(sh.analyze_capture("sample-captures/koh-kim-1/mn.pcap")["handovers"])')
grep -q '^pyarrow.Table' <<<"$handovers" || fail "analyze_capture printed no table: $handovers"
rows=$("$tmp/v/bin/python" -c 'import sctp_handover as sh; print(sh.analyze_capture("sample-captures/koh-kim-1/mn.pcap")["handovers"].num_rows)')
[[ $rows == 2 ]] || fail "koh-kim-1/mn.pcap: $rows handovers, expected 2 (as sctp-handover analyze)"

# The capture filter, through libpcap as the command line compiles it:
# tcpdump -r sample-captures/koh-kim-1/mn.pcap 'sctp and host 198.51.100.101' | wc -l
# gives 87 of the 197 frames.
counts=$("$tmp/v/bin/python" -c '
import sctp_handover as sh
f = sh.analyze_capture("sample-captures/koh-kim-1/mn.pcap", filter="sctp and host 198.51.100.101")["files"].to_pylist()[0]
print(f["frames"], f["frames_sctp"], f["frames_filtered_out"])')
[[ $counts == "197 87 110" ]] || fail "filtered analysis: frames, SCTP, filtered out = $counts, expected 197 87 110"

# The console script on Dask, locally: every sample capture, the README
# beside them skipped.
out=$("$tmp/v/bin/sctp-handover-cluster" --engine dask sample-captures --out "$tmp/D" --workers 2 -q)
grep -q '^21 inputs: 20 ok, 1 skipped;' <<<"$out" || fail "cluster run: $out"
echo "$out" | tail -1
"$tmp/v/bin/sctp-handover-cluster" --help | grep -q -- '--filter EXPR' || fail "sctp-handover-cluster --help lists no --filter"

echo "python-install-check: ok (sctp-handover $version, release wheel, $(($(date +%s) - start)) s in all)"
