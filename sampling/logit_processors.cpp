#include "sampling/logit_processors.h"

#include <limits>

namespace ps {
namespace {

// A dense count per token id, zero between calls: only the entries a call touched are reset,
// so a call costs O(history) and allocates only when a larger vocabulary first appears.
struct HistoryCounts {
  std::vector<int32_t> count;
  std::vector<int32_t> touched;

  void prepare(int32_t vocab) {
    if (static_cast<int32_t>(count.size()) < vocab) count.resize(vocab, 0);
    touched.clear();
  }
  void reset() {
    for (int32_t id : touched) count[id] = 0;
    touched.clear();
  }
};

thread_local HistoryCounts t_counts;

bool in_vocab(int32_t id, int32_t vocab) {
  return id >= 0 && id < vocab;
}

void apply_repetition(float* logits, int32_t vocab, float r, const SamplingContext& ctx) {
  HistoryCounts& h = t_counts;
  h.prepare(vocab);
  for (const auto* ids : {ctx.prompt_ids, ctx.output_ids}) {
    if (ids == nullptr) continue;
    for (int32_t id : *ids) {
      if (!in_vocab(id, vocab) || h.count[id] != 0) continue;
      h.count[id] = 1;  // penalize each distinct token once, however often it appears
      h.touched.push_back(id);
      float& x = logits[id];
      x = x > 0.0f ? x / r : x * r;
    }
  }
  h.reset();
}

void apply_presence_frequency(float* logits, int32_t vocab, float presence, float frequency,
                              const std::vector<int32_t>& output) {
  HistoryCounts& h = t_counts;
  h.prepare(vocab);
  for (int32_t id : output) {
    if (!in_vocab(id, vocab)) continue;
    if (h.count[id]++ == 0) h.touched.push_back(id);
  }
  for (int32_t id : h.touched) {
    logits[id] -= frequency * static_cast<float>(h.count[id]) + presence;
  }
  h.reset();
}

}  // namespace

void apply_logit_processors(float* logits, int32_t vocab, const SamplingParams& p,
                            const SamplingContext& ctx) {
  for (const auto& [id, bias] : p.logit_bias) {
    if (in_vocab(id, vocab)) logits[id] += bias;
  }
  if (ctx.suppressed_ids != nullptr) {
    for (int32_t id : *ctx.suppressed_ids) {
      if (in_vocab(id, vocab)) logits[id] = -std::numeric_limits<float>::infinity();
    }
  }
  if (p.repetition_penalty != 1.0f) apply_repetition(logits, vocab, p.repetition_penalty, ctx);
  if ((p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f) && ctx.output_ids != nullptr) {
    apply_presence_frequency(logits, vocab, p.presence_penalty, p.frequency_penalty,
                             *ctx.output_ids);
  }
}

}  // namespace ps
