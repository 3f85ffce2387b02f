// make-tiny-model: the files it writes, and that every layout loads to the same logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "chat/chat_prompt.h"
#include "chat/chat_template.h"
#include "chat/template_source.h"
#include "checkpoint/loader.h"
#include "checkpoint/tiny_model.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"
#include "tiny_test_util.h"
#include "tokenizer/tokenizer.h"

namespace ps {
namespace {

namespace fs = std::filesystem;
using testutil::read_file;
using testutil::TempDir;
using json = nlohmann::json;

double max_abs(const std::vector<float>& v) {
  double m = 0.0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, static_cast<double>(std::fabs(a[i] - b[i])));
  return m;
}

// The acceptance check, on the real default shape: F32, BF16 and a 3-shard F32
// checkpoint of one seed load to the same model, the shards bit for bit.
TEST(TinyModel, DefaultShapeLoadsAlikeInF32Bf16AndShards) {
  TempDir f32, bf16, sharded;
  TinyModelOptions o;
  o.seed = 42;
  write_tiny_model(f32.path(), o);
  o.shards = 3;
  write_tiny_model(sharded.path(), o);
  o.shards = 1;
  o.dtype = WeightDtype::kBF16;
  write_tiny_model(bf16.path(), o);

  const LoadedModel a = load_model(f32.path());
  const LoadedModel s = load_model(sharded.path());
  const LoadedModel b = load_model(bf16.path());
  EXPECT_EQ(a.config.hidden_size, 512);
  EXPECT_EQ(a.config.num_hidden_layers, 8);
  EXPECT_EQ(a.config.num_attention_heads, 8);
  EXPECT_EQ(a.config.num_key_value_heads, 2);
  EXPECT_EQ(a.config.head_dim, 64);
  EXPECT_EQ(a.config.intermediate_size, 1408);
  EXPECT_EQ(a.config.vocab_size, 6400);
  EXPECT_EQ(a.config.rope_theta, 1e6f);
  EXPECT_TRUE(a.config.tie_word_embeddings);
  EXPECT_TRUE(a.config.qk_norm);
  EXPECT_EQ(a.config.eos_token_ids, (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(a.config.bos_token_id, 1);
  EXPECT_TRUE(a.weights->lm_head.is_same(a.weights->embed_tokens));

  // random_model(config, seed) is the F32 checkpoint.
  const LoadedModel r = random_model(a.config, 42);
  EXPECT_TRUE(tensors_equal(r.weights->layers[7].down_proj, a.weights->layers[7].down_proj));
  EXPECT_TRUE(tensors_equal(r.weights->embed_tokens, a.weights->embed_tokens));

  const Tokenizer tok = Tokenizer::from_file(f32.file("tokenizer.json"));
  std::vector<int32_t> ids = tok.encode("Hello, world! 你好，世界。def add(a, b): return a + b");
  ids.insert(ids.begin(), 1);
  ASSERT_GE(ids.size(), 10u);
  const std::vector<float> la = naive_logits(*a.weights, ids);
  const std::vector<float> ls = naive_logits(*s.weights, ids);
  const std::vector<float> lb = naive_logits(*b.weights, ids);
  ASSERT_EQ(la.size(), ids.size() * 6400);
  EXPECT_EQ(std::memcmp(la.data(), ls.data(), la.size() * sizeof(float)), 0)
      << "sharding must not change a single bit";
  const double scale = max_abs(la);
  const double diff = max_abs_diff(la, lb);
  RecordProperty("bf16_max_abs_diff", std::to_string(diff));
  RecordProperty("f32_logit_scale", std::to_string(scale));
  EXPECT_GT(scale, 0.5) << "logits are degenerate";
  EXPECT_GT(diff, 0.0) << "bf16 rounding should move the logits a little";
  EXPECT_LT(diff, 0.03 * scale) << "bf16 logits off by " << diff << " at scale " << scale;
}

TEST(TinyModel, WritesTheHuggingFaceFiles) {
  TempDir dir;
  TinyModelOptions o;
  o.config = testutil::small_config("qwen3");
  o.config.eos_token_ids.clear();
  o.config.bos_token_id = -1;
  o.dtype = WeightDtype::kBF16;
  o.shards = 3;
  write_tiny_model(dir.path(), o);

  const json config = json::parse(read_file(dir.file("config.json")));
  EXPECT_EQ(config["model_type"], "qwen3");
  EXPECT_EQ(config["architectures"][0], "Qwen3ForCausalLM");
  EXPECT_EQ(config["torch_dtype"], "bfloat16");
  EXPECT_EQ(config["tie_word_embeddings"], true);

  const json gen = json::parse(read_file(dir.file("generation_config.json")));
  EXPECT_EQ(gen["eos_token_id"], json({2, 0}));
  EXPECT_EQ(gen["bos_token_id"], 1);

  const json tc = json::parse(read_file(dir.file("tokenizer_config.json")));
  EXPECT_EQ(tc["eos_token"], "<|im_end|>");
  EXPECT_EQ(tc["bos_token"], "<|im_start|>");
  EXPECT_EQ(tc["pad_token"], "<|endoftext|>");
  EXPECT_EQ(tc["model_max_length"], o.config.max_position_embeddings);
  const std::string tmpl = tc["chat_template"];
  EXPECT_NE(tmpl.find("<|im_start|>"), std::string::npos);
  EXPECT_NE(tmpl.find("add_generation_prompt"), std::string::npos);
  EXPECT_EQ(tc["added_tokens_decoder"]["2"]["content"], "<|im_end|>");
  // Served as written (no marker guess): for this checkpoint it renders ChatML, as the builtin.
  ps::chat::ChatPromptRequest req;
  req.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "hi"}}});
  EXPECT_EQ(ps::chat::render_chat_prompt(ps::chat::parse_template(tmpl, "tiny"), req, {}),
            ChatTemplate(ChatTemplateKind::kChatML).render({{"user", "hi"}}, true));

  const Tokenizer tok = Tokenizer::from_file(dir.file("tokenizer.json"));
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), 0);
  EXPECT_EQ(tok.token_to_id("<|im_start|>"), 1);
  EXPECT_EQ(tok.token_to_id("<|im_end|>"), 2);
  EXPECT_LE(tok.vocab_size(), o.config.vocab_size);

  // Three shards, an index that maps every tensor to one of them and sums their data.
  EXPECT_FALSE(fs::exists(dir.file("model.safetensors")));
  const json index = json::parse(read_file(dir.file("model.safetensors.index.json")));
  uint64_t data_bytes = 0;
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "model-0000" + std::to_string(i) + "-of-00003.safetensors";
    const SafetensorsFile f = SafetensorsFile::open(dir.file(name));
    EXPECT_FALSE(f.header().tensors.empty()) << name;
    EXPECT_EQ(f.header().metadata.at("format"), "pt");
    for (const SafetensorsTensor& t : f.header().tensors) {
      EXPECT_EQ(index["weight_map"][t.name], name);
      EXPECT_EQ(t.dtype, SafetensorsDtype::kBF16);
      data_bytes += t.end - t.begin;
    }
  }
  EXPECT_EQ(index["metadata"]["total_size"].get<uint64_t>(), data_bytes);
  EXPECT_EQ(index["weight_map"].size(), 2u + 2u * 11u);  // embed, norm; 11 per qwen3 layer

  // Rewriting as one file removes the index, so the loader cannot pick a stale layout.
  o.shards = 1;
  write_tiny_model(dir.path(), o);
  EXPECT_FALSE(fs::exists(dir.file("model.safetensors.index.json")));
  EXPECT_EQ(load_model(dir.path()).config.eos_token_ids, (std::vector<int32_t>{2, 0}));
}

