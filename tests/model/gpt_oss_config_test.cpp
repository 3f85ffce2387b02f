// ModelConfig from gpt-oss's config.json (issue #34): the released gpt-oss-20b config, the
// defaults GptOssConfig fills in, a round trip through to_json, and bad fields named.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "config_text_util.h"
#include "model/model_config.h"

namespace ps {
namespace {

using config_text::error_of;

// openai/gpt-oss-20b's config.json (its fields as released; layer_types filled in below).
std::string gpt_oss_20b_config() {
  auto j = nlohmann::json::parse(R"({
    "architectures": ["GptOssForCausalLM"], "attention_bias": true, "attention_dropout": 0.0,
    "eos_token_id": 200002, "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu",
    "hidden_size": 2880, "initial_context_length": 4096, "initializer_range": 0.02,
    "intermediate_size": 2880, "max_position_embeddings": 131072, "model_type": "gpt_oss",
    "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24,
    "num_key_value_heads": 8, "num_local_experts": 32, "output_router_logits": false,
    "pad_token_id": 199999,
    "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn",
      "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"},
    "rms_norm_eps": 1e-05,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
      "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": false},
    "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128,
    "swiglu_limit": 7.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "use_cache": true, "vocab_size": 201088})");
  nlohmann::json kinds = nlohmann::json::array();
  for (int i = 0; i < 24; ++i) kinds.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  j["layer_types"] = kinds;
  return j.dump();
}

std::string edited(const std::string& text, const std::string& key, const char* value) {
  auto j = nlohmann::json::parse(text);
  if (value == nullptr) {
    j.erase(key);
  } else {
    j[key] = nlohmann::json::parse(value);
  }
  return j.dump();
}

TEST(GptOssConfig, TheReleased20bConfigReads) {
  const ModelConfig c = ModelConfig::from_json(gpt_oss_20b_config(), "config.json");
  EXPECT_TRUE(c.gpt_oss());
  EXPECT_EQ(c.hidden_size, 2880);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.q_size(), 4096) << "64 heads of 64: wider than hidden_size";
  EXPECT_TRUE(c.attention_bias);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c.rope_theta, 150000.0f);
  EXPECT_EQ(c.rope_scaling.type, RopeType::yarn);
  EXPECT_FLOAT_EQ(c.rope_scaling.factor, 32.0f);
  EXPECT_EQ(c.max_context_len(), 131072) << "4096 x 32";
  EXPECT_EQ(c.moe.num_experts, 32);
  EXPECT_EQ(c.moe.num_experts_per_tok, 4);
  EXPECT_EQ(c.moe.moe_intermediate_size, 2880) << "intermediate_size is one expert's width";
  EXPECT_TRUE(c.moe.norm_topk_prob) << "softmax over the top k = renormalised top k";
  EXPECT_TRUE(c.moe.gpt_oss_experts);
  EXPECT_FLOAT_EQ(c.moe.swiglu_limit, 7.0f);
  for (int32_t l = 0; l < 24; ++l) EXPECT_TRUE(c.moe.is_sparse_layer(l)) << l;
  EXPECT_EQ(c.layer_window(0), 128);
  EXPECT_EQ(c.layer_window(1), 0);
  EXPECT_EQ(c.layer_window(22), 128);
  EXPECT_EQ(c.layer_window(23), 0);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{200002});
}

TEST(GptOssConfig, DefaultsFollowGptOssConfig) {
  std::string text = gpt_oss_20b_config();
  for (const char* key : {"layer_types", "sliding_window", "swiglu_limit", "head_dim", "rope_theta",
                          "rms_norm_eps", "attention_bias", "num_experts_per_tok"}) {
    text = edited(text, key, nullptr);
  }
  const ModelConfig c = ModelConfig::from_json(text, "config.json");
  EXPECT_EQ(c.sliding_window, 128);
  ASSERT_EQ(c.layer_types.size(), 24u);
  EXPECT_EQ(c.layer_types[0], LayerType::sliding_attention) << "layer 0 slides";
  EXPECT_EQ(c.layer_types[1], LayerType::full_attention);
  EXPECT_FLOAT_EQ(c.moe.swiglu_limit, 7.0f);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_FLOAT_EQ(c.rope_theta, 150000.0f);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5f);
  EXPECT_TRUE(c.attention_bias);
  EXPECT_EQ(c.moe.num_experts_per_tok, 4) << "OpenAI's experts_per_token spelling";
}

TEST(GptOssConfig, ToJsonReadsBack) {
  ModelConfig c = ModelConfig::from_json(gpt_oss_20b_config(), "config.json");
  c.layer_types[2] = LayerType::full_attention;  // not the default pattern
  c.sliding_window = 64;
  c.moe.swiglu_limit = 5.5f;
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "written");
  EXPECT_TRUE(back.gpt_oss());
  EXPECT_EQ(back.layer_types, c.layer_types);
  EXPECT_EQ(back.sliding_window, 64);
  EXPECT_FLOAT_EQ(back.moe.swiglu_limit, 5.5f);
  EXPECT_EQ(back.moe.num_experts, 32);
  EXPECT_EQ(back.moe.num_experts_per_tok, 4);
  EXPECT_TRUE(back.moe.gpt_oss_experts);
  EXPECT_TRUE(back.attention_bias);
  EXPECT_EQ(back.rope_scaling.type, RopeType::yarn);
}

TEST(GptOssConfig, BadFieldsNameTheFileAndField) {
  const std::string base = gpt_oss_20b_config();
  EXPECT_NE(error_of(edited(base, "quantization_config", nullptr)).find("dequantized experts"),
            std::string::npos);
  EXPECT_NE(error_of(edited(base, "quantization_config", R"({"quant_method": "fp8"})"))
                .find("only quant_method \"mxfp4\""),
            std::string::npos);
  EXPECT_NE(error_of(edited(base, "num_local_experts", nullptr)).find("num_local_experts"),
            std::string::npos);
  EXPECT_NE(
      error_of(edited(edited(base, "num_experts_per_tok", nullptr), "experts_per_token", nullptr))
          .find("num_experts_per_tok"),
      std::string::npos);
  EXPECT_NE(error_of(edited(base, "num_experts_per_tok", "33")).find("num_experts_per_tok"),
            std::string::npos);
  EXPECT_NE(error_of(edited(base, "hidden_size", "2888")).find("multiples of 32"),
            std::string::npos);
  EXPECT_NE(error_of(edited(base, "intermediate_size", "100")).find("multiples of 32"),
            std::string::npos);
  EXPECT_NE(error_of(edited(base, "attention_bias", "false")).find("attention_bias false"),
            std::string::npos);
  EXPECT_NE(error_of(edited(base, "swiglu_limit", "-1")).find("swiglu_limit"), std::string::npos);
  EXPECT_NE(error_of(edited(base, "layer_types", R"(["full_attention"])")).find("layer_types"),
            std::string::npos);
  EXPECT_NE(error_of(edited(base, "sliding_window", "0")).find("sliding_window"),
            std::string::npos);
  const std::string e = error_of(edited(base, "quantization_config", nullptr));
  EXPECT_NE(e.find("/models/x/config.json"), std::string::npos) << e;
}

}  // namespace
}  // namespace ps
