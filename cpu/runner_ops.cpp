#include "cpu/runner_ops.h"
#include "kernels/parallel_for.h"

#include <algorithm>
#include <cmath>

#include "kernels/runner_simd.h"

namespace ps {
namespace {

// Rows per thread chunk such that each chunk moves at least ~32k floats: below that, waking the
// other OpenMP threads costs more than the work.
int64_t grain_for(int64_t floats_per_row) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, floats_per_row));
}

PS_INLINE float sum_squares(const float* x, int64_t n) {
  F32x8 a0{}, a1{};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const F32x8 u = load8(x + i), v = load8(x + i + 8);
    a0 += u * u;
    a1 += v * v;
  }
  for (; i + 8 <= n; i += 8) {
    const F32x8 u = load8(x + i);
    a0 += u * u;
  }
  float s = hsum8(a0 + a1);
  for (; i < n; ++i) s += x[i] * x[i];
  return s;
}

// y = x * inv * w over n floats (x == y allowed).
PS_INLINE void scale_by(const float* x, float inv, const float* w, int64_t n, float* y) {
  const F32x8 iv = splat8(inv);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store8(y + i, load8(x + i) * iv * load8(w + i));
  for (; i < n; ++i) y[i] = x[i] * inv * w[i];
}

PS_INLINE void rms_norm_range_body(const float* x, int64_t ldx, const int32_t* rows_x,
                                   int64_t begin, int64_t end, int64_t width, const float* w,
                                   float eps, float* y, int64_t ldy) {
  for (int64_t r = begin; r < end; ++r) {
    const float* xr = x + (rows_x ? int64_t{rows_x[r]} : r) * ldx;
    const float inv = 1.0f / std::sqrt(sum_squares(xr, width) / float(width) + eps);
    scale_by(xr, inv, w, width, y + r * ldy);
  }
}

// One head of D floats: optional RMSNorm over all D, then the rotation of its first R floats by
// the position's angles.
PS_INLINE void norm_rotate(float* h, int32_t D, int32_t R, const float* norm_w, float eps,
                           const float* cos, const float* sin) {
  if (norm_w != nullptr) {
    const float inv = 1.0f / std::sqrt(sum_squares(h, D) / float(D) + eps);
    scale_by(h, inv, norm_w, D, h);
  }
  const int32_t half = R / 2;
  float* a = h;
  float* b = h + half;
  int32_t i = 0;
  for (; i + 8 <= half; i += 8) {
    const F32x8 x1 = load8(a + i), x2 = load8(b + i), c = load8(cos + i), s = load8(sin + i);
    store8(a + i, x1 * c - x2 * s);
    store8(b + i, x2 * c + x1 * s);
  }
  for (; i < half; ++i) {
    const float x1 = a[i], x2 = b[i];
    a[i] = x1 * cos[i] - x2 * sin[i];
    b[i] = x2 * cos[i] + x1 * sin[i];
  }
}

PS_INLINE void qk_norm_rope_range_body(const QkRopeArgs& a, int64_t begin, int64_t end) {
  const int32_t D = a.head_dim;
  const int32_t R = !a.rotate ? 0 : a.rotary_dim > 0 ? a.rotary_dim : D;
  const int32_t half = R / 2;
  for (int64_t r = begin; r < end; ++r) {
    float* row = a.qkv + r * a.ld;
    const float* c = a.cos + r * half;
    const float* s = a.sin + r * half;
    for (int32_t h = 0; h < a.num_heads; ++h) norm_rotate(row + h * D, D, R, a.q_norm, a.eps, c, s);
    float* k = row + int64_t{a.num_heads} * D;
    for (int32_t h = 0; h < a.num_kv_heads; ++h)
      norm_rotate(k + h * D, D, R, a.k_norm, a.eps, c, s);
  }
}

PS_INLINE void silu_mul_range_body(const float* gu, int64_t begin, int64_t end, int64_t inter,
                                   float* out) {
  const F32x8 one = splat8(1.0f);
  for (int64_t r = begin; r < end; ++r) {
    const float* g = gu + r * 2 * inter;
    const float* u = g + inter;
    float* o = out + r * inter;
    int64_t j = 0;
    for (; j + 8 <= inter; j += 8) {
      const F32x8 x = load8(g + j);
      store8(o + j, x / (one + exp8(-x)) * load8(u + j));
    }
    for (; j < inter; ++j) o[j] = g[j] / (1.0f + std::exp(-g[j])) * u[j];
  }
}

