#pragma once

namespace attnscope {

// How many threads the CPU work started on this thread may use: OpenMP regions without a
// num_threads clause and Eigen's products (Eigen asks omp_get_max_threads() while nothing has
// called Eigen::setNbThreads). The setting is the calling thread's own (OpenMP's nthreads-var of
// its implicit task), so workers computing side by side never touch each other's: nothing in
// AttnScope calls Eigen::setNbThreads, a process-wide value that concurrent workers raced on
// (ThreadSanitizer). Restores the thread's previous value when it goes.
class ScopedCpuThreads
{
public:
    explicit ScopedCpuThreads(int threads);
    ~ScopedCpuThreads();
    ScopedCpuThreads(const ScopedCpuThreads &) = delete;
    ScopedCpuThreads &operator=(const ScopedCpuThreads &) = delete;

private:
    int m_previous;
};

} // namespace attnscope
