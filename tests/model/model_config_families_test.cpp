// ModelConfig from the config.json files of the families with per-layer or fused layouts
// (issue #34): Phi-3/Phi-4-mini, Gemma 3 (text and multimodal) and Gemma 2.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config_text_util.h"
#include "model/layer_types.h"
#include "model/model_config.h"

namespace ps {
namespace {

using config_text::error_of;
using config_text::kLlama;
using config_text::with;

// Phi-4-mini's config.json (microsoft/Phi-4-mini-instruct), its 48 LongRoPE factors shortened
// to a pattern of the same length.
std::string phi4_mini_config() {
  nlohmann::json factors = nlohmann::json::array();
  nlohmann::json long_factors = nlohmann::json::array();
  for (int i = 0; i < 48; ++i) {
    factors.push_back(1.0 + 0.01 * i);
    long_factors.push_back(1.0 + i);
  }
  auto j = nlohmann::json::parse(R"({
    "architectures": ["Phi3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 199999, "embd_pdrop": 0.0, "eos_token_id": 199999, "full_attn_mod": 1,
    "hidden_act": "silu", "hidden_size": 3072, "initializer_range": 0.02,
    "intermediate_size": 8192, "interpolate_factor": 1, "lm_head_bias": false,
    "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "phi3",
    "num_attention_heads": 24, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "original_max_position_embeddings": 4096, "pad_token_id": 199999,
    "partial_rotary_factor": 0.75, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05,
    "rope_scaling": {"type": "longrope"}, "rope_theta": 10000.0, "sliding_window": 262144,
    "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true,
    "vocab_size": 200064})");
  j["rope_scaling"]["short_factor"] = factors;
  j["rope_scaling"]["long_factor"] = long_factors;
  return j.dump();
}

TEST(ModelConfig, Phi3ReadsPartialRotaryAndLongRope) {
  const ModelConfig c = ModelConfig::from_json(phi4_mini_config(), "config.json");
  EXPECT_EQ(c.model_type, "phi3");
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_FLOAT_EQ(c.partial_rotary_factor, 0.75f);
  EXPECT_EQ(c.rope_scaling.type, RopeType::longrope);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 4096) << "read from the top level";
  EXPECT_EQ(c.rope_scaling.short_factor.size(), 48u);
  EXPECT_EQ(c.max_position_embeddings, 131072) << "a window past the context caps nothing";
  EXPECT_EQ(c.max_context_len(), 131072);
  // The served context picks the factors: long past the pretrained 4096, short within it.
  EXPECT_TRUE(uses_long_rope_factors(c));
  ModelConfig short_ctx = c;
  short_ctx.rope_context_len = 4096;
  EXPECT_FALSE(uses_long_rope_factors(short_ctx));
  const RopeFrequencies lf = rope_frequencies(c), sf = rope_frequencies(short_ctx);
  EXPECT_EQ(lf.rotary_dim, 96);
  EXPECT_FLOAT_EQ(lf.inv_freq[47] * 48.0f, sf.inv_freq[47] * 1.47f) << "ext factors 48 vs 1.47";
  // HF: attention factor sqrt(1 + ln(131072 / 4096) / ln(4096)) for both sets.
  EXPECT_NEAR(lf.attention_factor, std::sqrt(1.0 + std::log(32.0) / std::log(4096.0)), 1e-6);
  EXPECT_EQ(lf.attention_factor, sf.attention_factor);
  // Phi3Config's defaults: rms_norm_eps 1e-5, untied.
  auto j = nlohmann::json::parse(phi4_mini_config());
  j.erase("rms_norm_eps");
  j.erase("tie_word_embeddings");
  const ModelConfig d = ModelConfig::from_json(j.dump(), "config.json");
  EXPECT_FLOAT_EQ(d.rms_norm_eps, 1e-5f);
  EXPECT_FALSE(d.tie_word_embeddings);
  // Phi-3-mini-4k's window (2047) below its context caps the context (as for Mistral).
  j["sliding_window"] = 2047;
  j["max_position_embeddings"] = 4096;
  j["rope_scaling"] = nullptr;
  j["partial_rotary_factor"] = 1.0;
  EXPECT_EQ(ModelConfig::from_json(j.dump(), "config.json").max_context_len(), 2047);
  // Written back (the original context at the top level, as Phi-3 writes it) and read again.
  const std::string text = c.to_json();
  const auto written = nlohmann::json::parse(text);
  EXPECT_EQ(written.at("original_max_position_embeddings"), 4096);
  EXPECT_FALSE(written.at("rope_scaling").contains("original_max_position_embeddings"));
  EXPECT_FALSE(written.at("rope_scaling").contains("factor")) << "unstated: the ratio applies";
  const ModelConfig back = ModelConfig::from_json(text, "roundtrip");
  EXPECT_EQ(back.rope_scaling, c.rope_scaling);
  EXPECT_EQ(back.partial_rotary_factor, c.partial_rotary_factor);
  EXPECT_EQ(back.model_type, "phi3");
}

TEST(ModelConfig, Phi3BadFieldsNameTheFileAndField) {
  const std::string good = phi4_mini_config();
  auto short_list = nlohmann::json::parse(good);
  short_list["rope_scaling"]["long_factor"] = {1.0, 2.0};
  auto negative = nlohmann::json::parse(good);
  negative["rope_scaling"]["short_factor"][3] = -1.0;
  auto not_list = nlohmann::json::parse(good);
  not_list["rope_scaling"]["short_factor"] = 1.0;
  auto no_long = nlohmann::json::parse(good);
  no_long["rope_scaling"].erase("long_factor");
  const std::pair<std::string, std::string> bad[] = {
      {short_list.dump(), "need rotary_dim / 2 = 48 entries each, got 48 and 2"},
      {negative.dump(), "field \"short_factor\" must hold positive numbers, got -1"},
      {not_list.dump(), "field \"short_factor\" must be a list of numbers"},
      {no_long.dump(), "longrope is missing required field \"long_factor\""},
      {with(good.c_str(), "lm_head_bias", "true"), "lm_head_bias true is not supported"},
      {with(good.c_str(), "attention_bias", "true"), "attention_bias true is not supported"},
      {with(good.c_str(), "hidden_act", "\"gelu\""), "hidden_act"},
      {with(good.c_str(), "original_max_position_embeddings", "0"),
       "\"original_max_position_embeddings\" must be positive"},
  };
  for (const auto& [text, expected] : bad) {
    const std::string msg = error_of(text);
    EXPECT_NE(msg.find("/models/x/config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << expected << " in: " << msg;
  }
}

// google/gemma-3-1b-it's config.json: the layer kinds from sliding_window_pattern.
constexpr const char* kGemma3_1b = R"({
  "architectures": ["Gemma3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "attn_logit_softcapping": null, "bos_token_id": 2, "cache_implementation": "hybrid",
  "eos_token_id": [1, 106], "final_logit_softcapping": null, "head_dim": 256,
  "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "initializer_range": 0.02,
  "intermediate_size": 6912, "max_position_embeddings": 32768, "model_type": "gemma3_text",
  "num_attention_heads": 4, "num_hidden_layers": 26, "num_key_value_heads": 1,
  "pad_token_id": 0, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
  "rope_local_base_freq": 10000, "rope_scaling": null, "rope_theta": 1000000,
  "sliding_window": 512, "sliding_window_pattern": 6, "torch_dtype": "bfloat16",
  "transformers_version": "4.50.0.dev0", "use_cache": true, "vocab_size": 262144})";

TEST(ModelConfig, Gemma3ReadsItsLayerKinds) {
  const ModelConfig c = ModelConfig::from_json(kGemma3_1b, "config.json");
  EXPECT_EQ(c.model_type, "gemma3_text");
  EXPECT_TRUE(c.gemma_layout());
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.tie_word_embeddings) << "Gemma ties by default";
  EXPECT_EQ(c.sliding_window, 512);
  EXPECT_EQ(c.max_context_len(), 32768) << "the window caps nothing: the global layers see all";
  ASSERT_EQ(c.layer_types.size(), 26u);
  for (int32_t l = 0; l < 26; ++l) {
    EXPECT_EQ(c.layer_is_sliding(l), (l + 1) % 6 != 0) << l;
    EXPECT_EQ(c.layer_window(l), (l + 1) % 6 != 0 ? 512 : 0) << l;
  }
  EXPECT_FLOAT_EQ(c.attention_scale(), 1.0f / 16.0f);
  EXPECT_FLOAT_EQ(c.rope_theta, 1e6f);
  EXPECT_FLOAT_EQ(c.rope_local_base_freq, 10000.0f);
  // The sliding layers' RoPE: the local base, unscaled; the global one keeps its scaling.
  auto j = nlohmann::json::parse(kGemma3_1b);
  j["rope_scaling"] = nlohmann::json::parse(R"({"rope_type": "linear", "factor": 8.0})");
  j["max_position_embeddings"] = 131072;
  const ModelConfig scaled = ModelConfig::from_json(j.dump(), "config.json");
  EXPECT_EQ(scaled.max_context_len(), 131072) << "Gemma 3 states its scaled context";
  const RopeFrequencies global = rope_frequencies(scaled), local = sliding_rope_frequencies(scaled);
  EXPECT_FLOAT_EQ(global.inv_freq[1], 1.0f / (8.0f * std::pow(1e6f, 2.0f / 256.0f)));
  EXPECT_FLOAT_EQ(local.inv_freq[1], 1.0f / std::pow(1e4f, 2.0f / 256.0f));
  // An explicit layer_types list wins over the pattern (Gemma 3 270M writes one).
  j = nlohmann::json::parse(kGemma3_1b);
  j["num_hidden_layers"] = 3;
  j["layer_types"] = {"full_attention", "sliding_attention", "full_attention"};
  const ModelConfig listed = ModelConfig::from_json(j.dump(), "config.json");
  EXPECT_FALSE(listed.layer_is_sliding(0));
  EXPECT_TRUE(listed.layer_is_sliding(1));
  // Written back and read again.
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "roundtrip");
  EXPECT_EQ(back.layer_types, c.layer_types);
  EXPECT_EQ(back.sliding_window, 512);
  EXPECT_EQ(back.query_pre_attn_scalar, 256.0f);
  EXPECT_EQ(back.rope_local_base_freq, 10000.0f);
  // Other families have no per-layer kinds.
  EXPECT_TRUE(ModelConfig::from_json(kLlama, "config.json").layer_types.empty());
}

