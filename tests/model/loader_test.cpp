// load_model on checkpoints written tensor by tensor, and on checkpoints broken on purpose.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "checkpoint/loader.h"
#include "checkpoint/random_weights.h"
#include "checkpoint/stored_tensors.h"
#include "model/model_weights.h"
#include "tiny_test_util.h"

namespace ps {
namespace {

using testutil::checkpoint_tensors;
using testutil::expect_same_weights;
using testutil::OwnedTensor;
using testutil::small_config;
using testutil::TempDir;
using testutil::write_checkpoint;
using testutil::write_file;
using testutil::write_tensors;

std::string load_error(const std::string& dir) {
  try {
    load_model(dir);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

class LoaderFamilies : public ::testing::TestWithParam<std::string> {};

TEST_P(LoaderFamilies, LoadsExactlyWhatWasWritten) {
  TempDir dir;
  ModelConfig c = small_config(GetParam());
  c.tie_word_embeddings = GetParam() == "qwen3" || GetParam() == "qwen2";
  ModelWeights w = make_random_weights(c, 7);
  write_checkpoint(dir.path(), w);
  const LoadedModel m = load_model(dir.path());
  EXPECT_EQ(m.config.model_type, GetParam());
  ASSERT_EQ(m.weights->layers.size(), 2u);
  expect_same_weights(*m.weights, w);
  const LayerWeights& l = m.weights->layers[1];
  EXPECT_EQ(l.q_bias.defined(), GetParam() == "qwen2");
  EXPECT_EQ(l.q_norm.defined(), GetParam() == "qwen3");
  EXPECT_EQ(m.weights->lm_head.is_same(m.weights->embed_tokens), c.tie_word_embeddings);
  EXPECT_EQ(m.weights->embed_tokens.dtype(), DType::f32);
}

INSTANTIATE_TEST_SUITE_P(All, LoaderFamilies,
                         ::testing::Values("qwen3", "qwen2", "llama", "mistral"));

TEST(Loader, Bf16AndF16AreConvertedExactly) {
  for (DType dtype : {DType::bf16, DType::f16}) {
    TempDir dir;
    ModelWeights w = make_random_weights(small_config("qwen2"), 3);
    write_checkpoint(dir.path(), w, dtype);
    const LoadedModel m = load_model(dir.path());
    EXPECT_TRUE(
        tensors_equal(m.weights->layers[0].q_proj, w.layers[0].q_proj.to(dtype).to(DType::f32)));
    EXPECT_TRUE(
        tensors_equal(m.weights->layers[1].v_bias, w.layers[1].v_bias.to(dtype).to(DType::f32)));
    EXPECT_FALSE(tensors_equal(m.weights->layers[0].q_proj, w.layers[0].q_proj))
        << "a 16-bit copy of random weights should not be bit-identical to fp32";
  }
}

TEST(Loader, TiedWhenConfigLeavesItUnstatedAndLmHeadIsAbsent) {
  TempDir dir;
  ModelConfig c = small_config("llama");
  c.tie_word_embeddings = true;
  ModelWeights w = make_random_weights(c, 1);
  write_tensors(dir.file("model.safetensors"), checkpoint_tensors(w));  // no lm_head
  auto j = nlohmann::json::parse(c.to_json());
  j.erase("tie_word_embeddings");
  write_file(dir.file("config.json"), j.dump());
  const LoadedModel m = load_model(dir.path());
  EXPECT_TRUE(m.config.tie_word_embeddings);
  EXPECT_TRUE(m.weights->lm_head.is_same(m.weights->embed_tokens));

  // The same unstated config with an lm_head in the file: untied.
  ModelConfig untied = c;
  untied.tie_word_embeddings = false;
  ModelWeights wu = make_random_weights(untied, 1);
  write_tensors(dir.file("model.safetensors"), checkpoint_tensors(wu));
  const LoadedModel mu = load_model(dir.path());
  EXPECT_FALSE(mu.config.tie_word_embeddings);
  EXPECT_TRUE(tensors_equal(mu.weights->lm_head, wu.lm_head));
  EXPECT_FALSE(tensors_equal(mu.weights->lm_head, mu.weights->embed_tokens));
}

TEST(Loader, UntiedConfigWithoutLmHeadNamesTheTensor) {
  TempDir dir;
  ModelConfig c = small_config("llama");
  c.tie_word_embeddings = true;
  ModelWeights w = make_random_weights(c, 1);
  write_tensors(dir.file("model.safetensors"), checkpoint_tensors(w));
  c.tie_word_embeddings = false;
  write_file(dir.file("config.json"), c.to_json());
  const std::string msg = load_error(dir.path());
  EXPECT_CONTAINS(msg, dir.file("model.safetensors"));
  EXPECT_CONTAINS(msg, "'lm_head.weight'");
  EXPECT_CONTAINS(msg, "tie_word_embeddings false");
}

// Phi-3 stores q/k/v as one qkv_proj and gate/up as one gate_up_proj: the loader splits them by
// rows (views of the mapped file at the stored dtype), and a split checkpoint loads too.
std::vector<OwnedTensor> phi3_stored(const ModelWeights& w, DType dtype) {
  std::vector<OwnedTensor> out;
  const SafetensorsDtype sd =
      dtype == DType::bf16 ? SafetensorsDtype::kBF16 : SafetensorsDtype::kF32;
  for (const StoredTensor& t : stored_tensors(w, dtype)) {
    const auto* p = static_cast<const uint8_t*>(t.tensor.data_ptr());
    out.push_back({t.name, sd, t.tensor.sizes(), std::vector<uint8_t>(p, p + t.tensor.nbytes())});
  }
  return out;
}

TEST(Loader, Phi3SplitsItsFusedProjectionsByRows) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    TempDir dir;
    ModelConfig c = small_config("phi3");
    c.tie_word_embeddings = false;
    ModelWeights w = make_random_weights(c, 9);
    const std::vector<OwnedTensor> stored = phi3_stored(w, dtype);
    bool fused_qkv = false, split_q = false;
    for (const OwnedTensor& t : stored) {
      fused_qkv |= t.name == "model.layers.1.self_attn.qkv_proj.weight" &&
                   t.shape == std::vector<int64_t>{64 + 2 * 32, 64};
      split_q |= t.name.find("q_proj") != std::string::npos;
    }
    EXPECT_TRUE(fused_qkv);
    EXPECT_FALSE(split_q);
    write_file(dir.file("config.json"), c.to_json());
    write_tensors(dir.file("model.safetensors"), stored);
    LoadOptions options;
    options.dtype = dtype == DType::bf16 ? ModelDtype::bf16 : ModelDtype::f32;
    const LoadedModel m = load_model(dir.path(), options);
    for (size_t l = 0; l < 2; ++l) {
      const LayerWeights& got = m.weights->layers[l];
      const LayerWeights& want = w.layers[l];
      for (const auto& [a, b] : {std::pair{&got.q_proj, &want.q_proj},
                                 {&got.k_proj, &want.k_proj},
                                 {&got.v_proj, &want.v_proj},
                                 {&got.gate_proj, &want.gate_proj},
                                 {&got.up_proj, &want.up_proj},
                                 {&got.down_proj, &want.down_proj}}) {
        EXPECT_EQ(a->dtype(), dtype);
        EXPECT_TRUE(tensors_equal(*a, b->to(dtype))) << "layer " << l;
      }
    }
    // The same weights stored split (as older converters write them) load identically.
    write_checkpoint(dir.path(), w, dtype);
    const LoadedModel split = load_model(dir.path(), options);
    EXPECT_TRUE(tensors_equal(split.weights->layers[1].k_proj, m.weights->layers[1].k_proj));
  }
}

TEST(Loader, Phi3FusedTensorErrorsNameTheTensor) {
  TempDir dir;
  const ModelConfig c = small_config("phi3");
  ModelWeights w = make_random_weights(c, 9);
  write_file(dir.file("config.json"), c.to_json());
  std::vector<OwnedTensor> missing = phi3_stored(w, DType::f32);
  std::erase_if(missing, [](const OwnedTensor& t) {
    return t.name == "model.layers.1.mlp.gate_up_proj.weight";
  });
  write_tensors(dir.file("model.safetensors"), missing);
  std::string msg = load_error(dir.path());
  EXPECT_CONTAINS(msg, "'model.layers.1.mlp.gate_up_proj.weight'");
  EXPECT_CONTAINS(msg, "missing");

  std::vector<OwnedTensor> narrow = phi3_stored(w, DType::f32);
  for (OwnedTensor& t : narrow) {
    if (t.name != "model.layers.0.self_attn.qkv_proj.weight") continue;
    t.shape[0] -= 16;  // one kv head short
    t.bytes.resize(size_t(t.shape[0] * t.shape[1] * 4));
  }
  write_tensors(dir.file("model.safetensors"), narrow);
  msg = load_error(dir.path());
  EXPECT_CONTAINS(msg, "'model.layers.0.self_attn.qkv_proj.weight'");
  EXPECT_CONTAINS(msg, "shape [112, 64] does not match");
  EXPECT_CONTAINS(msg, "[128, 64]");
}

// A multimodal Gemma 3 checkpoint: config.json wraps the text model in text_config, the tensors
// sit under "language_model.model." (first releases) or "model.language_model." (transformers
// 4.52+) beside a vision tower, which is not loaded.
TEST(Loader, Gemma3MultimodalCheckpointLoadsItsLanguageModel) {
  ModelConfig c = small_config("gemma3_text");
  c.layer_types = {LayerType::sliding_attention, LayerType::full_attention};
  c.sliding_window = 8;
  ModelWeights w = make_random_weights(c, 4);
  auto text = nlohmann::json::parse(c.to_json());
  text.erase("eos_token_id");
  const nlohmann::json wrapper = {{"model_type", "gemma3"},
                                  {"eos_token_id", {1, 106}},
                                  {"text_config", text},
                                  {"vision_config", {{"model_type", "siglip_vision_model"}}}};
  for (const std::string prefix : {"language_model.model.", "model.language_model."}) {
    TempDir dir;
    write_file(dir.file("config.json"), wrapper.dump());
    std::vector<OwnedTensor> tensors = checkpoint_tensors(w);
    for (OwnedTensor& t : tensors) t.name = prefix + t.name.substr(6);  // drop "model."
    tensors.push_back({"vision_tower.vision_model.post_layernorm.weight",
                       SafetensorsDtype::kF32,
                       {4},
                       std::vector<uint8_t>(16, 0)});
    write_tensors(dir.file("model.safetensors"), tensors);
    const LoadedModel m = load_model(dir.path());
    EXPECT_EQ(m.config.model_type, "gemma3_text");
    EXPECT_EQ(m.config.eos_token_ids, (std::vector<int32_t>{1, 106}));
    expect_same_weights(*m.weights, w);
  }
}

// A Qwen3.5 checkpoint (issue #35): a linear-attention layer's linear_attn.* tensors and a gated
// full-attention layer's double-height q_proj, at the top level (qwen3_5_text) or under
// "model.language_model." beside a vision tower (qwen3_5); a bf16 one resolves --dtype auto to
// bf16 though its first layer has no q_proj.
TEST(Loader, Qwen3_5CheckpointLoadsItsHybridLayers) {
  ModelConfig c = small_config("qwen3_5_text");
  c.layer_types = {LayerType::linear_attention, LayerType::full_attention};
  c.linear = LinearAttentionShape{4, 2, 4, 16, 12};
  c.attn_output_gate = true;
  c.partial_rotary_factor = 0.5f;
  ModelWeights w = make_random_weights(c, 6);
  ASSERT_EQ(w.layers[1].q_proj.size(0), 2 * c.q_size());
  ASSERT_TRUE(w.layers[0].in_proj_qkv.defined());
  {
    TempDir dir;
    write_checkpoint(dir.path(), w);
    const LoadedModel m = load_model(dir.path());
    EXPECT_EQ(m.config.num_linear_layers(), 1);
    expect_same_weights(*m.weights, w);
  }
  {
    TempDir dir;
    const nlohmann::json wrapper = {{"model_type", "qwen3_5"},
                                    {"text_config", nlohmann::json::parse(c.to_json())},
                                    {"vision_config", {{"depth", 2}}}};
    write_file(dir.file("config.json"), wrapper.dump());
    std::vector<OwnedTensor> tensors = checkpoint_tensors(w);
    for (OwnedTensor& t : tensors) {
      if (t.name.starts_with("model.")) t.name = "model.language_model." + t.name.substr(6);
    }
    write_tensors(dir.file("model.safetensors"), tensors);
    const LoadedModel m = load_model(dir.path());
    EXPECT_EQ(m.config.model_type, "qwen3_5_text");
    expect_same_weights(*m.weights, w);
  }
  {
    TempDir dir;
    write_checkpoint(dir.path(), w, DType::bf16);
    EXPECT_EQ(resolve_model_dtype(dir.path(), ModelDtype::auto_dtype), ModelDtype::bf16);
  }
}

// A valid small checkpoint that each test then breaks in one way.
class BrokenCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    weights_ = make_random_weights(small_config("qwen3"), 5);
    tensors_ = checkpoint_tensors(weights_);
    write_checkpoint(dir_.path(), weights_);
    ASSERT_EQ(load_error(dir_.path()), "");
  }
  std::string file() const { return dir_.file("model.safetensors"); }
  void rewrite() { write_tensors(file(), tensors_); }
  OwnedTensor& tensor(const std::string& name) {
    for (OwnedTensor& t : tensors_) {
      if (t.name == name) return t;
    }
    throw std::runtime_error("no tensor " + name);
  }

