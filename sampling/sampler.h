#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "sampling/logit_processors.h"
#include "sampling/request_rng.h"
#include "sampling/sampling_params.h"

namespace ps {

struct SampleResult {
  int32_t token = 0;
  // Filled only when params.logprobs >= 0: the chosen token's log-probability and the
  // params.logprobs best (token, logprob) pairs, best first (lower id first on ties).
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
  int32_t rank = 0;  // score() only: 1 + the tokens ranked above `token` (ranks_before)
};

// Picks one token from one row of logits. Steps, in order:
//   0. ctx.allowed_tokens (a grammar's mask): every other token becomes -inf, before anything
//      else, so logprobs below describe the constrained distribution and no bias or penalty
//      can bring a disallowed token back.
//   1. apply_logit_processors (logit_bias, suppressed ids, repetition, presence/frequency);
//      NaN logits become -inf so a broken row can never be chosen over a real token.
//   2. logprobs = log_softmax of these processed logits. They are taken before temperature
//      and top-k/top-p/min-p on purpose: they describe the model's (penalized) distribution,
//      are comparable across requests with different sampling settings, and stay finite for
//      tokens that top-k/top-p/min-p removed (only suppressed ids are -inf).
//   3. greedy (temperature < kGreedyTemperature): argmax, lowest id on ties; no RNG draw.
//   4. otherwise softmax(logits / T), then top-k, top-p (smallest prefix whose mass reaches
//      top_p of the top-k distribution), min-p (p >= min_p * p_max), and one rng.uniform()
//      drawn by inverse CDF over the kept tokens in (probability desc, id asc) order.
// The row is never fully sorted: top-k selects with a bounded heap (top_tokens.h), and
// otherwise bucketed_draw.h sorts only the buckets the boundaries and the draw land in, so a
// 150k row costs a few linear passes.
class Sampler {
 public:
  // logits: one row of `vocab` floats; modified in place (holds the processed logits after).
  static SampleResult sample(float* logits, int32_t vocab, const SamplingParams& p,
                             const SamplingContext& ctx, RequestRng& rng);
  // The model's log-probability of `token` in one row of raw logits (log_softmax, no logit
  // processors: a prompt token was not sampled), and the `top_n` best as sample() reports them.
  // The row is modified in place (NaN -> -inf).
  static SampleResult score(float* logits, int32_t vocab, int32_t token, int32_t top_n);
};

}  // namespace ps
