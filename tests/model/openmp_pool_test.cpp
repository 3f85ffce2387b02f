// release_this_threads_openmp_pool (kernels/openmp_pool.h): the calling thread's OpenMP workers
// exit, so a process keeps one pool (the engine thread's) and libgomp does not cut its spin.
// The parallel work is the model library's own (packed_linear, compiled with OpenMP), as in
// the engine; this file itself is not.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "kernels/openmp_pool.h"
#include "kernels/packed_linear.h"

namespace ps {
namespace {

int64_t thread_count() {
  int64_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.exists();
  return n;
}

// A product with work for every thread of a team of 3 (64 panels x 64 rows).
void parallel_work() {
  const int64_t n = 64 * kPanelCols, k = 64, m = 64;
  std::vector<float> w(size_t(n * k), 0.5f), x(size_t(m * k), 1.f), y(size_t(m * n));
  const PackedWeight pw(w.data(), n, k);
  PackedLinearArgs a;
  a.x = x.data();
  a.w = &pw;
  a.y = y.data();
  a.m = m;
  packed_linear(a);
  ASSERT_EQ(y.back(), 32.f);
}

bool wait_for_threads(int64_t want) {
  // Bounded at 30 s: workers exit (or start) when the OS runs them, late on a loaded machine.
  for (int i = 0; i < 30000; ++i) {
    if (thread_count() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// On a fresh thread, so the pool of the test binary's main thread (other tests') is not involved.
TEST(OpenmpPool, ReleasingFreesThisThreadsWorkersAndAFreshRegionMakesThemAgain) {
  std::thread t([] {
    at::set_num_threads(3);
    const int64_t before = thread_count();
    parallel_work();
    EXPECT_EQ(thread_count(), before + 2) << "a team of 3: this thread and 2 workers";
    release_this_threads_openmp_pool();
    // The released workers exit on their own schedule: wait for them (bounded).
    EXPECT_TRUE(wait_for_threads(before)) << thread_count() << " threads, want " << before;
    parallel_work();
    EXPECT_EQ(thread_count(), before + 2);
    release_this_threads_openmp_pool();
    EXPECT_TRUE(wait_for_threads(before));
  });
  t.join();
}

// Releasing twice, or with no pool, is a no-op.
TEST(OpenmpPool, ReleasingWithNoPoolIsHarmless) {
  std::thread t([] {
    const int64_t before = thread_count();
    release_this_threads_openmp_pool();
    release_this_threads_openmp_pool();
    EXPECT_EQ(thread_count(), before);
  });
  t.join();
}

}  // namespace
}  // namespace ps