  TempDir dir_;
  ModelWeights weights_;
  std::vector<OwnedTensor> tensors_;
};

TEST_F(BrokenCheckpoint, MissingTensor) {
  std::erase_if(tensors_,
                [](const OwnedTensor& t) { return t.name == "model.layers.1.mlp.up_proj.weight"; });
  rewrite();
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, file());
  EXPECT_CONTAINS(msg, "'model.layers.1.mlp.up_proj.weight'");
  EXPECT_CONTAINS(msg, "missing");
}

TEST_F(BrokenCheckpoint, MissingQwen3QkNorm) {
  std::erase_if(tensors_, [](const OwnedTensor& t) {
    return t.name == "model.layers.0.self_attn.k_norm.weight";
  });
  rewrite();
  EXPECT_CONTAINS(load_error(dir_.path()), "'model.layers.0.self_attn.k_norm.weight'");
}

TEST_F(BrokenCheckpoint, WrongShape) {
  OwnedTensor& t = tensor("model.layers.0.self_attn.k_proj.weight");  // [32, 64]
  t.shape = {64, 32};
  rewrite();
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, file());
  EXPECT_CONTAINS(msg, "'model.layers.0.self_attn.k_proj.weight'");
  EXPECT_CONTAINS(msg, "[64, 32]");
  EXPECT_CONTAINS(msg, "[32, 64]");
  EXPECT_CONTAINS(msg, "config.json");
}

