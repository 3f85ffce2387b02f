// ModelConfig from Hugging Face config.json files of the four supported families.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "config_text_util.h"
#include "model/layer_types.h"
#include "model/model_config.h"
#include "tiny_test_util.h"

namespace ps {
namespace {

using config_text::error_of;
using config_text::kLlama;
using config_text::with;

using testutil::TempDir;
using testutil::write_file;

// The shape of Qwen3-0.6B's config.json: head_dim explicit and not hidden / heads.
constexpr const char* kQwen3 = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3",
  "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000,
  "sliding_window": null, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

// Qwen2.5-0.5B: no head_dim, q/k/v biases implied by the family, a window that is not used.
constexpr const char* kQwen2 = R"({
  "architectures": ["Qwen2ForCausalLM"], "bos_token_id": 151643, "eos_token_id": 151643,
  "hidden_act": "silu", "hidden_size": 896, "intermediate_size": 4864,
  "max_position_embeddings": 32768, "max_window_layers": 24, "model_type": "qwen2",
  "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
  "tie_word_embeddings": true, "use_sliding_window": false, "vocab_size": 151936})";

// Mistral-7B-v0.1: a 4096-token sliding window, no rope_theta (library default 10000).
constexpr const char* kMistral = R"({
  "architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "sliding_window": 4096, "tie_word_embeddings": false, "vocab_size": 32000})";

TEST(ModelConfig, Qwen3) {
  const ModelConfig c = ModelConfig::from_json(kQwen3, "config.json");
  EXPECT_EQ(c.model_type, "qwen3");
  EXPECT_EQ(c.hidden_size, 1024);
  EXPECT_EQ(c.num_hidden_layers, 28);
  EXPECT_EQ(c.num_attention_heads, 16);
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.head_dim, 128);  // explicit, not 1024 / 16
  EXPECT_EQ(c.q_size(), 2048);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.vocab_size, 151936);
  EXPECT_EQ(c.max_position_embeddings, 40960);
  EXPECT_FLOAT_EQ(c.rope_theta, 1e6f);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-6f);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{151645});
  EXPECT_EQ(c.bos_token_id, 151643);
}

TEST(ModelConfig, Qwen2DerivesHeadDimAndHasBiases) {
  const ModelConfig c = ModelConfig::from_json(kQwen2, "config.json");
  EXPECT_EQ(c.head_dim, 64);  // 896 / 14
  EXPECT_TRUE(c.attention_bias);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_EQ(c.max_position_embeddings, 32768);  // use_sliding_window is false
  const ModelConfig windowed = ModelConfig::from_json(
      with(with(kQwen2, "use_sliding_window", "true").c_str(), "sliding_window", "1024"), "c");
  EXPECT_EQ(windowed.max_position_embeddings, 1024);
}

TEST(ModelConfig, LlamaDefaultsToUntiedWhenUnstated) {
  const ModelConfig c = ModelConfig::from_json(kLlama, "config.json");
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.tie_word_embeddings_stated);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_FLOAT_EQ(c.rms_norm_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c.rope_theta, 10000.0f);
  EXPECT_EQ(c.num_key_value_heads, 4);
}

TEST(ModelConfig, MistralSlidingWindowCapsTheContext) {
  const ModelConfig c = ModelConfig::from_json(kMistral, "config.json");
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_TRUE(c.tie_word_embeddings_stated);
  EXPECT_FLOAT_EQ(c.rope_theta, 10000.0f);
  EXPECT_EQ(c.max_position_embeddings, 4096);
  const ModelConfig no_window =
      ModelConfig::from_json(with(kMistral, "sliding_window", "null"), "config.json");
  EXPECT_EQ(no_window.max_position_embeddings, 32768);
}

TEST(ModelConfig, KvHeadsDefaultToAttentionHeads) {
  auto j = nlohmann::json::parse(kLlama);
  j.erase("num_key_value_heads");
  EXPECT_EQ(ModelConfig::from_json(j.dump(), "c").num_key_value_heads, 32);
}

