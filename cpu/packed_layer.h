#pragma once
// A checkpoint's weights re-laid out for ModelRunner (model_runner.h): each layer's projections
// packed for the tuned linear kernels, the norms and biases as contiguous fp32. Internal to
// cpu/: the packing is done once, when a ModelRunner is built (packed_layer.cpp).
#include <memory>

#include "cpu/model_runner.h"
#include "cpu/moe_layer.h"
#include "cpu/projection.h"
#include "kernels/linear_tuner.h"
#include "model/model_weights.h"
#include "model/tensor.h"

namespace ps {

// Contiguous fp32 [rows, cols] (a fresh copy only when the checkpoint tensor is not already so).
Tensor dense_f32(const Tensor& t, const char* name);

// Weights re-laid out once so a step issues one product per projection: q, k and v share the
// normed input (one [q + 2kv, hidden] weight), gate and up too (one [2 * inter, hidden]).
struct PackedLayer {
  // post_norm: the norm before the MLP (Gemma's pre_feedforward_layernorm). attn_out_norm and
  // mlp_out_norm: Gemma's norms on each branch's output (post_attention_layernorm and
  // post_feedforward_layernorm), undefined elsewhere. Gemma's (1 + w) is folded in at packing.
  // o_bias and sinks: gpt-oss's o_proj bias and per-head attention sink logits.
  Tensor input_norm, qkv_bias, q_norm, k_norm, post_norm, attn_out_norm, mlp_out_norm, o_bias,
      sinks;
  Projection qkv, o_proj, gate_up, down;
  std::shared_ptr<const MoeLayer> moe;  // set in a sparse layer, which has no gate_up / down
  // Qwen3.5's gated attention: qkv's rows are every head's query, then k, v, then every head's
  // output gate (the checkpoint interleaves query and gate per head; packing gathers them).
  bool output_gate = false;
  // A Gated DeltaNet layer (linear_attention_layer.h) instead of attention: linear_in is
  // in_proj_qkv, z, b, a stacked (one product), o_proj is out_proj; conv_weight [conv_dim, K],
  // neg_exp_a = -exp(A_log) and dt_bias [Hv], gated_norm [v_head_dim], all fp32.
  bool linear = false;
  Projection linear_in;
  Tensor conv_weight, neg_exp_a, dt_bias, gated_norm;
};

// An RMSNorm weight as the kernels apply it (y = x_normed * w): fp32, and 1 + w for Gemma, whose
// norms scale by (1 + w) (the same fp32 sum HF computes each forward).
Tensor norm_weight(const Tensor& t, const ModelConfig& c, const char* name);

// A checkpoint matrix, contiguous, in its own dtype (fp32, or bf16/f16 kept narrow).
const Tensor& matrix(const Tensor& t, const char* name);

// The weight in the form(s) the tuner's plan for its shape runs; narrow or quantized weights
// are packed panels only (lowbit_weights.h).
Projection projection(const Tensor& w, LinearTuner& tuner, const RunnerOptions& o);
// Throws std::invalid_argument naming the flag when --compute-dtype cannot run here: bfloat16
// with int8 weights, int8 without --quantization int8 per channel, --kernel blas, or the CPU
// unit missing on the active kernel ISA (AVX512_BF16 on avx512; AVX512_VNNI on avx512 or
// AVX-VNNI on avx2).
void check_compute_dtype(const RunnerOptions& o);

// A layer's weights packed, checked against the config's shapes.
PackedLayer pack_layer(const LayerWeights& l, const ModelConfig& c, LinearTuner& tuner,
                       const RunnerOptions& o);

}  // namespace ps