TEST_F(BrokenCheckpoint, UnknownDtype) {
  testutil::edit_header(file(),
                        [](nlohmann::ordered_json& h) { h["model.norm.weight"]["dtype"] = "F8"; });
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, file());
  EXPECT_CONTAINS(msg, "'model.norm.weight'");
  EXPECT_CONTAINS(msg, "F8");
}

TEST_F(BrokenCheckpoint, DtypeThatIsNotAFloatFormat) {
  OwnedTensor& t = tensor("model.layers.1.input_layernorm.weight");
  t.dtype = SafetensorsDtype::kI32;  // same byte count as F32
  rewrite();
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, file());
  EXPECT_CONTAINS(msg, "'model.layers.1.input_layernorm.weight'");
  EXPECT_CONTAINS(msg, "I32");
}

TEST_F(BrokenCheckpoint, HeaderLengthPastTheEnd) {
  std::string bytes = testutil::read_file(file());
  const uint64_t len = bytes.size();
  std::memcpy(bytes.data(), &len, 8);
  write_file(file(), bytes);
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, file());
  EXPECT_CONTAINS(msg, "header length");
}

TEST_F(BrokenCheckpoint, TruncatedData) {
  const std::string bytes = testutil::read_file(file());
  write_file(file(), bytes.substr(0, bytes.size() - 10));
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, file());
  EXPECT_CONTAINS(msg, "'" + tensors_.back().name + "'");  // the last tensor in data order
  EXPECT_CONTAINS(msg, "truncated");
}

