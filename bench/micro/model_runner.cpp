// One packed step of the default tiny model (DESIGN/ANCHORS shape: hidden 512, 8 layers, 8 heads,
// 2 KV heads, head_dim 64, intermediate 1408, vocab 6400, fp32): decode at batch B with
// `context` tokens already cached, and prefill of B prompts of `prompt` tokens. Wall time: the
// step runs on all cores (OMP_NUM_THREADS=1 measures one). On a machine shared with other
// busy processes, OpenMP's spinning barriers make multi-thread figures meaningless (10-70x
// slower); OMP_WAIT_POLICY=passive limits the damage.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "checkpoint/random_weights.h"
#include "cpu/model_runner.h"

namespace {

constexpr int32_t kBlockSize = 16;

std::shared_ptr<const ps::ModelWeights> tiny_weights() {
  static auto w =
      std::make_shared<const ps::ModelWeights>(ps::make_random_weights(ps::ModelConfig{}, 0));
  return w;
}

// B sequences, each with `cached` tokens in the cache and `fresh` new ones this step; sequence
// b owns a contiguous run of blocks.
ps::StepPlan make_plan(int32_t B, int32_t cached, int32_t fresh) {
  ps::StepPlan p;
  const int32_t ctx = cached + fresh;
  p.max_blocks_per_seq = (ctx + kBlockSize - 1) / kBlockSize;
  p.query_start.push_back(0);
  for (int32_t b = 0; b < B; ++b) {
    p.seq_ids.push_back(b);
    for (int32_t i = 0; i < p.max_blocks_per_seq; ++i) {
      p.block_tables.push_back(b * p.max_blocks_per_seq + i);
    }
    for (int32_t pos = cached; pos < ctx; ++pos) {
      p.token_ids.push_back((pos * 31 + b * 7) % 6400);
      p.positions.push_back(pos);
      p.slot_mapping.push_back((b * p.max_blocks_per_seq + pos / kBlockSize) * kBlockSize +
                               pos % kBlockSize);
    }
    p.query_start.push_back(p.query_start.back() + fresh);
    p.context_len.push_back(ctx);
    p.sample_indices.push_back(b);
  }
  return p;
}

void BM_Decode(benchmark::State& state) {
  const int32_t B = int32_t(state.range(0)), context = int32_t(state.range(1));
  const int32_t blocks = B * ((context + kBlockSize) / kBlockSize + 1);
  ps::ModelRunner runner(tiny_weights(), {blocks, kBlockSize});
  std::vector<float> logits;
  runner.forward(make_plan(B, 0, context), &logits);  // fill the cache
  const ps::StepPlan step = make_plan(B, context, 1);
  for (auto _ : state) runner.forward(step, &logits);
  state.counters["tok/s"] = benchmark::Counter(B, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Prefill(benchmark::State& state) {
  const int32_t B = int32_t(state.range(0)), prompt = int32_t(state.range(1));
  ps::ModelRunner runner(tiny_weights(), {B * (prompt / kBlockSize + 1), kBlockSize});
  const ps::StepPlan step = make_plan(B, 0, prompt);
  std::vector<float> logits;
  for (auto _ : state) runner.forward(step, &logits);
  state.counters["tok/s"] =
      benchmark::Counter(double(B) * prompt, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Decode)
    ->ArgsProduct({{1, 4, 16, 64}, {128}})
    ->Args({1, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Prefill)
    ->Args({1, 64})
    ->Args({16, 64})
    ->Args({1, 512})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
