#!/usr/bin/env bash
# Builds the C plugin: the Rust static library, then the Wireshark module.
# Prints the path of sctpho.so.
#   build.sh --install DIR   also copies it into DIR/<major.minor>/epan (the
#                            version of the Wireshark SDK it was built
#                            against) and prints that path instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
install_dir=
if [[ ${1:-} == --install ]]; then
  install_dir=${2:?build.sh --install DIR}
fi
target=${CARGO_TARGET_DIR:-$here/../../target}
profile=${SCTPHO_PROFILE:-debug}
flag=(); [[ $profile == release ]] && flag=(--release)
cargo build -q -p sctpho-ffi "${flag[@]}" --manifest-path "$here/../../Cargo.toml"
build="$target/sctpho-c-plugin-$profile"
# The target dir outlives clones (CI reuses it); a CMake cache made for
# another checkout's sources must not be reused.
if [[ -f "$build/CMakeCache.txt" ]] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$here" "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
cmake -S "$here" -B "$build" -DSCTPHO_FFI_LIB="$target/$profile/libsctpho_ffi.a" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" >/dev/null
if [[ -n $install_dir ]]; then
  dest="$install_dir/$(cat "$build/plugin-subdir")"
  mkdir -p "$dest"
  # A fresh file (not written in place): a running Wireshark keeps the old one.
  cp "$build/sctpho.so" "$dest/sctpho.so.tmp"
  mv -f "$dest/sctpho.so.tmp" "$dest/sctpho.so"
  echo "$dest/sctpho.so"
else
  echo "$build/sctpho.so"
fi