TEST_F(BrokenCheckpoint, UnsupportedModelType) {
  auto j = nlohmann::json::parse(testutil::read_file(dir_.file("config.json")));
  j["model_type"] = "falcon";
  write_file(dir_.file("config.json"), j.dump());
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, dir_.file("config.json"));
  EXPECT_CONTAINS(msg, "falcon");
}

TEST_F(BrokenCheckpoint, ConfigThatIsNotJson) {
  write_file(dir_.file("config.json"), "{\"model_type\": ");
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, dir_.file("config.json"));
  EXPECT_CONTAINS(msg, "invalid JSON");
}

TEST_F(BrokenCheckpoint, NoWeightsFile) {
  std::filesystem::remove(file());
  EXPECT_CONTAINS(load_error(dir_.path()), "model.safetensors");
}

// A hand-made two-shard checkpoint, then an index broken in each way.
class BrokenShards : public BrokenCheckpoint {
 protected:
  void SetUp() override {
    BrokenCheckpoint::SetUp();
    std::filesystem::remove(file());
    const size_t half = tensors_.size() / 2;
    write_tensors(dir_.file("a.safetensors"), {tensors_.begin(), tensors_.begin() + half});
    write_tensors(dir_.file("b.safetensors"), {tensors_.begin() + half, tensors_.end()});
    for (size_t i = 0; i < tensors_.size(); ++i) {
      index_["weight_map"][tensors_[i].name] = i < half ? "a.safetensors" : "b.safetensors";
    }
    write_index();
    ASSERT_EQ(load_error(dir_.path()), "");
  }
  void write_index() { write_file(index_path(), index_.dump()); }
  std::string index_path() const { return dir_.file("model.safetensors.index.json"); }
  nlohmann::json index_;
};

