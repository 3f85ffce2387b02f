#pragma once
// SIGINT/SIGTERM turn into an orderly shutdown run on a thread of our own, not inside a signal
// handler, where almost nothing (locks, allocation, joining threads) is allowed.
#include <atomic>
#include <functional>
#include <thread>

namespace ps {

class ShutdownSignal {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread, so every thread started afterwards (the
  // engine's, torch's, httplib's) inherits the mask and only our waiter receives them. Construct
  // it before any other thread exists. Also ignores SIGPIPE: a client that vanishes mid-write
  // must cost one failed write, not the process.
  ShutdownSignal();
  ~ShutdownSignal();  // stops the waiter
  ShutdownSignal(const ShutdownSignal&) = delete;
  ShutdownSignal& operator=(const ShutdownSignal&) = delete;

  // The first SIGINT/SIGTERM calls `on_signal(signo)` on the waiter thread. A second one while
  // that runs exits the process at once (status 1), for a user who will not wait for the drain.
  void start(std::function<void(int)> on_signal);
  bool received() const { return received_.load(); }
  // Stops the waiter and waits for a running `on_signal` to return. Call it before destroying
  // what `on_signal` uses.
  void stop();

 private:
  std::thread waiter_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> received_{false};
};

}  // namespace ps
