// ModelConfig from Qwen3.5 config.json files (issue #35): the hybrid text model (qwen3_5_text)
// and the multimodal wrapper (qwen3_5) whose text_config it reads, the MoE qwen3_5_moe(_text) and
// Qwen3-Next (qwen3_next); bad fields fail at load naming the file and the field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config_text_util.h"
#include "model/model_config.h"
#include "model/rope_scaling.h"

namespace ps {
namespace {

using config_text::error_of;

// A Qwen3.5-0.8B-shaped text config as transformers v5 writes it: rope_parameters with MRoPE's
// sections, layer_types of three linear layers to one full one.
nlohmann::json qwen3_5_text_json(int layers = 24) {
  nlohmann::json types = nlohmann::json::array();
  for (int l = 0; l < layers; ++l) {
    types.push_back((l + 1) % 4 == 0 ? "full_attention" : "linear_attention");
  }
  auto j = nlohmann::json::parse(R"({
    "model_type": "qwen3_5_text", "hidden_size": 1024, "num_attention_heads": 8,
    "num_key_value_heads": 2, "head_dim": 256, "intermediate_size": 3584, "vocab_size": 248320,
    "max_position_embeddings": 262144, "rms_norm_eps": 1e-06, "hidden_act": "silu",
    "attention_bias": false, "attn_output_gate": true, "full_attention_interval": 4,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
    "linear_num_value_heads": 16, "linear_value_head_dim": 128, "tie_word_embeddings": true,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
                        "partial_rotary_factor": 0.25, "mrope_section": [11, 11, 10],
                        "mrope_interleaved": true},
    "eos_token_id": 248044})");
  j["num_hidden_layers"] = layers;
  j["layer_types"] = types;
  return j;
}

TEST(Qwen3_5Config, ReadsTheHybridLayout) {
  const ModelConfig c = ModelConfig::from_json(qwen3_5_text_json().dump(), "config.json");
  EXPECT_EQ(c.model_type, "qwen3_5_text");
  EXPECT_TRUE(c.hybrid_layout());
  EXPECT_TRUE(c.norms_add_one());
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.attn_output_gate);
  EXPECT_EQ(c.num_linear_layers(), 18);
  EXPECT_TRUE(c.layer_is_linear(0));
  EXPECT_FALSE(c.layer_is_linear(3));
  EXPECT_FALSE(c.layer_is_sliding(0));
  EXPECT_EQ(c.linear.conv_kernel, 4);
  EXPECT_EQ(c.linear.num_key_heads, 16);
  EXPECT_EQ(c.linear.num_value_heads, 16);
  EXPECT_EQ(c.linear.conv_dim(), 2 * 16 * 128 + 16 * 128);
  // Per sequence and layer: 3 conv inputs of 6144 channels and 16 heads of 128 x 128.
  EXPECT_EQ(c.linear.state_floats(), 6144 * 3 + 16 * 128 * 128);
  EXPECT_EQ(c.recurrent_state_bytes_per_slot(), 18LL * (6144 * 3 + 16 * 128 * 128) * 4);
  // MRoPE's sections over text positions are plain RoPE: a quarter of the head, base 1e7.
  EXPECT_FLOAT_EQ(c.partial_rotary_factor, 0.25f);
  EXPECT_FLOAT_EQ(c.rope_theta, 1e7f);
  EXPECT_EQ(c.rope_scaling.type, RopeType::none);
  EXPECT_EQ(rope_frequencies(c).rotary_dim, 64);
  EXPECT_TRUE(c.tie_word_embeddings);
}

TEST(Qwen3_5Config, MultimodalWrapperReadsItsTextConfig) {
  nlohmann::json top = {{"model_type", "qwen3_5"},
                        {"architectures", {"Qwen3_5ForConditionalGeneration"}},
                        {"text_config", qwen3_5_text_json(8)},
                        {"vision_config", {{"depth", 12}}},
                        {"tie_word_embeddings", false}};
  top["text_config"].erase("tie_word_embeddings");
  top["text_config"].erase("model_type");
  const ModelConfig c = ModelConfig::from_json(top.dump(), "config.json");
  EXPECT_EQ(c.model_type, "qwen3_5_text");
  EXPECT_EQ(c.num_hidden_layers, 8);
  EXPECT_EQ(c.num_linear_layers(), 6);
  EXPECT_FALSE(c.tie_word_embeddings);  // the top level's, where text_config is silent
  top["text_config"]["model_type"] = "qwen3_next";
  EXPECT_NE(error_of(top.dump()).find("text_config.model_type \"qwen3_next\" is not supported"),
            std::string::npos);
  top.erase("text_config");
  EXPECT_NE(error_of(top.dump()).find("qwen3_5 needs a \"text_config\" object"), std::string::npos);
}

