// The runner on narrow weights and a bf16 KV cache (#21): a bf16 checkpoint kept bf16 gives the
// fp32 load's logits bit for bit (widening is exact and the kernels share their arithmetic);
// int8 stays within a stated distance of fp32 (max logit difference and greedy agreement are
// printed and bounded); a bf16 cache halves the bytes per block, keeps a sequence's logits
// independent of its batch, and stays within a bf16-scaled tolerance of the fp32 oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "checkpoint/loader.h"
#include "checkpoint/random_weights.h"
#include "cpu/model_runner.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"
#include "torch_bridge/torch_tensor.h"

#include "tests/model/tiny_test_util.h"

namespace ps {
namespace {

ModelConfig lowbit_config() {
  ModelConfig c;
  c.set_model_type("qwen3");
  c.hidden_size = 128;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 32;
  c.intermediate_size = 256;
  c.vocab_size = 500;
  c.max_position_embeddings = 512;
  c.rope_theta = 10000.0f;
  return c;
}

// Random weights scaled so logits are O(1) (as runner_forward_test does), norms away from 1.
std::shared_ptr<ModelWeights> scaled_weights(const ModelConfig& c, uint64_t seed) {
  auto ps_weights = std::make_shared<ModelWeights>(make_random_weights(c, seed));
  // Zero-copy torch views: the in-place ops below change ps_weights' buffers.
  TorchWeights torch_view = to_torch(*ps_weights);
  TorchWeights* w = &torch_view;
  at::manual_seed(seed);
  w->embed_tokens.mul_(5.0);
  w->norm.copy_(1.0 + 0.3 * at::randn(w->norm.sizes()));
  for (TorchLayerWeights& l : w->layers) {
    for (at::Tensor* t :
         {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj}) {
      t->mul_(5.0);
    }
  }
  return ps_weights;
}

std::vector<int32_t> random_tokens(int32_t n, int32_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(0, vocab - 1);
  std::vector<int32_t> t(size_t(n), 0);
  for (int32_t& x : t) x = d(rng);
  return t;
}

// One step's plan: for each sequence, its tokens [from, to) with blocks laid out contiguously
// from `first_block` (each sequence owns `blocks_each` blocks). Every sequence samples.
struct Part {
  const std::vector<int32_t>* tokens;
  int32_t from, to, first_block;
};
StepPlan plan_of(const std::vector<Part>& parts, int32_t block_size, int32_t blocks_each) {
  StepPlan p;
  p.query_start.push_back(0);
  p.max_blocks_per_seq = blocks_each;
  for (size_t s = 0; s < parts.size(); ++s) {
    const Part& q = parts[s];
    p.seq_ids.push_back(int32_t(s));
    for (int32_t pos = q.from; pos < q.to; ++pos) {
      p.token_ids.push_back((*q.tokens)[size_t(pos)]);
      p.positions.push_back(pos);
      p.slot_mapping.push_back((q.first_block + pos / block_size) * block_size + pos % block_size);
    }
    p.query_start.push_back(p.query_start.back() + (q.to - q.from));
    p.context_len.push_back(q.to);
    for (int32_t b = 0; b < blocks_each; ++b) p.block_tables.push_back(q.first_block + b);
    p.sample_indices.push_back(int32_t(s));
  }
  return p;
}

// The last-token logits of `tokens` after a prefill of all but the last `decodes` tokens and
// then one decode step per remaining token, on a fresh cache region.
std::vector<float> run_sequence(ModelRunner& r, const std::vector<int32_t>& tokens, int32_t decodes,
                                int32_t block_size, int32_t first_block) {
  const int32_t n = int32_t(tokens.size()), each = 16;
  std::vector<float> logits;
  r.forward(plan_of({{&tokens, 0, n - decodes, first_block}}, block_size, each), &logits);
  for (int32_t t = n - decodes; t < n; ++t) {
    r.forward(plan_of({{&tokens, t, t + 1, first_block}}, block_size, each), &logits);
  }
  return logits;
}

double max_abs_diff(const std::vector<float>& a, const float* b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  return worst;
}

RunnerOptions packed_options() {
  RunnerOptions o;
  o.linear_mode = LinearMode::packed;  // the fp32 side must run the same kernel, not OpenBLAS
  o.tuning_cache = "off";
  return o;
}

// Scaled random weights of `c` written to `dir` stored as `stored`, loaded back as `dtype`.
LoadedModel write_and_load(const testutil::TempDir& dir, const ModelConfig& c, uint64_t seed,
                           DType stored, ModelDtype dtype) {
  auto w = scaled_weights(c, seed);
  testutil::write_checkpoint(dir.path(), *w, stored);
  LoadOptions o;
  o.dtype = dtype;
  return load_model(dir.path(), o);
}

TEST(LowbitRunner, Bf16CheckpointKeptBf16MatchesTheFp32LoadBitForBit) {
  const ModelConfig c = lowbit_config();
  auto w = scaled_weights(c, 3);
  testutil::TempDir dir;
  testutil::write_checkpoint(dir.path(), *w, DType::bf16);

  LoadOptions o16;
  o16.dtype = ModelDtype::auto_dtype;
  EXPECT_EQ(resolve_model_dtype(dir.path(), ModelDtype::auto_dtype), ModelDtype::bf16);
  const LoadedModel m16 = load_model(dir.path(), o16);
  const LoadedModel m32 = load_model(dir.path());
  EXPECT_EQ(m16.weights->layers[0].q_proj.dtype(), DType::bf16);
  EXPECT_EQ(m16.weights->embed_tokens.dtype(), DType::bf16);
  EXPECT_EQ(m16.weights->layers[0].input_layernorm.dtype(), DType::f32);
  EXPECT_FALSE(m16.weights->mapped.empty());  // zero-copy views of the file
  EXPECT_EQ(m32.weights->layers[0].q_proj.dtype(), DType::f32);

  const std::vector<int32_t> prompt = random_tokens(29, c.vocab_size, 5);
  const std::vector<float> oracle_before = naive_logits(*m16.weights, prompt);
  ModelRunner r16(m16.weights, KvCacheSpec{64, 4}, packed_options());
  ModelRunner r32(m32.weights, KvCacheSpec{64, 4}, packed_options());
  EXPECT_EQ(r16.weight_bytes_per_token() * 2, r32.weight_bytes_per_token());
  EXPECT_NE(r16.kernel_summary().find("weights bf16"), std::string::npos) << r16.kernel_summary();

  const std::vector<float> a = run_sequence(r16, prompt, 3, 4, 0);
  const std::vector<float> b = run_sequence(r32, prompt, 3, 4, 0);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  // The packed matrices' mapped pages were released; reading them again refaults the same
  // bytes: a runner packed from them now gives the same bits, and the oracle the same logits.
  ModelRunner again(m16.weights, KvCacheSpec{64, 4}, packed_options());
  EXPECT_EQ(run_sequence(again, prompt, 3, 4, 0), a);
  const std::vector<float> oracle_after = naive_logits(*m16.weights, prompt);
  EXPECT_LE(max_abs_diff(oracle_before, oracle_after.data()), 1e-5);
  const float* last = oracle_after.data() + oracle_after.size() - c.vocab_size;
  EXPECT_LE(max_abs_diff(a, last), 1e-4);
}

// A sparse layer's decode reads its router and k of its experts: weight_bytes_per_token (the
// bandwidth floor's divisor) grows by one expert per layer with each k. gpt-oss's experts are
// MXFP4 panels: 16 bytes a k-step of 32 columns plus one exponent byte per 32 weights.
TEST(LowbitRunner, SparseLayersCountOnlyTheExpertsATokenReads) {
  ModelConfig c = lowbit_config();
  c.set_model_type("gpt_oss");
  c.layer_types = {LayerType::sliding_attention, LayerType::full_attention};
  c.sliding_window = 8;
  c.moe.num_experts = 4;
  c.moe.moe_intermediate_size = c.intermediate_size;
  c.moe.norm_topk_prob = true;
  c.moe.gpt_oss_experts = true;
  c.moe.swiglu_limit = 7.0f;
  std::vector<int64_t> per_token;
  for (int32_t k = 1; k <= 4; ++k) {
    c.moe.num_experts_per_tok = k;
    auto w = std::make_shared<ModelWeights>(make_random_weights(c, 3));
    per_token.push_back(
        ModelRunner(w, KvCacheSpec{8, 4}, packed_options()).weight_bytes_per_token());
  }
  const int64_t h = c.hidden_size, i = c.intermediate_size;
  const int64_t expert = (2 * i * h + h * i) * 17 / 32;  // 4.25 bits a weight
  for (size_t k = 1; k < per_token.size(); ++k) {
    EXPECT_EQ(per_token[k] - per_token[k - 1], c.num_hidden_layers * expert) << "k " << k + 1;
  }
}

// A tied bf16 embedding is looked up in lm_head's panels: the table is not counted (nor held)
// twice, and the logits still track the oracle, which reads the checkpoint's table. An untied
// model keeps its table; int8 panels are quantized, so an int8 run reads the table too.
TEST(LowbitRunner, TiedEmbeddingIsReadFromLmHeadPanels) {
  ModelConfig c = lowbit_config();
  c.tie_word_embeddings = true;
  testutil::TempDir dir;
  const LoadedModel m = write_and_load(dir, c, 8, DType::bf16, ModelDtype::auto_dtype);
  ModelRunner r(m.weights, KvCacheSpec{64, 4}, packed_options());
  const int64_t norms = int64_t(sizeof(float)) * c.hidden_size * (1 + 2 * c.num_hidden_layers) +
                        int64_t(sizeof(float)) * c.head_dim * 2 * c.num_hidden_layers;
  EXPECT_EQ(r.weight_bytes(), r.weight_bytes_per_token() + norms);
  const std::vector<int32_t> prompt = random_tokens(23, c.vocab_size, 9);
  const std::vector<float> got = run_sequence(r, prompt, 3, 4, 0);
  const std::vector<float> oracle = naive_logits(*m.weights, prompt);
  EXPECT_LE(max_abs_diff(got, oracle.data() + oracle.size() - c.vocab_size), 1e-4);

  RunnerOptions q = packed_options();
  q.quantization = WeightQuantization::int8;
  ModelRunner r8(m.weights, KvCacheSpec{64, 4}, q);
  EXPECT_EQ(r8.weight_bytes(),
            r8.weight_bytes_per_token() + norms + 2 * c.vocab_size * c.hidden_size);

  ModelConfig u = lowbit_config();
  u.tie_word_embeddings = false;
  testutil::TempDir du;
  const LoadedModel mu = write_and_load(du, u, 8, DType::bf16, ModelDtype::auto_dtype);
  ModelRunner ru(mu.weights, KvCacheSpec{64, 4}, packed_options());
  EXPECT_EQ(ru.weight_bytes(),
            ru.weight_bytes_per_token() + norms + 2 * u.vocab_size * u.hidden_size);
}

TEST(LowbitRunner, Fp32CheckpointLoadedAsBf16IsRoundedOnce) {
  const ModelConfig c = lowbit_config();
  testutil::TempDir dir;
  const LoadedModel m = write_and_load(dir, c, 4, DType::f32, ModelDtype::bf16);
  EXPECT_EQ(m.weights->layers[1].down_proj.dtype(), DType::bf16);
  EXPECT_TRUE(m.weights->mapped.empty());  // converted copies, nothing viewing the file
  EXPECT_EQ(resolve_model_dtype(dir.path(), ModelDtype::auto_dtype), ModelDtype::f32);
  ModelRunner r(m.weights, KvCacheSpec{64, 4}, packed_options());
  const std::vector<int32_t> prompt = random_tokens(17, c.vocab_size, 6);
  const std::vector<float> got = run_sequence(r, prompt, 2, 4, 0);
  const std::vector<float> oracle = naive_logits(*m.weights, prompt);
  EXPECT_LE(max_abs_diff(got, oracle.data() + oracle.size() - c.vocab_size), 1e-4);
}

// int8 against fp32 on random weights: per output channel and per group of 32. The bound is a
// fraction of the logits' own spread, and the argmax must agree on nearly every prompt.
TEST(LowbitRunner, Int8StaysCloseToFp32) {
  const ModelConfig c = lowbit_config();
  const std::shared_ptr<const ModelWeights> w = scaled_weights(c, 8);
  ModelRunner fp32(w, KvCacheSpec{256, 4}, packed_options());
  for (int64_t group : {int64_t{0}, int64_t{32}}) {
    RunnerOptions o = packed_options();
    o.quantization = WeightQuantization::int8;
    o.quantization_group = group;
    ModelRunner i8(w, KvCacheSpec{256, 4}, o);
    EXPECT_LT(i8.weight_bytes_per_token() * 3, fp32.weight_bytes_per_token());
    double worst = 0, spread = 0;
    int agree = 0;
    const int prompts = 16;
    for (int s = 0; s < prompts; ++s) {
      const std::vector<int32_t> prompt = random_tokens(12 + s, c.vocab_size, 100 + s);
      const std::vector<float> a = run_sequence(fp32, prompt, 2, 4, (s % 8) * 16);
      const std::vector<float> b = run_sequence(i8, prompt, 2, 4, (s % 8) * 16);
      worst = std::max(worst, max_abs_diff(a, b.data()));
      const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
      spread = std::max(spread, double(*hi - *lo));
      agree += std::max_element(a.begin(), a.end()) - a.begin() ==
               std::max_element(b.begin(), b.end()) - b.begin();
    }
    std::printf("int8 %s vs fp32: max |logit diff| %.4f (logit spread %.2f), argmax agrees %d/%d\n",
                group == 0 ? "per channel" : "per group of 32", worst, spread, agree, prompts);
    EXPECT_LT(worst, 0.05 * spread);
    EXPECT_GE(agree, prompts - 2);
  }
}

// The same comparison on the shipped trained model (models/tiny, a bf16 checkpoint widened to
// fp32): prompts cut from its own vocabulary, teacher-forced; the eval e2e test
// (tests/e2e/lowbit_weights.sh) checks its answers.
TEST(LowbitRunner, Int8OnTheShippedModel) {
  const LoadedModel m = load_model(std::string(PAGEDSERVE_SOURCE_DIR) + "/models/tiny");
  const int32_t V = m.config.vocab_size;
  ModelRunner fp32(m.weights, KvCacheSpec{256, 16}, packed_options());
  RunnerOptions o = packed_options();
  o.quantization = WeightQuantization::int8;
  ModelRunner i8(m.weights, KvCacheSpec{256, 16}, o);
  double worst = 0, spread = 0;
  int agree = 0;
  const int prompts = 16;
  for (int s = 0; s < prompts; ++s) {
    const std::vector<int32_t> prompt = random_tokens(8 + s, V, 300 + s);
    const std::vector<float> a = run_sequence(fp32, prompt, 2, 16, (s % 8) * 16);
    const std::vector<float> b = run_sequence(i8, prompt, 2, 16, (s % 8) * 16);
    worst = std::max(worst, max_abs_diff(a, b.data()));
    const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
    spread = std::max(spread, double(*hi - *lo));
    agree += std::max_element(a.begin(), a.end()) - a.begin() ==
             std::max_element(b.begin(), b.end()) - b.begin();
  }
  std::printf(
      "shipped model, int8 per channel vs fp32: max |logit diff| %.4f (logit spread %.2f), "
      "argmax agrees %d/%d\n",
      worst, spread, agree, prompts);
  EXPECT_LT(worst, 0.05 * spread);
  EXPECT_GE(agree, prompts - 2);
}

TEST(LowbitRunner, Bf16KvCacheHalvesBytesKeepsBatchInvarianceAndTracksTheOracle) {
  const ModelConfig c = lowbit_config();
  EXPECT_EQ(ModelRunner::kv_bytes_per_block(c, 16, KvCacheDtype::bf16) * 2,
            ModelRunner::kv_bytes_per_block(c, 16, KvCacheDtype::f32));
  const std::shared_ptr<const ModelWeights> w = scaled_weights(c, 9);
  RunnerOptions o = packed_options();
  o.kv_cache_dtype = KvCacheDtype::bf16;
  ModelRunner r(w, KvCacheSpec{128, 4}, o);
  EXPECT_NE(r.kernel_summary().find("kv cache bfloat16"), std::string::npos);
  const std::vector<int32_t> a = random_tokens(30, c.vocab_size, 21);
  const std::vector<int32_t> b = random_tokens(25, c.vocab_size, 22);
  const std::vector<float> alone = run_sequence(r, a, 2, 4, 0);

  // a again, in other blocks, batched with b and prefilled in two chunks.
  std::vector<float> logits;
  const int32_t bs = 4, each = 16;
  r.forward(plan_of({{&a, 0, 11, 32}, {&b, 0, 19, 64}}, bs, each), &logits);
  r.forward(plan_of({{&b, 19, 20, 64}, {&a, 11, 28, 32}}, bs, each), &logits);
  r.forward(plan_of({{&a, 28, 29, 32}, {&b, 20, 21, 64}}, bs, each), &logits);
  r.forward(plan_of({{&b, 21, 22, 64}, {&a, 29, 30, 32}}, bs, each), &logits);
  const std::vector<float> batched(logits.begin() + c.vocab_size, logits.end());
  EXPECT_EQ(alone, batched);

  // bf16 keeps 8 mantissa bits: K and V are off by up to 2^-9 relative, and the logits with it.
  const std::vector<float> oracle = naive_logits(*w, a);
  const float* last = oracle.data() + oracle.size() - c.vocab_size;
  const auto [lo, hi] = std::minmax_element(last, last + c.vocab_size);
  const double diff = max_abs_diff(alone, last);
  std::printf("bf16 KV vs fp32 oracle: max |logit diff| %.4f (logit spread %.2f)\n", diff,
              double(*hi - *lo));
  EXPECT_LE(diff, 0.02 * double(*hi - *lo));
  EXPECT_GT(diff, 0.0);  // the cache really is narrower (a fp32 cache gives ~1e-5)
}

// --kv-cache-dtype auto is the model's dtype (vLLM's meaning): a bf16 load keeps a bf16 cache,
// int8 weights quantized from it too; an fp32 load or an fp16 one (the cache has no fp16 form) an
// fp32 cache; an explicit dtype wins either way. The name round-trips and a bad one is refused.
TEST(LowbitRunner, AutoKvCacheDtypeIsTheModelsDtype) {
  EXPECT_EQ(parse_kv_cache_dtype("auto"), KvCacheDtype::auto_dtype);
  EXPECT_EQ(parse_kv_cache_dtype("float32"), KvCacheDtype::f32);
  EXPECT_EQ(parse_kv_cache_dtype("bfloat16"), KvCacheDtype::bf16);
  EXPECT_STREQ(kv_cache_dtype_name(KvCacheDtype::auto_dtype), "auto");
  EXPECT_THROW(parse_kv_cache_dtype("float16"), std::invalid_argument);
  EXPECT_EQ(resolve_kv_cache_dtype(KvCacheDtype::auto_dtype, true), KvCacheDtype::bf16);
  EXPECT_EQ(resolve_kv_cache_dtype(KvCacheDtype::auto_dtype, false), KvCacheDtype::f32);
  EXPECT_EQ(resolve_kv_cache_dtype(KvCacheDtype::f32, true), KvCacheDtype::f32);
  EXPECT_EQ(resolve_kv_cache_dtype(KvCacheDtype::bf16, false), KvCacheDtype::bf16);

  const ModelConfig c = lowbit_config();
  testutil::TempDir dir;
  const LoadedModel bf16 = write_and_load(dir, c, 5, DType::bf16, ModelDtype::auto_dtype);
  const LoadedModel fp32 = load_model(dir.path(), LoadOptions{});  // --dtype float32
  LoadOptions half;
  half.dtype = ModelDtype::f16;
  const LoadedModel fp16 = load_model(dir.path(), half);
  const auto summary = [](const LoadedModel& m, RunnerOptions o) {
    o.kv_cache_dtype = KvCacheDtype::auto_dtype;
    return ModelRunner(m.weights, KvCacheSpec{32, 4}, o).kernel_summary();
  };
  EXPECT_NE(summary(bf16, packed_options()).find("kv cache bfloat16"), std::string::npos);
  RunnerOptions int8 = packed_options();
  int8.quantization = WeightQuantization::int8;
  EXPECT_NE(summary(bf16, int8).find("kv cache bfloat16"), std::string::npos);
  EXPECT_NE(summary(fp32, packed_options()).find("kv cache float32"), std::string::npos);
  EXPECT_NE(summary(fp16, packed_options()).find("kv cache float32"), std::string::npos);
}

}  // namespace
}  // namespace ps
