#include "openai/choice_streams.h"

#include <algorithm>

namespace ps {

ApiError api_error_from(const SubmitError& error) {
  ApiError e;
  e.message = error.message;
  e.param = error.param;
  switch (error.kind) {
    case SubmitError::Kind::kInvalid:
      e.status = 400;
      break;
    case SubmitError::Kind::kQueueFull:
      e.status = 429;
      e.type = "rate_limit_error";
      e.code = "queue_full";
      e.retry_after_s = 1;
      break;
    case SubmitError::Kind::kShuttingDown:
      e.status = 503;
      e.type = "server_error";
      e.code = "shutting_down";
      e.retry_after_s = 5;
      break;
  }
  if (e.message.empty()) e.message = "the engine refused the request";
  return e;
}

std::optional<ApiError> ChoiceStreams::submit(Engine& engine, std::vector<Request> requests) {
  for (auto& r : requests) {
    SubmitResult result = engine.submit(std::move(r));
    if (auto* err = std::get_if<SubmitError>(&result)) {
      streams_.clear();  // cancels the ones already in
      return api_error_from(*err);
    }
    streams_.push_back(std::move(std::get<std::unique_ptr<RequestStream>>(result)));
  }
  return std::nullopt;
}

bool ChoiceStreams::all_finished() const {
  return std::all_of(streams_.begin(), streams_.end(), [](const auto& s) { return s->finished(); });
}

bool ChoiceStreams::next(size_t* index, RequestOutput* out, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  const size_t n = streams_.size();
  while (true) {
    // A non-blocking sweep, starting after the last choice served, so no choice starves.
    size_t open = 0, first_open = n;
    for (size_t k = 0; k < n; ++k) {
      size_t i = (cursor_ + k) % n;
      if (streams_[i]->finished()) continue;
      ++open;
      if (first_open == n) first_open = i;
      if (streams_[i]->next(out, std::chrono::milliseconds(0))) {
        *index = i;
        cursor_ = (i + 1) % n;
        return true;
      }
    }
    if (open == 0) return false;
    auto now = Clock::now();
    if (now >= deadline) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    // One open choice: block on it. Several: block briefly on one, then sweep again.
    auto wait = open == 1 ? left : std::min(left, std::chrono::milliseconds(2));
    if (streams_[first_open]->next(out, wait)) {
      *index = first_open;
      cursor_ = (first_open + 1) % n;
      return true;
    }
  }
}

}  // namespace ps