// google/gemma-3-4b-it's config.json: a multimodal wrapper whose text_config states six fields
// and leaves the rest to Gemma3TextConfig's defaults.
constexpr const char* kGemma3_4b = R"({
  "architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999,
  "eoi_token_index": 256000, "eos_token_id": [1, 106], "image_token_index": 262144,
  "initializer_range": 0.02, "mm_tokens_per_image": 256, "model_type": "gemma3",
  "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                  "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                  "sliding_window": 1024},
  "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
  "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                    "model_type": "siglip_vision_model", "num_attention_heads": 16,
                    "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": false}})";

TEST(ModelConfig, Gemma3MultimodalReadsItsTextConfigWithDefaults) {
  const ModelConfig c = ModelConfig::from_json(kGemma3_4b, "config.json");
  EXPECT_EQ(c.model_type, "gemma3_text");
  EXPECT_EQ(c.hidden_size, 2560);
  EXPECT_EQ(c.num_hidden_layers, 34);
  EXPECT_EQ(c.num_attention_heads, 8) << "Gemma3TextConfig's default";
  EXPECT_EQ(c.num_key_value_heads, 4);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.vocab_size, 262208);
  EXPECT_EQ(c.max_position_embeddings, 131072);
  EXPECT_EQ(c.sliding_window, 1024);
  EXPECT_FLOAT_EQ(c.query_pre_attn_scalar, 256.0f);
  EXPECT_FLOAT_EQ(c.rope_theta, 1e6f);
  EXPECT_EQ(c.rope_scaling.type, RopeType::linear);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{1, 106})) << "from the top level";
  EXPECT_TRUE(c.layer_is_sliding(0));
  EXPECT_FALSE(c.layer_is_sliding(5));
  auto j = nlohmann::json::parse(kGemma3_4b);
  j.erase("text_config");
  EXPECT_NE(error_of(j.dump()).find("model_type gemma3 needs a \"text_config\" object"),
            std::string::npos);
  j = nlohmann::json::parse(kGemma3_4b);
  j["text_config"]["model_type"] = "gemma2";
  EXPECT_NE(error_of(j.dump()).find("text_config.model_type \"gemma2\" is not supported"),
            std::string::npos);
  j = nlohmann::json::parse(kGemma3_4b);
  j["text_config"]["layer_types"] = {"global"};
  const std::string msg = error_of(j.dump());
  EXPECT_NE(msg.find("/models/x/config.json text_config: layer_types must be a list"),
            std::string::npos)
      << msg;
}

