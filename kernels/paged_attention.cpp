#include "kernels/paged_attention.h"
#include "kernels/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention_calls.h"
#include "kernels/attention_per_head.h"
#include "kernels/runner_simd.h"
#include "model/half_bits.h"

namespace ps {
namespace {

// Query rows of one sequence per work item. A prefill chunk is split so that both cores get
// work even for a single long prompt; within an item every (row, q head) pair reuses each K/V
// block while it is in L1.
constexpr int32_t kRowsPerItem = 16;

// An item covers KV heads [kv_begin, kv_end) of its rows: all of them when there are enough
// items for the threads without splitting heads, so that one core reads each cache block's
// token rows whole (a token's KV heads are adjacent; at head_dim 64 one head alone is every
// other 256 bytes: covering both heads made 64 decoding sequences 10-19% faster in
// bench_model_paged_attention); one KV head an item otherwise, so that a single decoding
// sequence still uses every core.
constexpr int32_t kItemsPerThreadBeforeSplittingHeads = 4;

struct WorkItem {
  int32_t seq, kv_begin, kv_end, row_begin, row_end;
  int64_t cost;  // attended (query vector, cache position) pairs: what the item's time tracks
};

using attn_per_head::attend_block;
using attn_per_head::kNegInf;

struct Scratch {
  std::vector<float> acc, m, l, p;
  std::vector<float> k_packed, v_packed;  // a prefill item's copy of one (block, KV head)
};

// A prefill item: one of at least this many query rows of one sequence. It copies each (block,
// KV head) out of the cache into contiguous scratch before its rows attend to it. In the cache a
// token's rows of one KV head are num_kv_heads * head_dim floats apart (4 KB at 8 KV heads of
// 128), so a block's token rows share a few L1 sets; read from the copy, the 0.6B shape's prefill
// attention ran ~10% faster (bench_model_paged_attention). The arithmetic is the same (a bf16
// cache is widened exactly), so a row's result does not depend on how its sequence was chunked:
// tests/model/paged_attention_paths_test.cpp.
constexpr int32_t kPrefillRows = 4;
// Rows of a prefill item attending to a block at once, where all of them see the whole block
// (attention_rows.h): two made the 0.6B shape's 2048-token prefill attention 1.2x faster, four
// no faster than two.
constexpr int32_t kBlockRows = 2;

template <int W, int kD, typename KV>
PS_INLINE void pack_block(const KV* k, const KV* v, int64_t tok_stride, int32_t block_size,
                          Scratch& sc) {
  for (int32_t t = 0; t < block_size; ++t) {
#pragma GCC unroll 16
    for (int i = 0; i < kD / W; ++i) {
      attn::storev<W>(sc.k_packed.data() + t * kD + i * W,
                      attn::loadv<W>(k + t * tok_stride + i * W));
      attn::storev<W>(sc.v_packed.data() + t * kD + i * W,
                      attn::loadv<W>(v + t * tok_stride + i * W));
    }
  }
}

// HG > 0: the grouped-head fast path (attention_heads.h), HG heads at a time with W-float
// vectors and head_dim kD; HG == 0 (kD 0): the per-head path (attention_per_head.h), for any
// head_dim.
template <int W, int kD, int HG, typename KV>
PS_INLINE void attend_item(const PagedAttentionArgs& a, const WorkItem& w, Scratch& sc,
                           const KV* k_cache, const KV* v_cache) {
  const int32_t D = kD > 0 ? kD : a.head_dim;
  const int32_t G = a.num_heads / a.num_kv_heads;
  const int32_t BS = a.block_size;
  const int32_t q0 = a.query_start[w.seq];
  const int32_t qlen = a.query_start[w.seq + 1] - q0;
  const int32_t first_pos = a.context_len[w.seq] - qlen;  // position of the sequence's row 0
  const int32_t kv_end = first_pos + w.row_end;           // the item's last row attends [0, kv_end)
  const int32_t heads = (w.kv_end - w.kv_begin) * G;      // query heads of one row in this item
  const int32_t nq = (w.row_end - w.row_begin) * heads;
  const int64_t tok_stride = int64_t{a.num_kv_heads} * D;
  std::fill_n(sc.acc.data(), int64_t{nq} * D, 0.f);
  std::fill_n(sc.m.data(), nq, kNegInf);
  std::fill_n(sc.l.data(), nq, 0.f);
  const int32_t* table = a.block_tables + int64_t{w.seq} * a.max_blocks_per_seq;
  const bool prefill = HG > 0 && w.row_end - w.row_begin >= kPrefillRows;
  // A row's first attended position: 0, or the start of its window (window_start's rows ascend).
  auto window_start = [&](int32_t r) {
    return a.window > 0 ? std::max(0, first_pos + r - a.window + 1) : 0;
  };
  for (int32_t b = window_start(w.row_begin) / BS; b * BS < kv_end; ++b) {
    const int32_t t0 = b * BS;
    // The next block's offset from this one, for the grouped path's prefetch of it
    // (attend_block_heads), made by the item's first row (the others read what it brought).
    const bool has_next = !prefill && (b + 1) * BS < kv_end;
    const int64_t ahead =
        has_next ? (int64_t{table[b + 1]} - int64_t{table[b]}) * BS * a.num_kv_heads * D : 0;
    for (int32_t g = w.kv_begin; g < w.kv_end; ++g) {
      const int64_t base = (int64_t{table[b]} * BS * a.num_kv_heads + g) * D;
      if constexpr (HG > 0) {
        if (prefill) pack_block<W, kD>(k_cache + base, v_cache + base, tok_stride, BS, sc);
      }
      for (int32_t r = w.row_begin; r < w.row_end; ++r) {
        if constexpr (HG > 0) {
          // kBlockRows rows from r all attend to the whole block: at once (attention_rows.h).
          const int32_t last = r + kBlockRows - 1;
          if (prefill && last < w.row_end && window_start(last) <= t0 &&
              first_pos + r + 1 - t0 >= BS) {
            for (int32_t h = 0; h < G; h += HG) {
              attn::BlockRow rows[kBlockRows];
              for (int32_t i = 0; i < kBlockRows; ++i) {
                const int32_t j = (r + i - w.row_begin) * heads + (g - w.kv_begin) * G + h;
                rows[i] = {a.q + (q0 + r + i) * a.q_row_stride + int64_t{g} * G * D + h * D,
                           sc.p.data() + i * sc.p.size() / kBlockRows, &sc.m[j], &sc.l[j],
                           sc.acc.data() + int64_t{j} * D};
              }
              attn::call_block_rows<W, kD, HG, kBlockRows>(rows, sc.k_packed.data(),
                                                           sc.v_packed.data(), BS, BS, a.scale);
            }
            r = last;
            continue;
          }
        }
        // The block's tokens [skip, skip + n) are the row's: from its window start (if inside
        // this block) to its causal limit.
        const int32_t skip = std::max(0, window_start(r) - t0);
        const int32_t n = std::min(BS, first_pos + r + 1 - t0) - skip;
        if (n <= 0) continue;
        const KV* kb = k_cache + base + skip * tok_stride;
        const KV* vb = v_cache + base + skip * tok_stride;
        const int32_t room = BS - skip;  // tokens left in the block from kb
        const float* qrow = a.q + (q0 + r) * a.q_row_stride + int64_t{g} * G * D;
        const int32_t j0 = (r - w.row_begin) * heads + (g - w.kv_begin) * G;
        if constexpr (HG > 0) {
          const float* kp = sc.k_packed.data() + skip * kD;
          const float* vp = sc.v_packed.data() + skip * kD;
          for (int32_t h = 0; h < G; h += HG) {
            float* acc = sc.acc.data() + int64_t{j0 + h} * D;
            if (prefill) {
              attn::call_block_heads<W, kD, HG, false>(qrow + h * D, kp, vp, kD, n, room, a.scale,
                                                       sc.p.data(), &sc.m[j0 + h], &sc.l[j0 + h],
                                                       acc, 0);
            } else if (has_next && r == w.row_begin && h == 0) {
              attn::call_block_heads<W, kD, HG, true>(qrow + h * D, kb, vb, tok_stride, n, room,
                                                      a.scale, sc.p.data(), &sc.m[j0 + h],
                                                      &sc.l[j0 + h], acc, ahead);
            } else {
              attn::call_block_heads<W, kD, HG, false>(qrow + h * D, kb, vb, tok_stride, n, room,
                                                       a.scale, sc.p.data(), &sc.m[j0 + h],
                                                       &sc.l[j0 + h], acc, 0);
            }
          }
        } else {
          for (int32_t h = 0; h < G; ++h) {
            attend_block(qrow + h * D, kb, vb, tok_stride, n, D, a.scale, a.softcap, sc.p.data(),
                         sc.m[j0 + h], sc.l[j0 + h], sc.acc.data() + int64_t{j0 + h} * D);
          }
        }
      }
    }
  }
  for (int32_t r = w.row_begin; r < w.row_end; ++r) {
    float* orow = a.out + (q0 + r) * a.out_row_stride + int64_t{w.kv_begin} * G * D;
    for (int32_t h = 0; h < heads; ++h) {
      const int32_t j = (r - w.row_begin) * heads + h;
      // l >= 1: the max term contributes e^0. A sink moves the max to max(m, sink) first, so
      // neither its term nor the rescaled sums can overflow.
      float inv = 1.0f / sc.l[j];
      if (a.sinks != nullptr) {
        const float sink = a.sinks[w.kv_begin * G + h];
        const float m = std::max(sc.m[j], sink);
        const float rescale = std::exp(sc.m[j] - m);
        inv = rescale / (sc.l[j] * rescale + std::exp(sink - m));
      }
      const float* acc = sc.acc.data() + int64_t{j} * D;
      for (int32_t d = 0; d < D; ++d) orow[h * D + d] = acc[d] * inv;
    }
  }
}

// The grouped path for the head dims models use (a compile-time multiple of W), heads taken 4,
// 2 or 1 at a time as the group size divides; the per-head path for any other head_dim.
template <int W, int kD, typename KV>
PS_INLINE void run_item_grouped(const PagedAttentionArgs& a, const WorkItem& w, Scratch& sc,
                                const KV* k_cache, const KV* v_cache) {
  const int32_t G = a.num_heads / a.num_kv_heads;
  if (G % 4 == 0) {
    attend_item<W, kD, 4>(a, w, sc, k_cache, v_cache);
  } else if (G % 2 == 0) {
    attend_item<W, kD, 2>(a, w, sc, k_cache, v_cache);
  } else {
    attend_item<W, kD, 1>(a, w, sc, k_cache, v_cache);
  }
}

template <int W, typename KV>
PS_INLINE void run_item_on(const PagedAttentionArgs& a, const WorkItem& w, Scratch& sc,
                           const KV* k_cache, const KV* v_cache) {
  if (a.softcap > 0) {  // soft-capped scores: the per-head path alone applies the cap
    attend_item<W, 0, 0>(a, w, sc, k_cache, v_cache);
    return;
  }
  switch (a.head_dim) {
    case 64:
      run_item_grouped<W, 64>(a, w, sc, k_cache, v_cache);
      break;
    case 128:
      run_item_grouped<W, 128>(a, w, sc, k_cache, v_cache);
      break;
    default:
      attend_item<W, 0, 0>(a, w, sc, k_cache, v_cache);
      break;
  }
}

template <int W>
PS_INLINE void run_item_body(const PagedAttentionArgs& a, const WorkItem& w, Scratch& sc) {
  if (a.k_cache_bf16 != nullptr) {
    run_item_on<W>(a, w, sc, a.k_cache_bf16, a.v_cache_bf16);
  } else {
    run_item_on<W>(a, w, sc, a.k_cache, a.v_cache);
  }
}

// The generic body (CPUs without AVX2) takes the per-head path for every head_dim: the grouped
// instantiations (2 head dims x 3 group widths x 2 cache types x prefetch or not) on 32-byte
// vectors lowered to SSE cost ~50 s of this file's ~85 s compile, in every fresh build, for a
// path no serving machine of the last decade takes. It is the same per-head path AVX2 and
// AVX-512 take for odd head dims, so its numerics are tested on every machine.
PS_INLINE void run_item_per_head_body(const PagedAttentionArgs& a, const WorkItem& w, Scratch& sc) {
  if (a.k_cache_bf16 != nullptr) {
    attend_item<8, 0, 0>(a, w, sc, a.k_cache_bf16, a.v_cache_bf16);
  } else {
    attend_item<8, 0, 0>(a, w, sc, a.k_cache, a.v_cache);
  }
}

PS_ISA_DEFINE(run_item, (const PagedAttentionArgs& a, const WorkItem& w, Scratch& sc), (a, w, sc),
              run_item_body<16>, run_item_body<8>, run_item_per_head_body)

void check(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("paged_attention: ") + what);
}

std::vector<WorkItem> plan_items(const PagedAttentionArgs& a, int64_t threads) {
  std::vector<WorkItem> items;
  const int64_t group = a.num_heads / a.num_kv_heads;
  int64_t row_chunks = 0;
  for (int32_t s = 0; s < a.num_seqs; ++s) {
    const int32_t qlen = a.query_start[s + 1] - a.query_start[s];
    row_chunks += (std::max(qlen, 0) + kRowsPerItem - 1) / kRowsPerItem;
  }
  const int32_t kv_per_item =
      row_chunks >= kItemsPerThreadBeforeSplittingHeads * threads ? a.num_kv_heads : 1;
  for (int32_t s = 0; s < a.num_seqs; ++s) {
    const int32_t qlen = a.query_start[s + 1] - a.query_start[s];
    check(qlen >= 0, "query_start must not decrease");
    check(a.context_len[s] >= qlen, "context_len must cover the sequence's new tokens");
    check((a.context_len[s] + a.block_size - 1) / a.block_size <= a.max_blocks_per_seq,
          "context_len exceeds the block table");
    const int32_t first_pos = a.context_len[s] - qlen;
    for (int32_t r0 = 0; r0 < qlen; r0 += kRowsPerItem) {
      const int32_t r1 = std::min(qlen, r0 + kRowsPerItem);
      int64_t attended = first_pos + (r0 + r1) / 2 + 1;
      if (a.window > 0) attended = std::min<int64_t>(attended, a.window);
      const int64_t cost = kv_per_item * group * (r1 - r0) * attended;
      for (int32_t g = 0; g < a.num_kv_heads; g += kv_per_item) {
        items.push_back({s, g, g + kv_per_item, r0, r1, cost});
      }
    }
  }
  // Largest first, handed out dynamically: one long prefill chunk and many decodes balance.
  std::sort(items.begin(), items.end(),
            [](const WorkItem& x, const WorkItem& y) { return x.cost > y.cost; });
  return items;
}

}  // namespace

