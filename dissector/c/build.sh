#!/usr/bin/env bash
# Builds the C plugin: the Rust static library, then the Wireshark module.
# Prints the path of sctpho.so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${CARGO_TARGET_DIR:-$here/../../target}
profile=${SCTPHO_PROFILE:-debug}
flag=(); [[ $profile == release ]] && flag=(--release)
cargo build -q -p sctpho-ffi "${flag[@]}" --manifest-path "$here/../../Cargo.toml"
build="$target/sctpho-c-plugin"
# The target dir outlives clones (CI reuses it); a CMake cache made for
# another checkout's sources must not be reused.
if [[ -f "$build/CMakeCache.txt" ]] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$here" "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
cmake -S "$here" -B "$build" -DSCTPHO_FFI_LIB="$target/$profile/libsctpho_ffi.a" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" >/dev/null
echo "$build/sctpho.so"
