// Prompt logprobs (EngineCore, engine_core.h): the logits of a step's prompt rows
// (StepPlan::prompt_rows, computed in the same packed forward as everything else) scored
// against the prompt tokens they predict.

#include "engine/engine_core.h"
#include "sampling/sampler.h"

namespace ps {

void EngineCore::score_prompts(const StepPlan& plan, std::vector<float>& logits, size_t first_row) {
  const int32_t vocab = model_.config.vocab_size;
  size_t row = first_row;
  for (const StepPlan::PromptRows& p : plan.prompt_rows) {
    const size_t rows = static_cast<size_t>(p.end - p.begin);
    auto it = requests_.find(plan.seq_ids[p.seq_index]);
    // Gone (cancelled after schedule()), or already past its prompt (a recompute after
    // preemption: its prompt logprobs went out with its first token).
    if (it == requests_.end() || it->second->prompt_logprobs_sent) {
      row += rows;
      continue;
    }
    RequestState& st = *it->second;
    const std::vector<int32_t>& prompt = st.request.prompt_ids;
    for (int32_t r = p.begin; r < p.end; ++r, ++row) {
      // Row r holds position positions[r] and scores the prompt token after it.
      const auto target = static_cast<size_t>(plan.positions[r]) + 1;
      if (target != st.prompt_logprobs.size() + 1 || target >= prompt.size()) continue;
      SampleResult scored = Sampler::score(logits.data() + row * static_cast<size_t>(vocab), vocab,
                                           prompt[target], st.request.params.prompt_logprobs);
      st.prompt_logprobs.push_back(
          TokenLogprob{scored.token, scored.logprob, std::move(scored.top), scored.rank});
    }
  }
}

}  // namespace ps
