// rope_scaling (model/rope_scaling.h): config.json blocks from real checkpoints parse, every
// type's inverse frequencies follow HF's formulas, the context length stretches as vLLM's does,
// and bad blocks fail naming the file, the type or the field. The logits of whole models with
// each type are checked against PyTorch in rope_reference_test.cpp.
#include "model/rope_scaling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "model/model_config.h"

namespace ps {
namespace {

using json = nlohmann::json;

// meta-llama/Llama-3.1-8B-Instruct config.json as published on the Hugging Face Hub (all its
// fields; the same values appear in transformers' own Llama 3.1 tests).
constexpr const char* kLlama31 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.42.3", "use_cache": true, "vocab_size": 128256})";

// Qwen/Qwen2.5-7B-Instruct config.json with the YaRN block its model card says to add for
// contexts past 32768 tokens (older "type" key).
constexpr const char* kQwen25Yarn = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584, "initializer_range": 0.02,
  "intermediate_size": 18944, "max_position_embeddings": 32768, "max_window_layers": 28,
  "model_type": "qwen2", "num_attention_heads": 28, "num_hidden_layers": 28,
  "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "sliding_window": 131072, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.43.1", "use_cache": true, "use_sliding_window": false,
  "vocab_size": 152064,
  "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}})";

// Qwen/Qwen3-8B config.json with the block its model card gives for 131072 tokens
// ("rope_type" key; max_position_embeddings 40960 is above the original 32768).
constexpr const char* kQwen3Yarn = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 12288,
  "max_position_embeddings": 40960, "max_window_layers": 36, "model_type": "qwen3",
  "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000, "sliding_window": null,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
  "use_sliding_window": false, "vocab_size": 151936,
  "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})";

// deepseek-ai/DeepSeek-V3 config.json's rope_scaling block (the model type is not supported,
// but its yarn block is the one with mscale / mscale_all_dim).
constexpr const char* kDeepSeekV3Rope = R"({"beta_fast": 32, "beta_slow": 1, "factor": 40,
  "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"})";

constexpr const char* kSmall = R"({"model_type": "llama", "hidden_size": 64,
  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
  "intermediate_size": 128, "vocab_size": 256, "max_position_embeddings": 64,
  "rope_theta": 10000.0})";

ModelConfig small_with(const std::string& rope_scaling, float partial = 1.0f) {
  json j = json::parse(kSmall);
  j["rope_scaling"] = json::parse(rope_scaling);
  if (partial != 1.0f) j["partial_rotary_factor"] = partial;
  return ModelConfig::from_json(j.dump(), "small/config.json");
}

