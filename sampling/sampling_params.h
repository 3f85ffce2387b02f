#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ps {

struct CompiledGrammar;  // structured/compiled_grammar.h

// Per-request generation settings. Defaults follow the OpenAI/vLLM conventions.
struct SamplingParams {
  float temperature = 1.0f;         // 0 means greedy
  float top_p = 1.0f;               // (0, 1]
  int32_t top_k = 0;                // 0 or -1: off
  float min_p = 0.0f;               // [0, 1]
  float presence_penalty = 0.0f;    // [-2, 2]
  float frequency_penalty = 0.0f;   // [-2, 2]
  float repetition_penalty = 1.0f;  // (0, 2], multiplicative over prompt + output
  std::optional<uint64_t> seed;
  int32_t max_tokens = 16;  // >= 0; 0 scores the prompt (prompt_logprobs) and generates nothing
  int32_t min_tokens = 0;   // EOS and stops are suppressed before this many tokens
  int32_t n = 1;
  std::vector<std::string> stop;  // at most 16, none empty
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  int32_t logprobs = -1;  // -1: none; 0: chosen token only; k: chosen + top-k (k <= 20)
  // Likewise for each prompt token after the first, scored by the same forward that computes
  // the prompt (vLLM's prompt_logprobs; echo with logprobs).
  int32_t prompt_logprobs = -1;
  std::map<int32_t, float> logit_bias;  // token id -> bias in [-100, 100]
  bool skip_special_tokens = true;
  // Constrained decoding (response_format, structured_outputs, tools; structured/): the engine
  // gives each sequence its own matcher over this grammar, and the sampler sees only the tokens it
  // allows. Null: unconstrained.
  std::shared_ptr<const CompiledGrammar> grammar;

  // Below this temperature the sampler takes the argmax: 1/T would overflow the scaling, and
  // the distribution is a point mass anyway. Greedy tokens draw nothing from the request's RNG.
  static constexpr float kGreedyTemperature = 1e-5f;
  bool greedy() const { return temperature < kGreedyTemperature; }
};

// Empty string when valid, else a message that names the field and the allowed range.
// `param` receives the offending field name (for the OpenAI error body's "param").
std::string validate(const SamplingParams& p, int32_t vocab_size, std::string* param = nullptr);

}  // namespace ps