TEST(Qwen3_5Config, WritesWhatItReadsBack) {
  const ModelConfig c = ModelConfig::from_json(qwen3_5_text_json(4).dump(), "config.json");
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "written");
  EXPECT_EQ(back.layer_types, c.layer_types);
  EXPECT_EQ(back.linear.state_floats(), c.linear.state_floats());
  EXPECT_EQ(back.linear.num_value_heads, c.linear.num_value_heads);
  EXPECT_FLOAT_EQ(back.partial_rotary_factor, 0.25f);
  EXPECT_TRUE(back.attn_output_gate);
}

TEST(Qwen3_5Config, BadFieldsNameTheFileAndField) {
  auto unknown = qwen3_5_text_json(4);
  unknown["layer_types"][1] = "mamba";
  auto sliding = qwen3_5_text_json(4);
  sliding["layer_types"][1] = "sliding_attention";
  auto short_list = qwen3_5_text_json(4);
  short_list["layer_types"] = {"full_attention"};
  auto no_types = qwen3_5_text_json(4);
  no_types.erase("layer_types");
  auto missing_value_dim = qwen3_5_text_json(4);
  missing_value_dim.erase("linear_value_head_dim");
  auto missing_kernel = qwen3_5_text_json(4);
  missing_kernel.erase("linear_conv_kernel_dim");
  auto heads = qwen3_5_text_json(4);
  heads["linear_num_value_heads"] = 24;  // not a multiple of 16 key heads
  auto zero = qwen3_5_text_json(4);
  zero["linear_key_head_dim"] = 0;
  auto no_gate = qwen3_5_text_json(4);
  no_gate["attn_output_gate"] = false;
  auto attn_heads = qwen3_5_text_json(4);
  attn_heads["num_key_value_heads"] = 3;
  auto act = qwen3_5_text_json(4);
  act["hidden_act"] = "gelu";
  const std::pair<nlohmann::json, std::string> bad[] = {
      {unknown, "layer_types[1] is \"mamba\""},
      {sliding, "layer_types[1] is \"sliding_attention\""},
      {short_list, "layer_types must be a list of num_hidden_layers (4) entries"},
      {no_types, "missing required field \"layer_types\""},
      {missing_value_dim, "missing required field \"linear_value_head_dim\""},
      {missing_kernel, "missing required field \"linear_conv_kernel_dim\""},
      {heads, "linear_num_value_heads (24) must be a multiple of linear_num_key_heads (16)"},
      {zero, "\"linear_key_head_dim\" must be a positive integer"},
      {no_gate, "attn_output_gate false is not supported"},
      {attn_heads, "must be a multiple of num_key_value_heads"},
      {act, "hidden_act \"gelu\" is not supported"},
  };
  for (const auto& [j, expected] : bad) {
    const std::string msg = error_of(j.dump());
    EXPECT_NE(msg.find("/models/x/config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << expected << " in: " << msg;
  }
}

// Another family's config keeps its own layers: linear_* fields do not make it hybrid, and a
// hand-built config that mixes them is refused.
TEST(Qwen3_5Config, OtherFamiliesHaveNoLinearLayers) {
  auto qwen3 = qwen3_5_text_json(4);
  qwen3["model_type"] = "qwen3";
  const ModelConfig c = ModelConfig::from_json(qwen3.dump(), "config.json");
  EXPECT_EQ(c.num_linear_layers(), 0);
  EXPECT_FALSE(c.norms_add_one());
  ModelConfig mixed = c;
  mixed.layer_types.assign(4, LayerType::linear_attention);
  try {
    mixed.validate("hand-built");
    ADD_FAILURE() << "a qwen3 config with linear layers validated";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("only read for"), std::string::npos) << e.what();
  }
}

// Qwen3-Next-80B-A3B's config.json shape (smaller): no layer_types, the full-attention layers
// follow from full_attention_interval; top-level rope_theta and partial_rotary_factor; routed
// experts with one sigmoid-gated shared expert.
nlohmann::json qwen3_next_json() {
  auto j = qwen3_5_text_json(8);
  j.erase("layer_types");
  j.erase("rope_parameters");
  j.erase("attn_output_gate");
  j["model_type"] = "qwen3_next";
  j["rope_theta"] = 10000000;
  j["partial_rotary_factor"] = 0.25;
  j["num_experts"] = 16;
  j["num_experts_per_tok"] = 4;
  j["moe_intermediate_size"] = 128;
  j["shared_expert_intermediate_size"] = 256;
  j["decoder_sparse_step"] = 1;
  j["mlp_only_layers"] = {1};
  return j;
}

TEST(Qwen3NextConfig, DerivesLayerTypesAndReadsTheGatedSharedExpert) {
  const ModelConfig c = ModelConfig::from_json(qwen3_next_json().dump(), "config.json");
  EXPECT_EQ(c.model_type, "qwen3_next");
  EXPECT_TRUE(c.hybrid_layout());
  EXPECT_TRUE(c.norms_add_one());
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.attn_output_gate);  // Qwen3-Next always gates; its config has no field for it
  EXPECT_EQ(c.num_linear_layers(), 6);
  for (int32_t l = 0; l < 8; ++l) EXPECT_EQ(c.layer_is_linear(l), l != 3 && l != 7) << l;
  EXPECT_FLOAT_EQ(c.partial_rotary_factor, 0.25f);
  EXPECT_FLOAT_EQ(c.rope_theta, 1e7f);
  EXPECT_EQ(c.moe.num_experts, 16);
  EXPECT_EQ(c.moe.shared_expert_intermediate_size, 256);
  EXPECT_TRUE(c.moe.norm_topk_prob);       // Qwen3NextConfig's default, unlike Qwen3-MoE's
  EXPECT_FALSE(c.moe.is_sparse_layer(1));  // mlp_only_layers: the dense intermediate_size MLP
  EXPECT_TRUE(c.moe.is_sparse_layer(0));
  // Router, 4 of 16 experts, the shared expert and its gate.
  EXPECT_EQ(mlp_params(c, 0, true), 1024LL * 16 + 4 * 3 * 1024 * 128 + 3 * 1024 * 256 + 1024);

  auto every_other = qwen3_next_json();
  every_other["full_attention_interval"] = 2;
  every_other.erase("mlp_only_layers");
  const ModelConfig e = ModelConfig::from_json(every_other.dump(), "config.json");
  EXPECT_EQ(e.num_linear_layers(), 4);
  EXPECT_FALSE(e.layer_is_linear(1));
  auto no_interval = qwen3_next_json();
  no_interval.erase("full_attention_interval");  // Qwen3NextConfig's default: every 4th
  EXPECT_EQ(ModelConfig::from_json(no_interval.dump(), "config.json").num_linear_layers(), 6);

  // Written back, the config reads the same.
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "written");
  EXPECT_EQ(back.layer_types, c.layer_types);
  EXPECT_EQ(back.moe.shared_expert_intermediate_size, 256);
  EXPECT_EQ(back.moe.mlp_only_layers, c.moe.mlp_only_layers);

  auto no_shared = qwen3_next_json();
  no_shared.erase("shared_expert_intermediate_size");
  auto zero_interval = qwen3_next_json();
  zero_interval["full_attention_interval"] = 0;
  auto no_experts = qwen3_next_json();
  no_experts.erase("num_experts");
  const std::pair<nlohmann::json, std::string> bad[] = {
      {no_shared, "missing required field \"shared_expert_intermediate_size\""},
      {zero_interval, "\"full_attention_interval\" must be a positive integer"},
      {no_experts, "missing required field \"num_experts\""},
  };
  for (const auto& [j, expected] : bad) {
    const std::string msg = error_of(j.dump());
    EXPECT_NE(msg.find("/models/x/config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << expected << " in: " << msg;
  }
}

// Qwen3.5-35B-A3B's shape (smaller): the multimodal qwen3_5_moe wrapper, a text_config without
// intermediate_size (no dense MLP), every layer sparse.
TEST(Qwen3_5MoeConfig, ReadsTheWrapperAndMakesEveryLayerSparse) {
  auto text = qwen3_5_text_json(4);
  text.erase("intermediate_size");
  text["model_type"] = "qwen3_5_moe_text";
  text["num_experts"] = 8;
  text["num_experts_per_tok"] = 2;
  text["moe_intermediate_size"] = 64;
  text["shared_expert_intermediate_size"] = 96;
  text.erase("eos_token_id");
  const nlohmann::json top = {{"model_type", "qwen3_5_moe"},
                              {"eos_token_id", 248046},
                              {"text_config", text},
                              {"vision_config", {{"depth", 2}}}};
  const ModelConfig c = ModelConfig::from_json(top.dump(), "config.json");
  EXPECT_EQ(c.model_type, "qwen3_5_moe_text");
  EXPECT_TRUE(c.hybrid_layout());
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{248046}));
  EXPECT_EQ(c.num_linear_layers(), 3);
  for (int32_t l = 0; l < 4; ++l) EXPECT_TRUE(c.moe.is_sparse_layer(l)) << l;
  EXPECT_TRUE(c.moe.norm_topk_prob);
  EXPECT_EQ(c.moe.shared_expert_intermediate_size, 96);

  auto other_text = top;
  other_text["text_config"]["model_type"] = "qwen3_5_text";
  auto no_renorm = top;
  no_renorm["text_config"]["norm_topk_prob"] = false;
  auto no_experts = top;
  no_experts["text_config"].erase("num_experts");
  const std::pair<nlohmann::json, std::string> bad[] = {
      {other_text,
       "text_config.model_type \"qwen3_5_text\" is not supported (qwen3_5_moe's is "
       "qwen3_5_moe_text)"},
      {no_renorm, "norm_topk_prob false is not a qwen3_5_moe_text option"},
      {no_experts, "missing required field \"num_experts\""},
  };
  for (const auto& [j, expected] : bad) {
    const std::string msg = error_of(j.dump());
    EXPECT_NE(msg.find(expected), std::string::npos) << expected << " in: " << msg;
  }
}

}  // namespace
}  // namespace ps