TEST(ModelConfig, UnsupportedInputsNameTheFileAndField) {
  const std::string file = "/models/x/config.json";
  struct Case {
    std::string text;
    std::string expected;
  };
  auto no_hidden = nlohmann::json::parse(kLlama);
  no_hidden.erase("hidden_size");
  const Case cases[] = {
      {with(kLlama, "model_type", "\"gpt2\""), "model_type \"gpt2\" is not supported"},
      {with(kLlama, "rope_scaling", R"({"type": "su", "factor": 4.0})"),
       "rope_scaling type \"su\" is not supported"},
      {with(kLlama, "rope_scaling", R"({"type": "longrope", "factor": 4.0})"),
       "longrope is missing required field \"short_factor\""},
      {with(kLlama, "rope_scaling", R"({"rope_type": "llama3", "factor": 8.0})"),
       "missing required field \"low_freq_factor\""},
      {"{\"model_type\": \"llama\",", "invalid JSON"},
      {"[1, 2]", "JSON object"},
      {no_hidden.dump(), "\"hidden_size\""},
      {with(kLlama, "hidden_size", "\"big\""), "\"hidden_size\" must be an integer"},
      {with(kLlama, "num_key_value_heads", "5"), "multiple of num_key_value_heads"},
      {with(with(kLlama, "hidden_size", "2050").c_str(), "num_attention_heads", "32"),
       "not divisible"},
      {with(kLlama, "hidden_act", "\"gelu\""), "hidden_act"},
      {with(kLlama, "attention_bias", "true"), "attention_bias"},
      {with(kLlama, "mlp_bias", "true"), "mlp_bias"},
      {with(kLlama, "vocab_size", "0"), "\"vocab_size\" must be positive"},
      {with(kLlama, "tie_word_embeddings", "\"yes\""), "tie_word_embeddings"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of(c.text);
    EXPECT_NE(msg.find(file), std::string::npos) << "case " << c.expected << ": " << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << msg;
  }
}

// SmolLM3-3B's config.json (issue #34): Llama's layout, tied embeddings, every fourth layer NoPE.
constexpr const char* kSmolLM3 = R"({
  "architectures": ["SmolLM3ForCausalLM"], "attention_bias": false, "bos_token_id": null,
  "eos_token_id": 128012, "hidden_act": "silu", "hidden_size": 2048,
  "intermediate_size": 11008, "max_position_embeddings": 65536, "mlp_bias": false,
  "model_type": "smollm3", "no_rope_layer_interval": 4,
  "no_rope_layers": [1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0,
                     1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0],
  "num_attention_heads": 16, "num_hidden_layers": 36, "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 5000000.0,
  "sliding_window": null, "use_sliding_window": false, "vocab_size": 128256})";

