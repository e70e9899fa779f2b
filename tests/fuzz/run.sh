#!/usr/bin/env bash
# Builds the libFuzzer targets (clang++, -fsanitize=fuzzer,address,undefined) into build/fuzz, writes the seed
# corpora from the tests' material, and fuzzes each parser.
#   tests/fuzz/run.sh --smoke            30 s per target (the test suite's mode, about 3.5 min in all)
#   tests/fuzz/run.sh [seconds] [target] longer runs on demand (default 300 s, every target)
# Targets: request (the whole roofline path), learned (the learned path's feature rows and finish),
# layer_list, hf_config, keras, onnx (each model format's parser). Needs Debian's clang and libclang-rt-14-dev.
# Exits non-zero on any crash, sanitizer report, leak, timeout (> 10 s per input) or memory blow-up (> 2 GB).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=300
targets="request learned layer_list hf_config keras onnx"
seed_args=()
if [ "${1:-}" = "--smoke" ]; then
  seconds=30
  # The test suite's run starts from a fixed seed, so a CI run repeats the same mutations instead of
  # drawing new ones each time; longer runs on demand explore with fresh seeds.
  seed_args=(-seed=1)
  shift
elif [ -n "${1:-}" ]; then
  seconds=$1
  shift
fi
if [ -n "${1:-}" ]; then targets=$1; fi

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi
if [ ! -f build/fuzz/CMakeCache.txt ]; then
  CXX=clang++ cmake -S tests/fuzz -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build/fuzz -j"$(nproc)" >/dev/null
rm -rf build/fuzz/seeds
build/fuzz/make_seeds . build/fuzz/seeds >/dev/null

status=0
for t in $targets; do
  corpus=build/fuzz/corpus/$t
  mkdir -p "$corpus"
  max_len=65536
  [ "$t" = "onnx" ] && max_len=262144
  echo "fuzz: $t for ${seconds}s"
  # Inputs that once crashed a target are replayed first and forever (tests/fuzz/regressions/<target>/).
  regressions=()
  inputs_of=$t
  [ "$t" = "learned" ] && inputs_of=request  # the same requests, down the learned path
  seeds=build/fuzz/seeds/$inputs_of
  [ -d "tests/fuzz/regressions/$t" ] && regressions+=("tests/fuzz/regressions/$t")
  if [ "$inputs_of" != "$t" ] && [ -d "tests/fuzz/regressions/$inputs_of" ]; then
    regressions+=("tests/fuzz/regressions/$inputs_of")
  fi
  if ! build/fuzz/fuzz_$t "$corpus" "$seeds" "${regressions[@]}" "${seed_args[@]}" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=$max_len -print_final_stats=1 \
      -artifact_prefix="build/fuzz/crash-$t-" >"build/fuzz/$t.log" 2>&1; then
    echo "fuzz: $t FAILED (see build/fuzz/$t.log and build/fuzz/crash-$t-*)" >&2
    tail -30 "build/fuzz/$t.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "build/fuzz/$t.log" | tr '\n' ' '
    echo
  fi
done
exit $status