TEST(TinyModel, SameSeedSameBytesOtherSeedOtherWeights) {
  TempDir a, b, c;
  TinyModelOptions o;
  o.config = testutil::small_config("llama");
  o.config.tie_word_embeddings = false;
  o.seed = 5;
  write_tiny_model(a.path(), o);
  write_tiny_model(b.path(), o);
  o.seed = 6;
  write_tiny_model(c.path(), o);
  EXPECT_EQ(read_file(a.file("model.safetensors")), read_file(b.file("model.safetensors")));
  EXPECT_NE(read_file(a.file("model.safetensors")), read_file(c.file("model.safetensors")));
  const LoadedModel m = load_model(a.path());
  EXPECT_FALSE(m.config.tie_word_embeddings);
  EXPECT_TRUE(tensors_equal(m.weights->lm_head, random_model(m.config, 5).weights->lm_head));
}

TEST(TinyModel, F16AndQwen2Biases) {
  TempDir f32, f16;
  TinyModelOptions o;
  o.config = testutil::small_config("qwen2");
  write_tiny_model(f32.path(), o);
  o.dtype = WeightDtype::kF16;
  write_tiny_model(f16.path(), o);
  const LoadedModel a = load_model(f32.path());
  const LoadedModel h = load_model(f16.path());
  ASSERT_TRUE(h.weights->layers[0].q_bias.defined());
  const std::vector<int32_t> ids = {1, 40, 41, 42, 290, 7};
  const std::vector<float> la = naive_logits(*a.weights, ids);
  const std::vector<float> lh = naive_logits(*h.weights, ids);
  EXPECT_LT(max_abs_diff(la, lh), 0.01 * max_abs(la));
}

