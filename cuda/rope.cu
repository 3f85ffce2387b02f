// qk_norm_rope (kernels.h): Qwen3's per-head q/k RMSNorm and the neox rotary embedding in one
// pass over the fused qkv rows, in place. One block per token, one warp per q or k head; the
// normalised values stay in fp32 until after the rotation, so the head is rounded to T once.
#include "cuda/common.cuh"

namespace ps::cuda {
namespace {

constexpr int kWarps = 8;

template <typename T>
__global__ void qk_norm_rope_kernel(T* __restrict__ qkv, int64_t ld,
                                    const int32_t* __restrict__ positions, int32_t num_heads,
                                    int32_t num_kv_heads, int32_t head_dim,
                                    const T* __restrict__ q_norm, const T* __restrict__ k_norm,
                                    float eps, const float* __restrict__ cos_sin) {
  const int row = blockIdx.x;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int half = head_dim / 2;
  const float* cs = cos_sin + int64_t(positions[row]) * head_dim;
  for (int h = warp; h < num_heads + num_kv_heads; h += kWarps) {
    T* x = qkv + int64_t(row) * ld + int64_t(h) * head_dim;  // k heads follow the q heads
    const T* w = h < num_heads ? q_norm : k_norm;
    float inv = 1.0f;
    if (w != nullptr) {
      float ss = 0.0f;
      for (int i = lane; i < head_dim; i += 32) {
        const float v = to_f32(x[i]);
        ss += v * v;
      }
      inv = rsqrtf(warp_sum(ss) / float(head_dim) + eps);
    }
    for (int i = lane; i < half; i += 32) {
      float a = to_f32(x[i]) * inv, b = to_f32(x[i + half]) * inv;
      if (w != nullptr) {
        a *= to_f32(w[i]);
        b *= to_f32(w[i + half]);
      }
      const float c = cs[i], s = cs[half + i];
      x[i] = from_f32<T>(a * c - b * s);
      x[i + half] = from_f32<T>(b * c + a * s);
    }
  }
}

}  // namespace

void qk_norm_rope(const QkNormRopeArgs& a, Stream stream) {
  require(a.rows >= 0 && a.head_dim > 0 && a.head_dim % 2 == 0,
          "qk_norm_rope: head_dim must be positive and even");
  require(a.ld >= int64_t(a.num_heads + 2 * a.num_kv_heads) * a.head_dim,
          "qk_norm_rope: ld must cover the q, k and v heads of a row");
  require(a.cos_sin != nullptr && a.positions != nullptr, "qk_norm_rope: need positions, cos_sin");
  require(a.rows <= 0x7fffffff, "qk_norm_rope: too many rows for one launch");
  if (a.rows == 0) return;
  dispatch_dtype(a.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    qk_norm_rope_kernel<T><<<unsigned(a.rows), kWarps * 32, 0, stream>>>(
        static_cast<T*>(a.qkv), a.ld, a.positions, a.num_heads, a.num_kv_heads, a.head_dim,
        static_cast<const T*>(a.q_norm), static_cast<const T*>(a.k_norm), a.eps, a.cos_sin);
  });
  check_launch("qk_norm_rope");
}

}  // namespace ps::cuda
