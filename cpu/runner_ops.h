#pragma once
// The element-wise steps of the packed forward, fused into single passes over raw rows so that a
// step costs one memory sweep each instead of one torch op (and temporary) per arithmetic step.
// Each is parallel over rows; none allocates.
#include <cmath>
#include <cstdint>

#include "model/rope_scaling.h"

namespace ps {

// Whether the model's kernels were compiled with OpenMP. ATen's parallel_for is a header template
// that runs serially unless the including file is compiled with -fopenmp, so without it every
// hand-written kernel (the projections, attention, norms) uses one core.
bool kernels_parallel();

// y[r] = x[r] * rsqrt(mean(x[r]^2) + eps) * w for `rows` rows of `width`, HF's RMSNorm in fp32.
// x and y may be the same rows. Row r of x is x + rows_x[r] * ldx when rows_x is given (a
// gather of selected rows), else x + r * ldx.
void rms_norm_rows(const float* x, int64_t ldx, const int32_t* rows_x, int64_t rows, int64_t width,
                   const float* w, float eps, float* y, int64_t ldy);

// In place on the fused qkv rows: optional per-head RMSNorm of the q and k heads (Qwen3) then
// neox-style rotary embedding over the head's first rotary_dim floats (the first half of those
// pairs with the second half; the rest of the head passes through, for partial_rotary_factor).
// cos/sin are [rows, rotary_dim / 2], one row per token's position.
struct QkRopeArgs {
  float* qkv = nullptr;
  int64_t ld = 0;  // floats between token rows
  int64_t rows = 0;
  int32_t num_heads = 0, num_kv_heads = 0, head_dim = 0;
  int32_t rotary_dim = 0;         // 0: head_dim
  bool rotate = true;             // false: a NoPE layer (smollm3): the q/k norms alone
  const float* q_norm = nullptr;  // [head_dim] or nullptr (no qk norm)
  const float* k_norm = nullptr;
  float eps = 1e-6f;
  const float* cos = nullptr;
  const float* sin = nullptr;
};
void qk_norm_rope(const QkRopeArgs& args);

// out[r][j] = silu(gu[r][j]) * gu[r][inter + j]: the gated MLP activation over the fused
// gate/up projection's rows [rows, 2 * inter].
void silu_mul_rows(const float* gu, int64_t rows, int64_t inter, float* out);

// out[r][j] = gelu_tanh(gu[r][j]) * gu[r][inter + j]: Gemma's gated MLP (HF's
// gelu_pytorch_tanh: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))).
void gelu_tanh_mul_rows(const float* gu, int64_t rows, int64_t inter, float* out);

// out[r][j] = (clamp(u, -limit, limit) + 1) * g * sigmoid(alpha * g) with g = min(gate, limit),
// gate = gu[r][j] and u = gu[r][inter + j]: gpt-oss's expert activation (alpha 1.702).
void clamped_swiglu_rows(const float* gu, int64_t rows, int64_t inter, float limit, float alpha,
                         float* out);

// y[i] += x[i] for n floats (a residual add after a norm that cannot fuse into the projection).
void add_into(const float* x, int64_t n, float* y);
// 1 / (1 + exp(-x)): torch's sigmoid in fp32 (the attention output gate, Gated DeltaNet's beta).
inline float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}
// y[r][j] *= sigmoid(gate[r][j]) for `rows` rows of `width` (Qwen3.5's attention output gate),
// rows ld_gate and ld_y floats apart.
void sigmoid_gate_rows(const float* gate, int64_t ld_gate, int64_t rows, int64_t width, float* y,
                       int64_t ld_y);
// x[i] *= factor for n floats.
void scale_in_place(float* x, int64_t n, float factor);
// x[i] = cap * tanh(x[i] / cap) for n floats (Gemma 2's final-logit soft-capping).
void soft_cap_in_place(float* x, int64_t n, float cap);

// cos/sin [rows, rotary_dim / 2] for the rows' positions, with the same fp32 ops as HF (and
// naive_forward): angle = float(position) * inv_freq; then cos and sin times the attention
// factor (1 but for yarn and longrope), as HF's rotary embedding scales them.
void rope_cos_sin(const RopeFrequencies& rope, const int32_t* positions, int64_t rows, float* cos,
                  float* sin);

}  // namespace ps
