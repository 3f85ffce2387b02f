#pragma once
// A small random model and a real tokenizer for engine tests: big enough to have GQA, several
// layers and real attention, small enough that the naive oracle runs in milliseconds.
#include <memory>
#include <random>
#include <vector>

#include "checkpoint/loader.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer.h"

namespace ps::testing_util {

inline ModelConfig small_config(const std::string& model_type = "qwen3") {
  ModelConfig c;
  c.model_type = model_type;
  c.qk_norm = model_type == "qwen3";
  c.attention_bias = model_type == "qwen2";
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.intermediate_size = 128;
  c.vocab_size = 512;
  c.max_position_embeddings = 1024;
  c.rope_theta = 10000.0f;
  c.eos_token_ids = {2};
  if (model_type == "qwen3_moe") {  // 8 experts, top 2, renormalised (issue #17)
    c.qk_norm = true;
    c.moe.num_experts = 8;
    c.moe.num_experts_per_tok = 2;
    c.moe.moe_intermediate_size = 32;
    c.moe.norm_topk_prob = true;
  }
  if (model_type == "smollm3") c.rope_layers = {1, 0};  // layer 1 attends without RoPE
  if (model_type == "gemma3_text") {  // a sliding layer (window 12) then a global one
    c.qk_norm = true;
    c.layer_types = {LayerType::sliding_attention, LayerType::full_attention};
    c.sliding_window = 12;
    c.rope_local_base_freq = 10000.0f;
    c.rope_theta = 1e6f;
    c.query_pre_attn_scalar = 24.0f;
  }
  if (model_type == "gemma2") {  // sliding then global, soft-capped scores and logits
    c.layer_types = {LayerType::sliding_attention, LayerType::full_attention};
    c.sliding_window = 12;
    c.query_pre_attn_scalar = 24.0f;
    c.attn_logit_softcapping = 2.0f;
    c.final_logit_softcapping = 4.0f;
  }
  if (model_type == "gpt_oss") {  // sliding (window 12) then full; 4 MXFP4 experts, top 2
    c.attention_bias = true;
    c.layer_types = {LayerType::sliding_attention, LayerType::full_attention};
    c.sliding_window = 12;
    c.moe.num_experts = 4;
    c.moe.num_experts_per_tok = 2;
    c.moe.moe_intermediate_size = c.intermediate_size;
    c.moe.norm_topk_prob = true;
    c.moe.gpt_oss_experts = true;
    c.moe.swiglu_limit = 7.0f;
  }
  if (model_type == "qwen3_5_text") {  // Gated DeltaNet, gated full attention, DeltaNet last
    c.qk_norm = true;
    c.num_hidden_layers = 3;
    c.layer_types = {LayerType::linear_attention, LayerType::full_attention,
                     LayerType::linear_attention};
    c.linear = LinearAttentionShape{4, 2, 4, 16, 12};  // kernel, Hk, Hv, dk, dv
    c.attn_output_gate = true;
    c.partial_rotary_factor = 0.5f;
  }
  if (model_type == "qwen3_next") {  // qwen3_5_text's layers; experts with a gated shared one
    c.qk_norm = true;
    c.num_hidden_layers = 3;
    c.layer_types = {LayerType::linear_attention, LayerType::full_attention,
                     LayerType::linear_attention};
    c.linear = LinearAttentionShape{4, 2, 4, 16, 12};
    c.attn_output_gate = true;
    c.partial_rotary_factor = 0.5f;
    c.moe.num_experts = 4;
    c.moe.num_experts_per_tok = 2;
    c.moe.moe_intermediate_size = 32;
    c.moe.shared_expert_intermediate_size = 48;
    c.moe.norm_topk_prob = true;
    c.moe.mlp_only_layers = {1};  // the full-attention layer's MLP is dense
  }
  if (model_type == "phi3") {  // Phi-4-mini's RoPE: 3/4 of each head, LongRoPE's long factors
    c.partial_rotary_factor = 0.75f;
    c.rope_scaling.type = RopeType::longrope;
    c.rope_scaling.factor = 0;
    c.rope_scaling.original_max_position_embeddings = 64;
    c.rope_scaling.short_factor = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5};
    c.rope_scaling.long_factor = {1.0, 2.0, 4.0, 8.0, 16.0, 32.0};
  }
  if (model_type == "minimind") {  // MiniMind 2's MoE: 4 routed experts, top 2, 1 shared
    c.qk_norm = false;
    c.moe.num_experts = 4;
    c.moe.num_experts_per_tok = 2;
    c.moe.moe_intermediate_size = c.intermediate_size;
    c.moe.norm_topk_prob = true;
    c.moe.norm_topk_epsilon = 1e-20f;
    c.moe.norm_topk_only_above_one = true;
    c.moe.num_shared_experts = 1;
  }
  return c;
}

inline std::shared_ptr<const Tokenizer> small_tokenizer(int32_t vocab = 512) {
  static std::shared_ptr<const Tokenizer> cached;
  if (!cached) {
    BpeTrainOptions o;
    o.vocab_size = vocab;
    cached = std::make_shared<const Tokenizer>(
        Tokenizer::from_json_text(train_byte_level_bpe(tiny_model_corpus(), o), "test"));
  }
  return cached;
}

// Token ids that are not special (ids 0..2 are), so greedy runs are not cut short by accident.
inline std::vector<int32_t> random_prompt(std::mt19937& rng, int32_t len, int32_t vocab) {
  std::uniform_int_distribution<int32_t> dist(3, vocab - 1);
  std::vector<int32_t> ids(len);
  for (auto& id : ids) id = dist(rng);
  return ids;
}

}  // namespace ps::testing_util