TEST_F(BrokenShards, LoadsTheSameWeightsAsOneFile) {
  expect_same_weights(*load_model(dir_.path()).weights, weights_);
}

TEST_F(BrokenShards, TensorNotInTheIndex) {
  index_["weight_map"].erase("model.layers.0.mlp.down_proj.weight");
  write_index();
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, index_path());
  EXPECT_CONTAINS(msg, "'model.layers.0.mlp.down_proj.weight'");
}

TEST_F(BrokenShards, IndexPointsAtTheWrongShard) {
  index_["weight_map"]["model.norm.weight"] = "a.safetensors";
  write_index();
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, dir_.file("a.safetensors"));
  EXPECT_CONTAINS(msg, "'model.norm.weight'");
}

TEST_F(BrokenShards, ShardFileMissing) {
  std::filesystem::remove(dir_.file("b.safetensors"));
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, index_path());
  EXPECT_CONTAINS(msg, "b.safetensors");
  EXPECT_CONTAINS(msg, "tensor '");
}

TEST_F(BrokenShards, ShardOutsideTheModelDirectory) {
  index_["weight_map"]["model.norm.weight"] = "../b.safetensors";
  write_index();
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, index_path());
  EXPECT_CONTAINS(msg, "'model.norm.weight'");
}

TEST_F(BrokenShards, IndexThatIsNotJson) {
  write_file(index_path(), "{\"weight_map\": {");
  EXPECT_CONTAINS(load_error(dir_.path()), index_path());
  write_file(index_path(), "{\"metadata\": {}}");
  EXPECT_CONTAINS(load_error(dir_.path()), "weight_map");
}

TEST_F(BrokenShards, TruncatedShardNamesShardAndTensor) {
  const std::string bytes = testutil::read_file(dir_.file("b.safetensors"));
  write_file(dir_.file("b.safetensors"), bytes.substr(0, bytes.size() - 1));
  const std::string msg = load_error(dir_.path());
  EXPECT_CONTAINS(msg, dir_.file("b.safetensors"));
  EXPECT_CONTAINS(msg, "'" + tensors_.back().name + "'");
}

}  // namespace
}  // namespace ps
