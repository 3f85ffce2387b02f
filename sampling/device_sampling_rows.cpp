#include "sampling/device_sampling_rows.h"

#include <stdexcept>

namespace ps {

const char* host_sampling_reason(const SamplingRowInput& row) {
  if (row.params == nullptr) throw std::invalid_argument("host_sampling_reason: no params");
  const SamplingParams& p = *row.params;
  if (row.verifies_draft) return "speculative draft verification";
  if (row.constrained || p.grammar) return "grammar mask";
  if (p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f)
    return "presence/frequency penalty";
  if (p.repetition_penalty != 1.0f) return "repetition penalty";
  if (!p.logit_bias.empty()) return "logit_bias";
  if (p.logprobs > 0) return "top-n logprobs";
  // Before min_tokens the sampler masks EOS and stop_token_ids: a per-row mask the device
  // sampler does not take.
  if (row.generated < p.min_tokens) return "min_tokens";
  return nullptr;
}

SamplingRowSplit split_sampling_rows(const std::vector<SamplingRowInput>& rows) {
  SamplingRowSplit split;
  for (size_t i = 0; i < rows.size(); ++i) {
    (host_sampling_reason(rows[i]) == nullptr ? split.device_rows : split.host_rows)
        .push_back(int32_t(i));
  }
  return split;
}

}  // namespace ps
