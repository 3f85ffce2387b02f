#pragma once
// `pagedserve bench accuracy`: what a lower-precision path costs in results. A candidate executor
// (narrow weights, int8 quantization, a narrow KV cache, another kernel) and a reference one run
// the same steps on the same prompts: the reference decodes greedily and both are fed its tokens
// (teacher forcing), so every step compares the two over the whole vocabulary at the same
// context. Where the candidate's argmax equals the reference's token at every step of a prompt,
// its own greedy decode would be the same text: the count of identical continuations needs no
// second, free-running pass.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/workload.h"
#include "model/executor.h"

namespace ps {

struct AccuracyReport {
  int32_t prompts = 0;
  int64_t positions = 0;      // logit rows compared: the workload's output tokens
  int64_t top1_agree = 0;     // rows where the candidate's argmax is the reference's token
  int32_t identical = 0;      // prompts whose every row agreed
  double max_abs_dlogit = 0;  // over every compared row and vocabulary entry
  double mean_abs_dlogit = 0;
  double max_abs_logit = 0;  // the reference's largest |logit|: the scale of the above
  // Over prompts, the first generated token (0-based) whose argmax differs; the prompt's output
  // length for one that never differs.
  double mean_first_divergence = 0;
  // Each prompt's greedy tokens under the reference (what the candidate was fed).
  std::vector<std::vector<int32_t>> reference_tokens;
  double top1_rate() const { return positions > 0 ? double(top1_agree) / double(positions) : 0; }
};

// Runs every prompt of `w` at once (one prefill step, then one decode step per token until each
// has its output_len tokens) on both executors, built with accuracy_cache_spec. Throws
// std::invalid_argument on an empty workload, an empty prompt, an output length below 1, or
// executors whose vocabularies differ.
AccuracyReport compare_greedy(Executor& reference, Executor& candidate, const Workload& w,
                              int32_t block_size);

// What the executors need for compare_greedy: blocks for every sequence, a state slot each.
KvCacheSpec accuracy_cache_spec(const ModelConfig& config, const Workload& w, int32_t block_size);

nlohmann::json to_json(const AccuracyReport& r);
void print_accuracy_report(const AccuracyReport& r);

}  // namespace ps
