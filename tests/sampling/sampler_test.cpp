#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "sampling/sampler.h"

namespace ps {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_row(int32_t vocab, uint32_t seed, float scale = 3.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> row(vocab);
  for (float& x : row) x = dist(gen);
  return row;
}

// Samples from a copy, so one row can be sampled under several settings.
SampleResult sample_copy(std::vector<float> row, const SamplingParams& p, RequestRng& rng,
                         const SamplingContext& ctx = {}) {
  return Sampler::sample(row.data(), static_cast<int32_t>(row.size()), p, ctx, rng);
}

SamplingParams greedy_params() {
  SamplingParams p;
  p.temperature = 0;
  return p;
}

TEST(SamplerTest, GreedyIsArgmaxLowestIdOnTies) {
  RequestRng rng(1);
  EXPECT_EQ(sample_copy({0.1f, 2.0f, -1.0f, 1.5f}, greedy_params(), rng).token, 1);
  EXPECT_EQ(sample_copy({0.1f, 2.0f, -1.0f, 2.0f}, greedy_params(), rng).token, 1);
  EXPECT_EQ(sample_copy({3.0f, 3.0f, 3.0f}, greedy_params(), rng).token, 0);
  for (uint32_t s = 0; s < 20; ++s) {
    auto row = random_row(6400, s);
    int32_t expect = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    EXPECT_EQ(sample_copy(row, greedy_params(), rng).token, expect);
  }
}

TEST(SamplerTest, GreedyDrawsNothingAndSamplingDrawsExactlyOnce) {
  RequestRng rng(42);
  RequestRng mirror(42);
  auto row = random_row(1000, 3);
  sample_copy(row, greedy_params(), rng);
  SamplingParams p;
  p.top_p = 0.9f;
  p.top_k = 50;
  sample_copy(row, p, rng);
  mirror.uniform();  // the one draw of the sampled token
  EXPECT_EQ(rng.uniform(), mirror.uniform());
}

TEST(SamplerTest, TopKOneEqualsGreedy) {
  SamplingParams p;
  p.top_k = 1;
  p.temperature = 1.3f;
  RequestRng rng(5);
  for (uint32_t s = 0; s < 50; ++s) {
    auto row = random_row(500, s);
    row[s % 7] = row[(s % 7) + 1] = 50.0f;  // a tie at the top: lowest id must win
    EXPECT_EQ(sample_copy(row, p, rng).token, sample_copy(row, greedy_params(), rng).token);
  }
}

TEST(SamplerTest, SeededRequestIsReproducibleAndSeedsDiffer) {
  SamplingParams p;
  p.temperature = 1.0f;
  auto run = [&](uint64_t seed) {
    RequestRng rng(seed);
    std::vector<int32_t> out;
    for (uint32_t step = 0; step < 64; ++step) {
      out.push_back(sample_copy(random_row(200, step, 0.5f), p, rng).token);
    }
    return out;
  };
  EXPECT_EQ(run(1234), run(1234));
  EXPECT_NE(run(1234), run(1235));
  // Unseeded requests take a random seed each.
  RequestRng a(std::nullopt), b(std::nullopt);
  EXPECT_NE(a.uniform(), b.uniform());
}

TEST(SamplerTest, SeededRequestIgnoresTheRestOfTheBatch) {
  SamplingParams mine;
  mine.temperature = 0.8f;
  mine.top_p = 0.95f;
  mine.seed = 99;
  std::vector<int32_t> prompt = {1, 2, 3};

  auto run = [&](bool with_neighbours) {
    RequestRng rng(mine.seed);
    RequestRng other_rng(std::nullopt);
    SamplingParams other;
    other.top_k = 3;
    other.repetition_penalty = 1.5f;
    std::vector<int32_t> out;
    for (uint32_t step = 0; step < 40; ++step) {
      if (with_neighbours) {  // other rows of the same batch, other vocab sizes and settings
        std::vector<int32_t> hist(step, 7);
        SamplingContext octx{&prompt, &hist, nullptr};
        sample_copy(random_row(150, step + 1000), other, other_rng, octx);
        sample_copy(random_row(70000, step + 2000), other, other_rng, octx);
      }
      SamplingContext ctx{&prompt, &out, nullptr};
      out.push_back(sample_copy(random_row(3000, step, 1.0f), mine, rng, ctx).token);
    }
    return out;
  };
  EXPECT_EQ(run(false), run(true));
}

TEST(SamplerTest, RepetitionPenaltyDividesPositiveMultipliesNegativeOncePerToken) {
  std::vector<float> row = {2.0f, -2.0f, 4.0f, 1.0f, -1.0f};
  std::vector<int32_t> prompt = {0, 0, 1};
  std::vector<int32_t> output = {2, 0, 99 /* out of vocab: ignored */};
  SamplingParams p;
  p.repetition_penalty = 2.0f;
  SamplingContext ctx{&prompt, &output, nullptr};
  apply_logit_processors(row.data(), 5, p, ctx);
  EXPECT_FLOAT_EQ(row[0], 1.0f);   // seen three times, penalized once
  EXPECT_FLOAT_EQ(row[1], -4.0f);  // negative: multiplied
  EXPECT_FLOAT_EQ(row[2], 2.0f);   // seen in the output only
  EXPECT_FLOAT_EQ(row[3], 1.0f);   // never seen
  EXPECT_FLOAT_EQ(row[4], -1.0f);
  // The per-thread table is clean afterwards: a second call with no history changes nothing.
  SamplingContext empty;
  std::vector<float> row2 = {2.0f, -2.0f, 4.0f, 1.0f, -1.0f};
  apply_logit_processors(row2.data(), 5, p, empty);
  EXPECT_EQ(row2, (std::vector<float>{2.0f, -2.0f, 4.0f, 1.0f, -1.0f}));
}

TEST(SamplerTest, PresenceAndFrequencyCountOutputTokensOnly) {
  std::vector<float> row = {1.0f, 1.0f, 1.0f, 1.0f};
  std::vector<int32_t> prompt = {3, 3, 3};
  std::vector<int32_t> output = {0, 1, 1, 1};
  SamplingParams p;
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 0.25f;
  SamplingContext ctx{&prompt, &output, nullptr};
  apply_logit_processors(row.data(), 4, p, ctx);
  EXPECT_FLOAT_EQ(row[0], 1.0f - 0.25f - 0.5f);
  EXPECT_FLOAT_EQ(row[1], 1.0f - 0.75f - 0.5f);
  EXPECT_FLOAT_EQ(row[2], 1.0f);
  EXPECT_FLOAT_EQ(row[3], 1.0f);  // prompt tokens are not output
  // Negative penalties encourage repetition.
  std::vector<float> row2 = {0.0f, 0.0f};
  std::vector<int32_t> out2 = {1, 1};
  p.presence_penalty = -1.0f;
  p.frequency_penalty = -0.5f;
  SamplingContext ctx2{nullptr, &out2, nullptr};
  apply_logit_processors(row2.data(), 2, p, ctx2);
  EXPECT_FLOAT_EQ(row2[1], 2.0f);
}

TEST(SamplerTest, LogitBiasAndSuppressionInOrder) {
  std::vector<float> row = {0.0f, 0.0f, 5.0f};
  std::vector<int32_t> suppressed = {2};
  SamplingParams p;
  p.logit_bias = {{0, 3.0f}, {2, 100.0f}};
  SamplingContext ctx{nullptr, nullptr, &suppressed};
  apply_logit_processors(row.data(), 3, p, ctx);
  EXPECT_FLOAT_EQ(row[0], 3.0f);
  EXPECT_EQ(row[2], -kInf);  // suppression comes after the bias: nothing brings it back

  // A suppressed token is never drawn, even when it holds almost all the mass.
  RequestRng rng(3);
  SamplingParams hot;
  hot.temperature = 2.0f;
  for (int i = 0; i < 500; ++i) {
    auto r = sample_copy({0.0f, 0.0f, 30.0f}, hot, rng, ctx);
    ASSERT_NE(r.token, 2);
  }
  EXPECT_EQ(sample_copy({0.0f, 1.0f, 30.0f}, greedy_params(), rng, ctx).token, 1);
}

TEST(SamplerTest, BiasDecidesGreedy) {
  SamplingParams p = greedy_params();
  p.logit_bias = {{3, 10.0f}};
  RequestRng rng(1);
  EXPECT_EQ(sample_copy({5, 4, 3, 0}, p, rng).token, 3);
}

std::vector<double> log_softmax(const std::vector<float>& x) {
  double m = *std::max_element(x.begin(), x.end());
  double s = 0;
  for (float v : x) s += std::exp(v - m);
  std::vector<double> out;
  for (float v : x) out.push_back(v - m - std::log(s));
  return out;
}

TEST(SamplerTest, LogprobsAreLogSoftmaxOfProcessedLogits) {
  auto row = random_row(2000, 11);
  row[10] = row[11] = 20.0f;  // tie at the top: lower id listed first
  std::vector<int32_t> output = {10, 10, 5};
  SamplingParams p;
  p.temperature = 0.7f;
  p.top_k = 5;  // filters do not change logprobs
  p.frequency_penalty = 0.5f;
  p.logprobs = 4;
  SamplingContext ctx{nullptr, &output, nullptr};

  std::vector<float> processed = row;
  apply_logit_processors(processed.data(), 2000, p, ctx);
  auto ref = log_softmax(processed);
  std::vector<int32_t> order(2000);
  for (int32_t i = 0; i < 2000; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return processed[a] > processed[b]; });

