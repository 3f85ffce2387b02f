#pragma once
#include <cstdint>
#include <vector>

#include "sampling/sampling_params.h"

namespace ps {

// What the sampler knows about one sequence at one step. Null pointers mean empty lists.
struct SamplingContext {
  const std::vector<int32_t>* prompt_ids = nullptr;
  const std::vector<int32_t>* output_ids = nullptr;
  // Banned this step: EOS and stop token ids while fewer than min_tokens were generated
  // (StopChecker::suppressed_ids()).
  const std::vector<int32_t>* suppressed_ids = nullptr;
  // Constrained decoding: bit t of word t/32 set = token t allowed (GrammarMatcher's mask).
  // Null: every token allowed.
  const uint32_t* allowed_tokens = nullptr;
};

// Rewrites one row of logits in place, in this order:
//   1. logit_bias: logits[id] += bias.
//   2. suppressed ids: -inf, so no bias can bring them back.
//   3. repetition penalty r, over every distinct token of prompt + output (vLLM/CTRL style):
//      a positive logit is divided by r, a negative one multiplied by r.
//   4. presence p and frequency f, over output tokens only (OpenAI style):
//      logits[id] -= f * count(id) + p.
// Ids outside [0, vocab) in the history are ignored rather than trusted. Cost is
// O(prompt + output) per call, using a per-thread count table reused across calls.
void apply_logit_processors(float* logits, int32_t vocab, const SamplingParams& p,
                            const SamplingContext& ctx);

}  // namespace ps