void paged_attention(const PagedAttentionArgs& a) {
  check(a.num_seqs >= 0 && a.num_heads > 0 && a.num_kv_heads > 0 && a.head_dim > 0 &&
            a.block_size > 0,
        "sizes must be positive");
  check(a.num_heads % a.num_kv_heads == 0, "num_heads must be a multiple of num_kv_heads");
  check(a.window >= 0, "window must not be negative");
  check(a.softcap >= 0, "softcap must not be negative");
  check(a.q_row_stride >= int64_t{a.num_heads} * a.head_dim &&
            a.out_row_stride >= int64_t{a.num_heads} * a.head_dim,
        "row strides must cover num_heads * head_dim");
  if (a.num_seqs == 0) return;
  const bool cache = a.k_cache_bf16 ? a.v_cache_bf16 != nullptr : (a.k_cache && a.v_cache);
  check(a.q && cache && a.block_tables && a.query_start && a.context_len && a.out, "null pointer");
  const std::vector<WorkItem> items = plan_items(a, parallel_threads());
  if (items.empty()) return;

  const int64_t nq_max = kRowsPerItem * int64_t{a.num_heads};
  std::atomic<size_t> next{0};
  auto worker = [&](int64_t, int64_t) {
    thread_local Scratch sc;
    sc.acc.resize(nq_max * a.head_dim);
    sc.m.resize(nq_max);
    sc.l.resize(nq_max);
    // Per-head scores (block_size rounded up to 8), or a grouped block's tiles: at most
    // block_size + 1 tiles of 16; for each of kBlockRows prefill rows.
    sc.p.resize(kBlockRows * (int64_t{a.block_size} + 1) * 16);
    sc.k_packed.resize(int64_t{a.block_size} * a.head_dim);
    sc.v_packed.resize(int64_t{a.block_size} * a.head_dim);
    for (size_t i = next++; i < items.size(); i = next++) run_item(a, items[i], sc);
  };
  int64_t total = 0;
  for (const WorkItem& w : items) total += w.cost;
  // Waking the other threads costs a microsecond or two (they spin a while after each region):
  // worth it above ~1k attended pairs of 64 dims. Below 16k pairs one decoding sequence of the
  // 0.6B shape (16 q heads) attended on one core up to ~1k tokens of context, ~60 us a layer
  // at 150 tokens with the other core waiting: 3-5% of a batch-1 step.
  const int64_t threads = std::min<int64_t>(parallel_threads(), int64_t(items.size()));
  if (threads <= 1 || total * a.head_dim < (int64_t{1} << 16)) {
    worker(0, 1);
  } else {
    parallel_for(0, threads, 1, worker);
  }
}