TEST(ModelConfig, SmolLM3ReadsItsNoPELayers) {
  const ModelConfig c = ModelConfig::from_json(kSmolLM3, "config.json");
  EXPECT_EQ(c.model_type, "smollm3");
  EXPECT_TRUE(c.tie_word_embeddings) << "SmolLM3 ties by default";
  EXPECT_FALSE(c.qk_norm);
  ASSERT_EQ(c.rope_layers.size(), 36u);
  for (int32_t l = 0; l < 36; ++l) EXPECT_EQ(c.layer_uses_rope(l), (l + 1) % 4 != 0) << l;
  // Without the list, every no_rope_layer_interval-th layer is NoPE (transformers' default).
  auto j = nlohmann::json::parse(kSmolLM3);
  j.erase("no_rope_layers");
  j["no_rope_layer_interval"] = 3;
  j.erase("rope_theta");
  const ModelConfig d = ModelConfig::from_json(j.dump(), "config.json");
  EXPECT_FALSE(d.layer_uses_rope(2));
  EXPECT_TRUE(d.layer_uses_rope(3));
  EXPECT_FLOAT_EQ(d.rope_theta, 2e6f) << "SmolLM3Config's default base";
  // Written back and read again.
  const ModelConfig back = ModelConfig::from_json(c.to_json(), "roundtrip");
  EXPECT_EQ(back.rope_layers, c.rope_layers);
  // Other families never apply per-layer RoPE.
  EXPECT_TRUE(ModelConfig::from_json(kLlama, "config.json").rope_layers.empty());
  const std::pair<std::string, std::string> bad[] = {
      {with(kSmolLM3, "no_rope_layers", "[1, 0]"), "no_rope_layers must be a list of at least"},
      {with(kSmolLM3, "no_rope_layers", "\"all\""), "no_rope_layers must be a list"},
      {with(kSmolLM3, "no_rope_layers",
            "[2, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, "
            "1, "
            "1, 1, 0, 1, 1, 1, 0]"),
       "no_rope_layers[0] is 2"},
      {with(kSmolLM3, "use_sliding_window", "true"), "use_sliding_window true is not supported"},
      {with(kSmolLM3, "mlp_bias", "true"), "mlp_bias"},
  };
  for (const auto& [text, expected] : bad) {
    const std::string msg = error_of(text);
    EXPECT_NE(msg.find("/models/x/config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  }
}

TEST(ModelConfig, DefaultRopeScalingIsAccepted) {
  EXPECT_EQ(error_of(with(kLlama, "rope_scaling", R"({"rope_type": "default"})")), "");
}

TEST(ModelConfig, FromDirTakesEosFromGenerationConfig) {
  TempDir dir;
  write_file(dir.file("config.json"), kQwen3);
  EXPECT_EQ(ModelConfig::from_dir(dir.path()).eos_token_ids, std::vector<int32_t>{151645});
  write_file(dir.file("generation_config.json"),
             R"({"bos_token_id": 151643, "eos_token_id": [151645, 151643]})");
  const ModelConfig c = ModelConfig::from_dir(dir.path());
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  // Without eos in generation_config.json, config.json's stays.
  write_file(dir.file("generation_config.json"), R"({"do_sample": true})");
  EXPECT_EQ(ModelConfig::from_dir(dir.path()).eos_token_ids, std::vector<int32_t>{151645});
}

TEST(ModelConfig, FromDirErrorsNameTheFile) {
  TempDir dir;
  auto msg_of = [&]() -> std::string {
    try {
      ModelConfig::from_dir(dir.path());
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(msg_of().find(dir.file("config.json")), std::string::npos);
  write_file(dir.file("config.json"), kQwen3);
  write_file(dir.file("generation_config.json"), "{oops");
  EXPECT_NE(msg_of().find(dir.file("generation_config.json")), std::string::npos);
  write_file(dir.file("generation_config.json"), R"({"eos_token_id": 999999})");
  EXPECT_NE(msg_of().find("outside the vocabulary"), std::string::npos);
}

TEST(ModelConfig, ToJsonRoundTripsEveryFamily) {
  for (const char* type : {"qwen3", "qwen2", "llama", "mistral"}) {
    ModelConfig c = testutil::small_config(type);
    c.tie_word_embeddings = std::string(type) != "llama";
    c.rms_norm_eps = 1e-5f;
    c.rope_theta = 500000.0f;
    c.eos_token_ids = {2, 0};
    const ModelConfig back = ModelConfig::from_json(c.to_json(), "roundtrip");
    EXPECT_EQ(back.model_type, c.model_type);
    EXPECT_EQ(back.hidden_size, c.hidden_size);
    EXPECT_EQ(back.num_hidden_layers, c.num_hidden_layers);
    EXPECT_EQ(back.num_attention_heads, c.num_attention_heads);
    EXPECT_EQ(back.num_key_value_heads, c.num_key_value_heads);
    EXPECT_EQ(back.head_dim, c.head_dim);
    EXPECT_EQ(back.intermediate_size, c.intermediate_size);
    EXPECT_EQ(back.vocab_size, c.vocab_size);
    EXPECT_EQ(back.max_position_embeddings, c.max_position_embeddings);
    EXPECT_EQ(back.rope_theta, c.rope_theta);
    EXPECT_EQ(back.rms_norm_eps, c.rms_norm_eps);
    EXPECT_EQ(back.tie_word_embeddings, c.tie_word_embeddings);
    EXPECT_TRUE(back.tie_word_embeddings_stated);
    EXPECT_EQ(back.qk_norm, c.qk_norm);
    EXPECT_EQ(back.attention_bias, c.attention_bias);
    EXPECT_EQ(back.eos_token_ids, c.eos_token_ids);
    EXPECT_EQ(back.bos_token_id, c.bos_token_id);
  }
  // Floats are written as their shortest decimal, as Hugging Face writes them.
  EXPECT_NE(testutil::small_config().to_json().find("1e-06"), std::string::npos);
}

TEST(ModelConfig, ValidateRejectsFlagsThatContradictTheFamily) {
  ModelConfig c = testutil::small_config("llama");
  c.qk_norm = true;
  EXPECT_THROW(c.validate("x"), std::runtime_error);
  c.set_model_type("llama");
  EXPECT_NO_THROW(c.validate("x"));
}

}  // namespace
}  // namespace ps
