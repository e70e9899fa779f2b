#!/usr/bin/env bash
# Configures and builds the native core, its tests and tools into build/native.
set -euo pipefail
cd "$(dirname "$0")/.."
build_type=${BUILD_TYPE:-Release}
cmake -S . -B build/native -DCMAKE_BUILD_TYPE="$build_type" ${CMAKE_ARGS:-} >/dev/null
cmake --build build/native -j"$(nproc)"