PS_ISA_DISPATCH(rms_norm_range,
                (const float* x, int64_t ldx, const int32_t* rows_x, int64_t begin, int64_t end,
                 int64_t width, const float* w, float eps, float* y, int64_t ldy),
                (x, ldx, rows_x, begin, end, width, w, eps, y, ldy))
PS_ISA_DISPATCH(qk_norm_rope_range, (const QkRopeArgs& a, int64_t begin, int64_t end),
                (a, begin, end))
PS_ISA_DISPATCH(silu_mul_range,
                (const float* gu, int64_t begin, int64_t end, int64_t inter, float* out),
                (gu, begin, end, inter, out))

}  // namespace

bool kernels_parallel() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

void rms_norm_rows(const float* x, int64_t ldx, const int32_t* rows_x, int64_t rows, int64_t width,
                   const float* w, float eps, float* y, int64_t ldy) {
  parallel_for(0, rows, grain_for(width), [&](int64_t b, int64_t e) {
    rms_norm_range(x, ldx, rows_x, b, e, width, w, eps, y, ldy);
  });
}

void qk_norm_rope(const QkRopeArgs& a) {
  const int64_t per_row = int64_t{a.num_heads + a.num_kv_heads} * a.head_dim;
  parallel_for(0, a.rows, grain_for(per_row),
               [&](int64_t b, int64_t e) { qk_norm_rope_range(a, b, e); });
}

void silu_mul_rows(const float* gu, int64_t rows, int64_t inter, float* out) {
  parallel_for(0, rows, grain_for(2 * inter),
               [&](int64_t b, int64_t e) { silu_mul_range(gu, b, e, inter, out); });
}

namespace {

// out[r][j] = act(gu[r][j], gu[r][inter + j]) over a fused gate/up projection's rows.
template <typename Activation>
void gated_rows(const float* gu, int64_t rows, int64_t inter, float* out, Activation act) {
  parallel_for(0, rows, grain_for(2 * inter), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const float* g = gu + r * 2 * inter;
      const float* u = g + inter;
      float* o = out + r * inter;
      for (int64_t j = 0; j < inter; ++j) o[j] = act(g[j], u[j]);
    }
  });
}

}  // namespace

void gelu_tanh_mul_rows(const float* gu, int64_t rows, int64_t inter, float* out) {
  // sqrt(2 / pi) in fp32, as torch's tanh-approximate GELU kernel takes it.
  constexpr float kBeta = 0.7978845608028654f, kKappa = 0.044715f;
  gated_rows(gu, rows, inter, out, [](float x, float u) {
    const float inner = kBeta * (x + kKappa * x * x * x);
    return 0.5f * x * (1.0f + std::tanh(inner)) * u;
  });
}

void clamped_swiglu_rows(const float* gu, int64_t rows, int64_t inter, float limit, float alpha,
                         float* out) {
  gated_rows(gu, rows, inter, out, [limit, alpha](float g, float u) {
    const float gate = std::min(g, limit);
    const float up = std::clamp(u, -limit, limit);
    return (up + 1.0f) * (gate / (1.0f + std::exp(-alpha * gate)));
  });
}

void add_into(const float* x, int64_t n, float* y) {
  parallel_for(0, n, 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] += x[i];
  });
}

void sigmoid_gate_rows(const float* gate, int64_t ld_gate, int64_t rows, int64_t width, float* y,
                       int64_t ld_y) {
  parallel_for(0, rows, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(width, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   const float* g = gate + r * ld_gate;
                   float* out = y + r * ld_y;
                   for (int64_t j = 0; j < width; ++j) out[j] *= sigmoid(g[j]);
                 }
               });
}

void scale_in_place(float* x, int64_t n, float factor) {
  parallel_for(0, n, 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) x[i] *= factor;
  });
}

void soft_cap_in_place(float* x, int64_t n, float cap) {
  parallel_for(0, n, 1 << 12, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) x[i] = cap * std::tanh(x[i] / cap);
  });
}

void rope_cos_sin(const RopeFrequencies& rope, const int32_t* positions, int64_t rows, float* cos,
                  float* sin) {
  const int64_t half = rope.rotary_dim / 2;
  const float* inv_freq = rope.inv_freq.data();
  const float factor = rope.attention_factor;
  parallel_for(0, rows, 16, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const float pos = float(positions[t]);
      for (int64_t i = 0; i < half; ++i) {
        const float angle = pos * inv_freq[i];  // fp32 product, as torch's outer
        float c = std::cos(angle), s = std::sin(angle);
        if (factor != 1.0f) {
          c *= factor;
          s *= factor;
        }
        cos[t * half + i] = c;
        sin[t * half + i] = s;
      }
    }
  });
}

}  // namespace ps
