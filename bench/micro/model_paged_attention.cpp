// The CPU paged-attention kernel alone, at the tiny model's head shape (8 q heads, 2 KV heads,
// head_dim 64, block 16): decode batches over short and long contexts, and a prefill chunk.
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/paged_attention.h"

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

// A decode step of the engine at the tiny model's scale: B sequences of `context` tokens in each
// of 8 layers' caches, called layer after layer, so the KV read per step is 8x one layer's (at
// B = 256, context 128: 256 MB, past what a 2-core slice of L3 holds; at 1 x 1024, 8 MB). Blocks
// are laid out as the block manager hands them to sequences admitted together: block i of sequence
// s at i * B + s, so a sequence's blocks are B blocks apart, not adjacent.
void BM_PagedAttentionLayers(benchmark::State& state) {
  constexpr int kLayers = 8;
  const int32_t B = int32_t(state.range(0)), context = int32_t(state.range(1));
  std::vector<Batch> layers;
  layers.reserve(kLayers);  // each Batch's args point into its own vectors: never relocated
  for (int l = 0; l < kLayers; ++l) {
    layers.emplace_back(B, context, 1);
    Batch& b = layers.back();
    const int32_t blocks = b.args.max_blocks_per_seq;
    for (int32_t s = 0; s < B; ++s) {
      for (int32_t i = 0; i < blocks; ++i) b.tables[size_t(s) * blocks + i] = i * B + s;
    }
  }
  for (auto _ : state) {
    for (Batch& b : layers) ps::paged_attention(b.args);
    benchmark::ClobberMemory();
  }
  state.counters["Gpairs/s"] = benchmark::Counter(double(kLayers) * B * context * kHeads / 1e9,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_PagedAttentionLayers)
    ->Args({256, 128})
    ->Args({64, 128})
    ->Args({1, 1024})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

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
