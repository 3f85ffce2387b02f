#pragma once
// What the outside world hands the engine and what it gets back, one event at a time.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sampling/sampling_params.h"

namespace ps {

using RequestId = int64_t;

class LoraLease;  // engine/lora_registry.h

// kQueueTimeout: the request's queue deadline passed before it was ever scheduled, so it took no
// blocks and produced nothing (the routes answer 503 + Retry-After). A request stopped by its
// total deadline ends with kLength and finish_detail "deadline".
enum class FinishReason { kStop, kLength, kAbort, kError, kQueueTimeout };
// "stop" | "length" | "abort" | "error" | "queue_timeout"
const char* to_string(FinishReason reason);
// RequestOutput::finish_detail of a request stopped at Request::deadline.
inline constexpr const char* kDeadlineDetail = "deadline";

struct Request {
  std::vector<int32_t> prompt_ids;
  SamplingParams params;
  // The LoRA adapter to run with (Engine::loras()->acquire); null: the base model.
  std::shared_ptr<const LoraLease> lora = nullptr;
  // Under --scheduling-policy priority: lower values are admitted first and preempted last.
  // Must be 0 under fcfs (Engine::submit refuses it, as vLLM does).
  int32_t priority = 0;
  // Checked by the engine before every step (max(): none). Not yet scheduled at queue_deadline
  // (or at deadline): finished with kQueueTimeout. Scheduled and still going at deadline: ends
  // there with kLength ("deadline"), keeping what it generated; its blocks are freed.
  std::chrono::steady_clock::time_point queue_deadline =
      std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct TokenLogprob {
  int32_t token_id = 0;
  float logprob = 0.0f;
  std::vector<std::pair<int32_t, float>> top;  // (token id, logprob), best first
  int32_t rank = 0;  // prompt logprobs: 1 + the tokens ranked above this one (0: not counted)
};

// One event of a request's stream. Text is complete UTF-8, with any text that might still turn
// into a stop string held back. The last event of every request has `finish` set; there is
// exactly one such event.
struct RequestOutput {
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<TokenLogprob> logprobs;  // one per token in token_ids, when params.logprobs >= 0
  // With params.prompt_logprobs >= 0, on the request's first event only: one per prompt token
  // after the first (the first has no context to be scored in).
  std::vector<TokenLogprob> prompt_logprobs;
  std::optional<FinishReason> finish;
  std::string finish_detail;  // the matched stop string, or the error message
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;      // prompt tokens served from the prefix cache
  int32_t completion_tokens = 0;  // total so far
};

struct SubmitError {
  enum class Kind { kInvalid, kQueueFull, kShuttingDown };
  Kind kind = Kind::kInvalid;
  std::string message;  // says what is wrong and the limit, e.g. both lengths
  std::string param;    // the offending field, for OpenAI error bodies
};

}  // namespace ps
