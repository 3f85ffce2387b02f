#pragma once
// What the engine thread keeps per request beyond the scheduler's Sequence: the sampling state
// (its own RNG, stop checker, output ids) and the timestamps behind the latency metrics.
#include <chrono>
#include <memory>
#include <vector>

#include "engine/request.h"
#include "engine/stream_state.h"
#include "sampling/request_rng.h"
#include "sampling/stop_checker.h"
#include "structured/constrained_row.h"

namespace ps {

using Clock = std::chrono::steady_clock;

struct RequestState {
  RequestState(Request req, std::shared_ptr<StreamState> out, StopChecker stop_checker)
      : request(std::move(req)),
        stream(std::move(out)),
        rng(request.params.seed),
        stop(std::move(stop_checker)) {}

  Request request;
  std::shared_ptr<StreamState> stream;
  RequestRng rng;
  StopChecker stop;
  std::vector<int32_t> output_ids;
  std::unique_ptr<ConstrainedRow> constraint;  // set when request.params.grammar is
  // Prompt logprobs scored so far: entry i scores prompt token i + 1 (a recompute after
  // preemption scores rows again; only the next missing one is appended).
  std::vector<TokenLogprob> prompt_logprobs;
  bool prompt_logprobs_sent = false;  // they went out on the first event

  Clock::time_point arrival = Clock::now();
  Clock::time_point first_scheduled{};
  Clock::time_point last_token{};
  bool scheduled_once = false;
};

}  // namespace ps
