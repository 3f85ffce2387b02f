#pragma once
// Which rows of a step the device sampler may draw (issue #19): cuda/sampling.cu does
// temperature, top-k, top-p and min-p; a row that needs anything else is sampled on the host
// from a copy of that row's logits alone, so one such request does not pull the whole batch's
// logits across the bus. Pure: tested without a GPU.
#include <cstdint>
#include <vector>

#include "sampling/sampling_params.h"

namespace ps {

// One logits row of the step as the engine knows it.
struct SamplingRowInput {
  const SamplingParams* params = nullptr;
  int32_t generated = 0;        // tokens this request has produced so far (min_tokens)
  bool constrained = false;     // its grammar matcher masks tokens this step
  bool verifies_draft = false;  // a speculative row: the verifier reads its full distribution
};

// Why a row must be sampled on the host, or nullptr when the device can draw it. Penalties
// (presence, frequency, repetition), logit_bias, top-n logprobs (logprobs > 0), grammar masks,
// min_tokens still suppressing EOS/stop tokens, and draft verification.
const char* host_sampling_reason(const SamplingRowInput& row);

struct SamplingRowSplit {
  std::vector<int32_t> device_rows;  // indices into the step's rows, ascending
  std::vector<int32_t> host_rows;    // the rest, ascending: their logits are copied back
};
SamplingRowSplit split_sampling_rows(const std::vector<SamplingRowInput>& rows);

}  // namespace ps
