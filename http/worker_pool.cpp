#include "http/worker_pool.h"

#include <algorithm>
#include <utility>

namespace ps {

GrowingWorkerPool::GrowingWorkerPool(size_t max_threads)
    : max_threads_(std::max<size_t>(1, max_threads)) {}

GrowingWorkerPool::~GrowingWorkerPool() {
  shutdown();
}

void GrowingWorkerPool::enqueue(std::function<void()> fn) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return;
  jobs_.push_back(std::move(fn));
  // Jobs beyond the idle workers would wait for a busy one: start another while below the cap.
  if (jobs_.size() > idle_ && threads_.size() < max_threads_) {
    threads_.emplace_back([this] { work(); });
  }
  lock.unlock();
  cv_.notify_one();
}

void GrowingWorkerPool::shutdown() {
  std::vector<std::thread> joining;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    joining.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : joining) t.join();
}

size_t GrowingWorkerPool::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_.size();
}

size_t GrowingWorkerPool::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_;
}

void GrowingWorkerPool::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    cv_.wait(lock, [this] { return !jobs_.empty() || stopping_; });
    --idle_;
    if (jobs_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace ps
