#include "bench/speculative_bench.h"

#include <cstdio>

namespace ps {
namespace {

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

nlohmann::json side(const ModeResult& on, const ModeResult& off) {
  const double acceptance = ratio(static_cast<double>(on.spec_accepted_tokens),
                                  static_cast<double>(on.spec_draft_tokens));
  // Per drafting sequence-step: the accepted tokens plus the one sampled after them.
  const double per_draft_step = on.spec_drafts > 0
                                    ? 1.0 + ratio(static_cast<double>(on.spec_accepted_tokens),
                                                  static_cast<double>(on.spec_drafts))
                                    : 0.0;
  const double speedup = ratio(on.output_tok_s(), off.output_tok_s());
  const double tpot_speedup = ratio(off.mean_tpot_s, on.mean_tpot_s);
  std::printf(
      "%-12s speculative on/off: output tok/s %.2fx, 1/TPOT %.2fx; steps %llu vs %llu; "
      "acceptance %.1f%% (%llu of %llu draft tokens), %.2f tokens per drafting step\n",
      on.mode.c_str(), speedup, tpot_speedup, static_cast<unsigned long long>(on.steps),
      static_cast<unsigned long long>(off.steps), 100 * acceptance,
      static_cast<unsigned long long>(on.spec_accepted_tokens),
      static_cast<unsigned long long>(on.spec_draft_tokens), per_draft_step);
  return {{"off_output_tok_s", off.output_tok_s()},
          {"on_output_tok_s", on.output_tok_s()},
          {"output_tok_s_ratio", speedup},
          {"off_mean_tpot_ms", off.mean_tpot_s * 1e3},
          {"on_mean_tpot_ms", on.mean_tpot_s * 1e3},
          {"tpot_speedup", tpot_speedup},
          {"off_steps", off.steps},
          {"on_steps", on.steps},
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
                                   const ModeResult& on_continuous, const ModeResult* on_single) {
  EngineConfig off = config;
  off.speculative.num_speculative_tokens = 0;
  const SpeculativeConfig& sc = config.speculative;
  std::printf(
      "speculative: ngram, %d draft tokens, n-grams %d..%d, off in steps of more than %d "
      "sequences%s; again with speculation off:\n",
      sc.num_speculative_tokens, sc.ngram_max, sc.ngram_min, sc.disable_by_batch_size,
      sc.disable_by_batch_size == 0 ? " (0: never)" : "");
  nlohmann::json out = {{"num_speculative_tokens", sc.num_speculative_tokens},
                        {"ngram_max", sc.ngram_max},
                        {"ngram_min", sc.ngram_min},
                        {"disable_by_batch_size", sc.disable_by_batch_size}};
  const ModeResult off_cont =
      run_offline_mode("continuous", model, tokenizer, off, workload, config.max_num_seqs);
  out["continuous"] = side(on_continuous, off_cont);
  if (on_single != nullptr) {
    const ModeResult off_single = run_offline_mode("single", model, tokenizer, off, workload, 1);
    out["single"] = side(*on_single, off_single);
  }
  std::fflush(stdout);
  return out;
}

}  // namespace ps
