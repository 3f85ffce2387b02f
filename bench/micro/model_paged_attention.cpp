// The CPU paged-attention kernel alone, at the tiny model's head shape (8 q heads, 2 KV heads,
// head_dim 64, block 16): decode batches over short and long contexts, and a prefill chunk; and
// prefill at the Qwen3-0.6B head shape (16 q heads, 8 KV heads, head_dim 128), where attention
// was 61% of a 2048-token prompt's prefill (issue #38).
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "cpu/kv_cache_pages.h"
#include "kernels/paged_attention.h"
#include "model/half_bits.h"

namespace {

constexpr int32_t kBlock = 16;

struct HeadShape {
  int32_t heads, kv_heads, head_dim;
};
constexpr HeadShape kTiny{8, 2, 64}, kQwen3{16, 8, 128};

struct Batch {
  std::vector<float> q, k, v, out;
  ps::Tensor kc, vc;  // the cache in pool memory, where asked for
  std::vector<int32_t> tables, query_start{0}, context_len;
  ps::PagedAttentionArgs args;

  // B sequences of `context` cached tokens, the last `fresh` of them new this step.
  Batch(int32_t B, int32_t context, int32_t fresh, HeadShape shape = kTiny) {
    const int32_t heads = shape.heads, kv_heads = shape.kv_heads, head_dim = shape.head_dim;
    const int32_t blocks = (context + kBlock - 1) / kBlock;
    std::mt19937 rng(1);
    std::normal_distribution<float> d;
    const int64_t kv = int64_t{B} * blocks * kBlock * kv_heads * head_dim;
    k.resize(kv);
    v.resize(kv);
    for (float& x : k) x = d(rng);
    for (float& x : v) x = d(rng);
    q.resize(int64_t{B} * fresh * heads * head_dim);
    for (float& x : q) x = d(rng);
    out.resize(q.size());
    for (int32_t b = 0; b < B; ++b) {
      for (int32_t i = 0; i < blocks; ++i) tables.push_back(b * blocks + i);
      query_start.push_back(query_start.back() + fresh);
      context_len.push_back(context);
    }
    args.q = q.data();
    args.q_row_stride = heads * head_dim;
    args.k_cache = k.data();
    args.v_cache = v.data();
    args.block_tables = tables.data();
    args.max_blocks_per_seq = blocks;
    args.query_start = query_start.data();
    args.context_len = context_len.data();
    args.num_seqs = B;
    args.num_heads = heads;
    args.num_kv_heads = kv_heads;
    args.head_dim = head_dim;
    args.block_size = kBlock;
    args.scale = 1.0f / std::sqrt(float(head_dim));
    args.out = out.data();
    args.out_row_stride = heads * head_dim;
  }

