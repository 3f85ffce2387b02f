// schedule() + postprocess() per step at 256 running decoding sequences (docs/architecture.md §7:
// the scheduler's work per step must stay far below the model's). No model: sampled tokens are made
// up, so this is pure scheduler + block-manager bookkeeping, including building the packed plan
// (block tables are part of it, so longer contexts cost a little more).
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "scheduler/scheduler.h"

namespace {

constexpr int32_t kSeqs = 256;
constexpr int32_t kBlockSize = 16;
constexpr int32_t kStepsPerRound = 256;  // decode steps before the sequences are rebuilt

// 256 sequences with `prompt_len`-token prompts, prefilled, so every one of them decodes.
std::unique_ptr<ps::Scheduler> make_decoding(int32_t prompt_len, bool prefix_caching) {
  ps::SchedulerConfig c;
  c.block_size = kBlockSize;
  c.num_blocks = kSeqs * ((prompt_len + kStepsPerRound + 2 * kBlockSize) / kBlockSize);
  c.max_num_seqs = kSeqs;
  c.max_batched_tokens = kSeqs * prompt_len;
  c.enable_prefix_caching = prefix_caching;
  auto sched = std::make_unique<ps::Scheduler>(c);
  for (int32_t s = 0; s < kSeqs; ++s) {
    std::vector<int32_t> prompt(prompt_len);
    for (int32_t i = 0; i < prompt_len; ++i) prompt[i] = (s * 7919 + i * 31) % 32000;
    sched->add(s, std::move(prompt));
  }
  const ps::StepPlan prefill = sched->schedule();
  sched->postprocess(prefill, std::vector<int32_t>(prefill.sample_indices.size(), 1));
  return sched;
}

void BM_ScheduleDecodeStep(benchmark::State& state) {
  const auto prompt_len = static_cast<int32_t>(state.range(0));
  const bool prefix_caching = state.range(1) != 0;
  std::unique_ptr<ps::Scheduler> sched;
  std::vector<int32_t> sampled(kSeqs);
  int64_t step = 0;
  int64_t tokens = 0;
  for (auto _ : state) {
    if (step++ % kStepsPerRound == 0) {
      state.PauseTiming();
      sched = make_decoding(prompt_len, prefix_caching);
      state.ResumeTiming();
    }
    ps::StepPlan plan = sched->schedule();
    for (size_t i = 0; i < sampled.size(); ++i) sampled[i] = static_cast<int32_t>(step + i) % 32000;
    sampled.resize(plan.sample_indices.size());
    sched->postprocess(plan, sampled);
    tokens += plan.num_tokens();
    benchmark::DoNotOptimize(plan);
    sampled.resize(kSeqs);
  }
  if (sched->num_running() != kSeqs || sched->num_preemptions() != 0) {
    state.SkipWithError("benchmark setup broke: sequences were preempted or dropped");
  }
  state.counters["seqs"] = kSeqs;
  state.counters["tokens/step"] = static_cast<double>(tokens) / static_cast<double>(step);
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(step), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ScheduleDecodeStep)
    ->ArgNames({"prompt", "prefix_cache"})
    ->Args({128, 1})
    ->Args({1024, 1})
    ->Args({1024, 0})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
