// Mixture-of-experts layers (issue #17): config.json parsing for qwen3_moe and MiniMind's own
// format (both generations), the router's arithmetic, the grouped MoeLayer against the per-token
// oracle, and whole-model logits of the packed runner against naive_logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/loader.h"
#include "checkpoint/random_weights.h"
#include "checkpoint/tiny_model.h"
#include "cpu/model_runner.h"
#include "cpu/moe_layer.h"
#include "kernels/linear_tuner.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"
#include "reference/naive_moe.h"
#include "tests/model/tiny_test_util.h"

namespace ps {
namespace {

using json = nlohmann::json;

json qwen3_moe_json() {
  return json{{"model_type", "qwen3_moe"},
              {"hidden_size", 64},
              {"num_hidden_layers", 4},
              {"num_attention_heads", 4},
              {"num_key_value_heads", 2},
              {"head_dim", 16},
              {"intermediate_size", 128},
              {"vocab_size", 300},
              {"num_experts", 8},
              {"num_experts_per_tok", 2},
              {"moe_intermediate_size", 32},
              {"norm_topk_prob", true},
              {"decoder_sparse_step", 1},
              {"mlp_only_layers", json::array()}};
}

json minimind_json(bool v2, bool use_moe) {
  json j{{"model_type", "minimind"}, {"hidden_size", 64},        {"num_hidden_layers", 2},
         {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 300},
         {"use_moe", use_moe},       {"num_experts_per_tok", 2}, {"norm_topk_prob", true}};
  if (v2) {
    j["n_routed_experts"] = 4;
    j["n_shared_experts"] = 1;
    j["scoring_func"] = "softmax";
    j["intermediate_size"] = nullptr;  // MiniMind 2 computes it
  } else {
    j["num_experts"] = 4;
    j["moe_intermediate_size"] = 48;
    j["intermediate_size"] = 128;
  }
  return j;
}

ModelConfig parse(const json& j) {
  return ModelConfig::from_json(j.dump(), "config.json");
}

std::string parse_error(const json& j) {
  try {
    parse(j);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MoeConfig, Qwen3MoeFieldsAndSparseLayers) {
  json j = qwen3_moe_json();
  j["decoder_sparse_step"] = 2;
  j["mlp_only_layers"] = {3};
  const ModelConfig c = parse(j);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_EQ(c.moe.num_experts, 8);
  EXPECT_EQ(c.moe.num_experts_per_tok, 2);
  EXPECT_EQ(c.moe.moe_intermediate_size, 32);
  EXPECT_TRUE(c.moe.norm_topk_prob);
  // HF: sparse when layer not in mlp_only_layers and (layer + 1) % step == 0.
  EXPECT_FALSE(c.moe.is_sparse_layer(0));
  EXPECT_TRUE(c.moe.is_sparse_layer(1));
  EXPECT_FALSE(c.moe.is_sparse_layer(2));
  EXPECT_FALSE(c.moe.is_sparse_layer(3));  // would be sparse, but mlp_only_layers says dense
}

TEST(MoeConfig, Qwen3MoeDefaultsAreHfs) {
  json j = qwen3_moe_json();
  j.erase("norm_topk_prob");
  j.erase("decoder_sparse_step");
  j.erase("mlp_only_layers");
  const ModelConfig c = parse(j);
  EXPECT_FALSE(c.moe.norm_topk_prob);
  for (int32_t l = 0; l < 4; ++l) EXPECT_TRUE(c.moe.is_sparse_layer(l));
}

TEST(MoeConfig, MissingFieldIsNamed) {
  for (const char* field : {"num_experts", "num_experts_per_tok", "moe_intermediate_size"}) {
    json j = qwen3_moe_json();
    j.erase(field);
    const std::string msg = parse_error(j);
    EXPECT_NE(msg.find(std::string("missing required field \"") + field + "\""), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("config.json"), std::string::npos) << msg;
  }
  json v2 = minimind_json(true, true);
  v2.erase("n_shared_experts");
  EXPECT_NE(parse_error(v2).find("\"n_shared_experts\""), std::string::npos) << parse_error(v2);
  json v3 = minimind_json(false, true);
  v3.erase("num_experts_per_tok");
  EXPECT_NE(parse_error(v3).find("\"num_experts_per_tok\""), std::string::npos);
}

TEST(MoeConfig, BadValuesAreRefused) {
  json j = qwen3_moe_json();
  j["num_experts_per_tok"] = 9;
  EXPECT_NE(parse_error(j).find("num_experts_per_tok must be between 1 and"), std::string::npos);
  j = qwen3_moe_json();
  j["mlp_only_layers"] = {7};
  EXPECT_NE(parse_error(j).find("mlp_only_layers names layer 7"), std::string::npos);
  j = qwen3_moe_json();
  j["decoder_sparse_step"] = 0;
  EXPECT_NE(parse_error(j).find("decoder_sparse_step"), std::string::npos);
  j = qwen3_moe_json();
  j["num_experts"] = "8";
  EXPECT_NE(parse_error(j).find("\"num_experts\" must be an integer"), std::string::npos);
  json m = minimind_json(true, true);
  m["scoring_func"] = "sigmoid";
  EXPECT_NE(parse_error(m).find("scoring_func \"sigmoid\" is not supported"), std::string::npos);
  m = minimind_json(false, false);
  m["rope_scaling"] = {{"type", "yarn"}, {"factor", 16}};
  // Refused (by the RoPE check, or, where that accepts yarn, as MiniMind's own variant).
  EXPECT_NE(parse_error(m).find("rope_scaling"), std::string::npos) << parse_error(m);
}

TEST(MoeConfig, MiniMindGenerations) {
  const ModelConfig v2 = parse(minimind_json(true, true));
  EXPECT_FALSE(v2.qk_norm);  // MiniMind 2 has no q/k norms
  EXPECT_TRUE(v2.tie_word_embeddings);
  EXPECT_EQ(v2.head_dim, 16);
  EXPECT_EQ(v2.intermediate_size, 192);  // 64 * ceil(int(64 * 8 / 3) / 64)
  EXPECT_EQ(v2.moe.num_experts, 4);
  EXPECT_EQ(v2.moe.num_shared_experts, 1);
  EXPECT_EQ(v2.moe.moe_intermediate_size, 192);
  EXPECT_TRUE(v2.moe.norm_topk_only_above_one);

  const ModelConfig v3 = parse(minimind_json(false, true));
  EXPECT_TRUE(v3.qk_norm);
  EXPECT_EQ(v3.moe.num_experts, 4);
  EXPECT_EQ(v3.moe.num_shared_experts, 0);
  EXPECT_EQ(v3.moe.moe_intermediate_size, 48);
  EXPECT_FLOAT_EQ(v3.moe.norm_topk_epsilon, 1e-20f);

  const ModelConfig dense = parse(minimind_json(false, false));
  EXPECT_FALSE(dense.moe.enabled());
  json null_inter = minimind_json(false, false);
  null_inter["intermediate_size"] = nullptr;
  EXPECT_EQ(parse(null_inter).intermediate_size, 256);  // ceil(64 * pi / 64) * 64
}

TEST(MoeConfig, ToJsonReadsBack) {
  for (const json& j : {qwen3_moe_json(), minimind_json(true, true), minimind_json(false, true),
                        minimind_json(true, false), minimind_json(false, false)}) {
    const ModelConfig c = parse(j);
    const ModelConfig back = ModelConfig::from_json(c.to_json(), "round trip");
    EXPECT_EQ(back.model_type, c.model_type);
    EXPECT_EQ(back.qk_norm, c.qk_norm);
    EXPECT_EQ(back.intermediate_size, c.intermediate_size);
    EXPECT_EQ(back.moe.num_experts, c.moe.num_experts);
    EXPECT_EQ(back.moe.num_experts_per_tok, c.moe.num_experts_per_tok);
    EXPECT_EQ(back.moe.moe_intermediate_size, c.moe.moe_intermediate_size);
    EXPECT_EQ(back.moe.num_shared_experts, c.moe.num_shared_experts);
    EXPECT_EQ(back.moe.norm_topk_prob, c.moe.norm_topk_prob);
    EXPECT_EQ(back.moe.norm_topk_only_above_one, c.moe.norm_topk_only_above_one);
  }
}

TEST(MoeRouter, SoftmaxTopKAndRenormalisation) {
  MoeConfig m;
  m.num_experts = 4;
  m.num_experts_per_tok = 2;
  const float logits[4] = {0.5f, 2.0f, -1.0f, 1.5f};
  double z = 0;
  for (float l : logits) z += std::exp(double(l));
  int32_t experts[2];
  float weights[2];
  route_row(logits, m, experts, weights);
  EXPECT_EQ(experts[0], 1);  // ascending id: experts 1 (2.0) and 3 (1.5)
  EXPECT_EQ(experts[1], 3);
  EXPECT_NEAR(weights[0], std::exp(2.0) / z, 1e-6);
  EXPECT_NEAR(weights[1], std::exp(1.5) / z, 1e-6);

  m.norm_topk_prob = true;
  route_row(logits, m, experts, weights);
  const double kept = std::exp(2.0) + std::exp(1.5);
  EXPECT_NEAR(weights[0], std::exp(2.0) / kept, 1e-6);
  EXPECT_NEAR(weights[0] + weights[1], 1.0, 1e-6);

  // MiniMind 2 leaves a single expert's weight as the softmax gave it.
  m.num_experts_per_tok = 1;
  m.norm_topk_only_above_one = true;
  route_row(logits, m, experts, weights);
  EXPECT_EQ(experts[0], 1);
  EXPECT_NEAR(weights[0], std::exp(2.0) / z, 1e-6);
  m.norm_topk_only_above_one = false;
  route_row(logits, m, experts, weights);
  EXPECT_NEAR(weights[0], 1.0, 1e-6);
}

// Random weights scaled up so routing is decisive and logits are O(1) (see
// runner_forward_test.cpp's test_weights): a 1e-4 check near zero would prove little.
std::shared_ptr<ModelWeights> scaled_weights(const ModelConfig& c, uint64_t seed) {
  auto ps_weights = std::make_shared<ModelWeights>(make_random_weights(c, seed));
  // Zero-copy torch views: the in-place ops below change ps_weights' buffers.
  TorchWeights tw = to_torch(*ps_weights);
  TorchWeights* w = &tw;
  at::manual_seed(static_cast<int64_t>(seed));
  w->embed_tokens.mul_(5.0);
  if (w->lm_head.defined() && w->lm_head.data_ptr() != w->embed_tokens.data_ptr()) {
    w->lm_head.mul_(5.0);
  }
  auto jitter = [](at::Tensor& t) {
    if (t.defined()) t.copy_(1.0 + 0.3 * at::randn(t.sizes()));
  };
  jitter(w->norm);
  for (TorchLayerWeights& l : w->layers) {
    for (at::Tensor* t :
         {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj}) {
      if (t->defined()) t->mul_(5.0);
    }
    for (at::Tensor* t : {&l.input_layernorm, &l.post_attention_layernorm, &l.q_norm, &l.k_norm}) {
      jitter(*t);
    }
    if (!l.moe.defined()) continue;
    l.moe.router.mul_(25.0);
    for (auto* list : {&l.moe.experts, &l.moe.shared}) {
      for (BasicExpertWeights<at::Tensor>& e : *list) {
        for (at::Tensor* t : {&e.gate_proj, &e.up_proj, &e.down_proj}) t->mul_(5.0);
      }
    }
  }
  return ps_weights;
}

ModelConfig moe_config(const std::string& flavour) {
  ModelConfig c = parse(flavour == "qwen3_moe"     ? qwen3_moe_json()
                        : flavour == "minimind_v2" ? minimind_json(true, true)
                        : flavour == "minimind_v3" ? minimind_json(false, true)
                                                   : minimind_json(false, false));
  c.max_position_embeddings = 256;
  return c;
}

class MoeFlavours : public ::testing::TestWithParam<std::string> {};

TEST_P(MoeFlavours, GroupedLayerMatchesPerTokenOracle) {
  const ModelConfig c = moe_config(GetParam());
  if (!c.moe.enabled()) GTEST_SKIP() << "dense";
  auto w = scaled_weights(c, 3);
  const MoeLayerWeights& moe = w->layers[0].moe;
  ASSERT_TRUE(moe.defined());
  LinearTuner tuner(LinearMode::packed);
  const MoeLayer layer(moe, c, tuner);
  at::manual_seed(5);
  const int64_t rows = 37;
  const at::Tensor x = at::randn({rows, c.hidden_size});
  const at::Tensor residual = at::randn({rows, c.hidden_size});
  at::Tensor y = residual.clone();
  MoeScratch scratch;
  layer.run(x.data_ptr<float>(), rows, y.data_ptr<float>(), &scratch);
  const at::Tensor want = residual + naive_moe_mlp(to_torch(*w).layers[0].moe, c, x);
  EXPECT_LE((y - want).abs().max().item<float>(), 1e-4f);
  int64_t assigned = 0;
  for (int64_t n : layer.last_expert_rows()) assigned += n;
  EXPECT_EQ(assigned, rows * c.moe.num_experts_per_tok);
}

TEST_P(MoeFlavours, RunnerMatchesNaiveLogitsInOneBatch) {
  const ModelConfig c = moe_config(GetParam());
  auto w = scaled_weights(c, 11);
  std::mt19937 rng(4);
  std::uniform_int_distribution<int32_t> tok(3, c.vocab_size - 1);
  const std::vector<int32_t> lengths = {1, 5, 17, 9, 21, 2};
  std::vector<std::vector<int32_t>> seqs;
  for (int32_t n : lengths) {
    std::vector<int32_t> s(static_cast<size_t>(n));
    for (auto& t : s) t = tok(rng);
    seqs.push_back(s);
  }
  constexpr int32_t kBlock = 8, kMaxBlocks = 8;
  RunnerOptions packed;
  packed.linear_mode = LinearMode::packed;
  ModelRunner runner(w, KvCacheSpec{int32_t(seqs.size()) * kMaxBlocks, kBlock}, packed);
  // One prefill step holding every sequence, then one decode step for all of them.
  auto plan_for = [&](bool prefill) {
    StepPlan p;
    p.max_blocks_per_seq = kMaxBlocks;
    p.query_start = {0};
    for (size_t s = 0; s < seqs.size(); ++s) {
      p.seq_ids.push_back(int64_t(s));
      const int32_t len = int32_t(seqs[s].size());
      const int32_t begin = prefill ? 0 : len - 1;
      for (int32_t i = begin; i < len; ++i) {
        p.token_ids.push_back(seqs[s][size_t(i)]);
        p.positions.push_back(i);
        p.slot_mapping.push_back(int32_t(s) * kMaxBlocks * kBlock + i);
      }
      p.query_start.push_back(p.query_start.back() + (len - begin));
      p.context_len.push_back(len);
      for (int32_t b = 0; b < kMaxBlocks; ++b)
        p.block_tables.push_back(int32_t(s) * kMaxBlocks + b);
      p.sample_indices.push_back(int32_t(s));
    }
    (prefill ? p.num_prefill_tokens : p.num_decode_tokens) = int32_t(p.token_ids.size());
    return p;
  };
  auto check = [&](const std::vector<float>& logits, const char* step) {
    for (size_t s = 0; s < seqs.size(); ++s) {
      const std::vector<float> ref = naive_logits(*w, seqs[s]);
      const float* want = ref.data() + (seqs[s].size() - 1) * size_t(c.vocab_size);
      const float* got = logits.data() + s * size_t(c.vocab_size);
      float worst = 0, scale = 0;
      for (int32_t v = 0; v < c.vocab_size; ++v) {
        worst = std::max(worst, std::fabs(got[v] - want[v]));
        scale = std::max(scale, std::fabs(want[v]));
      }
      EXPECT_LE(worst, 1e-4f) << step << " seq " << s;
      EXPECT_GT(scale, 0.5f) << "logits too small for the check to mean much";
    }
  };
  std::vector<float> logits;
  runner.forward(plan_for(true), &logits);
  check(logits, "prefill");
  for (auto& s : seqs) s.push_back(tok(rng));
  runner.forward(plan_for(false), &logits);
  check(logits, "decode");
}

TEST_P(MoeFlavours, TinyModelWritesAndLoadsBack) {
  testutil::TempDir dir;
  TinyModelOptions o;
  o.config = moe_config(GetParam());
  o.seed = 9;
  write_tiny_model(dir.path(), o);
  const LoadedModel m = load_model(dir.path());
  EXPECT_EQ(m.config.moe.num_experts, o.config.moe.num_experts);
  EXPECT_EQ(m.config.qk_norm, o.config.qk_norm);
  const ModelWeights want = make_random_weights(o.config, 9);
  const std::vector<int32_t> tokens = {5, 9, 200, 31};
  const std::vector<float> a = naive_logits(*m.weights, tokens);
  const std::vector<float> b = naive_logits(want, tokens);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(Families, MoeFlavours,
                         ::testing::Values("qwen3_moe", "minimind_v2", "minimind_v3",
                                           "minimind_dense"));

// Qwen3-Next / Qwen3.5-MoE's shared expert: its output times sigmoid(x . shared_expert_gate) per
// row, beside the routed experts. The gate is scaled so that it ranges well inside (0, 1); an
// ungated layer must then miss the oracle.
TEST(MoeLayerSharedExpert, GatedSharedExpertMatchesPerTokenOracle) {
  ModelConfig c = moe_config("qwen3_moe");
  c.moe.shared_expert_intermediate_size = 48;
  auto w = scaled_weights(c, 13);
  TorchWeights tw = to_torch(*w);  // views: scaling them scales w's buffers
  TorchMoeLayerWeights& moe = tw.layers[0].moe;
  ASSERT_TRUE(moe.shared_expert_gate.defined());
  ASSERT_EQ(moe.shared.size(), 1u);
  moe.shared_expert_gate.mul_(40.0);
  for (at::Tensor* t : {&moe.shared[0].gate_proj, &moe.shared[0].up_proj, &moe.shared[0].down_proj})
    t->mul_(5.0);
  LinearTuner tuner(LinearMode::packed);
  const MoeLayer layer(w->layers[0].moe, c, tuner);
  at::manual_seed(6);
  const int64_t rows = 29;
  const at::Tensor x = at::randn({rows, c.hidden_size});
  const at::Tensor gate = at::sigmoid(at::linear(x, moe.shared_expert_gate));
  EXPECT_LT(gate.min().item<float>(), 0.2f);
  EXPECT_GT(gate.max().item<float>(), 0.8f);
  at::Tensor y = at::zeros({rows, c.hidden_size});
  MoeScratch scratch;
  layer.run(x.data_ptr<float>(), rows, y.data_ptr<float>(), &scratch);
  const at::Tensor want = naive_moe_mlp(moe, c, x);
  EXPECT_LE((y - want).abs().max().item<float>(), 1e-4f);
  TorchMoeLayerWeights ungated = moe;
  ungated.shared_expert_gate = at::Tensor();
  EXPECT_GT((naive_moe_mlp(ungated, c, x) - want).abs().max().item<float>(), 0.1f);
}

TEST(MoeLayerCost, UnusedExpertsGetNoRows) {
  ModelConfig c = moe_config("qwen3_moe");
  c.moe.num_experts_per_tok = 1;
  auto w = scaled_weights(c, 21);
  LinearTuner tuner(LinearMode::packed);
  const MoeLayer layer(w->layers[0].moe, c, tuner);
  const at::Tensor x = at::randn({1, c.hidden_size});
  at::Tensor y = at::zeros({1, c.hidden_size});
  MoeScratch scratch;
  layer.run(x.data_ptr<float>(), 1, y.data_ptr<float>(), &scratch);
  const auto& rows = layer.last_expert_rows();
  EXPECT_EQ(std::count(rows.begin(), rows.end(), 0), c.moe.num_experts - 1);
}

TEST(MoeLoader, ExpertCountDisagreeingWithTheCheckpointIsNamed) {
  testutil::TempDir dir;
  TinyModelOptions o;
  o.config = moe_config("qwen3_moe");
  write_tiny_model(dir.path(), o);
  json j = json::parse(std::ifstream(dir.file("config.json")));
  j["num_experts"] = 9;  // the checkpoint stores 8
  std::ofstream(dir.file("config.json")) << j.dump();
  try {
    load_model(dir.path());
    FAIL() << "loaded a checkpoint whose router has the wrong expert count";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.layers.0.mlp.gate.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("9, 64"), std::string::npos) << msg;
  }
}

TEST(MoeLoader, MissingExpertTensorIsNamed) {
  testutil::TempDir dir;
  ModelConfig c = moe_config("qwen3_moe");
  ModelWeights w = make_random_weights(c, 1);
  std::vector<testutil::OwnedTensor> tensors = testutil::checkpoint_tensors(w);
  std::erase_if(tensors, [](const testutil::OwnedTensor& t) {
    return t.name == "model.layers.1.mlp.experts.5.down_proj.weight";
  });
  testutil::write_file(dir.file("config.json"), c.to_json());
  testutil::write_tensors(dir.file("model.safetensors"), tensors);
  try {
    load_model(dir.path());
    FAIL() << "loaded a checkpoint missing an expert";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.1.mlp.experts.5.down_proj.weight"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ps
