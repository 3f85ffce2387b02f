// Paged attention for a packed batch of decode tokens and prefill chunks (kernels.h).
//
// Grid: (kv head, sequence, tile of kRows query rows). The block's work items are the
// (query row, q head of this kv head's GQA group) pairs of its tile. One warp owns an item and
// walks the item's causal key range with an online softmax: the lanes split head_dim, so each
// key costs one aligned vector load per lane and a warp reduction. When a tile has fewer items
// than warps (decode: one row), the spare warps split the key range by cache block and the
// block merges their partial softmax states through shared memory, so a decode step still
// keeps kWarps loads streams in flight per (sequence, kv head).
#include "cuda/common.cuh"
#include "cuda/vec.cuh"

namespace ps::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kRows = 4;  // query rows per block
constexpr int kKeys = 8;  // keys loaded together per warp: independent loads hide latency

struct AttnShape {
  int64_t q_row_stride, out_row_stride;
  int32_t max_blocks_per_seq, num_heads, num_kv_heads, block_size;
  float scale;
};

// What a row's unnormalized sum is multiplied by: 1 / l, or with a sink logit, the softmax
// denominator that also holds e^sink, both moved to max(m, sink) so nothing overflows.
__device__ __forceinline__ float finish_scale(float m, float l, const float* sinks, int head) {
  if (sinks == nullptr) return 1.0f / l;
  const float sink = sinks[head];
  const float top = fmaxf(m, sink);
  const float rescale = __expf(m - top);
  return rescale / (l * rescale + __expf(sink - top));
}

template <typename T, int HD>
__global__ void __launch_bounds__(kWarps * 32)
    paged_attention_kernel(const T* __restrict__ q, const T* __restrict__ k_cache,
                           const T* __restrict__ v_cache, const int32_t* __restrict__ block_tables,
                           const int32_t* __restrict__ query_start,
                           const int32_t* __restrict__ context_len, const float* __restrict__ sinks,
                           AttnShape sh, T* __restrict__ out) {
  constexpr int V = HD / 32;  // elements per lane
  __shared__ float s_m[kWarps], s_l[kWarps];
  __shared__ float s_acc[kWarps][HD];

  const int kvh = blockIdx.x, seq = blockIdx.y;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int q0 = query_start[seq];
  const int qlen = query_start[seq + 1] - q0;
  const int ctx = context_len[seq];
  const int row0 = blockIdx.z * kRows;
  if (row0 >= qlen) return;  // whole block leaves together: no barrier is skipped
  const int rows = min(kRows, qlen - row0);
  const int group = sh.num_heads / sh.num_kv_heads;
  const int items = rows * group;
  const int nsplit = items < kWarps ? kWarps / items : 1;
  const int bs = sh.block_size;
  const int64_t key_stride = int64_t(sh.num_kv_heads) * HD;  // between slots of one block
  const int32_t* table = block_tables + int64_t(seq) * sh.max_blocks_per_seq;

  for (int slot = warp; slot < (nsplit > 1 ? kWarps : items); slot += kWarps) {
    const bool active = slot < items * nsplit;
    const int item = slot % items, split = slot / items;
    const int r = row0 + item / group;
    const int h = kvh * group + item % group;
    const int pos = ctx - qlen + r;  // last key this row may see

    float qv[V], acc[V];
    float m = -INFINITY, l = 0.0f;
#pragma unroll
    for (int i = 0; i < V; ++i) acc[i] = 0.0f;
    if (active) {
      load_f32<T, V>(q + int64_t(q0 + r) * sh.q_row_stride + int64_t(h) * HD + lane * V, qv);
#pragma unroll
      for (int i = 0; i < V; ++i) qv[i] *= sh.scale;
      const int nblocks = pos / bs + 1;
      for (int b = split; b < nblocks; b += nsplit) {
        const int64_t base = (int64_t(table[b]) * bs * sh.num_kv_heads + kvh) * HD + lane * V;
        const int keys_here = min(bs, pos + 1 - b * bs);
        for (int t0 = 0; t0 < keys_here; t0 += kKeys) {
          float dot[kKeys];
#pragma unroll
          for (int j = 0; j < kKeys; ++j) {
            dot[j] = 0.0f;
            if (t0 + j < keys_here) {
              float kv[V];
              load_f32<T, V>(k_cache + base + (t0 + j) * key_stride, kv);
#pragma unroll
              for (int i = 0; i < V; ++i) dot[j] += qv[i] * kv[i];
            }
          }
          float m_new = m;
#pragma unroll
          for (int j = 0; j < kKeys; ++j) {
            dot[j] = warp_sum(dot[j]);
            if (t0 + j < keys_here) m_new = fmaxf(m_new, dot[j]);
          }
          const float corr = __expf(m - m_new);
          l *= corr;
#pragma unroll
          for (int i = 0; i < V; ++i) acc[i] *= corr;
#pragma unroll
          for (int j = 0; j < kKeys; ++j) {
            if (t0 + j < keys_here) {
              const float p = __expf(dot[j] - m_new);
              float vv[V];
              load_f32<T, V>(v_cache + base + (t0 + j) * key_stride, vv);
              l += p;
#pragma unroll
              for (int i = 0; i < V; ++i) acc[i] += p * vv[i];
            }
          }
          m = m_new;
        }
      }
    }

    T* o = out + int64_t(q0 + 0) * sh.out_row_stride;  // row offset added below
    if (nsplit == 1) {
      if (active) {
        float res[V];
        const float inv = finish_scale(m, l, sinks, h);
#pragma unroll
        for (int i = 0; i < V; ++i) res[i] = acc[i] * inv;
        store_f32<T, V>(o + int64_t(r) * sh.out_row_stride + int64_t(h) * HD + lane * V, res);
      }
      continue;
    }
    // Split keys: publish this warp's partial state, then one warp per item merges them.
    if (lane == 0) {
      s_m[warp] = active ? m : -INFINITY;
      s_l[warp] = active ? l : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < V; ++i) s_acc[warp][lane * V + i] = active ? acc[i] : 0.0f;
    __syncthreads();
    if (warp < items) {
      float mx = -INFINITY;
      for (int s = 0; s < nsplit; ++s) mx = fmaxf(mx, s_m[s * items + warp]);
      float lsum = 0.0f, res[V];
#pragma unroll
      for (int i = 0; i < V; ++i) res[i] = 0.0f;
      for (int s = 0; s < nsplit; ++s) {
        const int w = s * items + warp;
        const float f = s_m[w] == -INFINITY ? 0.0f : __expf(s_m[w] - mx);
        lsum += s_l[w] * f;
#pragma unroll
        for (int i = 0; i < V; ++i) res[i] += s_acc[w][lane * V + i] * f;
      }
      const int rr = row0 + warp / group, hh = kvh * group + warp % group;
      const float inv = finish_scale(mx, lsum, sinks, hh);
#pragma unroll
      for (int i = 0; i < V; ++i) res[i] *= inv;
      store_f32<T, V>(o + int64_t(rr) * sh.out_row_stride + int64_t(hh) * HD + lane * V, res);
    }
  }
}

