#include "engine/stream_state.h"

namespace ps {

void StreamState::push(RequestOutput event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  cv_.notify_one();
}

bool StreamState::pop(RequestOutput* out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return false;
  *out = std::move(events_.front());
  events_.pop_front();
  return true;
}

}  // namespace ps
