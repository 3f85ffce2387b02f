// Prompt logprobs (EngineCore, engine_core.h): the logits of a step's prompt rows
// (StepPlan::prompt_rows, computed in the same packed forward as everything else) scored
// against the prompt tokens they predict.

#include "engine/engine_core.h"
#include "kernels/parallel_for.h"
#include "sampling/sampler.h"

namespace ps {

void EngineCore::score_prompts(const StepPlan& plan, std::vector<float>& logits, size_t first_row) {
  const int32_t vocab = model_.config.vocab_size;
  // Which rows score a token still missing, in order: a recompute after preemption scores
  // rows again, and only the next missing position is taken.
  struct Job {
    RequestState* st;
    size_t row;
    int32_t token;
  };
  std::vector<Job> jobs;
  size_t row = first_row;
  for (const StepPlan::PromptRows& p : plan.prompt_rows) {
    auto it = requests_.find(plan.seq_ids[p.seq_index]);
    // Gone (cancelled after schedule()), or past its prompt (its logprobs went out).
    RequestState* st =
        it == requests_.end() || it->second->prompt_logprobs_sent ? nullptr : it->second.get();
    size_t have = st ? st->prompt_logprobs.size() : 0;
    for (int32_t r = p.begin; r < p.end; ++r, ++row) {
      if (st == nullptr) continue;
      // Row r holds position positions[r] and scores the prompt token after it.
      const auto target = static_cast<size_t>(plan.positions[r]) + 1;
      const std::vector<int32_t>& prompt = st->request.prompt_ids;
      if (target != have + 1 || target >= prompt.size()) continue;
      jobs.push_back({st, row, prompt[target]});
      ++have;
    }
  }
  // Each row is a log-softmax over the vocabulary (150k entries on real models): spread over
  // the step's threads, as the forward is, rather than run on the engine thread alone.
  std::vector<SampleResult> scored(jobs.size());
  parallel_for(0, static_cast<int64_t>(jobs.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) {
      const Job& job = jobs[size_t(j)];
      scored[size_t(j)] = Sampler::score(logits.data() + job.row * static_cast<size_t>(vocab),
                                         vocab, job.token, job.st->request.params.prompt_logprobs);
    }
  });
  for (size_t j = 0; j < jobs.size(); ++j) {
    SampleResult& s = scored[j];
    jobs[j].st->prompt_logprobs.push_back(
        TokenLogprob{s.token, s.logprob, std::move(s.top), s.rank});
  }
}

}  // namespace ps