// A step's K/V rows go to the cache on every thread: on one, a 720-token prefill step of the
// 0.6B shape spent ~3% of its time here (bf16 rounding, and the first write of each fresh cache
// page) with the other core waiting.
void write_kv_cache(const float* k, const float* v, int64_t row_stride, const int32_t* slot_mapping,
                    int32_t num_tokens, int32_t kv_width, float* k_cache, float* v_cache) {
  const size_t bytes = sizeof(float) * size_t(kv_width);
  parallel_for(0, num_tokens, std::max(1, 16384 / kv_width), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t slot = slot_mapping[t];
      if (slot < 0) continue;
      std::memcpy(k_cache + slot * kv_width, k + t * row_stride, bytes);
      std::memcpy(v_cache + slot * kv_width, v + t * row_stride, bytes);
    }
  });
}

}  // namespace ps

namespace ps {
namespace {

// float_to_bf16 (model/half_bits.h) without its branch, so the loop below vectorizes: round to
// nearest even, NaN kept quiet. Bit for bit the same results.
void round_row_to_bf16(const float* src, int32_t n, uint16_t* dst) {
  for (int32_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, src + i, 4);
    const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    const uint32_t quiet = (bits >> 16) | 0x40u;
    dst[i] = uint16_t((bits & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
  }
}

}  // namespace

void write_kv_cache_bf16(const float* k, const float* v, int64_t row_stride,
                         const int32_t* slot_mapping, int32_t num_tokens, int32_t kv_width,
                         uint16_t* k_cache, uint16_t* v_cache) {
  parallel_for(0, num_tokens, std::max(1, 16384 / kv_width), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t slot = slot_mapping[t];
      if (slot < 0) continue;
      round_row_to_bf16(k + t * row_stride, kv_width, k_cache + slot * kv_width);
      round_row_to_bf16(v + t * row_stride, kv_width, v_cache + slot * kv_width);
    }
  });
}

}  // namespace ps
