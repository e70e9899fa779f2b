#!/usr/bin/env bash
# Trains the learned predictors from models/data and writes models/artifacts/ and models/REPORT.md.
# Pass --quick for a test-sized run (written to build/quick-train unless --out is given).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-native.sh >/dev/null
if [[ " $* " == *" --quick "* && " $* " != *" --out "* ]]; then
  exec build/native/models/prenet_train --out build/quick-train --report build/quick-train/REPORT.md "$@"
fi
exec build/native/models/prenet_train "$@"
