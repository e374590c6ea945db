#include "core/Gemm.h"

#include <dlfcn.h>
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace attnscope {

namespace {

// The CBLAS enumerations' values (cblas.h), so that the build needs no BLAS headers: the
// library is opened at run time and its absence only costs speed.
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;
using SgemmFn = void (*)(int order, int transA, int transB, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);
using SetThreadsFn = void (*)(int);
using TextFn = char *(*)();

struct OpenBlas {
    SgemmFn sgemm = nullptr;
    std::string name;
};

OpenBlas g_blas;
std::once_flag g_blasOnce;

#if defined(__x86_64__) || defined(__i386__)
// OpenBLAS's own kernel name for the widest instruction set this CPU has, or null where its own
// detection is as good as ours (it knows every CPU without AVX2).
const char *x86Kernels()
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
    return nullptr;
}
#endif

// OpenBLAS maps a 128 MiB buffer for every thread that calls it and, when the address space
// cannot hold one more, retries for ever (seen as a hang of `attnscope-cli export` under
// `prlimit --as=400MB`, tst_cli_safety). Under a tight address-space or data limit Eigen it is.
bool addressSpaceIsTight()
{
    constexpr rlim_t kRoom = rlim_t(8) << 30;
    for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
        rlimit limit{};
        if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < kRoom)
            return true;
    }
    return false;
}

void loadOpenBlas()
{
    if (const char *choice = std::getenv("ATTNSCOPE_BLAS"); choice && std::strcmp(choice, "eigen") == 0)
        return;
    if (addressSpaceIsTight())
        return;
    // Read by OpenBLAS once, as it loads: hence dlopen rather than linking it.
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
#if defined(__x86_64__) || defined(__i386__)
    if (const char *kernels = x86Kernels())
        setenv("OPENBLAS_CORETYPE", kernels, 0);
#endif
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
    auto sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cblas_sgemm"));
    auto setThreads = reinterpret_cast<SetThreadsFn>(dlsym(lib, "openblas_set_num_threads"));
    auto config = reinterpret_cast<TextFn>(dlsym(lib, "openblas_get_config"));
    auto core = reinterpret_cast<TextFn>(dlsym(lib, "openblas_get_corename"));
    if (!sgemm || !setThreads)
        return; // another BLAS under that name: Eigen's product it is
    setThreads(1);
    std::string version = "OpenBLAS";
    if (config) {
        // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": its first two words.
        const std::string text = config();
        const size_t space = text.find(' ', text.find(' ') + 1);
        version = text.substr(0, space);
    }
    g_blas.name = version + (core ? " (" + std::string(core()) + " kernels)" : std::string());
    g_blas.sgemm = sgemm;
}

const OpenBlas &openBlas()
{
    std::call_once(g_blasOnce, loadOpenBlas);
    return g_blas;
}

} // namespace

void initGemm()
{
    (void)openBlas();
}

bool gemmUsesOpenBlas()
{
    return openBlas().sgemm != nullptr;
}

std::string gemmBackendName()
{
    if (gemmUsesOpenBlas())
        return g_blas.name;
    return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
           std::to_string(EIGEN_MINOR_VERSION);
}

void gemm(const ConstMatrixViewF &a, GemmOp opA, const ConstMatrixViewF &b, GemmOp opB, MatrixViewF c, float alpha,
          float beta)
{
    const bool ta = opA == GemmOp::Transpose, tb = opB == GemmOp::Transpose;
    const Eigen::Index m = ta ? a.cols() : a.rows(), k = ta ? a.rows() : a.cols();
    const Eigen::Index n = tb ? b.rows() : b.cols();
    eigen_assert((tb ? b.cols() : b.rows()) == k && c.rows() == m && c.cols() == n);
    if (m == 0 || n == 0)
        return;
    if (k == 0 || alpha == 0.0f) {
        if (beta == 0.0f)
            c.setZero();
        else
            c *= beta;
        return;
    }
    const OpenBlas &blas = openBlas();
    if (blas.sgemm) {
        // Row-major leading dimensions: the row stride, at least the row length (sgemm checks
        // it even for a single row, whose stride Eigen may report as anything).
        auto ld = [](const auto &x) { return int(std::max<Eigen::Index>({x.outerStride(), x.cols(), 1})); };
        blas.sgemm(kCblasRowMajor, ta ? kCblasTrans : kCblasNoTrans, tb ? kCblasTrans : kCblasNoTrans, int(m), int(n),
                   int(k), alpha, a.data(), ld(a), b.data(), ld(b), beta, c.data(), ld(c));
        return;
    }
    // Eigen's product, the four cases spelled out so that no transposed copy is made.
    auto product = [&](const auto &x, const auto &y) {
        if (beta == 0.0f)
            c.noalias() = alpha * (x * y);
        else {
            c *= beta;
            c.noalias() += alpha * (x * y);
        }
    };
    if (!ta && !tb)
        product(a, b);
    else if (!ta && tb)
        product(a, b.transpose());
    else if (ta && !tb)
        product(a.transpose(), b);
    else
        product(a.transpose(), b.transpose());
}

void parallelGemm(const ConstMatrixViewF &a, const ConstMatrixViewF &b, GemmOp opB, MatrixViewF c, int threads,
                  float alpha, float beta)
{
    constexpr double kParallelFlops = 8e6;
    const Eigen::Index m = c.rows();
    const double flops = 2.0 * double(m) * double(c.cols()) * double(a.cols());
    // Bands of whole cache lines of rows; never more bands than threads, each packs b once.
    const int bands = flops < kParallelFlops ? 1 : int(std::clamp<Eigen::Index>(m / 16, 1, std::max(threads, 1)));
    if (bands == 1) {
        gemm(a, GemmOp::None, b, opB, c, alpha, beta);
        return;
    }
    const Eigen::Index rows = (m + bands - 1) / bands;
#pragma omp parallel for num_threads(bands) schedule(static)
    for (int band = 0; band < bands; ++band) {
        const Eigen::Index r0 = band * rows, n = std::min(rows, m - r0);
        if (n > 0)
            gemm(a.middleRows(r0, n), GemmOp::None, b, opB, c.middleRows(r0, n), alpha, beta);
    }
}

} // namespace attnscope
