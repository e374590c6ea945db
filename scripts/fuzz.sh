#!/usr/bin/env bash
# Fuzzes the readers of outside bytes (project files, .npy, attention files: .npy, .npz,
# .safetensors; the tokenizers' files, tokenizer.json and encode(); pasted blocks of numbers;
# attnscope-qk dumps, Marian folders, the Vulkan pipeline cache's header) with libFuzzer, ASan
# and UBSan.
#   scripts/fuzz.sh [SECONDS] [RUNS]
# Each target runs for SECONDS (default 60) or RUNS executions, whichever ends first, starting
# from the seed corpus (resources/examples, tests/fixtures/torch, tests/fuzz/corpus,
# tests/fuzz/regressions). A crash leaves its input in build/fuzz/artifacts/ and fails the
# script; copy it to tests/fuzz/regressions/<target>/ and add a test row for it.
# Needs clang++ with libFuzzer (Debian: clang, libclang-rt-dev); installs nothing.
set -euo pipefail

seconds="${1:-60}"
runs="${2:--1}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/fuzz"
cxx="${CLANGXX:-clang++}"

if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz.sh: $cxx not found; install clang and libclang-rt-dev (Debian) or set CLANGXX" >&2
  exit 2
fi
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char *, unsigned long) { return 0; }' |
    "$cxx" -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  echo "fuzz.sh: $cxx cannot link -fsanitize=fuzzer; install libclang-rt-dev (Debian)" >&2
  exit 2
fi

mkdir -p "$out/artifacts"
# The targets build from CMake (the `fuzz` preset: clang, libFuzzer, ASan and UBSan) against the
# same core library as everything else; ccache and lld are used as in the other presets.
echo "== fuzz: building the targets (fuzz preset)"
cmake --preset fuzz -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build --preset fuzz --parallel "$(nproc)"

status=0
for target in projectfile npy attentionfile tokenizer tokenizerfiles tokenizerjson numberblock modelconfig qkdump marian \
    pipelinecache; do
  corpus="$out/corpus-$target"
  mkdir -p "$corpus"
  seeds=("$root/tests/fuzz/corpus/$target" "$root/tests/fuzz/regressions/$target")
  case "$target" in
    projectfile) seeds+=("$root/resources/examples") ;;
    npy) seeds+=("$root/tests/fixtures/torch") ;;
    attentionfile) seeds+=("$root/tests/fixtures/attention") ;;
    tokenizer) seeds+=("$root/tests/fixtures/bert-tokenizer") ;;
    tokenizerjson) seeds+=("$root/tests/fixtures/tokenizers/llama2") ;;
  esac
  # libFuzzer stops at a seed folder that does not exist (git keeps no empty folder).
  existing=()
  for s in "${seeds[@]}"; do [ -d "$s" ] && existing+=("$s"); done
  echo "== fuzz_$target: ${seconds}s or $runs runs"
  if ! "$root/build/fuzz/tests/fuzz/fuzz_$target" "$corpus" "${existing[@]}" -max_total_time="$seconds" -runs="$runs" \
      -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/$target-" 2>&1 | tail -n 25; then
    status=1
  fi
  if ls "$out/artifacts/$target-"* >/dev/null 2>&1; then
    echo "fuzz.sh: fuzz_$target found inputs that fail: $(ls "$out/artifacts/$target-"*)" >&2
    status=1
  fi
done
exit $status
