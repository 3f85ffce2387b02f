// bench accuracy's comparison (bench/accuracy_bench.h) on small random models: the same weights
// agree exactly, int8 weights do not, and the reference tokens the candidate is fed are the ones
// each prompt decodes alone (so the batched steps' block and state-slot plumbing is right).
#include "bench/accuracy_bench.h"

#include <gtest/gtest.h>

#include "checkpoint/loader.h"
#include "cpu/model_runner.h"
#include "kernels/kernel_isa.h"
#include "tests/engine/test_model.h"

namespace ps {
namespace {

constexpr int32_t kBlock = 4;

RunnerOptions packed(WeightQuantization q = WeightQuantization::none) {
  RunnerOptions o{LinearMode::packed, 0.0, "off"};
  o.quantization = q;
  return o;
}

// Prompts of 1, 5 and 17 tokens (a block boundary crossed, one exactly not) decoding 1, 6 and
// 11 tokens, so sequences leave the batch at different steps.
Workload mixed_workload() {
  Workload w;
  w.prompts = {{7}, {11, 12, 13, 14, 15}, {}};
  for (int32_t t = 0; t < 17; ++t) w.prompts[2].push_back(20 + 3 * t);
  w.output_lens = {1, 6, 11};
  return w;
}

// The greedy tokens of one prompt decoded alone: one prefill step, then one token a step.
std::vector<int32_t> decode_alone(const LoadedModel& m, const std::vector<int32_t>& prompt,
                                  int32_t n, const RunnerOptions& options = packed()) {
  Workload one;
  one.prompts = {prompt};
  one.output_lens = {n};
  ModelRunner runner(m.weights, accuracy_cache_spec(m.config, one, kBlock), options);
  std::vector<int32_t> tokens;
  std::vector<int32_t> next = prompt;
  int32_t fed = 0;
  std::vector<float> logits;
  for (int32_t i = 0; i < n; ++i) {
    StepPlan p;
    p.seq_ids = {0};
    if (m.config.num_linear_layers() > 0) p.state_slots = {0};
    for (size_t t = 0; t < next.size(); ++t) {
      const int32_t pos = fed + static_cast<int32_t>(t);
      p.token_ids.push_back(next[t]);
      p.positions.push_back(pos);
      p.slot_mapping.push_back(pos);  // blocks 0, 1, ... in order
    }
    fed += static_cast<int32_t>(next.size());
    p.query_start = {0, static_cast<int32_t>(next.size())};
    p.context_len = {fed};
    const int32_t blocks = (static_cast<int32_t>(prompt.size()) + n + kBlock - 1) / kBlock;
    p.max_blocks_per_seq = blocks;
    for (int32_t b = 0; b < blocks; ++b) p.block_tables.push_back(b);
    p.sample_indices = {0};
    (i == 0 ? p.num_prefill_tokens : p.num_decode_tokens) = static_cast<int32_t>(next.size());
    runner.forward(p, &logits);
    const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
    tokens.push_back(static_cast<int32_t>(best));
    next = {tokens.back()};
  }
  return tokens;
}

class AccuracyBench : public ::testing::TestWithParam<std::string> {};

TEST_P(AccuracyBench, SameWeightsAgreeExactlyAndFeedTheTokensEachPromptDecodesAlone) {
  const LoadedModel m = random_model(testing_util::small_config(GetParam()), 3);
  const Workload w = mixed_workload();
  const KvCacheSpec spec = accuracy_cache_spec(m.config, w, kBlock);
  ModelRunner reference(m.weights, spec, packed());
  ModelRunner candidate(m.weights, spec, packed());
  const AccuracyReport r = compare_greedy(reference, candidate, w, kBlock);
  EXPECT_EQ(r.prompts, 3);
  EXPECT_EQ(r.positions, 1 + 6 + 11);
  EXPECT_EQ(r.top1_agree, r.positions);
  EXPECT_EQ(r.identical, 3);
  EXPECT_EQ(r.max_abs_dlogit, 0.0);
  EXPECT_EQ(r.mean_abs_dlogit, 0.0);
  EXPECT_GT(r.max_abs_logit, 0.0);
  EXPECT_DOUBLE_EQ(r.mean_first_divergence, (1 + 6 + 11) / 3.0);
  ASSERT_EQ(r.reference_tokens.size(), 3u);
  for (size_t s = 0; s < w.size(); ++s) {
    EXPECT_EQ(r.reference_tokens[s], decode_alone(m, w.prompts[s], w.output_lens[s]))
        << "prompt " << s;
  }
}

TEST_P(AccuracyBench, Int8WeightsDifferBoundedlyAndCountWhatTheyMiss) {
  const LoadedModel m = random_model(testing_util::small_config(GetParam()), 3);
  const Workload w = mixed_workload();
  const KvCacheSpec spec = accuracy_cache_spec(m.config, w, kBlock);
  ModelRunner reference(m.weights, spec, packed());
  ModelRunner candidate(m.weights, spec, packed(WeightQuantization::int8));
  const AccuracyReport r = compare_greedy(reference, candidate, w, kBlock);
  EXPECT_EQ(r.positions, 18);
  EXPECT_GT(r.max_abs_dlogit, 0.0);
  EXPECT_GT(r.mean_abs_dlogit, 0.0);
  EXPECT_LE(r.mean_abs_dlogit, r.max_abs_dlogit);
  // Quantization error is a small part of the logits' scale, not noise of their size.
  EXPECT_LT(r.max_abs_dlogit, 0.25 * r.max_abs_logit);
  EXPECT_LE(r.top1_agree, r.positions);
  EXPECT_LE(r.identical, r.prompts);
  // A prompt is identical exactly when it never missed, so misses imply non-identical prompts.
  const int64_t misses = r.positions - r.top1_agree;
  EXPECT_LE(r.prompts - r.identical, misses);
  EXPECT_EQ(misses == 0, r.identical == r.prompts);
  // The reference decodes the same tokens whoever the candidate is.
  ModelRunner again(m.weights, spec, packed());
  ModelRunner same(m.weights, spec, packed());
  EXPECT_EQ(compare_greedy(again, same, w, kBlock).reference_tokens, r.reference_tokens);
}

// A dot-product path (`candidate`) against `baseline` on the mixed workload: near it, not equal
// to it (max |dlogit| below `bound` x the largest |logit|), named in the kernel summary, and
// batch invariant: the tokens it decodes among all prompts are those each decodes alone.
void expect_near_and_batch_invariant(const LoadedModel& m, const RunnerOptions& baseline,
                                     const RunnerOptions& candidate, const char* summary,
                                     double bound) {
  const Workload w = mixed_workload();
  const KvCacheSpec spec = accuracy_cache_spec(m.config, w, kBlock);
  ModelRunner base(m.weights, spec, baseline);
  ModelRunner cand(m.weights, spec, candidate);
  EXPECT_NE(cand.kernel_summary().find(summary), std::string::npos) << cand.kernel_summary();
  const AccuracyReport r = compare_greedy(base, cand, w, kBlock);
  EXPECT_GT(r.max_abs_dlogit, 0.0);
  EXPECT_LT(r.max_abs_dlogit, bound * r.max_abs_logit);
  // Now the candidate leads: its batched greedy tokens against each prompt alone.
  ModelRunner lead(m.weights, spec, candidate);
  ModelRunner follow(m.weights, spec, packed());
  const AccuracyReport led = compare_greedy(lead, follow, w, kBlock);
  for (size_t s = 0; s < w.size(); ++s) {
    EXPECT_EQ(led.reference_tokens[s], decode_alone(m, w.prompts[s], w.output_lens[s], candidate))
        << "prompt " << s;
  }
}

// --compute-dtype bfloat16 (bf16 dot products) against the fp32 reference.
TEST_P(AccuracyBench, Bf16ComputeStaysNearFp32AndDecodesTheSameBatchedAsAlone) {
  if (!cpu_has_avx512_bf16() || active_kernel_isa() != KernelIsa::avx512) {
    GTEST_SKIP() << "no AVX512_BF16 on the active kernel ISA";
  }
  RunnerOptions bf16 = packed();
  bf16.compute_dtype = ComputeDtype::bf16;
  expect_near_and_batch_invariant(random_model(testing_util::small_config(GetParam()), 3), packed(),
                                  bf16, "compute bfloat16", 0.1);
}

// --quantization int8 --compute-dtype int8 (w8a8) against weight-only int8.
TEST_P(AccuracyBench, Int8ComputeStaysNearWeightOnlyInt8AndDecodesTheSameBatchedAsAlone) {
  if (!int8_dot_products_on(active_kernel_isa())) {
    GTEST_SKIP() << "no int8 dot products (AVX512_VNNI, AVX-VNNI) on the active kernel ISA";
  }
  RunnerOptions w8a8 = packed(WeightQuantization::int8);
  w8a8.compute_dtype = ComputeDtype::int8;
  expect_near_and_batch_invariant(random_model(testing_util::small_config(GetParam()), 3),
                                  packed(WeightQuantization::int8), w8a8, "compute int8", 0.25);
}

TEST(AccuracyBenchInput, Int8ComputeRefusesFloatWeights) {
  const LoadedModel m = random_model(testing_util::small_config(), 3);
  RunnerOptions o = packed();
  o.compute_dtype = ComputeDtype::int8;
  EXPECT_THROW(ModelRunner(m.weights, KvCacheSpec{8, kBlock}, o), std::invalid_argument);
}

TEST(AccuracyBenchInput, Bf16ComputeRefusesInt8Weights) {
  const LoadedModel m = random_model(testing_util::small_config(), 3);
  RunnerOptions o = packed(WeightQuantization::int8);
  o.compute_dtype = ComputeDtype::bf16;
  EXPECT_THROW(ModelRunner(m.weights, KvCacheSpec{8, kBlock}, o), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Families, AccuracyBench,
                         ::testing::Values("qwen3", "gemma3_text", "qwen3_5_text"));

TEST(AccuracyBenchInput, RefusesWhatItCannotCompare) {
  const LoadedModel m = random_model(testing_util::small_config(), 3);
  Workload w = mixed_workload();
  ModelRunner a(m.weights, accuracy_cache_spec(m.config, w, kBlock), packed());
  ModelRunner b(m.weights, accuracy_cache_spec(m.config, w, kBlock), packed());
  EXPECT_THROW(compare_greedy(a, b, Workload{}, kBlock), std::invalid_argument);
  Workload zero = w;
  zero.output_lens[1] = 0;
  EXPECT_THROW(compare_greedy(a, b, zero, kBlock), std::invalid_argument);
  Workload empty = w;
  empty.prompts[0].clear();
  EXPECT_THROW(compare_greedy(a, b, empty, kBlock), std::invalid_argument);
  ModelConfig wider = testing_util::small_config();
  wider.vocab_size = 600;
  const LoadedModel other = random_model(wider, 3);
  ModelRunner c(other.weights, accuracy_cache_spec(other.config, w, kBlock), packed());
  EXPECT_THROW(compare_greedy(a, c, w, kBlock), std::invalid_argument);
}

}  // namespace
}  // namespace ps
