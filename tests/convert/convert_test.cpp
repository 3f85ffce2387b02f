// Unit tests for checkpoint conversion and LoRA merging (issue #7). The PyTorch-made fixtures
// and logits comparisons live in tests/e2e/convert_pytorch.sh; these check the pieces with
// state_dicts written by libtorch's own pickler (which torch.load reads too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "checkpoint/loader.h"
#include "checkpoint/random_weights.h"
#include "checkpoint/safetensors_writer.h"
#include "convert/convert_checkpoint.h"
#include "convert/convert_names.h"
#include "convert/convert_pth_reader.h"
#include "convert/convert_writer.h"
#include "convert/lora_merge.h"
#include "model/model_weights.h"
#include "pth_export/pth_writer.h"
#include "tests/model/tiny_test_util.h"  // tensors_equal
#include "torch_bridge/torch_tensor.h"

namespace ps {
namespace {

// The fixtures are written by libtorch's own pickler (pth_export/), from the serve path's
// tensors; tensors that share a buffer stay one storage in the file (tied weights).
void write_torch_state_dict(const std::string& path, const NamedTensors& tensors) {
  std::map<const void*, at::Tensor> seen;
  TorchNamedTensors out;
  for (const auto& [name, t] : tensors) {
    auto it = seen.find(t.data_ptr());
    if (it == seen.end() || !it->second.sizes().equals(t.sizes())) {
      it = seen.insert_or_assign(t.data_ptr(), to_torch(t)).first;
    }
    out.emplace_back(name, it->second);
  }
  ps::write_torch_state_dict(path, out);
}
void write_torch_state_dict(const std::string& path, const TorchNamedTensors& tensors) {
  ps::write_torch_state_dict(path, tensors);
}

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "pagedserve_convert_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

ModelConfig small_config() {
  ModelConfig c;
  c.set_model_type("qwen3");
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 8;
  c.intermediate_size = 48;
  c.vocab_size = 64;
  return c;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The weights as MiniMind names them, tied head included (as nn.Module.state_dict() lists it).
NamedTensors minimind_state_dict(ModelWeights& w) {
  NamedTensors sd;
  for (const WeightSlot& s : weight_slots(w)) sd.emplace_back(minimind_name(s.name), *s.tensor);
  sd.emplace_back("output.weight", w.embed_tokens);
  return sd;
}

TEST(ConvertNames, MapsMiniMindAndHuggingFaceNames) {
  EXPECT_EQ(map_tensor_name("tok_embeddings.weight").hf, "model.embed_tokens.weight");
  EXPECT_EQ(map_tensor_name("layers.3.attention.wq.weight").hf,
            "model.layers.3.self_attn.q_proj.weight");
  EXPECT_EQ(map_tensor_name("layers.0.feed_forward.w1.weight").hf,
            "model.layers.0.mlp.gate_proj.weight");
  EXPECT_EQ(map_tensor_name("layers.0.feed_forward.w3.weight").hf,
            "model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(map_tensor_name("layers.0.feed_forward.w2.weight").hf,
            "model.layers.0.mlp.down_proj.weight");
  EXPECT_EQ(map_tensor_name("layers.1.attention_norm.weight").hf,
            "model.layers.1.input_layernorm.weight");
  EXPECT_EQ(map_tensor_name("layers.1.ffn_norm.weight").hf,
            "model.layers.1.post_attention_layernorm.weight");
  EXPECT_EQ(map_tensor_name("output.weight").hf, "lm_head.weight");
  EXPECT_EQ(map_tensor_name("norm.weight").hf, "model.norm.weight");
  EXPECT_EQ(map_tensor_name("model.layers.2.self_attn.k_norm.weight").hf,
            "model.layers.2.self_attn.k_norm.weight");
  EXPECT_EQ(map_tensor_name("module._orig_mod.model.norm.weight").hf, "model.norm.weight");
  EXPECT_EQ(map_tensor_name("embed_tokens.weight").hf, "model.embed_tokens.weight");
  EXPECT_EQ(map_tensor_name("freqs_cos").kind, MappedName::Kind::kIgnored);
  EXPECT_EQ(map_tensor_name("model.layers.0.self_attn.rotary_emb.inv_freq").kind,
            MappedName::Kind::kIgnored);
  EXPECT_EQ(map_tensor_name("layers.0.moe.gate.weight").kind, MappedName::Kind::kUnknown);
  EXPECT_EQ(map_tensor_name("layers.x.attention.wq.weight").kind, MappedName::Kind::kUnknown);
}

TEST(ConvertNames, MiniMindNameInvertsTheMapping) {
  ModelConfig c = small_config();
  ModelWeights w;
  w.config = c;
  for (const WeightSlot& s : weight_slots(w)) {
    EXPECT_EQ(map_tensor_name(minimind_name(s.name)).hf, s.name) << s.name;
  }
}

TEST(PthReader, ReadsWhatLibtorchPickles) {
  TempDir dir;
  const at::Tensor a = at::randn({3, 4});
  const at::Tensor b = at::randn({5}).to(at::kBFloat16);
  write_torch_state_dict(dir.file("x.pth"), TorchNamedTensors{{"a", a}, {"b", b}, {"tied", a}});
  const NamedTensors got = read_torch_state_dict(dir.file("x.pth"));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].first, "a");
  EXPECT_TRUE(tensors_equal(got[0].second, a));
  EXPECT_EQ(got[1].second.dtype(), DType::bf16);
  EXPECT_TRUE(tensors_equal(got[1].second, b));
  EXPECT_TRUE(tensors_equal(got[2].second, a));
}

TEST(PthReader, RejectsFilesThatAreNotStateDicts) {
  TempDir dir;
  write_text(dir.file("text.pth"), "hello");
  EXPECT_THROW(
      {
        try {
          read_torch_state_dict(dir.file("text.pth"));
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find("not a torch.save file"), std::string::npos);
          throw;
        }
      },
      std::runtime_error);
  write_text(dir.file("legacy.pth"), "\x80\x02\x8a\x0alegacy");
  try {
    read_torch_state_dict(dir.file("legacy.pth"));
    ADD_FAILURE() << "legacy format accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("legacy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_torch_state_dict(dir.file("absent.pth")), std::runtime_error);
}

