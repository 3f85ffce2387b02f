#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/moe_config.h"
#include "model/rope_scaling.h"

namespace ps {

// A layer's token mixer (config.json `layer_types`): attention over the whole context or a
// window, or a Gated DeltaNet linear-attention layer (Qwen3.5) that keeps a recurrent state.
enum class LayerType : uint8_t { full_attention, sliding_attention, linear_attention };

// The Gated DeltaNet layers' shape (config.json `linear_*`; linear_attention_config.h).
struct LinearAttentionShape {
  int32_t conv_kernel = 0;  // linear_conv_kernel_dim
  int32_t num_key_heads = 0, num_value_heads = 0;
  int32_t key_head_dim = 0, value_head_dim = 0;
  int64_t key_dim() const { return int64_t{num_key_heads} * key_head_dim; }
  int64_t value_dim() const { return int64_t{num_value_heads} * value_head_dim; }
  // The channels of q, k and v that the short convolution runs over.
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  // Rows of the stacked input projection: q, k, v (the convolution's channels), z, b and a.
  int64_t in_proj_rows() const { return conv_dim() + value_dim() + 2 * int64_t{num_value_heads}; }
  // Floats one sequence's state takes in one layer: the convolution's last K - 1 inputs and the
  // delta rule's [Hv, dk, dv] matrix.
  int64_t state_floats() const {
    return conv_dim() * (conv_kernel - 1) +
           int64_t{num_value_heads} * key_head_dim * value_head_dim;
  }
};

// The decoder shape, read from a Hugging Face `config.json`.
struct ModelConfig {
  // qwen3 | qwen2 | llama | mistral | qwen3_moe | minimind | smollm3 | phi3 | gemma3_text |
  // gemma2 | gpt_oss | qwen3_5_text | qwen3_5_moe_text | qwen3_next
  std::string model_type = "qwen3";
  int32_t hidden_size = 512;
  int32_t num_hidden_layers = 8;
  int32_t num_attention_heads = 8;
  int32_t num_key_value_heads = 2;
  int32_t head_dim = 64;  // explicit in config.json or hidden_size / num_attention_heads
  int32_t intermediate_size = 1408;
  int32_t vocab_size = 6400;
  // Capped at the sliding window when one applies (mistral, qwen with use_sliding_window): within
  // the window, full causal attention is exact, so the engine needs no window mask.
  int32_t max_position_embeddings = 4096;
  float rope_theta = 1e6f;
  RopeScaling rope_scaling;  // config.json `rope_scaling` (RopeType::none: plain RoPE)
  // Not in config.json: the context the engine serves (--max-model-len), which picks LongRoPE's
  // short or long factors (rope_scaling.h says why); 0 means max_context_len().
  int32_t rope_context_len = 0;
  float partial_rotary_factor = 1.0f;  // rotary dim = int(head_dim * factor); the rest passes
  // smollm3: per layer, 1 where it applies RoPE and 0 on a NoPE layer (config.json
  // `no_rope_layers`); empty: every layer applies RoPE.
  std::vector<uint8_t> rope_layers;
  // gemma3_text (layer_types.h): each layer's attention kind (empty: all full attention), the
  // window of the sliding ones, their RoPE base, and the query scale's denominator (0: head_dim).
  std::vector<LayerType> layer_types;
  int32_t sliding_window = 0;
  float rope_local_base_freq = 10000.0f;
  float query_pre_attn_scalar = 0.0f;
  // gemma2: scores and final logits pass through cap * tanh(x / cap) (0: not capped).
  float attn_logit_softcapping = 0.0f, final_logit_softcapping = 0.0f;
  // qwen3_5_text: the linear-attention layers' shape, and the full-attention layers' sigmoid
  // output gate (q_proj gives each head's query and then its gate).
  LinearAttentionShape linear;
  bool attn_output_gate = false;
  float rms_norm_eps = 1e-6f;
  bool tie_word_embeddings = true;
  // False when config.json does not say: the loader then ties lm_head to the embedding if the
  // checkpoint has no lm_head.weight (checkpoints that rely on the library default).
  bool tie_word_embeddings_stated = true;
  bool qk_norm = true;  // qwen3, qwen3_moe, MiniMind 3: RMSNorm over each head of q and k
  // qwen2: q/k/v projections carry a bias; gpt_oss: q/k/v and o_proj (gpt_oss_layout()).
  bool attention_bias = false;
  std::vector<int32_t> eos_token_ids;  // from generation_config.json (or config.json)
  int32_t bos_token_id = -1;
  MoeConfig moe;  // qwen3_moe, qwen3_next, qwen3_5_moe_text, minimind with use_moe (moe_config.h)

