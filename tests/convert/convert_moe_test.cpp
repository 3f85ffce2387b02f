// The MoE rules of `pagedserve convert` (convert/convert_moe.h) on tensor names and shapes
// alone: which format a state_dict with experts becomes, and what it cannot be.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "convert/convert_checkpoint.h"
#include "convert/convert_moe.h"
#include "convert/convert_names.h"

namespace ps {
namespace {

struct FakeTensors {
  std::map<std::string, std::vector<int32_t>> shapes;
  std::set<std::string> names() const {
    std::set<std::string> n;
    for (const auto& [k, v] : shapes) n.insert(k);
    return n;
  }
  TensorRows rows() const {
    return [this](const std::string& name, int dim) -> std::optional<int32_t> {
      const auto it = shapes.find(name);
      if (it == shapes.end() || int(it->second.size()) <= dim) return std::nullopt;
      return it->second[size_t(dim)];
    };
  }
  void expert_layer(int layer, int experts, int width, int shared, int shared_width) {
    const std::string p = "model.layers." + std::to_string(layer) + ".mlp.";
    shapes[p + "gate.weight"] = {experts, 64};
    for (int e = 0; e < experts; ++e) {
      const std::string q = p + "experts." + std::to_string(e) + ".";
      shapes[q + "gate_proj.weight"] = {width, 64};
      shapes[q + "up_proj.weight"] = {width, 64};
      shapes[q + "down_proj.weight"] = {64, width};
    }
    for (int s = 0; s < shared; ++s) {
      shapes[p + "shared_experts." + std::to_string(s) + ".gate_proj.weight"] = {shared_width, 64};
    }
  }
};

ModelConfig two_layers() {
  ModelConfig c;
  c.num_hidden_layers = 2;
  c.hidden_size = 64;
  return c;
}

TEST(ConvertNames, MapsMoeRoutersAndExperts) {
  EXPECT_EQ(map_tensor_name("model.layers.1.mlp.gate.weight").hf, "model.layers.1.mlp.gate.weight");
  EXPECT_EQ(map_tensor_name("layers.0.mlp.experts.12.down_proj.weight").hf,
            "model.layers.0.mlp.experts.12.down_proj.weight");
  EXPECT_EQ(map_tensor_name("module.model.layers.0.mlp.shared_experts.0.up_proj.weight").hf,
            "model.layers.0.mlp.shared_experts.0.up_proj.weight");
  EXPECT_EQ(map_tensor_name("model.layers.0.mlp.experts.x.gate_proj.weight").kind,
            MappedName::Kind::kUnknown);
  EXPECT_EQ(map_tensor_name("model.layers.0.mlp.experts.0.w1.weight").kind,
            MappedName::Kind::kUnknown);
  EXPECT_EQ(map_tensor_name("model.layers.0.mlp.experts.gate_up_proj").kind,
            MappedName::Kind::kUnknown);  // transformers 5's fused layout is not read
}

TEST(ConvertMoe, DenseStateDictIsLeftAlone) {
  FakeTensors t;
  t.shapes["model.layers.0.mlp.gate_proj.weight"] = {128, 64};
  ModelConfig c = two_layers();
  std::vector<std::string> notes, problems;
  EXPECT_FALSE(infer_moe_config(t.names(), t.rows(), ShapeOverrides{}, &c, &notes, &problems));
  EXPECT_FALSE(c.moe.enabled());
}

TEST(ConvertMoe, MiniMind2WithSharedExpertsAndItsDefaultK) {
  FakeTensors t;
  for (int l = 0; l < 2; ++l) t.expert_layer(l, 4, 192, 1, 192);
  ModelConfig c = two_layers();
  std::vector<std::string> notes, problems;
  ASSERT_TRUE(infer_moe_config(t.names(), t.rows(), ShapeOverrides{}, &c, &notes, &problems));
  EXPECT_TRUE(problems.empty()) << problems[0];
  EXPECT_EQ(c.model_type, "minimind");
  EXPECT_FALSE(c.qk_norm);
  EXPECT_EQ(c.moe.num_experts, 4);
  EXPECT_EQ(c.moe.num_shared_experts, 1);
  EXPECT_EQ(c.intermediate_size, 192);
  EXPECT_EQ(c.moe.num_experts_per_tok, 2);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("--num-experts-per-tok"), std::string::npos);
}

TEST(ConvertMoe, MiniMind3WithAGivenK) {
  FakeTensors t;
  for (int l = 0; l < 2; ++l) t.expert_layer(l, 4, 48, 0, 0);
  t.shapes["model.layers.0.self_attn.q_norm.weight"] = {16};
  ModelConfig c = two_layers();
  ShapeOverrides given;
  given.num_experts_per_tok = 3;
  std::vector<std::string> notes, problems;
  ASSERT_TRUE(infer_moe_config(t.names(), t.rows(), given, &c, &notes, &problems));
  EXPECT_TRUE(problems.empty());
  EXPECT_TRUE(notes.empty());
  EXPECT_TRUE(c.qk_norm);
  EXPECT_EQ(c.moe.num_experts_per_tok, 3);
  EXPECT_EQ(c.moe.moe_intermediate_size, 48);
  EXPECT_FALSE(c.moe.norm_topk_only_above_one);
}

TEST(ConvertMoe, Qwen3MoeKeepsRouterlessLayersDense) {
  FakeTensors t;
  t.expert_layer(1, 8, 32, 0, 0);
  t.shapes["model.layers.1.self_attn.q_norm.weight"] = {16};
  ModelConfig c = two_layers();
  ShapeOverrides given;
  given.model_type = "qwen3_moe";
  given.num_experts_per_tok = 2;
  std::vector<std::string> notes, problems;
  ASSERT_TRUE(infer_moe_config(t.names(), t.rows(), given, &c, &notes, &problems));
  EXPECT_TRUE(problems.empty());
  EXPECT_FALSE(c.moe.is_sparse_layer(0));
  EXPECT_TRUE(c.moe.is_sparse_layer(1));
  EXPECT_FALSE(c.moe.norm_topk_prob);  // Qwen3MoeConfig's default
}

TEST(ConvertMoe, ContradictionsAreProblems) {
  FakeTensors t;
  t.expert_layer(0, 4, 48, 0, 0);
  t.shapes["model.layers.0.mlp.gate.weight"] = {5, 64};  // routes to 5, stores 4
  ModelConfig c = two_layers();
  std::vector<std::string> notes, problems;
  infer_moe_config(t.names(), t.rows(), ShapeOverrides{}, &c, &notes, &problems);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("routes to 5 experts but 4 are stored"), std::string::npos);

  ShapeOverrides dense;
  dense.model_type = "llama";
  problems.clear();
  infer_moe_config(t.names(), t.rows(), dense, &c, &notes, &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("model_type llama is dense"), std::string::npos);
}

}  // namespace
}  // namespace ps
