#!/usr/bin/env bash
# Greedy generation speed: `attnscope-cli bench --model DIR --tokens T --generate N` (generate() with
# the key/value cache, as the product runs it) against a PyTorch eager loop with a cache on the same
# weights (tests/bench/bench_generate_torch.py), each in its own process with the same threads, for
# the two example models (resources/models/tiny-gpt2, tiny-qwen3) and the Qwen2.5-0.5B-shaped random
# folder of bench_decoder.sh. Before timing, each model's greedy ids are checked to be the same in
# both (`attnscope-cli generate` against bench_generate_torch.py --check), so both compute the same
# thing. Not a test: it prints figures (CI does not run it). Needs a built attnscope-cli and
# Debian's python3-torch.
#
#   tests/bench/bench_generate.sh [T] [N]                    (default: 256 64)
#   THREADS=2 REPEAT=3 BUILD=build/release MODEL=DIR tests/bench/bench_generate.sh 256 64
#
# MODEL: the Qwen2.5-0.5B-shaped folder (default build/bench/qwen2.5-0.5b-random, written by
# make_random_decoder.py when missing, ~1 GB); MODEL= (empty) leaves it out. A model with learned
# positions (tiny-gpt2: 256) runs on the longest prompt that leaves room for the N + 1 new tokens.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD:-$root/build/ci}"
threads="${THREADS:-2}"
repeat="${REPEAT:-3}"
model="${MODEL-$root/build/bench/qwen2.5-0.5b-random}"
tokens="${1:-256}"
steps="${2:-64}"
py=/usr/bin/python3
cli="$build/bin/attnscope-cli"
torch_bench="$root/tests/bench/bench_generate_torch.py"
[ -x "$cli" ] || { echo "bench_generate.sh: build the attnscope-cli target first ($cli)" >&2; exit 2; }
models=("$root/resources/models/tiny-gpt2" "$root/resources/models/tiny-qwen3")
if [ -n "$model" ]; then
  if [ ! -f "$model/config.json" ] || [ ! -f "$model/model.safetensors" ] || [ ! -f "$model/tokenizer.json" ]; then
    "$py" "$root/tests/bench/make_random_decoder.py" "$model"
  fi
  models+=("$model")
fi
. "$root/tests/bench/bench_env.sh"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "threads: $threads; timed runs: $repeat after one warm-up; system BLAS (PyTorch's): $blas"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(nproc) cores"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
for dir in "${models[@]}"; do
  name="$(basename "$dir")"
  positions="$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("n_positions") or 0)' \
    "$dir/config.json")"
  t="$tokens"
  if [ "$positions" -gt 0 ] && [ $((t + steps + 1)) -gt "$positions" ]; then
    t=$((positions - steps - 1))
    echo "$name: $positions positions, so T=$t"
  fi
  ids="$("$py" "$torch_bench" --model "$dir" --tokens "$t" --print-ids)"
  "$cli" generate "$dir" --ids "$ids" --max-new-tokens $((steps + 1)) --out "$out/$name" >/dev/null
  check=ok
  "$py" "$torch_bench" --model "$dir" --check "$out/$name" || check=DIFFER
  ours="$("$cli" bench --model "$dir" --tokens "$t" --generate "$steps" --repeat "$repeat")"
  echo "$ours" | sed 's/^/  attnscope: /'
  theirs="$("$py" "$torch_bench" --model "$dir" --tokens "$t" --generate "$steps" --repeat "$repeat" \
    --threads "$threads")"
  echo "$theirs" | sed 's/^/  pytorch:   /'
  rows+=("$(awk -v m="$name" -v t="$t" -v n="$steps" -v c="$check" \
    -v pa="$(field prefill_ms "$ours")" -v pb="$(field prefill_ms "$theirs")" \
    -v ra="$(field decode_tokens_per_s "$ours")" -v rb="$(field decode_tokens_per_s "$theirs")" \
    -v ma="$(field peak_rss_mib "$ours")" -v mb="$(field peak_rss_mib "$theirs")" 'BEGIN {
    printf "| %s | %d | %d | %.1f | %.1f | %.2f | %.2f | %.2fx | %.0f | %.0f | %s |\n", m, t, n, pa, pb, ra, rb, ra / rb,
      ma, mb, c }')")
done
echo
echo "| model | T | N | AttnScope prefill ms | PyTorch prefill ms | AttnScope tok/s | PyTorch tok/s | ratio | AttnScope peak MiB | PyTorch peak MiB | same greedy ids |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo
echo "ratio: AttnScope's decode tokens per second over PyTorch's (above 1: AttnScope faster)."
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
