// A prefill chunk's attention (items of many rows: each (block, KV head) copied out of the cache,
// KV head by KV head) against the same rows attended one decode step at a time (one row an item,
// read in place, block by block): equal bit for bit, so a row's result does not depend on how
// its sequence was chunked or whether it was recomputed after preemption (docs/architecture.md
// §5). On every kernel ISA this CPU can run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/kernel_isa.h"
#include "kernels/paged_attention.h"
#include "model/half_bits.h"

namespace ps {
namespace {

struct PathCase {
  int32_t heads, kv_heads, head_dim, block_size;
  int32_t context, rows;  // the chunk: the last `rows` of `context` positions
  bool bf16 = false;
  int32_t window = 0;
};

struct Cache {
  std::vector<float> k, v;
  std::vector<uint16_t> k16, v16;
  std::vector<int32_t> table;
};

// Random K/V over scattered blocks (a permutation of block ids), and the chunk's query rows.
Cache make_cache(const PathCase& c, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  Cache cache;
  const int32_t blocks = (c.context + c.block_size - 1) / c.block_size;
  cache.table.resize(blocks);
  std::iota(cache.table.begin(), cache.table.end(), 0);
  std::shuffle(cache.table.begin(), cache.table.end(), rng);
  const int64_t n = int64_t{blocks} * c.block_size * c.kv_heads * c.head_dim;
  cache.k.resize(n);
  cache.v.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    cache.k[i] = normal(rng);
    cache.v[i] = normal(rng);
    cache.k16.push_back(float_to_bf16(cache.k[i]));
    cache.v16.push_back(float_to_bf16(cache.v[i]));
  }
  return cache;
}

// Attends rows [first, first + count) of the chunk in one call; returns their output rows.
std::vector<float> attend(const PathCase& c, const Cache& cache, const std::vector<float>& q,
                          int32_t first, int32_t count) {
  const int32_t width = c.heads * c.head_dim;
  std::vector<float> out(size_t(count) * width, -7.f);
  const int32_t query_start[2] = {0, count};
  const int32_t context_len = c.context - c.rows + first + count;
  PagedAttentionArgs a;
  a.q = q.data() + int64_t{first} * width;
  a.q_row_stride = width;
  a.set_cache(c.bf16 ? static_cast<const void*>(cache.k16.data()) : cache.k.data(),
              c.bf16 ? static_cast<const void*>(cache.v16.data()) : cache.v.data(), c.bf16);
  a.block_tables = cache.table.data();
  a.max_blocks_per_seq = int32_t(cache.table.size());
  a.query_start = query_start;
  a.context_len = &context_len;
  a.num_seqs = 1;
  a.num_heads = c.heads;
  a.num_kv_heads = c.kv_heads;
  a.head_dim = c.head_dim;
  a.block_size = c.block_size;
  a.scale = 0.125f;
  a.window = c.window;
  a.out = out.data();
  a.out_row_stride = width;
  paged_attention(a);
  return out;
}

void expect_chunk_equals_decode_steps(const PathCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const Cache cache = make_cache(c, rng);
  std::normal_distribution<float> normal;
  std::vector<float> q(size_t(c.rows) * c.heads * c.head_dim);
  for (float& x : q) x = normal(rng);
  const int32_t width = c.heads * c.head_dim;
  const KernelIsa before = active_kernel_isa();
  for (KernelIsa isa : runnable_kernel_isas()) {
    force_kernel_isa(isa);
    const std::vector<float> chunk = attend(c, cache, q, 0, c.rows);
    int32_t differing = 0;
    for (int32_t r = 0; r < c.rows; ++r) {
      const std::vector<float> step = attend(c, cache, q, r, 1);
      differing +=
          std::memcmp(step.data(), chunk.data() + int64_t{r} * width, sizeof(float) * width) != 0;
    }
    EXPECT_EQ(differing, 0) << "rows of " << c.rows << " differ from their decode steps on "
                            << kernel_isa_name(isa);
  }
  force_kernel_isa(before);
}

// The Qwen3 head shape (group 2, head_dim 128): a whole prompt, and a later chunk ending
// mid-block.
TEST(PagedAttentionPaths, PrefillChunkEqualsDecodeStepsBitForBit) {
  expect_chunk_equals_decode_steps({16, 8, 128, 16, 70, 70}, 1);
  expect_chunk_equals_decode_steps({16, 8, 128, 16, 150, 37}, 2);
}

// Group sizes 4 and 1 (4 and 1 heads a pass), head_dim 64, and a bf16 cache.
TEST(PagedAttentionPaths, GroupSizesAndBf16Cache) {
  expect_chunk_equals_decode_steps({8, 2, 64, 16, 90, 40}, 3);
  expect_chunk_equals_decode_steps({4, 4, 64, 16, 50, 50}, 4);
  PathCase bf16{8, 2, 64, 16, 90, 40};
  bf16.bf16 = true;
  expect_chunk_equals_decode_steps(bf16, 5);
}

// Block sizes whose last tile runs past the block (tokens scored one at a time), and sliding
// windows that start inside a block for some rows of the chunk and below it for others.
TEST(PagedAttentionPaths, OddBlocksAndSlidingWindows) {
  expect_chunk_equals_decode_steps({8, 2, 64, 7, 60, 30}, 6);
  for (int32_t window : {5, 16, 33}) {
    PathCase c{16, 8, 128, 16, 120, 48};
    c.window = window;
    expect_chunk_equals_decode_steps(c, 7 + uint32_t(window));
  }
}

}  // namespace
}  // namespace ps
