#pragma once
// Intra-op parallelism over the process's one OpenMP pool (openmp_pool.h), with the contract
// the kernels were written against: [begin, end) split into at most one contiguous chunk per
// thread, never finer than `grain`; run inline when the range is one grain or less, when one
// thread is configured, or from inside a parallel region (no nested pools). An exception thrown
// by `f` on any thread is rethrown on the caller's, after the region ends.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>

namespace ps {

// The threads a parallel region gets (OMP_NUM_THREADS, or omp_set_num_threads).
inline int parallel_threads() {
  return omp_get_max_threads();
}

template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  if (begin >= end) return;
  const int64_t range = end - begin;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int64_t threads = std::min<int64_t>(max_threads, (range + grain - 1) / grain);
  if (threads <= 1) {
    f(begin, end);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel num_threads(static_cast <int>(threads))
  {
    const int64_t n = omp_get_num_threads(), tid = omp_get_thread_num();
    const int64_t chunk = (range + n - 1) / n;
    const int64_t b = begin + tid * chunk;
    if (b < end) {
      try {
        f(b, std::min(end, b + chunk));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace ps
