// Speculative verification rows (StepPlan::num_draft_tokens): the forward returns logits for
// the last 1 + n rows of a sequence with n draft tokens, each equal to the oracle's logits at
// that position, next to a sequence without drafts in the same packed batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "checkpoint/random_weights.h"
#include "cpu/model_runner.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"

namespace ps {
namespace {

ModelConfig draft_config() {
  ModelConfig c;
  c.set_model_type("qwen3");
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.intermediate_size = 128;
  c.vocab_size = 300;
  c.max_position_embeddings = 256;
  c.rope_theta = 10000.0f;
  return c;
}

std::vector<int32_t> tokens_of(int32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(0, 299);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = d(rng);
  return t;
}

// Two sequences computed from scratch in one step (blocks of 4: a holds 0..2, b 3..4).
// a: 10 tokens, the last `drafts_a` of them verified as drafts; b: 5 tokens, no draft.
StepPlan two_sequences(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                       int32_t drafts_a) {
  StepPlan p;
  p.seq_ids = {1, 2};
  p.query_start = {0};
  p.max_blocks_per_seq = 3;
  p.block_tables = {0, 1, 2, 3, 4, -1};
  const std::vector<const std::vector<int32_t>*> seqs{&a, &b};
  for (int32_t s = 0; s < 2; ++s) {
    const auto& t = *seqs[s];
    for (int32_t pos = 0; pos < static_cast<int32_t>(t.size()); ++pos) {
      p.token_ids.push_back(t[pos]);
      p.positions.push_back(pos);
      p.slot_mapping.push_back(p.block_tables[s * 3 + pos / 4] * 4 + pos % 4);
    }
    p.query_start.push_back(static_cast<int32_t>(p.token_ids.size()));
    p.context_len.push_back(static_cast<int32_t>(t.size()));
  }
  p.sample_indices = {0, 1};
  p.num_draft_tokens = {drafts_a, 0};
  p.num_prefill_tokens = p.num_tokens();
  return p;
}

TEST(RunnerDraftRows, EachDraftRowMatchesTheOracleAtItsPosition) {
  const ModelConfig c = draft_config();
  auto weights = std::make_shared<ModelWeights>(make_random_weights(c, 3));
  ModelRunner runner(weights, KvCacheSpec{8, 4}, RunnerOptions{LinearMode::packed, 0.0, "off"});
  const auto a = tokens_of(10, 1), b = tokens_of(5, 2);
  const StepPlan plan = two_sequences(a, b, 3);
  EXPECT_EQ(plan.logit_rows(), (std::vector<int32_t>{6, 7, 8, 9, 14}));
  std::vector<float> logits;
  runner.forward(plan, &logits);
  const int32_t V = c.vocab_size;
  ASSERT_EQ(logits.size(), 5u * V);
  const std::vector<float> want_a = naive_logits(*weights, a);
  const std::vector<float> want_b = naive_logits(*weights, b);
  float worst = 0, scale = 0;
  for (int32_t r = 0; r < 4; ++r) {  // a's positions 6..9
    for (int32_t v = 0; v < V; ++v) {
      const float want = want_a[static_cast<size_t>(6 + r) * V + v];
      worst = std::max(worst, std::abs(logits[static_cast<size_t>(r) * V + v] - want));
      scale = std::max(scale, std::abs(want));
    }
  }
  for (int32_t v = 0; v < V; ++v) {  // b's last position
    const float want = want_b[static_cast<size_t>(4) * V + v];
    worst = std::max(worst, std::abs(logits[static_cast<size_t>(4) * V + v] - want));
  }
  EXPECT_GT(scale, 0.0f);
  EXPECT_LE(worst, 1e-4f * std::max(1.0f, scale));
  // Without drafts the same step returns only the last row of each: a's row equals the
  // fourth draft row above.
  std::vector<float> plain;
  runner.forward(two_sequences(a, b, 0), &plain);
  ASSERT_EQ(plain.size(), 2u * V);
  for (int32_t v = 0; v < V; ++v) {
    EXPECT_EQ(plain[v], logits[static_cast<size_t>(3) * V + v]) << "token " << v;
  }
}

TEST(RunnerDraftRows, RejectsDraftCountsThePlanCannotHold) {
  const ModelConfig c = draft_config();
  auto weights = std::make_shared<ModelWeights>(make_random_weights(c, 3));
  ModelRunner runner(weights, KvCacheSpec{8, 4}, RunnerOptions{LinearMode::packed, 0.0, "off"});
  const auto a = tokens_of(10, 1), b = tokens_of(5, 2);
  std::vector<float> logits;
  EXPECT_THROW(runner.forward(two_sequences(a, b, 10), &logits), std::invalid_argument);
  EXPECT_THROW(runner.forward(two_sequences(a, b, -1), &logits), std::invalid_argument);
  StepPlan p = two_sequences(a, b, 2);
  p.num_draft_tokens = {2};  // one entry for two sample indices
  EXPECT_THROW(runner.forward(p, &logits), std::invalid_argument);
}

}  // namespace
}  // namespace ps
