// Packing a checkpoint's weights for ModelRunner (packed_layer.h): q/k/v and gate/up stacked
// into one projection each, every projection in the form its tuned plan runs. Split from
// model_runner.cpp, which runs the forward pass over the packed layers.
#include "cpu/packed_layer.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cpu/lowbit_weights.h"

namespace ps {

Tensor dense_f32(const Tensor& t, const char* name) {
  if (!t.defined()) throw std::invalid_argument(std::string("ModelRunner: missing ") + name);
  return t.to(DType::f32);
}

Tensor norm_weight(const Tensor& t, const ModelConfig& c, const char* name) {
  Tensor w = dense_f32(t, name);
  if (!c.norms_add_one()) return w;
  Tensor shifted = w.clone();
  float* p = shifted.data_ptr<float>();
  for (int64_t i = 0; i < shifted.numel(); ++i) p[i] = 1.0f + p[i];
  return shifted;
}

const Tensor& matrix(const Tensor& t, const char* name) {
  if (!t.defined()) throw std::invalid_argument(std::string("ModelRunner: missing ") + name);
  return t;
}

void check_compute_dtype(const RunnerOptions& o) {
  if (o.compute_dtype == ComputeDtype::f32) return;
  const bool bf16 = o.compute_dtype == ComputeDtype::bf16;
  const std::string flag = std::string("--compute-dtype ") + compute_dtype_name(o.compute_dtype);
  if (bf16 && o.quantization != WeightQuantization::none) {
    throw std::invalid_argument(flag + " computes on float weights; --quantization int8 computes " +
                                "in float32 or, with --compute-dtype int8, in int8");
  }
  if (!bf16 && (o.quantization != WeightQuantization::int8 || o.quantization_group != 0)) {
    throw std::invalid_argument(flag + " needs --quantization int8 per output channel (no " +
                                "--quantization-group)");
  }
  if (o.linear_mode == LinearMode::blas) {
    throw std::invalid_argument(flag + " runs on the packed kernel, not --kernel blas");
  }
  const KernelIsa isa = active_kernel_isa();
  if (bf16) {
    if (!bf16_dot_products_on(isa)) {
      const bool has = cpu_has_avx512_bf16();
      throw std::invalid_argument(flag + " needs a CPU with AVX512_BF16 and the avx512 kernel " +
                                  "ISA (this CPU " + (has ? "has" : "has no") +
                                  " AVX512_BF16, kernel ISA " + kernel_isa_name(isa) + ")");
    }
    return;
  }
  if (!int8_dot_products_on(isa)) {
    throw std::invalid_argument(
        flag + " needs AVX512_VNNI on the avx512 kernel ISA or AVX-VNNI on the avx2 one (this " +
        "CPU has " + (cpu_has_avx512_vnni() ? "" : "no ") + "AVX512_VNNI and " +
        (cpu_has_avx_vnni() ? "" : "no ") + "AVX-VNNI, kernel ISA " + kernel_isa_name(isa) + ")");
  }
}

Projection projection(const Tensor& w, LinearTuner& tuner, const RunnerOptions& o) {
  if (w.dim() != 2) {
    throw std::invalid_argument("ModelRunner: a projection weight must be a 2-D matrix");
  }
  const PanelFormat format = panel_format_for(w.dtype(), o.quantization);
  if (format == PanelFormat::i8 && o.linear_mode == LinearMode::blas) {
    throw std::invalid_argument("--quantization int8 runs on the packed kernel, not --kernel blas");
  }
  // check_compute_dtype held at load.
  if (o.compute_dtype == ComputeDtype::bf16) return Projection(w, PanelFormat::bf16_pairs, 0);
  if (o.compute_dtype == ComputeDtype::int8) return Projection(w, PanelFormat::i8_quads, 0);
  // --kernel blas asks for OpenBLAS, which computes on fp32: a bf16/f16 matrix is widened for it.
  if (format == PanelFormat::f32 || o.linear_mode == LinearMode::blas) {
    const Tensor f = w.to(DType::f32);
    return Projection(f, tuner.plan_for(f.data_ptr<float>(), f.size(0), f.size(1)));
  }
  return Projection(w, format, o.quantization_group);
}

namespace {

// A Gated DeltaNet layer's mixer: one stacked input projection and the small fp32 tensors.
void pack_linear_mixer(const LayerWeights& l, const ModelConfig& c, LinearTuner& tuner,
                       const RunnerOptions& o, PackedLayer* p) {
  const LinearAttentionShape& s = c.linear;
  const int64_t h = c.hidden_size, hv = s.num_value_heads;
  p->linear = true;
  p->linear_in =
      projection(cat_rows({matrix(l.in_proj_qkv, "in_proj_qkv"), matrix(l.in_proj_z, "in_proj_z"),
                           matrix(l.in_proj_b, "in_proj_b"), matrix(l.in_proj_a, "in_proj_a")}),
                 tuner, o);
  p->o_proj = projection(matrix(l.out_proj, "out_proj"), tuner, o);
  p->conv_weight = dense_f32(l.conv1d, "conv1d").reshape({s.conv_dim(), s.conv_kernel});
  p->dt_bias = dense_f32(l.dt_bias, "dt_bias");
  p->neg_exp_a = dense_f32(l.A_log, "A_log").clone();
  float* a = p->neg_exp_a.data_ptr<float>();
  for (int64_t i = 0; i < p->neg_exp_a.numel(); ++i) a[i] = -std::exp(a[i]);
  p->gated_norm = dense_f32(l.linear_norm, "linear_attn.norm");
  const bool ok = p->linear_in.shape_is(s.in_proj_rows(), h) &&
                  p->o_proj.shape_is(h, s.value_dim()) && p->dt_bias.numel() == hv &&
                  p->neg_exp_a.numel() == hv && p->gated_norm.numel() == s.value_head_dim;
  if (!ok)
    throw std::invalid_argument("ModelRunner: linear_attn weight shapes do not match config");
}

// q_proj's rows as [every head's query; every head's gate]: the checkpoint stores each head's
// query rows followed by its gate rows.
std::pair<Tensor, Tensor> split_query_gate(const Tensor& q_proj, const ModelConfig& c) {
  const int64_t hd = c.head_dim;
  if (q_proj.dim() != 2 || q_proj.size(0) != 2 * c.q_size()) {
    throw std::invalid_argument(
        "ModelRunner: q_proj with an output gate needs 2 * heads * "
        "head_dim rows");
  }
  std::vector<Tensor> query, gate;
  for (int64_t head = 0; head < c.num_attention_heads; ++head) {
    query.push_back(q_proj.rows(2 * head * hd, hd));
    gate.push_back(q_proj.rows(2 * head * hd + hd, hd));
  }
  return {cat_rows(query), cat_rows(gate)};
}

}  // namespace

PackedLayer pack_layer(const LayerWeights& l, const ModelConfig& c, LinearTuner& tuner,
                       const RunnerOptions& o) {
  PackedLayer p;
  p.input_norm = norm_weight(l.input_layernorm, c, "input_layernorm");
  p.post_norm = norm_weight(l.post_attention_layernorm, c, "post_attention_layernorm");
  const int64_t h = c.hidden_size, q = c.q_size(), kv = c.kv_size(), i = c.intermediate_size;
  if (l.in_proj_qkv.defined()) {
    pack_linear_mixer(l, c, tuner, o, &p);
  } else if (c.attn_output_gate) {
    p.output_gate = true;
    const auto [query, gate] = split_query_gate(matrix(l.q_proj, "q_proj"), c);
    p.qkv = projection(
        cat_rows({query, matrix(l.k_proj, "k_proj"), matrix(l.v_proj, "v_proj"), gate}), tuner, o);
  } else {
    p.qkv = projection(cat_rows({matrix(l.q_proj, "q_proj"), matrix(l.k_proj, "k_proj"),
                                 matrix(l.v_proj, "v_proj")}),
                       tuner, o);
  }
  if (c.attention_bias) {
    p.qkv_bias = cat_rows({dense_f32(l.q_bias, "q_bias"), dense_f32(l.k_bias, "k_bias"),
                           dense_f32(l.v_bias, "v_bias")});
  }
  if (c.qk_norm && !p.linear) {
    p.q_norm = norm_weight(l.q_norm, c, "q_norm");
    p.k_norm = norm_weight(l.k_norm, c, "k_norm");
  }
  if (!p.linear) p.o_proj = projection(matrix(l.o_proj, "o_proj"), tuner, o);
  if (c.gpt_oss()) {
    p.o_bias = dense_f32(l.o_bias, "o_proj bias");
    p.sinks = dense_f32(l.sinks, "sinks");
  }
  if (c.gemma_layout()) {
    p.attn_out_norm = norm_weight(l.post_attention_layernorm, c, "post_attention_layernorm");
    p.post_norm = norm_weight(l.pre_feedforward_layernorm, c, "pre_feedforward_layernorm");
    p.mlp_out_norm = norm_weight(l.post_feedforward_layernorm, c, "post_feedforward_layernorm");
  }
  if (l.moe.defined()) {
    p.moe = std::make_shared<const MoeLayer>(l.moe, c, tuner);
  } else {
    p.gate_up = projection(
        cat_rows({matrix(l.gate_proj, "gate_proj"), matrix(l.up_proj, "up_proj")}), tuner, o);
    p.down = projection(matrix(l.down_proj, "down_proj"), tuner, o);
  }
  const bool mlp_ok = p.moe || (p.gate_up.shape_is(2 * i, h) && p.down.shape_is(h, i));
  const bool mixer_ok = p.linear || (p.qkv.shape_is(q + 2 * kv + (p.output_gate ? q : 0), h) &&
                                     p.o_proj.shape_is(h, q));
  const bool ok =
      mixer_ok && mlp_ok && p.input_norm.numel() == h && p.post_norm.numel() == h &&
      (!c.gpt_oss() || (p.o_bias.numel() == h && p.sinks.numel() == c.num_attention_heads));
  if (!ok) throw std::invalid_argument("ModelRunner: layer weight shapes do not match config");
  return p;
}

}  // namespace ps
