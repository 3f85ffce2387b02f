#pragma once
// Verifying speculative draft tokens (issue #21). The step's forward returns logits for the
// row of a sequence's last token and for each draft token's row. Sampling walks those rows in
// order exactly as non-speculative decoding would sample them one step at a time: the same
// sampler, the same processed context (penalties and min_tokens see the tokens kept so far),
// the same stop checks, one RNG draw per kept token. A draft token is accepted when the token
// sampled at its place equals it; the first mismatch, or a token that ends the request, ends
// the walk. Because the draft is deterministic (n-gram lookup, no draft distribution), this
// is exact rejection sampling: greedy and seeded requests produce the tokens they would have
// produced without speculation.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/request_state.h"
#include "sampling/sampler.h"
#include "scheduler/speculative_config.h"

namespace ps {

// One token kept by a step, with what the sampler and the stop checker made of it.
struct VerifiedToken {
  int32_t token = 0;
  SampleResult sample;
  StopResult stop;
  bool was_draft = false;  // equal to the draft token at its place (an accepted draft token)
  // The request's grammar could not take the token (only when its mask allowed none): the
  // token is not kept and the request ends with an error.
  bool grammar_rejected = false;
};

// Samples `rows` (1 + draft.size() rows of `vocab` logits, modified in place) for request
// `st`, appending each kept token to st.output_ids and feeding st.stop (and its grammar
// matcher, which masks each row first and ends the request once complete). Returns 1 to
// 1 + draft.size() tokens: the accepted draft tokens, then the one sampled after them (or
// fewer, when a token ends the request).
std::vector<VerifiedToken> sample_and_verify(RequestState& st, float* rows, int32_t vocab,
                                             std::span<const int32_t> draft);

// Whether a request may carry draft tokens. Requests whose sampling depends on more than
// the logits and the tokens so far must not: constrained (grammar) requests advance a matcher
// per token, so they decode without speculation (issue #18's hook answers here).
bool may_speculate(const Request& request);

// Throws std::invalid_argument naming the flag (--num-speculative-tokens, --ngram-max,
// --ngram-min, --speculative-disable-by-batch-size) whose value cannot work.
void check_speculative_config(const SpeculativeConfig& config);

}  // namespace ps
