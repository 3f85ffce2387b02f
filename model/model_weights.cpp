#include "model/model_weights.h"

namespace ps {

std::vector<WeightSlot> weight_slots(ModelWeights& w) {
  const ModelConfig& c = w.config;
  const int64_t hidden = c.hidden_size;
  const int64_t inter = c.intermediate_size;
  const int64_t q = c.q_size();
  const int64_t kv = c.kv_size();
  w.layers.resize(static_cast<size_t>(c.num_hidden_layers));

  std::vector<WeightSlot> slots;
  slots.push_back({"model.embed_tokens.weight", {c.vocab_size, hidden}, &w.embed_tokens});
  for (int32_t i = 0; i < c.num_hidden_layers; ++i) {
    LayerWeights& l = w.layers[static_cast<size_t>(i)];
    const std::string p = "model.layers." + std::to_string(i) + ".";
    slots.push_back({p + "input_layernorm.weight", {hidden}, &l.input_layernorm});
    slots.push_back({p + "self_attn.q_proj.weight", {q, hidden}, &l.q_proj});
    slots.push_back({p + "self_attn.k_proj.weight", {kv, hidden}, &l.k_proj});
    slots.push_back({p + "self_attn.v_proj.weight", {kv, hidden}, &l.v_proj});
    if (c.attention_bias) {
      slots.push_back({p + "self_attn.q_proj.bias", {q}, &l.q_bias});
      slots.push_back({p + "self_attn.k_proj.bias", {kv}, &l.k_bias});
      slots.push_back({p + "self_attn.v_proj.bias", {kv}, &l.v_bias});
    }
    if (c.qk_norm) {
      slots.push_back({p + "self_attn.q_norm.weight", {c.head_dim}, &l.q_norm});
      slots.push_back({p + "self_attn.k_norm.weight", {c.head_dim}, &l.k_norm});
    }
    slots.push_back({p + "self_attn.o_proj.weight", {hidden, q}, &l.o_proj});
    slots.push_back({p + "post_attention_layernorm.weight", {hidden}, &l.post_attention_layernorm});
    if (c.moe.is_sparse_layer(i)) {
      append_moe_slots(c, p, l.moe, &slots);
      continue;
    }
    slots.push_back({p + "mlp.gate_proj.weight", {inter, hidden}, &l.gate_proj});
    slots.push_back({p + "mlp.up_proj.weight", {inter, hidden}, &l.up_proj});
    slots.push_back({p + "mlp.down_proj.weight", {hidden, inter}, &l.down_proj});
  }
  slots.push_back({"model.norm.weight", {hidden}, &w.norm});
  if (!c.tie_word_embeddings) {
    slots.push_back({"lm_head.weight", {c.vocab_size, hidden}, &w.lm_head});
  }
  return slots;
}

}  // namespace ps