std::string error_of(const std::string& rope_scaling, float partial = 1.0f) {
  try {
    small_with(rope_scaling, partial);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// HF's unscaled 1 / theta^(2i/d).
double plain(int i, int dim, double theta) {
  return 1.0 / std::pow(theta, 2.0 * i / dim);
}

TEST(RopeScaling, Llama31ConfigParsesAndKeepsItsContext) {
  const ModelConfig c = ModelConfig::from_json(kLlama31, "llama31/config.json");
  EXPECT_EQ(c.rope_scaling.type, RopeType::llama3);
  EXPECT_EQ(c.rope_scaling.factor, 8.0);
  EXPECT_EQ(c.rope_scaling.low_freq_factor, 1.0);
  EXPECT_EQ(c.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  // max_position_embeddings is already the extended length: vLLM does not stretch it again.
  EXPECT_EQ(c.max_context_len(), 131072);

  const RopeFrequencies f = rope_frequencies(c);
  ASSERT_EQ(f.rotary_dim, 128);
  ASSERT_EQ(f.inv_freq.size(), 64u);
  EXPECT_EQ(f.attention_factor, 1.0f);
  // Wavelength below 8192 / 4: unchanged; above 8192 / 1: divided by 8; between: blended.
  int high = 0, low = 0, mid = 0;
  for (int i = 0; i < 64; ++i) {
    const double p = plain(i, 128, 500000.0), wavelen = 2 * M_PI / p;
    const double got = f.inv_freq[i];
    if (wavelen < 2048) {
      EXPECT_NEAR(got, p, 1e-7 * p) << i;
      ++high;
    } else if (wavelen > 8192) {
      EXPECT_NEAR(got, p / 8, 1e-7 * p) << i;
      ++low;
    } else {
      const double smooth = (8192 / wavelen - 1) / 3;
      EXPECT_NEAR(got, (1 - smooth) * p / 8 + smooth * p, 1e-7 * p) << i;
      EXPECT_LT(got, p);
      EXPECT_GT(got, p / 8);
      ++mid;
    }
  }
  EXPECT_GT(high, 0);
  EXPECT_GT(low, 0);
  EXPECT_GT(mid, 0);
}

TEST(RopeScaling, QwenYarnBlocksParseAndStretchTheContextAsVllm) {
  const ModelConfig q25 = ModelConfig::from_json(kQwen25Yarn, "qwen25/config.json");
  EXPECT_EQ(q25.rope_scaling.type, RopeType::yarn);
  EXPECT_EQ(q25.rope_scaling.original_max_position_embeddings, 32768);
  EXPECT_EQ(q25.max_context_len(), 131072);  // original 32768 * 4
  const RopeFrequencies f = rope_frequencies(q25);
  EXPECT_FLOAT_EQ(f.attention_factor, float(0.1 * std::log(4.0) + 1.0));
  // High frequencies extrapolate (unchanged), the lowest interpolate (divided by factor).
  EXPECT_NEAR(f.inv_freq.front(), 1.0, 1e-7);
  const int n = int(f.inv_freq.size());
  EXPECT_NEAR(f.inv_freq.back(), plain(n - 1, 128, 1e6) / 4, 1e-7 * plain(n - 1, 128, 1e6));

  const ModelConfig q3 = ModelConfig::from_json(kQwen3Yarn, "qwen3/config.json");
  EXPECT_EQ(q3.rope_scaling.type, RopeType::yarn);
  EXPECT_EQ(q3.max_position_embeddings, 40960);
  EXPECT_EQ(q3.max_context_len(), 131072);  // from the original, not from 40960
}

TEST(RopeScaling, DeepSeekMscaleRatioGivesTheAttentionFactor) {
  const RopeScaling ds = parse_rope_scaling(json::parse(kDeepSeekV3Rope), "ds");
  EXPECT_EQ(ds.type, RopeType::yarn);
  EXPECT_EQ(ds.mscale, 1.0);
  EXPECT_EQ(ds.mscale_all_dim, 1.0);
  EXPECT_EQ(scaled_context_len(ds, 163840), 4096 * 40);
  // Equal mscale and mscale_all_dim cancel: factor 1 (DeepSeek applies its own mscale in the
  // softmax scale instead).
  EXPECT_FLOAT_EQ(rope_frequencies(small_with(kDeepSeekV3Rope)).attention_factor, 1.0f);
  // Unequal ones give HF's get_mscale ratio; an explicit attention_factor wins over both.
  const double f = 4.0;
  const ModelConfig ratio =
      small_with(R"({"type": "yarn", "factor": 4, "mscale": 1.0, "mscale_all_dim": 0.5})");
  EXPECT_FLOAT_EQ(rope_frequencies(ratio).attention_factor,
                  float((0.1 * std::log(f) + 1) / (0.05 * std::log(f) + 1)));
  EXPECT_FLOAT_EQ(
      rope_frequencies(small_with(R"({"type": "yarn", "factor": 4, "attention_factor": 0.7})"))
          .attention_factor,
      0.7f);
}

TEST(RopeScaling, LinearDividesEveryFrequencyAndStretchesTheContext) {
  const ModelConfig c = small_with(R"({"type": "linear", "factor": 4.0})");
  const RopeFrequencies f = rope_frequencies(c);
  ASSERT_EQ(f.inv_freq.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(f.inv_freq[i], plain(i, 32, 1e4) / 4, 1e-7) << i;
  EXPECT_EQ(c.max_context_len(), 256);
}

// HF's dynamic NTK recomputes the base from the current sequence length (so a sequence's
// logits would change as it grows, and depend on its batch). Like vLLM we fix the base for
// max_position_embeddings * factor: theta * (factor^2 - factor + 1)^(d / (d - 2)), at every
// position, inside the original context too. rope_reference_test checks whole-model logits.
TEST(RopeScaling, DynamicUsesOneFixedBaseForTheScaledContext) {
  const ModelConfig c = small_with(R"({"rope_type": "dynamic", "factor": 4.0})");
  const double base = 1e4 * std::pow(4.0 * 4.0 - 3.0, 32.0 / 30.0);
  const RopeFrequencies f = rope_frequencies(c);
  for (int i = 0; i < 16; ++i) {
    EXPECT_NEAR(f.inv_freq[i], plain(i, 32, base), 1e-7 * plain(i, 32, base)) << i;
  }
  EXPECT_LT(f.inv_freq[15], plain(15, 32, 1e4) * 0.5);  // really rescaled
  EXPECT_EQ(c.max_context_len(), 256);
}

TEST(RopeScaling, DefaultAndNullAreThePlainRope) {
  for (const char* block : {"null", R"({"rope_type": "default"})", R"({"type": "default"})"}) {
    const ModelConfig c = small_with(block);
    EXPECT_EQ(c.rope_scaling.type, RopeType::none) << block;
    const RopeFrequencies f = rope_frequencies(c);
    for (int i = 0; i < 16; ++i) EXPECT_NEAR(f.inv_freq[i], plain(i, 32, 1e4), 1e-7) << block;
    EXPECT_EQ(c.max_context_len(), 64);
  }
}

TEST(RopeScaling, PartialRotaryFactorRotatesTheLeadingDims) {
  const ModelConfig c = small_with("null", 0.5f);
  const RopeFrequencies f = rope_frequencies(c);
  EXPECT_EQ(f.rotary_dim, 16);
  ASSERT_EQ(f.inv_freq.size(), 8u);
  // The frequencies are those of a 16-dim rotation (HF: dim = int(head_dim * factor)).
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(f.inv_freq[i], plain(i, 16, 1e4), 1e-7) << i;
  EXPECT_EQ(rotary_dim_of(128, 0.25f), 32);
  EXPECT_EQ(rotary_dim_of(80, 0.4f), 32);
}

TEST(RopeScaling, ToJsonWritesBackWhatWasRead) {
  const char* blocks[] = {
      R"({"type": "linear", "factor": 2.5})",
      R"({"rope_type": "dynamic", "factor": 3.0})",
      R"({"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192, "rope_type": "llama3"})",
      R"({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64,
          "beta_fast": 16, "beta_slow": 2, "mscale": 1.0, "mscale_all_dim": 0.5,
          "attention_factor": 1.2, "truncate": false})",
      kDeepSeekV3Rope,
  };
  for (const char* block : blocks) {
    const ModelConfig c = small_with(block, 0.5f);
    const ModelConfig back = ModelConfig::from_json(c.to_json(), "roundtrip");
    EXPECT_EQ(back.rope_scaling, c.rope_scaling) << block;
    EXPECT_EQ(back.partial_rotary_factor, 0.5f);
    EXPECT_EQ(back.max_position_embeddings, c.max_position_embeddings);
    EXPECT_EQ(back.max_context_len(), c.max_context_len());
  }
  const json plain_back = json::parse(small_with("null").to_json());
  EXPECT_TRUE(plain_back.at("rope_scaling").is_null());
  EXPECT_FALSE(plain_back.contains("partial_rotary_factor"));
}

