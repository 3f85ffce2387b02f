#include "cuda/cuda_weight_source.h"

#include <stdexcept>
#include <string>

#include "model/model_weights.h"

namespace ps {
namespace {

// Keeps the converted tensors alive as long as the source's pointers are used.
struct Holder {
  std::vector<Tensor> tensors;
};

Bf16Host keep(Holder& h, Tensor t, const std::string& name, int64_t rows, int64_t cols) {
  if (!t.defined()) throw std::invalid_argument("--device cuda: missing tensor " + name);
  const bool shape_ok =
      rows == 1 ? t.numel() == cols : t.dim() == 2 && t.size(0) == rows && t.size(1) == cols;
  if (!shape_ok) {
    throw std::invalid_argument("--device cuda: " + name + " has " + std::to_string(t.numel()) +
                                " elements, expected " + std::to_string(rows) + " x " +
                                std::to_string(cols));
  }
  t = t.to(DType::bf16);
  h.tensors.push_back(t);
  return Bf16Host{static_cast<const uint16_t*>(t.data_ptr()), rows, cols};
}

Tensor flat(const Tensor& t) {
  return t.reshape({t.numel()});
}

}  // namespace

Bf16ModelSource bf16_model_source(const ModelWeights& w) {
  const ModelConfig& c = w.config;
  auto holder = std::make_shared<Holder>();
  Holder& h = *holder;
  Bf16ModelSource s;
  s.config = c;
  const int64_t H = c.hidden_size, Q = c.q_size(), KV = c.kv_size(), I = c.intermediate_size;
  const int64_t V = c.vocab_size, D = c.head_dim;
  s.embed = keep(h, w.embed_tokens, "embed_tokens", V, H);
  s.tied = !w.lm_head.defined() || w.lm_head.is_same(w.embed_tokens) ||
           (w.lm_head.data_ptr() == w.embed_tokens.data_ptr() &&
            w.lm_head.sizes() == w.embed_tokens.sizes());
  s.lm_head = s.tied ? s.embed : keep(h, w.lm_head, "lm_head", V, H);
  s.final_norm = keep(h, w.norm, "norm", 1, H);
  if (int64_t(w.layers.size()) != c.num_hidden_layers) {
    throw std::invalid_argument(
        "--device cuda: the checkpoint's layer count disagrees with config");
  }
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerWeights& l = w.layers[i];
    const std::string prefix = "layers." + std::to_string(i) + ".";
    if (l.moe.defined()) {
      throw std::invalid_argument("--device cuda: " + prefix + "mlp is a MoE layer (CPU only)");
    }
    auto need = [&](const Tensor& t, const char* name) {
      if (!t.defined()) throw std::invalid_argument("--device cuda: missing " + prefix + name);
      return t;
    };
    Bf16LayerSource ls;
    ls.input_norm = keep(h, l.input_layernorm, prefix + "input_layernorm", 1, H);
    ls.post_norm = keep(h, l.post_attention_layernorm, prefix + "post_attention_layernorm", 1, H);
    ls.qkv = keep(
        h, cat_rows({need(l.q_proj, "q_proj"), need(l.k_proj, "k_proj"), need(l.v_proj, "v_proj")}),
        prefix + "q/k/v_proj", Q + 2 * KV, H);
    if (c.attention_bias) {
      ls.qkv_bias =
          keep(h,
               cat_rows({flat(need(l.q_bias, "q_proj.bias")), flat(need(l.k_bias, "k_proj.bias")),
                         flat(need(l.v_bias, "v_proj.bias"))}),
               prefix + "q/k/v bias", 1, Q + 2 * KV);
    }
    if (c.qk_norm) {
      ls.q_norm = keep(h, l.q_norm, prefix + "q_norm", 1, D);
      ls.k_norm = keep(h, l.k_norm, prefix + "k_norm", 1, D);
    }
    ls.o_proj = keep(h, l.o_proj, prefix + "o_proj", H, Q);
    ls.gate_up = keep(h, cat_rows({need(l.gate_proj, "gate_proj"), need(l.up_proj, "up_proj")}),
                      prefix + "gate/up_proj", 2 * I, H);
    ls.down = keep(h, l.down_proj, prefix + "down_proj", H, I);
    s.layers.push_back(ls);
  }
  s.keep_alive = holder;
  return s;
}

}  // namespace ps
