#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: the README's test command, and what CI runs.
#   1. the Release build with warnings as errors (`ci` preset) and every suite, the format
#      check included;
#   2. the fuzz targets (libFuzzer) for a bounded time: ATTNSCOPE_FUZZ_SECONDS per target
#      (default 30; 0 skips this step);
#   3. the same suites built with AddressSanitizer + UBSan (`asan` preset; third-party leaks
#      suppressed in tests/sanitizers/lsan.supp, each with its reason).
# Extra arguments go to both ctest runs (e.g. -R tst_cli).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
jobs="$(nproc)"
# GUI suites that need a real window find an X server through xvfb-run; the rest run offscreen.
xvfb=(xvfb-run -a -s "-screen 0 1600x1000x24")

echo "== Release build (ci preset) and tests"
cmake --preset ci
cmake --build --preset ci --parallel "$jobs"
"${xvfb[@]}" ctest --preset ci --parallel "$jobs" "$@"

seconds="${ATTNSCOPE_FUZZ_SECONDS:-30}"
if [ "$seconds" != 0 ]; then
  echo "== Fuzzing (${seconds}s per target)"
  bash scripts/fuzz.sh "$seconds"
fi

echo "== Sanitizer build (asan preset) and tests"
cmake --preset asan
cmake --build --preset asan --parallel "$jobs"
"${xvfb[@]}" ctest --preset asan --parallel "$jobs" "$@"

