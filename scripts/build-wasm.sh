#!/usr/bin/env bash
# Builds the WebAssembly core with Emscripten into build/wasm/prenet_core.mjs (wasm embedded).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs
if [ ! -f build/emscripten/CMakeCache.txt ]; then
  emcmake cmake -S . -B build/emscripten -DCMAKE_BUILD_TYPE=Release -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node ${CMAKE_ARGS:-} >/dev/null
fi
cmake --build build/emscripten -j"$(nproc)"
mkdir -p build/wasm
cp -p build/emscripten/out/prenet_core.mjs build/wasm/prenet_core.mjs
echo "wasm core: build/wasm/prenet_core.mjs ($(wc -c < build/wasm/prenet_core.mjs) bytes)"
