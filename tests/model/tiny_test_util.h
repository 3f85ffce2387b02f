#pragma once
// Shared by the loader, naive-forward and tiny-model tests: temp dirs, small configs, and
// checkpoints written tensor by tensor so tests can break them on purpose.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/random_weights.h"
#include "checkpoint/safetensors_writer.h"
#include "model/model_weights.h"
#include "torch_bridge/torch_tensor.h"

namespace ps::testutil {

// A fresh directory under the test temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "pagedserve_model_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline ModelConfig small_config(const std::string& type = "qwen3") {
  ModelConfig c;
  c.set_model_type(type);
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.intermediate_size = 128;
  c.vocab_size = 300;
  c.max_position_embeddings = 256;
  c.rope_theta = 10000.0f;
  c.eos_token_ids = {2};
  c.bos_token_id = 1;
  return c;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One tensor with its own bytes, so tests can edit names, shapes and data freely.
struct OwnedTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

// The checkpoint tensors of `weights` (lm_head only when untied), stored as `dtype`.
inline std::vector<OwnedTensor> checkpoint_tensors(ModelWeights& weights,
                                                   DType dtype = DType::f32) {
  std::vector<OwnedTensor> out;
  const SafetensorsDtype sd = dtype == DType::bf16  ? SafetensorsDtype::kBF16
                              : dtype == DType::f16 ? SafetensorsDtype::kF16
                                                    : SafetensorsDtype::kF32;
  for (const WeightSlot& slot : weight_slots(weights)) {
    const Tensor t = slot.tensor->to(dtype);
    const auto* p = static_cast<const uint8_t*>(t.data_ptr());
    out.push_back({slot.name, sd, slot.shape, std::vector<uint8_t>(p, p + t.nbytes())});
  }
  return out;
}

inline void write_tensors(const std::string& path, const std::vector<OwnedTensor>& tensors) {
  std::vector<SafetensorsEntry> entries;
  for (const OwnedTensor& t : tensors) {
    entries.push_back({t.name, t.dtype, t.shape, std::span<const uint8_t>(t.bytes)});
  }
  write_safetensors_file(path, entries, {{"format", "pt"}});
}

// config.json (+ generation_config.json) and model.safetensors for `weights`, no tokenizer.
inline void write_checkpoint(const std::string& dir, ModelWeights& weights,
                             DType dtype = DType::f32) {
  write_file(dir + "/config.json", weights.config.to_json());
  write_tensors(dir + "/model.safetensors", checkpoint_tensors(weights, dtype));
}

// Rewrites a safetensors file's JSON header through `edit`, keeping its data bytes.
inline void edit_header(const std::string& path,
                        const std::function<void(nlohmann::ordered_json&)>& edit) {
  const std::string file = read_file(path);
  uint64_t len = 0;
  std::memcpy(&len, file.data(), 8);
  auto header = nlohmann::ordered_json::parse(file.substr(8, len));
  edit(header);
  const std::string text = header.dump();
  const uint64_t new_len = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &new_len, 8);
  write_file(path, out + text + file.substr(8 + len));
}

inline std::vector<float> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.contiguous().to(at::kFloat);
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}
inline std::vector<float> to_vector(const Tensor& t) {
  return to_vector(to_torch(t));
}

// torch's equal (same sizes and values) for the serve path's tensors, or a mix.
inline bool tensors_equal(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() && at::equal(a, b);
}
inline bool tensors_equal(const Tensor& a, const Tensor& b) {
  return tensors_equal(to_torch(a), to_torch(b));
}
inline bool tensors_equal(const Tensor& a, const at::Tensor& b) {
  return tensors_equal(to_torch(a), b);
}
inline bool tensors_equal(const at::Tensor& a, const Tensor& b) {
  return tensors_equal(a, to_torch(b));
}

// Every slot of `a` and `b` (weight_slots order) defined and equal, and their lm_heads.
inline void expect_same_weights(const ModelWeights& a, const ModelWeights& b) {
  ModelWeights& ma = const_cast<ModelWeights&>(a);
  ModelWeights& mb = const_cast<ModelWeights&>(b);
  const auto sa = weight_slots(ma);
  const auto sb = weight_slots(mb);
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); ++i) {
    ASSERT_TRUE(sa[i].tensor->defined()) << sa[i].name;
    ASSERT_TRUE(sb[i].tensor->defined()) << sb[i].name;
    EXPECT_TRUE(tensors_equal(*sa[i].tensor, *sb[i].tensor)) << sa[i].name;
  }
  EXPECT_TRUE(tensors_equal(a.lm_head, b.lm_head));
}

}  // namespace ps::testutil
namespace ps {
using testutil::tensors_equal;  // every test file of tests/model/ compares tensors
}  // namespace ps
