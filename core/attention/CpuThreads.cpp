#include "core/attention/CpuThreads.h"

#include <omp.h>

#include <algorithm>

namespace attnscope {

ScopedCpuThreads::ScopedCpuThreads(int threads) : m_previous(omp_get_max_threads())
{
    omp_set_num_threads(std::max(threads, 1));
}

ScopedCpuThreads::~ScopedCpuThreads()
{
    omp_set_num_threads(m_previous);
}

} // namespace attnscope
