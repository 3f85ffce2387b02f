#pragma once
// The engine streams behind one HTTP response: one RequestStream per choice (n > 1 and
// multi-prompt completions submit several). Destroying this cancels whatever is unfinished, so
// a handler that returns early (client gone, write failed) frees its sequences.
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "engine/engine.h"
#include "openai/api_error.h"

namespace ps {

class ChoiceStreams {
 public:
  // Submits one request per choice, in order. If the engine refuses any, those already
  // submitted are cancelled and the refusal is returned as an ApiError (400, 429 or 503).
  std::optional<ApiError> submit(Engine& engine, std::vector<Request> requests);

  size_t size() const { return streams_.size(); }
  bool all_finished() const;

  // The next event of any unfinished choice, fair across choices. Waits up to `timeout`;
  // false when nothing arrived (or all have finished).
  bool next(size_t* index, RequestOutput* out, std::chrono::milliseconds timeout);

 private:
  std::vector<std::unique_ptr<RequestStream>> streams_;
  size_t cursor_ = 0;
};

ApiError api_error_from(const SubmitError& error);

}  // namespace ps