// google/gemma-2-2b-it's config.json.
constexpr const char* kGemma2_2b = R"({
  "architectures": ["Gemma2ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "attn_logit_softcapping": 50.0, "bos_token_id": 2, "cache_implementation": "hybrid",
  "eos_token_id": [1, 107], "final_logit_softcapping": 30.0, "head_dim": 256,
  "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
  "hidden_size": 2304, "initializer_range": 0.02, "intermediate_size": 9216,
  "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 8,
  "num_hidden_layers": 26, "num_key_value_heads": 4, "pad_token_id": 0,
  "query_pre_attn_scalar": 224, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
  "sliding_window": 4096, "torch_dtype": "float32", "transformers_version": "4.42.4",
  "use_cache": true, "vocab_size": 256000})";

TEST(ModelConfig, Gemma2ReadsSoftCapsAndAlternatingLayers) {
  const ModelConfig c = ModelConfig::from_json(kGemma2_2b, "config.json");
  EXPECT_EQ(c.model_type, "gemma2");
  EXPECT_TRUE(c.gemma_layout());
  EXPECT_FALSE(c.qk_norm) << "Gemma 2 has no q/k norms";
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_FLOAT_EQ(c.attn_logit_softcapping, 50.0f);
  EXPECT_FLOAT_EQ(c.final_logit_softcapping, 30.0f);
  EXPECT_FLOAT_EQ(c.attention_scale(), 1.0f / std::sqrt(224.0f));
  for (int32_t l = 0; l < 26; ++l) EXPECT_EQ(c.layer_is_sliding(l), l % 2 == 0) << l;
  // One RoPE base for both kinds.
  EXPECT_EQ(sliding_rope_frequencies(c).inv_freq, rope_frequencies(c).inv_freq);
  // Absent caps are Gemma2Config's defaults; null ones mean none.
  auto j = nlohmann::json::parse(kGemma2_2b);
  j.erase("attn_logit_softcapping");
  j["final_logit_softcapping"] = nullptr;
  const ModelConfig d = ModelConfig::from_json(j.dump(), "config.json");
  EXPECT_FLOAT_EQ(d.attn_logit_softcapping, 50.0f);
  EXPECT_FLOAT_EQ(d.final_logit_softcapping, 0.0f);
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "roundtrip");
  EXPECT_EQ(back.layer_types, c.layer_types);
  EXPECT_EQ(back.attn_logit_softcapping, 50.0f);
  EXPECT_EQ(back.final_logit_softcapping, 30.0f);
  EXPECT_EQ(back.query_pre_attn_scalar, 224.0f);
  EXPECT_NE(error_of(with(kGemma2_2b, "final_logit_softcapping", "-1"))
                .find("\"final_logit_softcapping\" must be a positive number"),
            std::string::npos);
}