TEST(RopeScaling, ErrorsNameTheFileTheTypeAndTheField) {
  struct Case {
    std::string block;
    float partial;
    std::string expected;
  };
  const Case cases[] = {
      {R"({"rope_type": "longrope", "factor": 4.0})", 1,
       "longrope is missing required field \"short_factor\""},
      {R"({"rope_type": "longrope", "short_factor": [1], "long_factor": [1], "factor": 0})", 1,
       "\"factor\" must be positive"},
      {R"({"type": "su"})", 1, "type \"su\" is not supported"},
      {R"({"factor": 4.0})", 1, "no \"rope_type\" (or \"type\") field"},
      {R"("yarn")", 1, "rope_scaling must be an object"},
      {R"({"rope_type": 3})", 1, "\"rope_type\" must be a string"},
      {R"({"type": "linear"})", 1, "linear is missing required field \"factor\""},
      {R"({"type": "dynamic"})", 1, "dynamic is missing required field \"factor\""},
      {R"({"type": "yarn"})", 1, "yarn is missing required field \"factor\""},
      {R"({"type": "linear", "factor": "4"})", 1, "field \"factor\" must be a finite number"},
      {R"({"type": "linear", "factor": -2})", 1, "\"factor\" must be positive"},
      {R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4})", 1,
       "llama3 is missing required field \"original_max_position_embeddings\""},
      {R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 1,
           "original_max_position_embeddings": 64})",
       1, "llama3 is missing required field \"high_freq_factor\""},
      {R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 4,
           "original_max_position_embeddings": 64})",
       1, "low_freq_factor < high_freq_factor"},
      {R"({"type": "yarn", "factor": 4, "original_max_position_embeddings": 6.5})", 1,
       "\"original_max_position_embeddings\" must be a positive integer"},
      {R"({"type": "yarn", "factor": 4, "truncate": "no"})", 1,
       "\"truncate\" must be true or false"},
      {"null", 0.03f, "partial_rotary_factor"},  // 32 * 0.03 = 0 dims
      {"null", 0.1f, "partial_rotary_factor"},   // 3 dims: odd
      {"null", 1.5f, "partial_rotary_factor"},   // more than the head
  };
  for (const Case& c : cases) {
    const std::string msg = error_of(c.block, c.partial);
    EXPECT_NE(msg.find("small/config.json"), std::string::npos) << c.block << ": " << msg;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.block << ": " << msg;
  }
}

