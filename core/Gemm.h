#pragma once

#include "core/Tensor.h"

#include <string>

namespace attnscope {

// The one matrix product every CPU path calls for its large GEMMs (the projections, Q·Kᵀ,
// weights·V, W_O; the model forward's dense layers): row-major float32, c = alpha·op(a)·op(b) +
// beta·c, where op is the identity or the transpose. Run by Debian's OpenBLAS (cblas_sgemm) when
// libopenblas.so.0 can be loaded, else by Eigen's own product; tests/bench/bench_gemm measured
// OpenBLAS at 4-6x Eigen's rate in the portable build (docs/performance.md).
//
// Threads: one budget, ours. OpenBLAS is always asked for one thread, so it never starts
// threads of its own next to the engine's OpenMP threads (no oversubscription); parallelGemm
// splits the rows of c over OpenMP threads, each calling a one-thread sgemm.
//
// Operands are views (a block of a row-major matrix: rows with a stride, columns contiguous),
// so a head's columns or a block of rows go to sgemm without a copy.
using MatrixViewF = Eigen::Ref<MatrixF, 0, Eigen::OuterStride<>>;
using ConstMatrixViewF = Eigen::Ref<const MatrixF, 0, Eigen::OuterStride<>>;

enum class GemmOp { None, Transpose };

// c (M x N) = alpha·op(a)·op(b) + beta·c, op(a) M x K, op(b) K x N. c must not overlap a or b.
void gemm(const ConstMatrixViewF &a, GemmOp opA, const ConstMatrixViewF &b, GemmOp opB, MatrixViewF c,
          float alpha = 1.0f, float beta = 0.0f);
inline void gemm(const ConstMatrixViewF &a, const ConstMatrixViewF &b, MatrixViewF c, float alpha = 1.0f,
                 float beta = 0.0f)
{
    gemm(a, GemmOp::None, b, GemmOp::None, c, alpha, beta);
}

// gemm on `threads` OpenMP threads, each taking a band of c's rows (one thread below ~8 MFLOP,
// where waking a second costs more than it saves). Call it from outside a parallel region.
void parallelGemm(const ConstMatrixViewF &a, const ConstMatrixViewF &b, GemmOp opB, MatrixViewF c, int threads,
                  float alpha = 1.0f, float beta = 0.0f);
inline void parallelGemm(const ConstMatrixViewF &a, const ConstMatrixViewF &b, MatrixViewF c, int threads,
                         float alpha = 1.0f, float beta = 0.0f)
{
    parallelGemm(a, b, GemmOp::None, c, threads, alpha, beta);
}

// What runs gemm, for device names and benchmarks: "OpenBLAS 0.3.21 (SkylakeX kernels)" or
// "Eigen 3.4.0".
std::string gemmBackendName();
bool gemmUsesOpenBlas();

// Loads OpenBLAS now rather than at the first gemm (it is loaded once per process; later calls
// do nothing). Unless the environment says otherwise, OpenBLAS is asked for one thread and, on
// x86-64 CPUs newer than its table (it took this project's Xeon, family 6 model 207, for a
// 2004 Prescott and ran 5x slower), for the kernels the CPU's instruction set supports. It
// sets those two environment variables, so call it at start-up, before other threads read the
// environment; the first gemm calls it otherwise. ATTNSCOPE_BLAS=eigen skips OpenBLAS, and so
// does an address-space or data limit under 8 GiB (OpenBLAS maps 128 MiB per calling thread and
// hangs, retrying, where it cannot).
void initGemm();

} // namespace attnscope
