#include "bench/accuracy_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ps {
namespace {

int32_t blocks_per_seq(const Workload& w, int32_t block_size) {
  int64_t longest = 0;
  for (size_t s = 0; s < w.size(); ++s) {
    longest = std::max<int64_t>(longest, int64_t(w.prompts[s].size()) + w.output_lens[s]);
  }
  return static_cast<int32_t>((longest + block_size - 1) / block_size);
}

// Lowest id on ties, as the greedy sampler (sampling/sampler.h).
int32_t argmax(const float* row, int64_t n) {
  return static_cast<int32_t>(std::max_element(row, row + n) - row);
}

// The step that feeds each listed sequence its next tokens: `fed[s]` tokens are in its cache
// already, `tokens[s]` are new.
StepPlan plan_step(const std::vector<int32_t>& seqs, const std::vector<int32_t>& fed,
                   const std::vector<std::vector<int32_t>>& tokens, int32_t blocks,
                   int32_t block_size, bool state_slots) {
  StepPlan p;
  p.max_blocks_per_seq = blocks;
  p.query_start.push_back(0);
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int32_t s = seqs[i];
    const auto& add = tokens[static_cast<size_t>(s)];
    p.seq_ids.push_back(s);
    if (state_slots) p.state_slots.push_back(s);
    for (size_t t = 0; t < add.size(); ++t) {
      const int32_t pos = fed[static_cast<size_t>(s)] + static_cast<int32_t>(t);
      p.token_ids.push_back(add[t]);
      p.positions.push_back(pos);
      p.slot_mapping.push_back((s * blocks + pos / block_size) * block_size + pos % block_size);
    }
    p.query_start.push_back(p.query_start.back() + static_cast<int32_t>(add.size()));
    p.context_len.push_back(fed[static_cast<size_t>(s)] + static_cast<int32_t>(add.size()));
    for (int32_t b = 0; b < blocks; ++b) p.block_tables.push_back(s * blocks + b);
    p.sample_indices.push_back(static_cast<int32_t>(i));
    (fed[static_cast<size_t>(s)] == 0 ? p.num_prefill_tokens : p.num_decode_tokens) +=
        static_cast<int32_t>(add.size());
  }
  return p;
}

}  // namespace

KvCacheSpec accuracy_cache_spec(const ModelConfig& config, const Workload& w, int32_t block_size) {
  KvCacheSpec spec;
  spec.block_size = block_size;
  spec.num_blocks = static_cast<int32_t>(w.size()) * blocks_per_seq(w, block_size);
  if (config.num_linear_layers() > 0) spec.num_state_slots = static_cast<int32_t>(w.size());
  return spec;
}

AccuracyReport compare_greedy(Executor& reference, Executor& candidate, const Workload& w,
                              int32_t block_size) {
  if (w.size() == 0) throw std::invalid_argument("accuracy: no prompts");
  for (size_t s = 0; s < w.size(); ++s) {
    if (w.prompts[s].empty()) throw std::invalid_argument("accuracy: an empty prompt");
    if (w.output_lens[s] < 1) throw std::invalid_argument("accuracy: an output length below 1");
  }
  const int64_t vocab = reference.config().vocab_size;
  if (candidate.config().vocab_size != vocab) {
    throw std::invalid_argument("accuracy: the executors' vocabularies differ");
  }
  const bool slots = reference.config().num_linear_layers() > 0;
  const int32_t blocks = blocks_per_seq(w, block_size);
  const auto n = static_cast<int32_t>(w.size());

  AccuracyReport r;
  r.prompts = n;
  r.reference_tokens.resize(static_cast<size_t>(n));
  std::vector<int32_t> fed(static_cast<size_t>(n), 0), made(static_cast<size_t>(n), 0);
  std::vector<int32_t> first_divergence(static_cast<size_t>(n), -1);
  std::vector<std::vector<int32_t>> next(w.prompts);  // what each sequence is fed next
  double sum_abs = 0;
  std::vector<float> ref_logits, cand_logits;
  for (;;) {
    std::vector<int32_t> seqs;
    for (int32_t s = 0; s < n; ++s) {
      if (made[static_cast<size_t>(s)] < w.output_lens[static_cast<size_t>(s)]) seqs.push_back(s);
    }
    if (seqs.empty()) break;
    const StepPlan plan = plan_step(seqs, fed, next, blocks, block_size, slots);
    reference.forward(plan, &ref_logits);
    candidate.forward(plan, &cand_logits);
    for (size_t i = 0; i < seqs.size(); ++i) {
      const auto s = static_cast<size_t>(seqs[i]);
      const float* a = ref_logits.data() + int64_t(i) * vocab;
      const float* b = cand_logits.data() + int64_t(i) * vocab;
      for (int64_t v = 0; v < vocab; ++v) {
        const double d = std::fabs(double(a[v]) - double(b[v]));
        r.max_abs_dlogit = std::max(r.max_abs_dlogit, d);
        r.max_abs_logit = std::max(r.max_abs_logit, std::fabs(double(a[v])));
        sum_abs += d;
      }
      const int32_t token = argmax(a, vocab);
      if (argmax(b, vocab) == token) {
        ++r.top1_agree;
      } else if (first_divergence[s] < 0) {
        first_divergence[s] = made[s];
      }
      ++r.positions;
      r.reference_tokens[s].push_back(token);
      fed[s] += static_cast<int32_t>(next[s].size());
      next[s] = {token};
      ++made[s];
    }
  }
  r.mean_abs_dlogit = sum_abs / (double(r.positions) * double(vocab));
  double divergence = 0;
  for (int32_t s = 0; s < n; ++s) {
    const int32_t d = first_divergence[static_cast<size_t>(s)];
    if (d < 0) ++r.identical;
    divergence += d < 0 ? w.output_lens[static_cast<size_t>(s)] : d;
  }
  r.mean_first_divergence = divergence / n;
  return r;
}

nlohmann::json to_json(const AccuracyReport& r) {
  return {{"prompts", r.prompts},
          {"positions", r.positions},
          {"top1_agree", r.top1_agree},
          {"top1_rate", r.top1_rate()},
          {"identical_continuations", r.identical},
          {"max_abs_dlogit", r.max_abs_dlogit},
          {"mean_abs_dlogit", r.mean_abs_dlogit},
          {"max_abs_logit", r.max_abs_logit},
          {"mean_first_divergence", r.mean_first_divergence}};
}

void print_accuracy_report(const AccuracyReport& r) {
  std::printf(
      "logits: max |dlogit| %.4g, mean |dlogit| %.4g (the reference's largest |logit| %.4g)\n",
      r.max_abs_dlogit, r.mean_abs_dlogit, r.max_abs_logit);
  std::printf(
      "greedy: top-1 agreement %.2f%% (%lld of %lld tokens); identical continuations %d of %d; "
      "first divergence at token %.1f on average\n",
      100 * r.top1_rate(), static_cast<long long>(r.top1_agree),
      static_cast<long long>(r.positions), r.identical, r.prompts, r.mean_first_divergence);
  std::fflush(stdout);
}

}  // namespace ps