template <typename T, int HD>
void launch(const PagedAttentionArgs& a, Stream stream) {
  constexpr int V = HD / 32;
  require(a.q_row_stride % V == 0 && a.out_row_stride % V == 0,
          "paged_attention: q/out row strides must be multiples of head_dim / 32");
  const size_t align = sizeof(T) * V;
  require(aligned_to(a.q, align) && aligned_to(a.out, align) && aligned_to(a.k_cache, align) &&
              aligned_to(a.v_cache, align),
          "paged_attention: q, out and the caches must be aligned to head_dim / 32 elements");
  const AttnShape sh{a.q_row_stride, a.out_row_stride, a.max_blocks_per_seq,
                     a.num_heads,    a.num_kv_heads,   a.block_size,
                     a.scale};
  const dim3 grid(a.num_kv_heads, a.num_seqs, (a.max_query_len + kRows - 1) / kRows);
  paged_attention_kernel<T, HD><<<grid, kWarps * 32, 0, stream>>>(
      static_cast<const T*>(a.q), static_cast<const T*>(a.k_cache),
      static_cast<const T*>(a.v_cache), a.block_tables, a.query_start, a.context_len, a.sinks, sh,
      static_cast<T*>(a.out));
  check_launch("paged_attention");
}

}  // namespace

void paged_attention(const PagedAttentionArgs& a, Stream stream) {
  require(a.num_seqs >= 0 && a.max_query_len >= 0, "paged_attention: negative sizes");
  if (a.num_seqs == 0 || a.max_query_len == 0) return;
  require(a.num_kv_heads > 0 && a.num_heads % a.num_kv_heads == 0,
          "paged_attention: num_kv_heads must divide num_heads");
  require(a.block_size > 0 && a.max_blocks_per_seq > 0, "paged_attention: empty block tables");
  require(a.num_seqs <= 65535, "paged_attention: at most 65535 sequences per launch");
  dispatch_dtype(a.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    switch (a.head_dim) {
      case 64:
        return launch<T, 64>(a, stream);
      case 128:
        return launch<T, 128>(a, stream);
      case 256:
        return launch<T, 256>(a, stream);
      default:
        throw std::invalid_argument(
            "model/cuda: paged_attention supports head_dim 64, 128 or "
            "256, not " +
            std::to_string(a.head_dim));
    }
  });
}

}  // namespace ps::cuda