  // Throws std::runtime_error naming the file and field.
  static ModelConfig from_dir(const std::string& model_dir);
  // Parses config.json text only (no generation_config.json); `origin` names it in errors.
  static ModelConfig from_json(const std::string& config_json_text, const std::string& origin);
  std::string to_json() const;  // a config.json that from_dir reads back

  // Sets model_type and the architecture flags that follow from it (qk_norm, attention_bias).
  void set_model_type(const std::string& type);
  // Throws std::runtime_error (prefixed with `origin`) when the shape is inconsistent: non-positive
  // sizes, heads not a multiple of kv heads, flags that contradict model_type.
  void validate(const std::string& origin) const;

  // The longest context the engine allows: max_position_embeddings, stretched by rope_scaling as
  // vLLM does (scaled_context_len in model/rope_scaling.h), except for Gemma 3.
  int32_t max_context_len() const {
    // Gemma 3's max_position_embeddings already states the context its scaled RoPE reaches.
    if (gemma_layout()) return max_position_embeddings;
    return scaled_context_len(rope_scaling, max_position_embeddings);
  }

  bool layer_uses_rope(int32_t layer) const {
    return rope_layers.empty() || rope_layers[size_t(layer)] != 0;
  }

  bool layer_is_sliding(int32_t layer) const {
    return !layer_types.empty() && layer_types[size_t(layer)] == LayerType::sliding_attention;
  }
  // The attention window of a layer: 0 for full attention.
  int32_t layer_window(int32_t layer) const { return layer_is_sliding(layer) ? sliding_window : 0; }
  bool layer_is_linear(int32_t layer) const {
    return !layer_types.empty() && layer_types[size_t(layer)] == LayerType::linear_attention;
  }
  // Qwen3.5 and Qwen3-Next: Gated DeltaNet layers beside gated full attention
  // (linear_attention_config.h).
  bool hybrid_layout() const { return is_hybrid_model_type(model_type); }
  static bool is_hybrid_model_type(const std::string& type) {
    return type == "qwen3_5_text" || type == "qwen3_5_moe_text" || type == "qwen3_next";
  }
  int32_t num_linear_layers() const {
    int32_t n = 0;
    for (int32_t l = 0; l < num_hidden_layers && size_t(l) < layer_types.size(); ++l) {
      n += layer_is_linear(l);
    }
    return n;
  }
  // Bytes one sequence's recurrent state takes over all linear layers (fp32; 0: none).
  int64_t recurrent_state_bytes_per_slot() const {
    return int64_t{num_linear_layers()} * linear.state_floats() * 4;
  }
  // RMSNorm weights applied as (1 + w) (zero-centred: Gemma, and Qwen3.5's decoder norms).
  bool norms_add_one() const { return gemma_layout() || hybrid_layout(); }
  // Gemma 2 and 3's layer: RMSNorm weights applied as (1 + w), a norm after attention and after the
  // MLP as well as before each, a GELU-tanh gated MLP, embeddings scaled by sqrt(hidden_size).
  bool gemma_layout() const { return model_type == "gemma3_text" || model_type == "gemma2"; }
  // gpt-oss's layer (gpt_oss_config.h): o_proj has a bias too, each head a learned attention
  // sink (a logit that joins the softmax's denominator and attends to nothing), the MLP is MXFP4
  // experts.
  bool gpt_oss() const { return model_type == "gpt_oss"; }
  // Scores are q.k times this: 1 / sqrt(query_pre_attn_scalar), else 1 / sqrt(head_dim).
  float attention_scale() const;

  int64_t q_size() const { return int64_t{num_attention_heads} * head_dim; }
  int64_t kv_size() const { return int64_t{num_key_value_heads} * head_dim; }
};

}  // namespace ps
