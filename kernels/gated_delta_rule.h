#pragma once
// The gated delta rule of Gated DeltaNet (Qwen3-Next / Qwen3.5 linear-attention layers, issue #35),
// for one sequence: a fixed-size state per value head instead of a growing KV cache. Raw
// pointers, no torch.
//
// Per value head h (its key head is h / (Hv / Hk): key heads are shared as HF repeat_interleaves
// them), with q and k L2-normed (x / sqrt(|x|^2 + 1e-6)) and q scaled by 1 / sqrt(k_dim), each
// token t updates the state S [k_dim, v_dim] and reads it:
//   S     = exp(g_t) * S                        (decay; g_t <= 0 is a log factor)
//   delta = beta_t * (v_t - S^T k_t)            (what S predicted for k_t, corrected)
//   S     = S + k_t delta^T
//   o_t   = S^T q_t
// The recurrent form runs that loop; the chunked form (prefill) does the same in chunks of C
// tokens with matrix products (the WY form HF's torch_chunk_gated_delta_rule computes: within a
// chunk a triangular solve, across chunks the state). Both give the same outputs and state up to
// rounding, whatever the chunk size, and a prompt split anywhere continues from the state.
#include <cstdint>

namespace ps {

struct GatedDeltaArgs {
  int32_t num_tokens = 0;
  int32_t num_k_heads = 0;  // Hk
  int32_t num_v_heads = 0;  // Hv, a multiple of Hk
  int32_t k_dim = 0;
  int32_t v_dim = 0;
  // [T, Hk * k_dim], [T, Hk * k_dim], [T, Hv * v_dim], rows the given strides apart (floats):
  // after the short convolution and SiLU, before the L2 norm.
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t q_stride = 0, k_stride = 0, v_stride = 0;
  // [T, Hv]: the log decay g (<= 0) and the write strength beta (in (0, 1)) of each token and head.
  const float* g = nullptr;
  const float* beta = nullptr;
  // [Hv, k_dim, v_dim]: read as the state before the first token, written as the state after
  // the last.
  float* state = nullptr;
  // [T, Hv * v_dim], out_stride floats apart.
  float* out = nullptr;
  int64_t out_stride = 0;
};

// Throws std::invalid_argument on inconsistent sizes or missing pointers.
void gated_delta_rule_recurrent(const GatedDeltaArgs& a);
// chunk >= 1; 64 is what HF and the fla kernels use.
void gated_delta_rule_chunked(const GatedDeltaArgs& a, int32_t chunk = 64);

}  // namespace ps
