// The paged-attention kernel against a dense causal attention computed in double from the
// same logical K/V, with the cache scattered over random blocks, on every kernel ISA this CPU
// can run (each has its own vector width on the grouped-head path).
#include "kernels/paged_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/kernel_isa.h"
#include "model/half_bits.h"

namespace ps {
namespace {

struct SeqSpec {
  int32_t context_len;
  int32_t query_len;
};

struct Case {
  int32_t num_heads, num_kv_heads, head_dim, block_size;
  std::vector<SeqSpec> seqs;
  int32_t q_pad = 0;  // extra floats per q row, as in the fused qkv buffer
  float q_scale = 1.f;
  bool bf16_cache = false;      // K/V stored bf16 (the reference uses the same rounded values)
  int32_t window = 0;           // a sliding-window layer's W (0: full causal attention)
  int32_t kernel_window = -1;   // the kernel's, when a test gives it another (-1: `window`)
  float softcap = 0.f;          // Gemma 2's score soft-capping (0: none)
  float kernel_softcap = -1.f;  // the kernel's, when a test gives it another (-1: `softcap`)
  float sink_scale = 0.f;       // gpt-oss's per-head sinks ~ N(0, sink_scale^2) (0: no sinks)
  bool kernel_sinks = true;     // false: the kernel is not given the sinks the reference uses
};

// Runs the kernel and the reference; returns max |difference|.
double run_case(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  const int32_t S = static_cast<int32_t>(c.seqs.size());
  const int32_t H = c.num_heads, KV = c.num_kv_heads, D = c.head_dim, BS = c.block_size;
  const int64_t kv_width = int64_t{KV} * D;

  std::vector<int32_t> query_start{0}, context_len;
  int32_t max_blocks = 0, total_blocks = 0;
  for (const SeqSpec& s : c.seqs) {
    query_start.push_back(query_start.back() + s.query_len);
    context_len.push_back(s.context_len);
    const int32_t nb = (s.context_len + BS - 1) / BS;
    max_blocks = std::max(max_blocks, nb);
    total_blocks += nb;
  }
  const int32_t T = query_start.back();
  // Scatter: a random permutation of block ids plus unused spare blocks filled with garbage.
  const int32_t num_blocks = total_blocks + 3;
  std::vector<int32_t> ids(num_blocks);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  std::vector<int32_t> tables(int64_t{S} * std::max(max_blocks, 1), -1);
  std::vector<float> k_cache(int64_t{num_blocks} * BS * kv_width),
      v_cache(int64_t{num_blocks} * BS * kv_width);
  // Garbage where nothing may be used: token rows of large values and rows of NaN, alternating.
  // The grouped path reads K rows past a sequence's end inside its last block: a large score let
  // into the block's max, or a NaN into the sums, would show in the output.
  for (size_t i = 0; i < k_cache.size(); ++i) {
    const bool nan_row = (i / kv_width) % 2 == 1;
    k_cache[i] = nan_row ? NAN : 1e3f * normal(rng);
    v_cache[i] = nan_row ? 1e3f * normal(rng) : NAN;
  }

  // Logical K/V per sequence, [context_len, KV, D], also written through the table.
  std::vector<std::vector<float>> keys(S), values(S);
  int32_t next_id = 0;
  for (int32_t s = 0; s < S; ++s) {
    const int32_t L = context_len[s];
    keys[s].resize(int64_t{L} * kv_width);
    values[s].resize(int64_t{L} * kv_width);
    for (float& x : keys[s]) x = normal(rng);
    for (float& x : values[s]) x = normal(rng);
    if (c.bf16_cache) {
      for (float& x : keys[s]) x = bf16_to_float(float_to_bf16(x));
      for (float& x : values[s]) x = bf16_to_float(float_to_bf16(x));
    }
    for (int32_t b = 0; b * BS < L; ++b) tables[int64_t{s} * max_blocks + b] = ids[next_id++];
    for (int32_t p = 0; p < L; ++p) {
      const int64_t slot = int64_t{tables[int64_t{s} * max_blocks + p / BS]} * BS + p % BS;
      std::copy_n(&keys[s][p * kv_width], kv_width, &k_cache[slot * kv_width]);
      std::copy_n(&values[s][p * kv_width], kv_width, &v_cache[slot * kv_width]);
    }
  }

  // A window makes the blocks below every query row's window dead: point them at a garbage
  // block (NaN and huge rows), so that reading one shows in the output.
  if (c.window > 0) {
    for (int32_t s = 0; s < S; ++s) {
      const int32_t first_row_start = context_len[s] - c.seqs[s].query_len - c.window + 1;
      for (int32_t b = 0; (b + 1) * BS <= first_row_start; ++b) {
        tables[int64_t{s} * max_blocks + b] = ids[total_blocks];
      }
    }
  }

  const int64_t q_stride = int64_t{H} * D + c.q_pad;
  std::vector<float> q(int64_t{T} * q_stride);
  for (float& x : q) x = c.q_scale * normal(rng);
  std::vector<float> out(int64_t{T} * H * D, NAN);

  PagedAttentionArgs a;
  a.q = q.data();
  a.q_row_stride = q_stride;
  std::vector<uint16_t> k16(k_cache.size()), v16(v_cache.size());
  for (size_t i = 0; i < k_cache.size(); ++i) {
    k16[i] = float_to_bf16(k_cache[i]);
    v16[i] = float_to_bf16(v_cache[i]);
  }
  if (c.bf16_cache) {
    a.set_cache(k16.data(), v16.data(), true);
  } else {
    a.set_cache(k_cache.data(), v_cache.data(), false);
  }
  a.block_tables = tables.data();
  a.max_blocks_per_seq = max_blocks;
  a.query_start = query_start.data();
  a.context_len = context_len.data();
  a.num_seqs = S;
  a.num_heads = H;
  a.num_kv_heads = KV;
  a.head_dim = D;
  a.block_size = BS;
  a.scale = 1.0f / std::sqrt(float(D));
  a.window = c.kernel_window >= 0 ? c.kernel_window : c.window;
  a.softcap = c.kernel_softcap >= 0 ? c.kernel_softcap : c.softcap;
  std::vector<float> sinks;
  if (c.sink_scale > 0) {
    for (int32_t h = 0; h < H; ++h) sinks.push_back(c.sink_scale * normal(rng));
    if (c.kernel_sinks) a.sinks = sinks.data();
  }
  a.out = out.data();
  a.out_row_stride = int64_t{H} * D;
  paged_attention(a);

  double worst = 0;
  for (int32_t s = 0; s < S; ++s) {
    const int32_t qlen = c.seqs[s].query_len;
    for (int32_t i = 0; i < qlen; ++i) {
      const int32_t pos = context_len[s] - qlen + i;
      const int32_t row = query_start[s] + i;
      for (int32_t h = 0; h < H; ++h) {
        const int32_t g = h / (H / KV);
        const float* qv = &q[row * q_stride + h * D];
        const int32_t lo = c.window > 0 ? std::max(0, pos - c.window + 1) : 0;
        std::vector<double> w(pos + 1, -INFINITY);
        double mx = -1e300;
        for (int32_t p = lo; p <= pos; ++p) {
          double dot = 0;
          for (int32_t d = 0; d < D; ++d) dot += double(qv[d]) * keys[s][p * kv_width + g * D + d];
          w[p] = dot * a.scale;
          if (c.softcap > 0) w[p] = c.softcap * std::tanh(w[p] / c.softcap);
          mx = std::max(mx, w[p]);
        }
        // A sink joins the softmax's max and denominator, and weighs no value.
        if (!sinks.empty()) mx = std::max(mx, double(sinks[h]));
        double sum = sinks.empty() ? 0 : std::exp(sinks[h] - mx);
        for (double& x : w) sum += (x = std::exp(x - mx));
        for (int32_t d = 0; d < D; ++d) {
          double o = 0;
          for (int32_t p = lo; p <= pos; ++p) o += w[p] * values[s][p * kv_width + g * D + d];
          o /= sum;
          const double got = out[int64_t{row} * H * D + h * D + d];
          worst = std::isfinite(got) ? std::max(worst, std::abs(o - got)) : INFINITY;
        }
      }
    }
  }
  return worst;
}

// The case on every ISA this CPU can run, each within `bound` of the reference.
void expect_close_on_every_isa(const Case& c, uint32_t seed, double bound = 2e-5) {
  const KernelIsa before = active_kernel_isa();
  for (KernelIsa isa : runnable_kernel_isas()) {
    force_kernel_isa(isa);
    EXPECT_LT(run_case(c, seed), bound) << "kernel ISA " << kernel_isa_name(isa);
  }
  force_kernel_isa(before);
}

// Mixed batch: decodes (query 1), a prompt from scratch, a later chunk of a prompt longer than
// one work item, contexts ending mid-block and on a block boundary.
std::vector<SeqSpec> mixed_batch() {
  return {{1, 1}, {37, 1}, {48, 48}, {100, 35}, {16, 16}, {64, 1}, {21, 5}};
}

TEST(PagedAttention, MatchesDenseReferenceWithoutGqa) {
  expect_close_on_every_isa({4, 4, 64, 16, mixed_batch()}, 1);
}

TEST(PagedAttention, MatchesDenseReferenceWithGqa4) {
  expect_close_on_every_isa({8, 2, 64, 16, mixed_batch()}, 2);
}

TEST(PagedAttention, HeadDim128AndStridedQueries) {
  expect_close_on_every_isa({4, 1, 128, 16, mixed_batch(), 3 * 128}, 3);
}

TEST(PagedAttention, OddHeadDimAndBlockSize) {
  // head_dim 20 exercises the scalar tails; block size 5 the partial exp8 groups.
  expect_close_on_every_isa({6, 3, 20, 5, mixed_batch()}, 4);
  expect_close_on_every_isa({2, 2, 8, 1, {{9, 9}, {4, 1}}}, 5);
}

TEST(PagedAttention, LongPrefillSplitsAcrossItems) {
  expect_close_on_every_isa({8, 2, 64, 16, {{300, 300}, {513, 1}, {200, 77}}}, 6);
}

TEST(PagedAttention, LargeScoresStayFinite) {
  // Scores in the hundreds: without the running max, exp overflows to inf.
  expect_close_on_every_isa({2, 1, 16, 4, {{40, 40}, {33, 3}}, 0, 60.f}, 7);
  // The same on the grouped path (head_dim 64), whose max and exp run on whole tiles.
  expect_close_on_every_isa({8, 2, 64, 16, {{40, 40}, {33, 3}}, 0, 8.f}, 8);
}

// The grouped-head path takes 4, 2 or 1 heads at a time as the group size divides: group sizes
// 8 (two passes of 4), 2 and 3 (one head at a time).
TEST(PagedAttention, GroupSizesTwoThreeAndEight) {
  expect_close_on_every_isa({16, 2, 64, 16, mixed_batch()}, 9);
  expect_close_on_every_isa({4, 2, 64, 16, mixed_batch()}, 10);
  expect_close_on_every_isa({6, 2, 64, 16, mixed_batch()}, 11);
  expect_close_on_every_isa({4, 2, 128, 16, mixed_batch()}, 12);
}

// Block sizes that a tile of U tokens does not divide: a block's last tile would run past its
// end, so its tokens are scored one at a time (U is 4 or 2 at group size 4, 16 or 8 at 1).
TEST(PagedAttention, BlockSizesTheTileDoesNotDivide) {
  expect_close_on_every_isa({8, 2, 64, 7, mixed_batch()}, 13);
  expect_close_on_every_isa({8, 2, 64, 6, mixed_batch()}, 14);
  expect_close_on_every_isa({2, 2, 64, 12, mixed_batch()}, 15);
  expect_close_on_every_isa({8, 2, 64, 1, {{9, 9}, {4, 1}}}, 16);
}

// One decoding sequence of the Qwen3 head shape at short contexts (a batch-1 step): its items
// (one per KV head) now run on every thread from ~1k attended pairs; each head's result is the
// reference's whichever thread attends it, at contexts ending mid-block and on a boundary.
TEST(PagedAttention, OneShortDecodingSequenceOnEveryThread) {
  for (int32_t context : {9, 64, 150}) {
    Case one{16, 8, 128, 16, {{context, 1}}};
    one.bf16_cache = true;
    expect_close_on_every_isa(one, 40 + uint32_t(context));
    one.bf16_cache = false;
    expect_close_on_every_isa(one, 41 + uint32_t(context));
  }
}

// A bf16 cache, widened as it is read, on both paths.
TEST(PagedAttention, Bf16CacheMatchesOnBothPaths) {
  Case grouped{8, 2, 64, 16, mixed_batch()};
  grouped.bf16_cache = true;
  expect_close_on_every_isa(grouped, 17);
  Case per_head{6, 3, 20, 5, mixed_batch()};
  per_head.bf16_cache = true;
  expect_close_on_every_isa(per_head, 18);
}

// Sliding-window layers (Gemma 3, gpt-oss): each row attends to its last W positions only, the
// window starting mid-block, on a block boundary, inside a prefill chunk, and wider than the
// context; blocks below every row's window are garbage and must not be read.
TEST(PagedAttention, SlidingWindowAttendsTheLastWPositionsOnly) {
  const std::vector<SeqSpec> seqs = {{1, 1},  {37, 1},   {100, 35}, {300, 300},
                                     {64, 1}, {200, 77}, {21, 5},   {513, 1}};
  for (int32_t window : {1, 7, 16, 50, 128, 1000}) {
    SCOPED_TRACE("window " + std::to_string(window));
    expect_close_on_every_isa({8, 2, 64, 16, seqs, 0, 1.f, false, window}, 19);  // grouped
    expect_close_on_every_isa({6, 3, 20, 5, seqs, 0, 1.f, false, window}, 20);   // per head
    expect_close_on_every_isa({4, 1, 128, 7, seqs, 0, 1.f, true, window}, 21);   // bf16, odd BS
  }
  // The check can fail: the kernel run without the window is far from the windowed reference
  // (a prompt with no dead block, so the masking alone differs).
  Case unmasked{8, 2, 64, 16, {{60, 60}}, 0, 1.f, false, 20};
  EXPECT_LT(run_case(unmasked, 22), 2e-5);
  unmasked.kernel_window = 0;
  EXPECT_GT(run_case(unmasked, 22), 1e-2);
}

// Gemma 2's soft-capped scores (cap * tanh(s / cap) before the softmax), with and without a
// window, for the head dims that otherwise take the grouped path too; scores far above the cap.
TEST(PagedAttention, SoftCappedScoresMatchTheReference) {
  for (int32_t head_dim : {64, 20}) {
    Case capped{8, 2, head_dim, 16, mixed_batch(), 0, 4.f};
    capped.softcap = 5.f;
    expect_close_on_every_isa(capped, 23);
    capped.window = 9;
    expect_close_on_every_isa(capped, 24);
    // The check can fail: the reference capped, the kernel not.
    Case uncapped = capped;
    uncapped.kernel_softcap = 0.f;
    EXPECT_GT(run_case(uncapped, 25), 1e-2);
  }
}

// gpt-oss's attention sinks: one logit per query head in each row's softmax denominator, on the
// grouped path (every group width), the per-head path, a bf16 cache and a sliding window; sinks
// far above the scores (a head attending to almost nothing) and far below them (no effect).
TEST(PagedAttention, SinksJoinEachHeadsSoftmaxDenominator) {
  for (float sink_scale : {2.f, 40.f}) {
    SCOPED_TRACE("sink scale " + std::to_string(sink_scale));
    for (int32_t kv_heads : {2, 4, 8}) {
      Case grouped{8, kv_heads, 64, 16, mixed_batch()};
      grouped.sink_scale = sink_scale;
      expect_close_on_every_isa(grouped, 26);
    }
    Case per_head{6, 3, 20, 5, mixed_batch()};
    per_head.sink_scale = sink_scale;
    expect_close_on_every_isa(per_head, 27);
    Case windowed{4, 1, 128, 7, mixed_batch(), 0, 1.f, true, 9};
    windowed.sink_scale = sink_scale;
    expect_close_on_every_isa(windowed, 28);
  }
  // The check can fail: the reference with sinks, the kernel without.
  Case sinkless{8, 2, 64, 16, mixed_batch()};
  sinkless.sink_scale = 2.f;
  sinkless.kernel_sinks = false;
  EXPECT_GT(run_case(sinkless, 29), 1e-2);
}

TEST(PagedAttention, RejectsBadShapes) {
  std::vector<int32_t> qs{0, 2}, ctx{1}, table{0};
  std::vector<float> buf(64);
  PagedAttentionArgs a;
  a.q = a.k_cache = a.v_cache = buf.data();
  a.out = buf.data();
  a.block_tables = table.data();
  a.max_blocks_per_seq = 1;
  a.query_start = qs.data();
  a.context_len = ctx.data();
  a.num_seqs = 1;
  a.num_heads = 2;
  a.num_kv_heads = 1;
  a.head_dim = 4;
  a.block_size = 4;
  a.q_row_stride = a.out_row_stride = 8;
  EXPECT_THROW(paged_attention(a), std::invalid_argument);  // 2 new tokens, context 1
  ctx[0] = 2;
  EXPECT_NO_THROW(paged_attention(a));
  a.num_kv_heads = 3;
  EXPECT_THROW(paged_attention(a), std::invalid_argument);
}

TEST(PagedAttention, WriteKvCacheScattersRowsAndSkipsPadding) {
  const int32_t width = 6, stride = 10;
  std::vector<float> k(3 * stride), v(3 * stride);
  std::iota(k.begin(), k.end(), 0.f);
  std::iota(v.begin(), v.end(), 100.f);
  std::vector<int32_t> slots{4, -1, 1};
  std::vector<float> kc(5 * width, -1.f), vc(5 * width, -1.f);
  write_kv_cache(k.data(), v.data(), stride, slots.data(), 3, width, kc.data(), vc.data());
  for (int32_t i = 0; i < width; ++i) {
    EXPECT_EQ(kc[4 * width + i], k[i]);
    EXPECT_EQ(vc[4 * width + i], v[i]);
    EXPECT_EQ(kc[1 * width + i], k[2 * stride + i]);
    EXPECT_EQ(vc[1 * width + i], v[2 * stride + i]);
    EXPECT_EQ(kc[0 * width + i], -1.f);
  }
}

// Many tokens, so the write runs on every thread (a grain is 16384 / width tokens): each fp32
// row lands in its slot, each bf16 row is float_to_bf16 of every element (ties to even, infinities
// and NaN included), padding slots (-1) are written nowhere.
TEST(PagedAttention, WriteKvCacheOfAStepsManyRowsOnEveryThread) {
  const int32_t width = 1024, stride = 2 * width + 8, tokens = 200, slots_total = 256;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 3.f);
  std::vector<float> k(size_t(tokens) * stride), v(size_t(tokens) * stride);
  for (float& x : k) x = normal(rng);
  for (float& x : v) x = normal(rng);
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            1.00390625f,  // exactly halfway between two bf16 values: to even
                            1.01171875f,  // halfway, rounding up to even
                            -0.f,
                            3.4e38f};
  for (size_t i = 0; i < std::size(specials); ++i) k[stride + i] = v[2 * stride + i] = specials[i];
  std::vector<int32_t> slots(tokens);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  for (int32_t t = 0; t < tokens; t += 7) slots[size_t(t)] = -1;
  std::vector<float> kc(size_t(slots_total) * width, -1.f), vc(kc);
  std::vector<uint16_t> kh(size_t(slots_total) * width, 0xdead), vh(kh);
  write_kv_cache(k.data(), v.data(), stride, slots.data(), tokens, width, kc.data(), vc.data());
  write_kv_cache_bf16(k.data(), v.data(), stride, slots.data(), tokens, width, kh.data(),
                      vh.data());
  std::vector<bool> written(slots_total, false);
  for (int32_t t = 0; t < tokens; ++t) {
    if (slots[size_t(t)] < 0) continue;
    const size_t dst = size_t(slots[size_t(t)]) * width, src = size_t(t) * stride;
    written[size_t(slots[size_t(t)])] = true;
    for (int32_t i = 0; i < width; ++i) {
      ASSERT_EQ(std::memcmp(&kc[dst + i], &k[src + i], 4), 0) << t << " " << i;
      ASSERT_EQ(std::memcmp(&vc[dst + i], &v[src + i], 4), 0) << t << " " << i;
      ASSERT_EQ(kh[dst + i], float_to_bf16(k[src + i])) << t << " " << i;
      ASSERT_EQ(vh[dst + i], float_to_bf16(v[src + i])) << t << " " << i;
    }
  }
  ASSERT_GE(slots[1], 0);
  EXPECT_EQ(kh[size_t(slots[1]) * width + 3], 0x3f80);  // 1 + 2^-8: the tie goes to 1.0
  EXPECT_EQ(kh[size_t(slots[1]) * width + 4], 0x3f82);  // 1 + 3 * 2^-8: the tie goes up, to even
  for (int32_t s = 0; s < slots_total; ++s) {
    if (written[size_t(s)]) continue;
    EXPECT_EQ(kc[size_t(s) * width], -1.f) << s;
    EXPECT_EQ(vh[size_t(s) * width + width - 1], 0xdead) << s;
  }
}

}  // namespace
}  // namespace ps