// transformers v5 writes rope_theta and the scaling fields as one rope_parameters block.
TEST(RopeScaling, TransformersV5RopeParametersBlockIsRead) {
  json j = json::parse(kSmall);
  j.erase("rope_theta");
  j["rope_parameters"] = {{"rope_theta", 1e6}, {"rope_type", "default"}};
  ModelConfig c = ModelConfig::from_json(j.dump(), "v5/config.json");
  EXPECT_EQ(c.rope_theta, 1e6f);
  EXPECT_EQ(c.rope_scaling.type, RopeType::none);

  j["rope_parameters"] = json::parse(R"({"rope_theta": 500000.0, "rope_type": "yarn",
      "factor": 4.0, "original_max_position_embeddings": 64, "partial_rotary_factor": 0.5})");
  c = ModelConfig::from_json(j.dump(), "v5/config.json");
  EXPECT_EQ(c.rope_theta, 500000.0f);
  EXPECT_EQ(c.rope_scaling.type, RopeType::yarn);
  EXPECT_EQ(c.partial_rotary_factor, 0.5f);
  EXPECT_EQ(c.max_context_len(), 256);

  j["rope_parameters"] = {{"rope_theta", 2e4}};  // no rope_type: default
  EXPECT_EQ(ModelConfig::from_json(j.dump(), "v5").rope_theta, 2e4f);

  j["rope_parameters"] = json::parse(R"({"full_attention": {"rope_theta": 1e6},
      "sliding_attention": {"rope_theta": 1e4}})");
  try {
    ModelConfig::from_json(j.dump(), "v5/config.json");
    ADD_FAILURE() << "per-layer-type rope_parameters loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("v5/config.json: rope_parameters per layer type"),
              std::string::npos)
        << e.what();
  }
  j["rope_parameters"] = json::parse(R"({"rope_type": "longrope", "rope_theta": 1e4})");
  EXPECT_THROW(ModelConfig::from_json(j.dump(), "v5"), std::runtime_error);  // no factor lists
}

TEST(RopeScaling, SlidingWindowWithScalingIsRefused) {
  json j = json::parse(kQwen25Yarn);
  j["use_sliding_window"] = true;
  j["sliding_window"] = 4096;
  try {
    ModelConfig::from_json(j.dump(), "q/config.json");
    ADD_FAILURE() << "a window below the context with yarn loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("sliding_window 4096 together with rope_scaling yarn"),
              std::string::npos)
        << e.what();
  }
  // The published config (window off) loads, as above; a window past the context is no window.
  j["sliding_window"] = 131072;
  EXPECT_EQ(ModelConfig::from_json(j.dump(), "q").max_context_len(), 131072);
}

}  // namespace
}  // namespace ps
