#pragma once
// The outbox of one request: the engine thread pushes events, one reader pops them.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "engine/request.h"

namespace ps {

struct StreamState {
  explicit StreamState(RequestId request_id) : id(request_id) {}

  void push(RequestOutput event);
  // False on timeout.
  bool pop(RequestOutput* out, std::chrono::milliseconds timeout);

  const RequestId id;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<RequestOutput> events_;
};

}  // namespace ps
