// Benchmark (prints figures, not a test): single-precision GEMM throughput of the two
// candidate backends for the CPU engine, against the machine's FMA peak.
//
// Built twice from this one file: bench_gemm (Eigen's own GEMM, as the project compiles it,
// beside core/Gemm.h, the engine's call: OpenBLAS's cblas_sgemm, loaded at run time) and
// bench_gemm_eigen_blas (the same with EIGEN_USE_BLAS, so Eigen's products forward to the BLAS
// the program links, sgemm_). Two programs rather than one because EIGEN_USE_BLAS changes what
// Eigen's product templates are: both kinds in one program would break the one-definition rule
// (hence core/Gemm.cpp compiled into each rather than attnscope_core linked). A linked BLAS loads
// before main() and picks its kernels from the CPU model alone; run that variant with and without
// OPENBLAS_CORETYPE to see what that costs on a CPU newer than OpenBLAS's table. The shapes are the CPU engine's own:
// the projections (T x d by d x d), the scores of one block of query rows (rows x dK by dK x T) and weights·V (rows x T
// by T x dV). One thread unless OMP_NUM_THREADS says otherwise; with two, each thread runs its own GEMMs side by side,
// as the engine's (head, row block) tasks do.
//
// Usage: bench_gemm [--peak GFLOPS_PER_CORE]  (default 117: 2 AVX-512 FMA ports at 3.66 GHz)
#include "core/Gemm.h"

#include <Eigen/Core>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Shape {
    const char *what;
    int m, n, k;
    bool transB; // B given as n x k (K for the scores)
};

template <typename Run>
double bestSeconds(Run run, double flops)
{
    run(); // warm-up: page in, pack buffers
    const int reps = std::max(3, int(2e10 / flops));
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const auto start = std::chrono::steady_clock::now();
        run();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

} // namespace

int main(int argc, char **argv)
{
    double peak = 117.0;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--peak") == 0)
            peak = std::atof(argv[i + 1]);
    const int threads = omp_get_max_threads();
    // One thread budget: OpenBLAS never starts threads of its own (core/Gemm.h); the OpenMP
    // threads here, like the engine's tasks, each call a one-thread sgemm.
    attnscope::initGemm();
    Eigen::setNbThreads(1);
#ifdef EIGEN_USE_BLAS
    const char *eigenName = "Eigen+BLAS";
#else
    const char *eigenName = "Eigen";
#endif
    std::printf("threads: %d, FMA peak %.0f GFLOP/s per core (%.0f in all); engine's GEMM: %s\n", threads, peak,
                peak * threads, attnscope::gemmBackendName().c_str());
    std::printf("%-28s %5s %5s %5s  %10s %6s  %10s %6s\n", "shape", "M", "N", "K", eigenName, "%peak", "Gemm.h",
                "%peak");
    const Shape shapes[] = {
        {"projection T=2048 d=512", 2048, 512, 512, false}, {"projection T=1024 d=512", 1024, 512, 512, false},
        {"scores 256 rows, T=2048", 256, 2048, 64, true},   {"weights.V 256 rows, T=2048", 256, 64, 2048, false},
        {"scores 512 rows, T=1024", 512, 1024, 64, true},   {"weights.V 512 rows, T=1024", 512, 64, 1024, false},
        {"square 1024", 1024, 1024, 1024, false},
    };
    for (const Shape &s : shapes) {
        // Per thread: its own operands and output, as the engine's tasks have.
        const size_t n = size_t(threads);
        std::vector<Matrix> a(n), b(n), c(n);
        for (int t = 0; t < threads; ++t) {
            a[size_t(t)] = Matrix::Random(s.m, s.k);
            b[size_t(t)] = s.transB ? Matrix::Random(s.n, s.k) : Matrix::Random(s.k, s.n);
            c[size_t(t)] = Matrix::Zero(s.m, s.n);
        }
        const double flops = 2.0 * s.m * s.n * s.k * threads;
        const double eigen = bestSeconds(
            [&] {
#pragma omp parallel num_threads(threads)
                {
                    const size_t t = size_t(omp_get_thread_num());
                    if (s.transB)
                        c[t].noalias() = a[t] * b[t].transpose();
                    else
                        c[t].noalias() = a[t] * b[t];
                }
            },
            flops);
        const double blas = bestSeconds(
            [&] {
#pragma omp parallel num_threads(threads)
                {
                    const size_t t = size_t(omp_get_thread_num());
                    attnscope::gemm(a[t], attnscope::GemmOp::None, b[t],
                                    s.transB ? attnscope::GemmOp::Transpose : attnscope::GemmOp::None, c[t]);
                }
            },
            flops);
        const double ge = flops / eigen * 1e-9, gb = flops / blas * 1e-9;
        std::printf("%-28s %5d %5d %5d  %10.1f %5.0f%%  %10.1f %5.0f%%\n", s.what, s.m, s.n, s.k, ge,
                    100.0 * ge / (peak * threads), gb, 100.0 * gb / (peak * threads));
    }
    return 0;
}
