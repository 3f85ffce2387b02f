// Checkpoint layouts the engine does not hold as stored (model/fused_projections.h): Qwen3-Next
// keeps a linear layer's q, k, v and z per key head in in_proj_qkvz and its b and a in
// in_proj_ba; Qwen3.5-MoE stacks a layer's experts. stored_tensors writes those layouts, checked
// row by row here against the engine's slots, and load_model reads back exactly the slots.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "checkpoint/loader.h"
#include "checkpoint/random_weights.h"
#include "checkpoint/stored_tensors.h"
#include "tests/engine/test_model.h"
#include "tiny_test_util.h"

namespace ps {
namespace {

// Whether rows [a_row, a_row + n) of `a` hold the same floats as rows [b_row, b_row + n) of `b`
// (both read as rows of their last size).
bool same_rows(const Tensor& a, int64_t a_row, const Tensor& b, int64_t b_row, int64_t n) {
  const int64_t cols = a.size(-1);
  if (b.size(-1) != cols || (a_row + n) * cols > a.numel() || (b_row + n) * cols > b.numel()) {
    return false;
  }
  return std::memcmp(a.data_ptr<float>() + a_row * cols, b.data_ptr<float>() + b_row * cols,
                     sizeof(float) * size_t(n * cols)) == 0;
}

// The engine tests' qwen3_next model (linear, full, linear; two key heads of two value heads
// each, 16 / 12 wide; 4 experts of 32 and a shared one of 48; layer 1 dense), and the same shape
// as qwen3_5_moe_text, whose every layer is sparse.
ModelConfig hybrid_moe_config(const std::string& type) {
  ModelConfig c = testing_util::small_config("qwen3_next");
  c.model_type = type;
  if (type == "qwen3_5_moe_text") c.moe.mlp_only_layers.clear();
  return c;
}

TEST(FusedLayoutLoader, Qwen3NextAndQwen3_5MoeLayoutsRoundTrip) {
  for (const std::string type : {"qwen3_next", "qwen3_5_moe_text"}) {
    SCOPED_TRACE(type);
    const ModelConfig c = hybrid_moe_config(type);
    ModelWeights w = make_random_weights(c, 9);
    const std::vector<StoredTensor> stored = stored_tensors(w, DType::f32);
    auto find = [&](const std::string& name) -> Tensor {
      for (const StoredTensor& t : stored) {
        if (t.name == name) return t.tensor;
      }
      ADD_FAILURE() << "no stored tensor " << name;
      return Tensor::zeros({1, c.hidden_size}, DType::f32);
    };
    const Tensor gate = find("model.layers.0.mlp.shared_expert_gate.weight");
    EXPECT_EQ(gate.sizes(), (std::vector<int64_t>{1, 64}));
    if (type == "qwen3_next") {
      const BasicLayerWeights<Tensor>& l = w.layers[0];
      const Tensor qkvz = find("model.layers.0.linear_attn.in_proj_qkvz.weight");
      const Tensor ba = find("model.layers.0.linear_attn.in_proj_ba.weight");
      // A group: q 16, k 16, v 2 x 12, z 2 x 12 rows; in_proj_qkv is q (32), k (32), v (48).
      ASSERT_EQ(qkvz.sizes(), (std::vector<int64_t>{160, 64}));
      ASSERT_EQ(ba.sizes(), (std::vector<int64_t>{8, 64}));
      for (int64_t g = 0; g < 2; ++g) {
        EXPECT_TRUE(same_rows(qkvz, g * 80, l.in_proj_qkv, g * 16, 16)) << "q of key head " << g;
        EXPECT_TRUE(same_rows(qkvz, g * 80 + 16, l.in_proj_qkv, 32 + g * 16, 16)) << "k " << g;
        EXPECT_TRUE(same_rows(qkvz, g * 80 + 32, l.in_proj_qkv, 64 + g * 24, 24)) << "v " << g;
        EXPECT_TRUE(same_rows(qkvz, g * 80 + 56, l.in_proj_z, g * 24, 24)) << "z " << g;
        EXPECT_TRUE(same_rows(ba, g * 4, l.in_proj_b, g * 2, 2)) << "b " << g;
        EXPECT_TRUE(same_rows(ba, g * 4 + 2, l.in_proj_a, g * 2, 2)) << "a " << g;
      }
      find("model.layers.0.mlp.experts.3.down_proj.weight");  // Qwen3-Next's experts: one each
    } else {
      const BasicMoeLayerWeights<Tensor>& m = w.layers[1].moe;
      const Tensor gate_up = find("model.layers.1.mlp.experts.gate_up_proj");
      const Tensor down = find("model.layers.1.mlp.experts.down_proj");
      ASSERT_EQ(gate_up.sizes(), (std::vector<int64_t>{4, 64, 64}));
      ASSERT_EQ(down.sizes(), (std::vector<int64_t>{4, 64, 32}));
      for (int64_t j = 0; j < 4; ++j) {
        EXPECT_TRUE(same_rows(gate_up, j * 64, m.experts[size_t(j)].gate_proj, 0, 32)) << j;
        EXPECT_TRUE(same_rows(gate_up, j * 64 + 32, m.experts[size_t(j)].up_proj, 0, 32)) << j;
        EXPECT_TRUE(same_rows(down, j * 64, m.experts[size_t(j)].down_proj, 0, 64)) << j;
      }
      find("model.layers.0.linear_attn.in_proj_qkv.weight");  // Qwen3.5 keeps these apart
    }
    testutil::TempDir dir;
    testutil::write_file(dir.file("config.json"), c.to_json());
    write_safetensors_file(dir.file("model.safetensors"), safetensors_entries(stored));
    const LoadedModel loaded = load_model(dir.path());
    EXPECT_EQ(loaded.config.model_type, type);
    testutil::expect_same_weights(*loaded.weights, w);
  }
}

}  // namespace
}  // namespace ps
