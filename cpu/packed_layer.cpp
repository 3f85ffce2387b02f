// Packing a checkpoint's weights for ModelRunner (packed_layer.h): q/k/v and gate/up stacked
// into one projection each, every projection in the form its tuned plan runs. Split from
// model_runner.cpp, which runs the forward pass over the packed layers.
#include "cpu/packed_layer.h"

#include <stdexcept>
#include <string>

#include "cpu/lowbit_weights.h"

namespace ps {

Tensor dense_f32(const Tensor& t, const char* name) {
  if (!t.defined()) throw std::invalid_argument(std::string("ModelRunner: missing ") + name);
  return t.to(DType::f32);
}

Tensor norm_weight(const Tensor& t, const ModelConfig& c, const char* name) {
  Tensor w = dense_f32(t, name);
  if (!c.gemma_layout()) return w;
  Tensor shifted = w.clone();
  float* p = shifted.data_ptr<float>();
  for (int64_t i = 0; i < shifted.numel(); ++i) p[i] = 1.0f + p[i];
  return shifted;
}

const Tensor& matrix(const Tensor& t, const char* name) {
  if (!t.defined()) throw std::invalid_argument(std::string("ModelRunner: missing ") + name);
  return t;
}

Projection projection(const Tensor& w, LinearTuner& tuner, const RunnerOptions& o) {
  if (w.dim() != 2) {
    throw std::invalid_argument("ModelRunner: a projection weight must be a 2-D matrix");
  }
  const PanelFormat format = panel_format_for(w.dtype(), o.quantization);
  if (format == PanelFormat::i8 && o.linear_mode == LinearMode::blas) {
    throw std::invalid_argument("--quantization int8 runs on the packed kernel, not --kernel blas");
  }
  // --kernel blas asks for OpenBLAS, which computes on fp32: a bf16/f16 matrix is widened for it.
  if (format == PanelFormat::f32 || o.linear_mode == LinearMode::blas) {
    const Tensor f = w.to(DType::f32);
    return Projection(f, tuner.plan_for(f.data_ptr<float>(), f.size(0), f.size(1)));
  }
  return Projection(w, format, o.quantization_group);
}

PackedLayer pack_layer(const LayerWeights& l, const ModelConfig& c, LinearTuner& tuner,
                       const RunnerOptions& o) {
  PackedLayer p;
  p.input_norm = norm_weight(l.input_layernorm, c, "input_layernorm");
  p.qkv = projection(cat_rows({matrix(l.q_proj, "q_proj"), matrix(l.k_proj, "k_proj"),
                               matrix(l.v_proj, "v_proj")}),
                     tuner, o);
  if (c.attention_bias) {
    p.qkv_bias = cat_rows({dense_f32(l.q_bias, "q_bias"), dense_f32(l.k_bias, "k_bias"),
                           dense_f32(l.v_bias, "v_bias")});
  }
  if (c.qk_norm) {
    p.q_norm = norm_weight(l.q_norm, c, "q_norm");
    p.k_norm = norm_weight(l.k_norm, c, "k_norm");
  }
  p.o_proj = projection(matrix(l.o_proj, "o_proj"), tuner, o);
  if (c.gpt_oss()) {
    p.o_bias = dense_f32(l.o_bias, "o_proj bias");
    p.sinks = dense_f32(l.sinks, "sinks");
  }
  if (c.gemma_layout()) {
    p.attn_out_norm = norm_weight(l.post_attention_layernorm, c, "post_attention_layernorm");
    p.post_norm = norm_weight(l.pre_feedforward_layernorm, c, "pre_feedforward_layernorm");
    p.mlp_out_norm = norm_weight(l.post_feedforward_layernorm, c, "post_feedforward_layernorm");
  } else {
    p.post_norm = norm_weight(l.post_attention_layernorm, c, "post_attention_layernorm");
  }
  const int64_t h = c.hidden_size, q = c.q_size(), kv = c.kv_size(), i = c.intermediate_size;
  if (l.moe.defined()) {
    p.moe = std::make_shared<const MoeLayer>(l.moe, c, tuner);
  } else {
    p.gate_up = projection(
        cat_rows({matrix(l.gate_proj, "gate_proj"), matrix(l.up_proj, "up_proj")}), tuner, o);
    p.down = projection(matrix(l.down_proj, "down_proj"), tuner, o);
  }
  const bool mlp_ok = p.moe || (p.gate_up.shape_is(2 * i, h) && p.down.shape_is(h, i));
  const bool ok =
      p.qkv.shape_is(q + 2 * kv, h) && p.o_proj.shape_is(h, q) && mlp_ok &&
      p.input_norm.numel() == h && p.post_norm.numel() == h &&
      (!c.gpt_oss() || (p.o_bias.numel() == h && p.sinks.numel() == c.num_attention_heads));
  if (!ok) throw std::invalid_argument("ModelRunner: layer weight shapes do not match config");
  return p;
}

}  // namespace ps
