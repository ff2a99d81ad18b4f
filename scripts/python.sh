#!/usr/bin/env bash
# `make python`: the project-local virtual environment .venv with the
# sctp_handover wheel and the engines (docs/scale-out.md).
#
#   scripts/python.sh            pyarrow, Dask, Ray, Spark, the wheel (what
#                                `make test` needs: python/tests/test_clusters.py)
#   scripts/python.sh --no-ray --no-spark   without Ray (240 MB) or Spark (490 MB)
#
# The wheel is built by maturin in the dev profile into $CARGO_TARGET_DIR,
# the directory `make test` builds the workspace in, so the compiled polars
# and everything else under the extension are reused (a release build of
# polars alone takes about half an hour on 2 cores). SCTPHO_WHEEL_PROFILE=release
# builds the optimised wheel a real cluster wants (docs/scale-out.md).
# Packages come from PyPI the first time, from a wheelhouse beside the
# compiled dependencies after; nothing is installed again when present.
set -euo pipefail
cd "$(dirname "$0")/.."

ray=1 spark=1
for arg in "$@"; do
  case $arg in
    --no-ray) ray=0 ;;
    --no-spark) spark=0 ;;
    *) echo "python.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

VENV=${SCTPHO_DOT_VENV:-.venv}
PY=$VENV/bin/python
PIP=("$PY" -m pip install --disable-pip-version-check --quiet)

if ! "$PY" -c 'import sys' 2>/dev/null; then
  echo "python: creating $VENV"
  python3 -m venv "$VENV"
fi

# Requirements: installed when the file changed since the last install,
# from a wheelhouse kept beside the compiled dependencies (pip's own cache
# keeps nothing from the registry here), filled from PyPI the first time.
WHEELHOUSE=${SCTPHO_WHEELHOUSE:-$HOME/.cache/sctp-handover/wheels}
install() {
  local req=$1 stamp=$VENV/.installed-$(basename "$1")
  if ! cmp -s "$req" "$stamp"; then
    echo "python: installing $req into $VENV"
    if ! "${PIP[@]}" --no-index --find-links "$WHEELHOUSE" -r "$req" 2>/dev/null; then
      # `pip wheel`, not `pip download`: a package PyPI has only as a
      # source archive (pyspark) is built into a wheel once, here.
      "$PY" -m pip wheel --disable-pip-version-check --quiet -w "$WHEELHOUSE" -r "$req"
      "${PIP[@]}" --no-index --find-links "$WHEELHOUSE" -r "$req"
    fi
    cp "$req" "$stamp"
  fi
}
install python/requirements.txt
((ray)) && install python/requirements-ray.txt
((spark)) && install python/requirements-spark.txt

# The wheel (abi3: one wheel for every Python ≥ 3.9). maturin rebuilds
# only what changed; pip reinstalls only a wheel it has not installed.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/sctp-handover/target}
wheels=$CARGO_TARGET_DIR/wheels
rm -f "$wheels"/sctp_handover-*.whl
start=$(date +%s)
"$VENV/bin/maturin" build --quiet --profile "${SCTPHO_WHEEL_PROFILE:-dev}" -m python/Cargo.toml -i "$PY" --out "$wheels" 2>&1 \
  | grep -v -e '^📦' -e '^🔗' -e '^🐍' -e '^📡' -e '^✏️' || true
wheel=$(ls "$wheels"/sctp_handover-*.whl 2>/dev/null | head -1)
if [[ -z $wheel ]]; then
  echo "python: maturin built no wheel" >&2
  exit 1
fi
"${PIP[@]}" --force-reinstall --no-deps "$wheel"
echo "python: $(basename "$wheel") installed in $VENV ($(($(date +%s) - start)) s)"
