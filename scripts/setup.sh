#!/usr/bin/env bash
# Installs what building and testing need, skipping what is already there:
# Debian packages (with apt, when missing) and npm packages (from the lock file).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make emscripten libeigen3-dev nlohmann-json3-dev catch2 chromium
  libxgboost-dev libonnx-dev libprotobuf-dev zlib1g-dev clang libclang-rt-14-dev)
missing=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm ci only when node_modules is missing or older than the lock file.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages from package-lock.json"
  npm ci --no-audit --no-fund
fi
