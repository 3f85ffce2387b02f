// The CPU paged-attention kernel alone, at the tiny model's head shape (8 q heads, 2 KV heads,
// head_dim 64, block 16): decode batches over short and long contexts, and a prefill chunk.
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "model/paged_attention.h"

namespace {

constexpr int32_t kHeads = 8, kKvHeads = 2, kHeadDim = 64, kBlock = 16;

struct Batch {
  std::vector<float> q, k, v, out;
  std::vector<int32_t> tables, query_start{0}, context_len;
  ps::PagedAttentionArgs args;

  // B sequences of `context` cached tokens, the last `fresh` of them new this step.
  Batch(int32_t B, int32_t context, int32_t fresh) {
    const int32_t blocks = (context + kBlock - 1) / kBlock;
    std::mt19937 rng(1);
    std::normal_distribution<float> d;
    const int64_t kv = int64_t{B} * blocks * kBlock * kKvHeads * kHeadDim;
    k.resize(kv);
    v.resize(kv);
    for (float& x : k) x = d(rng);
    for (float& x : v) x = d(rng);
    q.resize(int64_t{B} * fresh * kHeads * kHeadDim);
    for (float& x : q) x = d(rng);
    out.resize(q.size());
    for (int32_t b = 0; b < B; ++b) {
      for (int32_t i = 0; i < blocks; ++i) tables.push_back(b * blocks + i);
      query_start.push_back(query_start.back() + fresh);
      context_len.push_back(context);
    }
    args.q = q.data();
    args.q_row_stride = kHeads * kHeadDim;
    args.k_cache = k.data();
    args.v_cache = v.data();
    args.block_tables = tables.data();
    args.max_blocks_per_seq = blocks;
    args.query_start = query_start.data();
    args.context_len = context_len.data();
    args.num_seqs = B;
    args.num_heads = kHeads;
    args.num_kv_heads = kKvHeads;
    args.head_dim = kHeadDim;
    args.block_size = kBlock;
    args.scale = 1.0f / std::sqrt(float(kHeadDim));
    args.out = out.data();
    args.out_row_stride = kHeads * kHeadDim;
  }
};

void BM_PagedAttention(benchmark::State& state) {
  Batch b(int32_t(state.range(0)), int32_t(state.range(1)), int32_t(state.range(2)));
  for (auto _ : state) {
    ps::paged_attention(b.args);
    benchmark::ClobberMemory();
  }
  // Attended (query head, position) pairs per second.
  double pairs = 0;
  for (int32_t s = 0; s < int32_t(state.range(0)); ++s) {
    for (int32_t i = 0; i < state.range(2); ++i)
      pairs += double(state.range(1) - state.range(2) + i + 1);
  }
  state.counters["Gpairs/s"] =
      benchmark::Counter(pairs * kHeads / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_PagedAttention)
    ->Args({256, 128, 1})
    ->Args({64, 128, 1})
    ->Args({16, 128, 1})
    ->Args({1, 1024, 1})
    ->Args({1, 512, 512})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