  RequestRng rng(8);
  for (int trial = 0; trial < 20; ++trial) {
    SampleResult r = sample_copy(row, p, rng, ctx);
    EXPECT_NEAR(r.logprob, ref[r.token], 1e-4);
    ASSERT_EQ(r.top.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(r.top[i].first, order[i]);
      EXPECT_NEAR(r.top[i].second, ref[order[i]], 1e-4);
    }
  }
  EXPECT_EQ(order[0], 11);  // the penalty moved token 10 below 11

  p.logprobs = 0;
  SampleResult r0 = sample_copy(row, p, rng, ctx);
  EXPECT_TRUE(r0.top.empty());
  EXPECT_NEAR(r0.logprob, ref[r0.token], 1e-4);
  p.logprobs = -1;
  EXPECT_TRUE(sample_copy(row, p, rng, ctx).top.empty());
}

TEST(SamplerTest, BrokenRowsNeverFail) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  RequestRng rng(2);
  SamplingParams p;
  p.logprobs = 2;
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(sample_copy({nan, 1.0f, nan}, p, rng).token, 1);
  }
  EXPECT_EQ(sample_copy({nan, 1.0f, nan}, greedy_params(), rng).token, 1);
  // Everything suppressed: some token comes back, nothing crashes.
  std::vector<int32_t> all = {0, 1, 2};
  SamplingContext ctx{nullptr, nullptr, &all};
  auto r = sample_copy({1.0f, 2.0f, 3.0f}, p, rng, ctx);
  EXPECT_GE(r.token, 0);
  EXPECT_LT(r.token, 3);
  // +inf logit: that token wins.
  EXPECT_EQ(sample_copy({0.0f, kInf, 1.0f}, p, rng).token, 1);
}

}  // namespace
}  // namespace ps
