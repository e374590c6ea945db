#!/usr/bin/env bash
# Fuzzes the readers of outside bytes (project files, .npy, attention files: .npy, .npz,
# .safetensors; the tokenizers' files and encode()) with libFuzzer, ASan and UBSan.
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
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$root" -isystem /usr/include/eigen3 -DATTNSCOPE_VERSION='"fuzz"')
core=(AttentionFile AttentionProblem AttentionSet ErrorCode FileIo FilesRead FolderConfinement JsonDocument MappedFile
      Mask MemoryLimits Npy ProjectFile ProjectReferences BatchedProject Safetensors UserText Validation ZipReader
      ByteLevelBpe Tokenizer UnicodeText WordPiece)
# The readers are compiled once, in parallel (through ccache when it is installed), and linked
# into every target; only each target's harness carries -fsanitize=fuzzer's main().
launcher=()
if [ "${ATTNSCOPE_CCACHE:-ON}" != OFF ] && command -v ccache >/dev/null 2>&1; then launcher=(ccache); fi
linker=()
if command -v ld.lld >/dev/null 2>&1; then linker=(-fuse-ld=lld); fi
mkdir -p "$out/obj"
echo "== fuzz: compiling ${#core[@]} readers"
printf '%s\n' "${core[@]}" | xargs -P "$(nproc)" -I{} \
  "${launcher[@]}" "$cxx" "${flags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" \
  -c "$root/core/{}.cpp" -o "$out/obj/{}.o"
objects=()
for c in "${core[@]}"; do objects+=("$out/obj/$c.o"); done

status=0
for target in projectfile npy attentionfile tokenizer tokenizerfiles; do
  echo "== fuzz_$target: building"
  "${launcher[@]}" "$cxx" "${flags[@]}" -c "$root/tests/fuzz/fuzz_$target.cpp" -o "$out/obj/fuzz_$target.o"
  "$cxx" "${flags[@]}" "${linker[@]}" "$out/obj/fuzz_$target.o" "${objects[@]}" -lz -o "$out/fuzz_$target"
  corpus="$out/corpus-$target"
  mkdir -p "$corpus"
  seeds=("$root/tests/fuzz/corpus/$target" "$root/tests/fuzz/regressions/$target")
  case "$target" in
    projectfile) seeds+=("$root/resources/examples") ;;
    npy) seeds+=("$root/tests/fixtures/torch") ;;
    attentionfile) seeds+=("$root/tests/fixtures/attention") ;;
    tokenizer) seeds+=("$root/tests/fixtures/bert-tokenizer") ;;
  esac
  # libFuzzer stops at a seed folder that does not exist (git keeps no empty folder).
  existing=()
  for s in "${seeds[@]}"; do [ -d "$s" ] && existing+=("$s"); done
  echo "== fuzz_$target: ${seconds}s or $runs runs"
  if ! "$out/fuzz_$target" "$corpus" "${existing[@]}" -max_total_time="$seconds" -runs="$runs" \
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
