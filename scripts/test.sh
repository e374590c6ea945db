#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: the README's test command, and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset ci
cmake --build --preset ci --parallel "$(nproc)"
# GUI suites that need a real window find an X server through xvfb-run; the rest run offscreen.
xvfb-run -a -s "-screen 0 1600x1000x24" ctest --preset ci --parallel "$(nproc)" "$@"
