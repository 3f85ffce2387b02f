// The HTTP worker pool starts threads only as requests need them (an idle server holds none),
// grows to the cap under a burst, runs every queued job, and drains on shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "http/worker_pool.h"

namespace ps {
namespace {

// A gate the jobs wait at until the test opens it: jobs block deterministically, no sleeps.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(mu);
    ++waiting;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
  }
  void wait_for_waiters(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return waiting >= n; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

TEST(GrowingWorkerPool, StartsNoThreadUntilAJobArrives) {
  GrowingWorkerPool pool(512);
  EXPECT_EQ(pool.threads(), 0u);
  std::atomic<int> ran{0};
  pool.enqueue([&] { ++ran; });
  pool.shutdown();
  EXPECT_EQ(ran.load(), 1);
}

TEST(GrowingWorkerPool, ABurstOfBlockedJobsGetsOneWorkerEachUpToTheCap) {
  Gate gate;
  GrowingWorkerPool pool(4);
  std::atomic<int> ran{0};
  for (int i = 0; i < 3; ++i) pool.enqueue([&] { gate.wait(), ++ran; });
  gate.wait_for_waiters(3);  // three jobs run at once: three workers
  EXPECT_EQ(pool.threads(), 3u);
  for (int i = 0; i < 5; ++i) pool.enqueue([&] { gate.wait(), ++ran; });
  gate.wait_for_waiters(4);
  EXPECT_EQ(pool.threads(), 4u);  // the cap: the other four jobs wait in the queue
  gate.release();
  pool.shutdown();  // runs what is still queued, then joins
  EXPECT_EQ(ran.load(), 8);
}

TEST(GrowingWorkerPool, AnIdleWorkerTakesTheNextJobInsteadOfANewThread) {
  GrowingWorkerPool pool(8);
  for (int i = 0; i < 20; ++i) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    pool.enqueue([&] {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    lock.unlock();
    // The worker is back at its wait before the next job comes (an event, not a sleep).
    while (pool.idle() < pool.threads()) std::this_thread::yield();
  }
  // One job at a time, each finding the one worker idle: no second thread was ever needed.
  EXPECT_EQ(pool.threads(), 1u);
  pool.shutdown();
}

TEST(GrowingWorkerPool, JobsAfterShutdownAreDropped) {
  GrowingWorkerPool pool(2);
  pool.shutdown();
  std::atomic<int> ran{0};
  pool.enqueue([&] { ++ran; });
  pool.shutdown();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(pool.threads(), 0u);
}

}  // namespace
}  // namespace ps
