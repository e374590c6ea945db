#!/usr/bin/env bash
# A Qwen2.5-0.5B-shaped random model (bf16 stored; 24 layers, 896 wide, 14 query / 2 key/value heads
# of 64, MLP 4864, vocabulary 151936) through `attnscope-cli bench --model DIR --tokens T --backend cpu`
# against a PyTorch eager forward of the same weights (tests/bench/bench_decoder_torch.py), every
# attention and hidden state kept by both, the same threads, each length in its own process; then the
# same table for GPT-2 small (bench_model's in-memory random model against bench_model_torch.py, same
# shapes). Not a test: it prints figures (CI does not run it). Needs a built attnscope-cli (and
# bench_model for the GPT-2 table) and Debian's python3-torch.
#
#   tests/bench/bench_decoder.sh [T ...]                         (default: 256 1024)
#   THREADS=2 REPEAT=3 BUILD=build/release MODEL=DIR tests/bench/bench_decoder.sh 256
#
# MODEL defaults to build/bench/qwen2.5-0.5b-random, written by make_random_decoder.py when missing
# (~1 GB, never committed). GPT2=0 leaves the GPT-2 table out. Targets (issue 24): speed-up >= 1.5
# and peak memory ratio (AttnScope / PyTorch) <= 0.6; the last column says which are met.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD:-$root/build/ci}"
threads="${THREADS:-2}"
repeat="${REPEAT:-3}"
model="${MODEL:-$root/build/bench/qwen2.5-0.5b-random}"
lengths=("$@")
[ ${#lengths[@]} -gt 0 ] || lengths=(256 1024)
py=/usr/bin/python3
cli="$build/bin/attnscope-cli"
[ -x "$cli" ] || { echo "bench_decoder.sh: build the attnscope-cli target first ($cli)" >&2; exit 2; }
if [ ! -f "$model/config.json" ] || [ ! -f "$model/model.safetensors" ] || [ ! -f "$model/tokenizer.json" ]; then
  "$py" "$root/tests/bench/make_random_decoder.py" "$model"
fi
. "$root/tests/bench/bench_env.sh"

echo "threads: $threads; timed runs: $repeat after one warm-up; system BLAS (PyTorch's): $blas"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

row() { # T ours_ms theirs_ms ours_mib theirs_mib
  awk -v t="$1" -v a="$2" -v b="$3" -v ra="$4" -v rb="$5" 'BEGIN {
    s = b / a; m = ra / rb
    printf "| %5s | %10.1f | %10.1f | %7.2fx | %10.0f | %10.0f | %6.2f | %s, %s |\n", t, a, b, s, ra, rb, m,
      (s >= 1.5 ? "speed met" : "speed NOT met"), (m <= 0.6 ? "memory met" : "memory NOT met") }'
}
header() {
  echo "| T     | AttnScope ms | PyTorch ms | speed-up | AttnScope peak MiB | PyTorch peak MiB | memory ratio | targets (>= 1.5x, <= 0.6) |"
  echo "| ----- | ---------- | ---------- | -------- | ---------- | ---------- | ------ | --- |"
}

echo
echo "Qwen2.5-0.5B shape, random bf16 weights ($model)"
rows=()
for t in "${lengths[@]}"; do
  ours="$("$cli" bench --model "$model" --tokens "$t" --repeat "$repeat" --backend cpu)"
  echo "$ours" | sed 's/^/  attnscope: /'
  theirs="$("$py" "$root/tests/bench/bench_decoder_torch.py" --model "$model" --tokens "$t" --repeat "$repeat" \
    --threads "$threads")"
  echo "$theirs" | sed 's/^/  pytorch:   /'
  rows+=("$(row "$t" "$(field median_ms "$ours")" "$(field median_ms "$theirs")" \
    "$(field peak_rss_mib "$ours")" "$(field peak_rss_mib "$theirs")")")
done
header
printf '%s\n' "${rows[@]}"

if [ "${GPT2:-1}" != 0 ]; then
  bench="$build/tests/core/bench_model"
  echo
  if [ ! -x "$bench" ]; then
    echo "GPT-2 small: left out, build the bench_model target first ($bench)"
  else
    echo "GPT-2 small shape, random float32 weights made in memory (bench_model / bench_model_torch.py)"
    rows=()
    for t in "${lengths[@]}"; do
      ours="$("$bench" "$t")"
      echo "$ours" | sed 's/^/  attnscope: /'
      theirs="$("$py" "$root/tests/bench/bench_model_torch.py" "$t")"
      echo "$theirs" | sed 's/^/  pytorch:   /'
      rows+=("$(row "$t" "$(field median_ms "$(echo "$ours" | grep "^T=")")" \
        "$(field median_ms "$(echo "$theirs" | grep "^T=")")" \
        "$(field peak_rss_mib "$(echo "$ours" | grep "^T=")")" \
        "$(field peak_rss_mib "$(echo "$theirs" | grep "^T=")")")")
    done
    header
    printf '%s\n' "${rows[@]}"
  fi
fi
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
