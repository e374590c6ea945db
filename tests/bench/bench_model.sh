#!/usr/bin/env bash
# AttnScope's GPT-2-small-shaped forward (every attention and hidden state kept) against PyTorch
# eager on the same shapes, measured one after the other in this run with the same threads, and
# their ratio. Not a test: it prints figures. Needs a built bench_model and, for the reference,
# Debian's python3-torch (CI does not run this).
#
#   tests/bench/bench_model.sh [T ...]                 (default: 128 1024)
#   BUILD=build/release THREADS=2 tests/bench/bench_model.sh 128
#
# Which BLAS PyTorch uses matters a great deal: Debian's torch calls the system libblas.so.3, which is
# the slow reference netlib BLAS unless libopenblas0 is installed. The BLAS in use is printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD:-$root/build/ci}"
threads="${THREADS:-1}"
lengths=("$@")
[ ${#lengths[@]} -gt 0 ] || lengths=(128 1024)
bench="$build/tests/core/bench_model"
[ -x "$bench" ] || { echo "bench_model.sh: build the bench_model target first ($bench)" >&2; exit 2; }
export OMP_NUM_THREADS="$threads"

blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)"
echo "threads: $threads; system BLAS (PyTorch's): $blas"
ours="$("$bench" "${lengths[@]}")"
theirs="$(/usr/bin/python3 "$root/tests/bench/bench_model_torch.py" "${lengths[@]}")"
echo "$ours"
echo "$theirs"
for t in "${lengths[@]}"; do
  a=$(echo "$ours" | sed -n "s/^T=$t: median_ms \([0-9.]*\).*peak_rss_mib \([0-9.]*\).*/\1 \2/p")
  b=$(echo "$theirs" | sed -n "s/^T=$t: median_ms \([0-9.]*\).*peak_rss_mib \([0-9.]*\).*/\1 \2/p")
  set -- $a $b
  awk -v t="$t" -v a="$1" -v ra="$2" -v b="$3" -v rb="$4" 'BEGIN {
    printf "T=%s: attnscope %.1f ms, pytorch %.1f ms, speed-up %.2fx; peak RSS %.0f MiB vs %.0f MiB\n", t, a, b, b / a, ra, rb }'
done
