#include "bench/speculative_bench.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace ps {
namespace {

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double per_step_ms(const ModeResult& r) {
  return r.steps ? 1e3 * r.forward_seconds / static_cast<double>(r.steps) : 0.0;
}

struct Pair {
  ModeResult on, off;
};

nlohmann::json side(const std::string& mode, const std::vector<Pair>& pairs) {
  std::vector<double> speedups, tpot_speedups, forward_costs;
  nlohmann::json rounds = nlohmann::json::array();
  for (const Pair& p : pairs) {
    speedups.push_back(ratio(p.on.output_tok_s(), p.off.output_tok_s()));
    tpot_speedups.push_back(ratio(p.off.mean_tpot_s, p.on.mean_tpot_s));
    forward_costs.push_back(ratio(per_step_ms(p.on), per_step_ms(p.off)));
    rounds.push_back({{"on_output_tok_s", p.on.output_tok_s()},
                      {"off_output_tok_s", p.off.output_tok_s()},
                      {"on_mean_tpot_ms", p.on.mean_tpot_s * 1e3},
                      {"off_mean_tpot_ms", p.off.mean_tpot_s * 1e3},
                      {"on_forward_ms_per_step", per_step_ms(p.on)},
                      {"off_forward_ms_per_step", per_step_ms(p.off)}});
    std::printf(
        "%-12s   round: on %.1f / off %.1f output tok/s = %.2fx; TPOT on %.2f / off %.2f ms; "
        "forward per step (prefill steps included) on %.3f / off %.3f ms\n",
        mode.c_str(), p.on.output_tok_s(), p.off.output_tok_s(), speedups.back(),
        p.on.mean_tpot_s * 1e3, p.off.mean_tpot_s * 1e3, per_step_ms(p.on), per_step_ms(p.off));
  }
  // Counters of the first round. At batch 1 they are the same every round (greedy); in
  // continuous mode which steps are small enough to draft depends on arrival timing.
  const ModeResult& on = pairs.front().on;
  const ModeResult& off = pairs.front().off;
  const double acceptance = ratio(static_cast<double>(on.spec_accepted_tokens),
                                  static_cast<double>(on.spec_draft_tokens));
  const double per_draft_step = on.spec_drafts > 0
                                    ? 1.0 + ratio(static_cast<double>(on.spec_accepted_tokens),
                                                  static_cast<double>(on.spec_drafts))
                                    : 0.0;
  std::printf(
      "%-12s speculative on/off (median of %zu): output tok/s %.2fx, 1/TPOT %.2fx; steps %llu "
      "vs %llu; acceptance %.1f%% (%llu of %llu draft tokens), %.2f tokens per drafting step\n",
      mode.c_str(), pairs.size(), median(speedups), median(tpot_speedups),
      static_cast<unsigned long long>(on.steps), static_cast<unsigned long long>(off.steps),
      100 * acceptance, static_cast<unsigned long long>(on.spec_accepted_tokens),
      static_cast<unsigned long long>(on.spec_draft_tokens), per_draft_step);
  return {{"rounds", rounds},
          {"output_tok_s_ratio_median", median(speedups)},
          {"tpot_speedup_median", median(tpot_speedups)},
          {"forward_per_step_ratio_median", median(forward_costs)},
          {"on_steps", on.steps},
          {"off_steps", off.steps},
          {"drafts", on.spec_drafts},
          {"draft_tokens", on.spec_draft_tokens},
          {"accepted_tokens", on.spec_accepted_tokens},
          {"acceptance_rate", acceptance},
          {"tokens_per_drafting_step", per_draft_step},
          {"output_tokens_per_step",
           ratio(static_cast<double>(on.output_tokens), static_cast<double>(on.steps))}};
}

}  // namespace

nlohmann::json compare_speculative(const LoadedModel& model,
                                   std::shared_ptr<const Tokenizer> tokenizer,
                                   const EngineConfig& config, const OfflineWorkload& workload,
                                   const ModeResult& on_continuous, const ModeResult* on_single,
                                   int32_t rounds) {
  EngineConfig off = config;
  off.speculative.num_speculative_tokens = 0;
  const SpeculativeConfig& sc = config.speculative;
  std::printf(
      "speculative: ngram, %d draft tokens, n-grams %d..%d, off in steps of more than %d "
      "sequences%s; on/off pairs, back to back:\n",
      sc.num_speculative_tokens, sc.ngram_max, sc.ngram_min, sc.disable_by_batch_size,
      sc.disable_by_batch_size == 0 ? " (0: never)" : "");
  nlohmann::json out = {{"num_speculative_tokens", sc.num_speculative_tokens},
                        {"ngram_max", sc.ngram_max},
                        {"ngram_min", sc.ngram_min},
                        {"disable_by_batch_size", sc.disable_by_batch_size}};
  const int32_t seqs = config.max_num_seqs;
  std::vector<Pair> cont, single;
  cont.push_back(
      {on_continuous, run_offline_mode("continuous", model, tokenizer, off, workload, seqs)});
  if (on_single != nullptr) {
    single.push_back({*on_single, run_offline_mode("single", model, tokenizer, off, workload, 1)});
  }
  for (int32_t r = 1; r < rounds; ++r) {
    Pair c;
    c.on = run_offline_mode("continuous", model, tokenizer, config, workload, seqs);
    c.off = run_offline_mode("continuous", model, tokenizer, off, workload, seqs);
    cont.push_back(c);
    if (on_single != nullptr) {
      Pair s;
      s.on = run_offline_mode("single", model, tokenizer, config, workload, 1);
      s.off = run_offline_mode("single", model, tokenizer, off, workload, 1);
      single.push_back(s);
    }
  }
  out["continuous"] = side("continuous", cont);
  if (!single.empty()) out["single"] = side("single", single);
  std::fflush(stdout);
  return out;
}

}  // namespace ps
