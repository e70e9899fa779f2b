#!/usr/bin/env bash
# Builds the native core and runs its Catch2 tests through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-native.sh
ctest --test-dir build/native --output-on-failure -j"$(nproc)"