TEST(ModelConfig, Gemma3BadFieldsNameTheFileAndField) {
  auto three = nlohmann::json::parse(kGemma3_1b);
  three["num_hidden_layers"] = 3;
  auto unknown = three;
  unknown["layer_types"] = {"full_attention", "chunked_attention", "full_attention"};
  auto short_list = three;
  short_list["layer_types"] = {"full_attention"};
  const std::pair<std::string, std::string> bad[] = {
      {unknown.dump(), "layer_types[1] is \"chunked_attention\""},
      {short_list.dump(), "layer_types must be a list of num_hidden_layers (3) entries"},
      {with(kGemma3_1b, "final_logit_softcapping", "30.0"),
       "final_logit_softcapping 30.0 is not supported for gemma3_text"},
      {with(kGemma3_1b, "attn_logit_softcapping", "50.0"), "attn_logit_softcapping 50.0 is not"},
      {with(kGemma3_1b, "hidden_activation", "\"gelu\""), "hidden_activation \"gelu\" is not"},
      {with(kGemma3_1b, "sliding_window", "0"), "sliding_window must be a positive integer"},
      {with(kGemma3_1b, "sliding_window_pattern", "-1"), "sliding_window_pattern must be a"},
      {with(kGemma3_1b, "query_pre_attn_scalar", "\"x\""), "\"query_pre_attn_scalar\" must be"},
      {with(kGemma3_1b, "use_bidirectional_attention", "true"), "use_bidirectional_attention"},
      {with(kGemma3_1b, "attention_bias", "true"), "attention_bias true is not supported"},
  };
  for (const auto& [text, expected] : bad) {
    const std::string msg = error_of(text);
    EXPECT_NE(msg.find("/models/x/config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << expected << " in: " << msg;
  }
}

}  // namespace
}  // namespace ps
