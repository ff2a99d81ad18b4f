#!/usr/bin/env bash
# Installs the Debian packages the project needs (only those missing) and
# checks for a Rust toolchain. Safe to run again: it does nothing when all
# is present.
set -euo pipefail

# tshark: reference decoder for tests; tcpdump, user-mode-linux, iproute2,
# kmod, ethtool: the replay harness; lua5.2, lua5.3, lua5.4: the
# dissector's pure-Lua core tests (make lua-test runs them under each:
# Wireshark 4.0 embeds Lua 5.2, 4.4 and later only 5.3 or 5.4);
# wireshark-dev, cmake, gcc: the C plugin (built with the plugin SDK);
# python3-venv: the virtual environment holding pyarrow, the second reader
# of the tables in the tests; chromium: the browser the reports are opened
# in (headless) by the tests; libpcap-dev: capture filters (--filter);
# tcpreplay: replays captures into a veth pair for the live capture test
# (tests/watch_live.rs) and `make bench-live`; openjdk-17-jre-headless: the
# JVM of the Spark standalone master and worker the cluster tests start
# (python/tests/test_clusters.py).
PACKAGES=(tshark tcpdump user-mode-linux iproute2 kmod ethtool lua5.2 lua5.3 lua5.4 wireshark-dev cmake gcc python3-venv chromium libpcap-dev tcpreplay openjdk-17-jre-headless)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null; then
    SUDO=(sudo)
  else
    echo "setup: need root to run: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  # wireshark-common asks whether non-root users may capture: answer no.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | "${SUDO[@]}" debconf-set-selections
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  echo "setup: no Rust toolchain (cargo) found; install a stable toolchain with rustup" >&2
  exit 1
fi

# pyarrow (from PyPI) in a virtual environment kept beside the compiled
# dependencies, so that clean clones reuse it; the tests read the tables
# back with it ($SCTPHO_PYTHON, set by the Makefile).
VENV=${SCTPHO_VENV:-$HOME/.cache/sctp-handover/venv}
if ! "$VENV/bin/python" -c 'import pyarrow' 2>/dev/null; then
  echo "setup: installing pyarrow into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check pyarrow
fi

# third_party/ (patched crates, a path dependency of polars): cargo decides
# whether a path dependency changed by its files' times, and a fresh clone's
# files are all as new as the clone, so polars would be compiled again on
# top of them in every clean clone. Give them the time of the last commit
# that changed them instead (unless they have local changes, which keep
# their own): a new version of a patch is a newer commit, and is compiled.
root=$(cd "$(dirname "$0")/.." && pwd)
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  for crate in "$root"/third_party/*/; do
    rel=third_party/$(basename "$crate")
    git -C "$root" diff --quiet HEAD -- "$rel" 2>/dev/null || continue
    t=$(git -C "$root" log -1 --format=%ct -- "$rel")
    [[ -z $t ]] || find "$crate" -exec touch -h -d "@$t" {} +
  done
fi
