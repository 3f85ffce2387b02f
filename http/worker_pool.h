#pragma once
// The HTTP workers: up to `max_threads` threads, started only as requests need them. An idle
// server holds none of them (--http-threads 512 started up front cost an idle `serve` ~47 MB of
// thread stacks and malloc arenas, issue #32); a burst grows the pool until every queued
// request has a worker or the cap is reached, and workers then stay for the next burst.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace ps {

class GrowingWorkerPool : public httplib::TaskQueue {
 public:
  explicit GrowingWorkerPool(size_t max_threads);
  ~GrowingWorkerPool() override;
  GrowingWorkerPool(const GrowingWorkerPool&) = delete;
  GrowingWorkerPool& operator=(const GrowingWorkerPool&) = delete;

  // Queues `fn`; starts a worker when more jobs wait than workers are idle (below the cap).
  void enqueue(std::function<void()> fn) override;
  // Runs every queued job, then joins the workers. enqueue after shutdown drops the job.
  void shutdown() override;

  size_t threads() const;  // started so far
  size_t idle() const;     // waiting for a job

 private:
  void work();

  const size_t max_threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace ps
