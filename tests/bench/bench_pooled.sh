#!/bin/sh
# The long-sequence benchmark of issue 11: `attnscope-cli bench --pool` at T = 4k, 16k and 32k
# (d = 512, H = 8, causal, 1024 x 1024 pooled cells per head), one row per T: time, peak RSS
# (getrusage ru_maxrss of the process), GFLOP/s (the usual Q·Kᵀ + W·V count, halved by the causal
# mask, plus the projections) and the machine's Eigen GEMM rate measured in the same process, so
# the ratio holds on a loaded machine too (for --backend vulkan it compares the GPU with the CPU's
# GEMM, a yardstick only).
#   tests/bench/bench_pooled.sh [path/to/attnscope-cli] [T ...]
#   BACKEND=vulkan tests/bench/bench_pooled.sh ...   (the pooled shaders; default cpu)
#   ATTNSCOPE_VULKAN_DEVICE=NAME picks the Vulkan device, as everywhere.
# Not a test: it prints figures; ctest never runs it.
set -eu
cli=${1:-build/ci/bin/attnscope-cli}
[ $# -gt 0 ] && shift
sizes=${*:-4096 16384 32768}
backend=${BACKEND:-cpu}
printf '%-7s %10s %10s %10s %12s %9s  %s\n' T time_s rss_mib gflop_s gemm_gflop_s fraction device
for t in $sizes; do
    out=$("$cli" bench --tokens "$t" --dim 512 --heads 8 --causal --pool 1024 --repeat 1 --backend "$backend")
    value() { printf '%s\n' "$out" | sed -n "s/^$1: \([0-9.]*\).*/\1/p"; }
    device=$(printf '%s\n' "$out" | sed -n 's/^device: //p')
    # The pooled path fell back to the CPU engine (a backend without pooled kernels): say so.
    printf '%s\n' "$out" | grep -q 'CPU engine' && device="$device (pooled on the CPU engine)"
    printf '%-7s %10.2f %10s %10s %12s %9s  %s\n' "$t" "$(echo "$(value median_ms) / 1000" | bc -l)" \
        "$(value peak_rss_mib)" "$(value gflop_per_s)" "$(value gemm_gflop_per_s)" "$(value fraction_of_gemm)" \
        "$device"
done
