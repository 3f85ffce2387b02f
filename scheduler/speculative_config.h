#pragma once
// Speculative decoding by n-gram prompt lookup (issue #21): what the scheduler drafts per
// decoding sequence. Plain data, shared by the scheduler, the engine config and the flags.
#include <cstdint>

namespace ps {

struct SpeculativeConfig {
  // Draft tokens proposed per decoding sequence and step; 0 turns speculation off.
  int32_t num_speculative_tokens = 0;
  // The suffix lengths tried against the earlier tokens, longest first (vLLM's
  // prompt_lookup_max / prompt_lookup_min).
  int32_t ngram_max = 3;
  int32_t ngram_min = 1;
  // No drafts in a step that decodes more sequences than this (0: no limit). At large batch
  // the forward is compute-bound, so verifying rejected drafts costs real time, while at
  // small batch it is bound by reading the weights, and extra rows are nearly free.
  int32_t disable_by_batch_size = 4;

  bool enabled() const { return num_speculative_tokens > 0; }
};

}  // namespace ps
