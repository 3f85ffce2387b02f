// naive_generate: greedy chains, EOS stops, seeded sampling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "checkpoint/random_weights.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"
#include "reference/naive_generate.h"
#include "tiny_test_util.h"

namespace ps {
namespace {

ModelWeights weights(double embed_scale = 50.0) {
  ModelConfig c = testutil::small_config("qwen3");
  c.vocab_size = 40;
  ModelWeights w = make_random_weights(c, 21);
  // Larger embeddings (tied to lm_head) give a peaked next-token distribution.
  to_torch(w.embed_tokens).mul_(embed_scale);  // a view: scales w in place
  return w;
}

int32_t last_argmax(const ModelWeights& w, const std::vector<int32_t>& seq) {
  const std::vector<float> logits = naive_logits(w, seq);
  const int64_t V = w.config.vocab_size;
  const float* row = logits.data() + (static_cast<int64_t>(seq.size()) - 1) * V;
  return static_cast<int32_t>(std::max_element(row, row + V) - row);
}

TEST(NaiveGenerate, GreedyFollowsTheArgmaxChain) {
  const ModelWeights w = weights();
  const std::vector<int32_t> out = naive_generate(w, {3, 4, 5}, 6, 0.0f, 0, {});
  ASSERT_EQ(out.size(), 6u);
  std::vector<int32_t> seq = {3, 4, 5};
  for (int32_t tok : out) {
    EXPECT_EQ(tok, last_argmax(w, seq));
    seq.push_back(tok);
  }
  EXPECT_TRUE(naive_generate(w, {3}, 0, 0.0f, 0, {}).empty());
}

TEST(NaiveGenerate, StopsRightAfterEos) {
  const ModelWeights w = weights();
  const std::vector<int32_t> free_run = naive_generate(w, {7, 8}, 5, 0.0f, 0, {});
  ASSERT_EQ(free_run.size(), 5u);
  const int32_t eos = free_run[2];
  const auto first = std::find(free_run.begin(), free_run.end(), eos);
  const std::vector<int32_t> stopped = naive_generate(w, {7, 8}, 5, 0.0f, 0, {99, eos});
  EXPECT_EQ(stopped, std::vector<int32_t>(free_run.begin(), first + 1));
}

TEST(NaiveGenerate, SeededSamplingRepeatsAndSeedsDiffer) {
  const ModelWeights w = weights();
  const auto a = naive_generate(w, {1, 2}, 8, 50.0f, 123, {});
  EXPECT_EQ(a, naive_generate(w, {1, 2}, 8, 50.0f, 123, {}));
  // At temperature 50 the distribution is near uniform over 40 tokens: 8 equal draws from two
  // seeds would be a (1/40)^8-scale coincidence.
  EXPECT_NE(a, naive_generate(w, {1, 2}, 8, 50.0f, 124, {}));
}

TEST(NaiveGenerate, SampledFrequenciesFollowTheSoftmax) {
  const ModelWeights w = weights();
  const std::vector<int32_t> prompt = {9, 10};
  const std::vector<float> logits = naive_logits(w, prompt);
  const int64_t V = w.config.vocab_size;
  const float* row = logits.data() + V;
  const float top = *std::max_element(row, row + V);
  // The lowest power-of-two temperature that leaves the top token under 80%.
  float temperature = 0.5f;
  std::vector<double> p(static_cast<size_t>(V));
  int32_t best = 0;
  do {
    temperature *= 2.0f;
    double total = 0.0;
    for (int64_t i = 0; i < V; ++i) total += (p[i] = std::exp((row[i] - top) / temperature));
    for (double& x : p) x /= total;
    best = static_cast<int32_t>(std::max_element(p.begin(), p.end()) - p.begin());
  } while (p[best] > 0.8 && temperature < 1e6f);
  ASSERT_GT(p[best], 0.2);
  ASSERT_LT(p[best], 0.8);

  const int n = 600;
  int hits = 0;
  for (int s = 0; s < n; ++s) {
    hits += naive_generate(w, prompt, 1, temperature, 1000 + s, {})[0] == best;
  }
  const double sigma = std::sqrt(n * p[best] * (1 - p[best]));
  EXPECT_NEAR(hits, n * p[best], 5 * sigma) << "temperature " << temperature;
}

TEST(NaiveGenerate, RejectsBadArguments) {
  const ModelWeights w = weights();
  EXPECT_THROW(naive_generate(w, {}, 3, 0.0f, 0, {}), std::invalid_argument);
  EXPECT_THROW(naive_generate(w, {1}, 3, -1.0f, 0, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ps
