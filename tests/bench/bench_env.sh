# Sourced by the PyTorch comparisons (bench_decoder.sh, bench_generate.sh) after setting $threads:
# the same threads for AttnScope and PyTorch, and the same OpenBLAS kernels.
# PyTorch calls the system OpenBLAS, which takes newer Xeons for old CPUs and runs slow kernels;
# AttnScope asks for the kernels the CPU supports (core/Gemm.h). Both get the same ones here, and
# OpenBLAS's own threads held to the same count, so the comparison is of the same GEMMs.
export OMP_NUM_THREADS="$threads" THREADS="$threads"
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo; then export OPENBLAS_CORETYPE=Haswell; fi
fi
export OPENBLAS_NUM_THREADS="$threads"
blas="$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)"

# field NAME TEXT: the number after NAME (as "NAME X" or "NAME: X") on the first line holding it
field() { echo "$2" | sed -n "s/.*$1:\{0,1\} \([0-9.][0-9.]*\).*/\1/p" | head -n1; }