  // Moves K/V into the engine's pool memory (2 MB pages where the kernel gives them), as a bf16
  // cache (--kv-cache-dtype auto of a bf16 model) or fp32.
  void use_pool_memory(bool bf16) {
    const ps::DType type = bf16 ? ps::DType::bf16 : ps::DType::f32;
    kc = ps::lazily_committed_zeros({int64_t(k.size())}, type);
    vc = ps::lazily_committed_zeros({int64_t(v.size())}, type);
    for (size_t i = 0; i < k.size(); ++i) {
      if (bf16) {
        static_cast<uint16_t*>(kc.data_ptr())[i] = ps::float_to_bf16(k[i]);
        static_cast<uint16_t*>(vc.data_ptr())[i] = ps::float_to_bf16(v[i]);
      } else {
        static_cast<float*>(kc.data_ptr())[i] = k[i];
        static_cast<float*>(vc.data_ptr())[i] = v[i];
      }
    }
    k = {};
    v = {};
    args.set_cache(kc.data_ptr(), vc.data_ptr(), bf16);
  }
};

void attend(benchmark::State& state, HeadShape shape) {
  Batch b(int32_t(state.range(0)), int32_t(state.range(1)), int32_t(state.range(2)), shape);
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
      benchmark::Counter(pairs * shape.heads / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  // Two multiply-adds per head_dim element of a pair: q . k and p v.
  state.counters["GFLOP/s"] = benchmark::Counter(pairs * shape.heads * 4 * shape.head_dim / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
void BM_PagedAttention(benchmark::State& state) {
  attend(state, kTiny);
}
void BM_PagedAttentionQwen3(benchmark::State& state) {
  attend(state, kQwen3);
}

// 8 layers' caches of B sequences of `context` tokens, the last one new, laid out as the block
// manager hands blocks to sequences admitted together: block i of sequence s at i * B + s, so a
// sequence's blocks are B blocks apart, not adjacent. pool_memory: the engine's pool memory,
// bf16 or fp32 (else plain vectors, fp32); `run` calls the 8 layers one after the other.
struct LayerCaches {
  static constexpr int kLayers = 8;
  std::vector<Batch> layers;

  LayerCaches(int32_t B, int32_t context, HeadShape shape, bool pool_memory, bool bf16) {
    layers.reserve(kLayers);  // each Batch's args point into its own vectors: never relocated
    for (int l = 0; l < kLayers; ++l) {
      layers.emplace_back(B, context, 1, shape);
      Batch& b = layers.back();
      if (pool_memory) b.use_pool_memory(bf16);
      const int32_t blocks = b.args.max_blocks_per_seq;
      for (int32_t s = 0; s < B; ++s) {
        for (int32_t i = 0; i < blocks; ++i) b.tables[size_t(s) * blocks + i] = i * B + s;
      }
    }
  }
  void run(benchmark::State& state) {
    for (auto _ : state) {
      for (Batch& b : layers) ps::paged_attention(b.args);
      benchmark::ClobberMemory();
    }
  }
};

// A decode step of the engine at the tiny model's scale, layer after layer, so the KV read per
// step is 8x one layer's (at B = 256, context 128: 256 MB, past what a 2-core slice of L3 holds;
// at 1 x 1024, 8 MB).
void BM_PagedAttentionLayers(benchmark::State& state) {
  const int32_t B = int32_t(state.range(0)), context = int32_t(state.range(1));
  LayerCaches caches(B, context, kTiny, false, false);
  caches.run(state);
  state.counters["Gpairs/s"] =
      benchmark::Counter(double(LayerCaches::kLayers) * B * context * kTiny.heads / 1e9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

// The decode step of B sequences of the 0.6B shape in the engine's pool memory, with a bf16 cache
// (third argument 1) or an fp32 one (0): at 16 x 224 tokens 118 MB a step in bf16, past the L3
// of a 2-core slice, as the 28 layers of a real step are (411 MB). GB/s: the cache's bytes read.
void BM_PagedAttentionQwen3Layers(benchmark::State& state) {
  const int32_t B = int32_t(state.range(0)), context = int32_t(state.range(1));
  const bool bf16 = state.range(2) != 0;
  LayerCaches caches(B, context, kQwen3, true, bf16);
  caches.run(state);
  const double bytes = double(LayerCaches::kLayers) * B * context * kQwen3.kv_heads *
                       kQwen3.head_dim * 2 * (bf16 ? 2 : 4);
  state.counters["GB/s"] =
      benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_PagedAttentionQwen3Layers)
    ->Args({16, 224, 1})
    ->Args({64, 77, 1})
    ->Args({16, 224, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

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

// A 2048-token prompt's attention: whole, and its last 512-token chunk.
BENCHMARK(BM_PagedAttentionQwen3)
    ->Args({1, 2048, 2048})
    ->Args({1, 2048, 512})
    ->Args({16, 45, 45})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// One decoding sequence of the 0.6B shape (a batch-1 step's attention, one layer): below 1k
// tokens of context it ran on one core until the threads were woken above 1k attended pairs.
BENCHMARK(BM_PagedAttentionQwen3)
    ->Args({1, 150, 1})
    ->Args({1, 600, 1})
    ->Args({1, 2048, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