TEST(ConvertCheckpoint, MiniMindStateDictLoadsWithTheSameWeights) {
  TempDir dir;
  ModelWeights w = make_random_weights(small_config(), 7);
  write_torch_state_dict(dir.file("model.pth"), minimind_state_dict(w));
  write_text(dir.file("tokenizer.json"), "{}");
  ConvertOptions o;
  o.from = dir.file("model.pth");
  o.to = dir.file("out");
  const ConvertReport r = convert_checkpoint(o);
  EXPECT_EQ(r.config.num_attention_heads, 4);  // read off q_norm width and q_proj rows
  EXPECT_EQ(r.config.num_key_value_heads, 2);
  EXPECT_TRUE(r.config.tie_word_embeddings);
  const LoadedModel m = load_model(o.to);
  ModelWeights loaded = *m.weights;
  const std::vector<WeightSlot> want = weight_slots(w);
  const std::vector<WeightSlot> got = weight_slots(loaded);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(tensors_equal(*want[i].tensor, *got[i].tensor)) << want[i].name;
  }
  EXPECT_TRUE(fs::exists(dir.file("out/tokenizer.json")));
}

TEST(ConvertCheckpoint, ReportsEveryProblemByNameAndWritesNothing) {
  TempDir dir;
  ModelWeights w = make_random_weights(small_config(), 7);
  NamedTensors sd = minimind_state_dict(w);
  sd.erase(sd.begin() + 3);  // layers.0.attention.wk.weight
  sd[3].second = from_torch(to_torch(sd[3].second).t().contiguous());
  sd.emplace_back("layers.0.experts.0.w1.weight", from_torch(at::zeros({2, 2})));
  write_torch_state_dict(dir.file("model.pth"), sd);
  write_text(dir.file("tokenizer.json"), "{}");
  ConvertOptions o;
  o.from = dir.file("model.pth");
  o.to = dir.file("out");
  try {
    convert_checkpoint(o);
    ADD_FAILURE() << "bad checkpoint converted";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown tensor 'layers.0.experts.0.w1.weight'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("missing tensor model.layers.0.self_attn.k_proj.weight"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("'" + sd[3].first + "'"), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(o.to));
}

// A PEFT adapter directory for `w` with LoRA on layer 0's q_proj and layer 1's down_proj.
struct Adapter {
  at::Tensor qa, qb, da, db;
};
Adapter write_peft(const std::string& dir, const ModelWeights& w, int r, int b_rank, float alpha) {
  fs::create_directories(dir);
  write_text(dir + "/adapter_config.json",
             "{\"r\": " + std::to_string(r) + ", \"lora_alpha\": " + std::to_string(alpha) +
                 ", \"target_modules\": [\"q_proj\", \"down_proj\"]}");
  Adapter a{
      at::randn({r, w.layers[0].q_proj.size(1)}), at::randn({w.layers[0].q_proj.size(0), b_rank}),
      at::randn({r, w.layers[1].down_proj.size(1)}), at::randn({w.layers[1].down_proj.size(0), r})};
  const std::string p = "base_model.model.model.layers.";
  std::vector<std::pair<std::string, at::Tensor>> named = {
      {p + "0.self_attn.q_proj.lora_A.weight", a.qa},
      {p + "0.self_attn.q_proj.lora_B.weight", a.qb},
      {p + "1.mlp.down_proj.lora_A.weight", a.da},
      {p + "1.mlp.down_proj.lora_B.weight", a.db}};
  std::vector<SafetensorsEntry> entries;
  for (auto& [name, t] : named) {
    t = t.contiguous();
    entries.push_back(
        {name,
         SafetensorsDtype::kF32,
         t.sizes().vec(),
         {static_cast<const uint8_t*>(t.data_ptr()), static_cast<size_t>(t.nbytes())}});
  }
  write_safetensors_file(dir + "/adapter_model.safetensors", entries);
  return a;
}

TEST(LoraMerge, AddsScaledLowRankProductAndLeavesTheBaseAlone) {
  TempDir dir;
  auto w = std::make_shared<ModelWeights>(make_random_weights(small_config(), 3));
  const LoadedModel base{w->config, w};
  const at::Tensor q_before = to_torch(w->layers[0].q_proj).clone();
  const Adapter a = write_peft(dir.file("adapter"), *w, 4, 4, 8.0f);
  LoraReport r;
  const LoadedModel m = merge_lora(base, dir.file("adapter"), &r);
  EXPECT_EQ(r.rank, 4);
  EXPECT_FLOAT_EQ(r.scale, 2.0f);
  EXPECT_EQ(r.modules.size(), 2u);
  EXPECT_TRUE(
      at::allclose(to_torch(m.weights->layers[0].q_proj), q_before + 2.0 * at::matmul(a.qb, a.qa)));
  EXPECT_TRUE(at::allclose(to_torch(m.weights->layers[1].down_proj),
                           to_torch(w->layers[1].down_proj) + 2.0 * at::matmul(a.db, a.da)));
  EXPECT_TRUE(tensors_equal(m.weights->layers[0].k_proj, w->layers[0].k_proj));
  EXPECT_TRUE(tensors_equal(w->layers[0].q_proj, q_before));  // base untouched
}

TEST(LoraMerge, RejectsBadRank) {
  TempDir dir;
  auto w = std::make_shared<ModelWeights>(make_random_weights(small_config(), 3));
  write_peft(dir.file("adapter"), *w, 4, 3, 8.0f);
  try {
    merge_lora(LoadedModel{w->config, w}, dir.file("adapter"));
    ADD_FAILURE() << "bad rank accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad rank"), std::string::npos) << e.what();
  }
}

TEST(LoraMerge, RejectsTensorsThatAreNotLoraWeights) {
  TempDir dir;
  auto w = std::make_shared<ModelWeights>(make_random_weights(small_config(), 3));
  write_torch_state_dict(
      dir.file("lora.pth"),
      TorchNamedTensors{{"layers.0.attention.wq.lora.A.weight", at::zeros({2, 32})},
                        {"layers.0.attention.wq.lora.B.weight", at::zeros({32, 2})},
                        {"layers.0.attention.wq.scaling", at::zeros({1})}});
  try {
    merge_lora(LoadedModel{w->config, w}, dir.file("lora.pth"));
    ADD_FAILURE() << "stray tensor accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("layers.0.attention.wq.scaling"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ps