// Phi-3 (fused qkv_proj / gate_up_proj, LongRoPE) and Gemma 3 (layer kinds, extra norms):
// written whole and in shards, read back to the same config and the same weights.
TEST(TinyModel, Phi3AndGemma3CheckpointsLoadAsWritten) {
  ModelConfig phi3 = testutil::small_config("phi3");
  phi3.partial_rotary_factor = 0.75f;
  phi3.rope_scaling.type = RopeType::longrope;
  phi3.rope_scaling.factor = 0;
  phi3.rope_scaling.original_max_position_embeddings = 64;
  phi3.rope_scaling.short_factor = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5};
  phi3.rope_scaling.long_factor = {1.0, 2.0, 4.0, 8.0, 16.0, 32.0};
  ModelConfig gemma = testutil::small_config("gemma3_text");
  gemma.layer_types = {LayerType::sliding_attention, LayerType::full_attention};
  gemma.sliding_window = 8;
  gemma.query_pre_attn_scalar = 16.0f;
  for (const ModelConfig& c : {phi3, gemma}) {
    SCOPED_TRACE(c.model_type);
    for (int32_t shards : {1, 3}) {
      TempDir dir;
      TinyModelOptions o;
      o.config = c;
      o.shards = shards;
      write_tiny_model(dir.path(), o);
      const LoadedModel m = load_model(dir.path());
      EXPECT_EQ(m.config.rope_scaling, c.rope_scaling);
      EXPECT_EQ(m.config.layer_types, c.layer_types);
      EXPECT_EQ(m.config.sliding_window, c.sliding_window);
      EXPECT_EQ(m.config.partial_rotary_factor, c.partial_rotary_factor);
      const LoadedModel r = random_model(m.config, 0);
      for (size_t l = 0; l < 2; ++l) {
        EXPECT_TRUE(tensors_equal(m.weights->layers[l].k_proj, r.weights->layers[l].k_proj));
        EXPECT_TRUE(tensors_equal(m.weights->layers[l].up_proj, r.weights->layers[l].up_proj));
        if (c.gemma_layout()) {
          EXPECT_TRUE(tensors_equal(m.weights->layers[l].post_feedforward_layernorm,
                                    r.weights->layers[l].post_feedforward_layernorm));
        }
      }
      const std::vector<int32_t> ids = {1, 40, 41, 42, 290, 7, 8, 9, 10, 11, 12, 13};
      EXPECT_EQ(naive_logits(*m.weights, ids), naive_logits(*r.weights, ids));
      if (shards == 1 && c.model_type == "phi3") {
        const std::string bytes = read_file(dir.file("model.safetensors"));
        EXPECT_NE(bytes.find("model.layers.0.self_attn.qkv_proj.weight"), std::string::npos);
        EXPECT_NE(bytes.find("model.layers.1.mlp.gate_up_proj.weight"), std::string::npos);
        EXPECT_EQ(bytes.find("q_proj"), std::string::npos);
      }
    }
  }
}

TEST(TinyModel, RejectsImpossibleOptions) {
  TempDir dir;
  TinyModelOptions o;
  o.config = testutil::small_config("qwen3");
  o.shards = 0;
  EXPECT_THROW(write_tiny_model(dir.path(), o), std::runtime_error);
  o.shards = 1000;
  EXPECT_THROW(write_tiny_model(dir.path(), o), std::runtime_error);
  o.shards = 1;
  o.config.vocab_size = 200;  // below 3 specials + 256 bytes
  EXPECT_THROW(write_tiny_model(dir.path(), o), std::runtime_error);
  o.config = testutil::small_config("llama");
  o.config.qk_norm = true;  // contradicts the family
  EXPECT_THROW(write_tiny_model(dir.path(), o), std::runtime_error);
}

}  // namespace
}  // namespace ps
