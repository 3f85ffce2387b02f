// The grammar mask in the sampler (SamplingContext::allowed_tokens): applied before everything
// else, so no bias brings a disallowed token back and logprobs describe the constrained
// distribution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "sampling/sampler.h"

namespace ps {
namespace {

constexpr int32_t kVocab = 70;  // not a multiple of 32: the last word is partial

std::vector<float> row(uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> r(kVocab);
  for (float& x : r) x = dist(gen);
  return r;
}

std::vector<uint32_t> mask_of(const std::vector<int32_t>& allowed) {
  std::vector<uint32_t> w((kVocab + 31) / 32, 0);
  for (int32_t t : allowed) w[t / 32] |= uint32_t{1} << (t % 32);
  return w;
}

TEST(TokenMask, GreedyPicksTheBestAllowedToken) {
  std::vector<float> logits = row(1);
  std::vector<int32_t> allowed{3, 40, 64, 69};
  int32_t best = 3;
  for (int32_t t : allowed) {
    if (logits[t] > logits[best]) best = t;
  }
  auto mask = mask_of(allowed);
  SamplingParams p;
  p.temperature = 0;
  SamplingContext ctx;
  ctx.allowed_tokens = mask.data();
  RequestRng rng(1);
  EXPECT_EQ(Sampler::sample(logits.data(), kVocab, p, ctx, rng).token, best);
}

TEST(TokenMask, SampledTokensAreAlwaysAllowedEvenWithBias) {
  std::vector<int32_t> allowed{0, 31, 32, 33, 68};
  auto mask = mask_of(allowed);
  SamplingParams p;
  p.temperature = 1.5f;
  p.logit_bias = {{5, 100.0f}, {50, 100.0f}};  // disallowed: the mask wins
  p.presence_penalty = -2.0f;
  SamplingContext ctx;
  ctx.allowed_tokens = mask.data();
  std::vector<int32_t> history{5, 50, 50};
  ctx.output_ids = &history;
  RequestRng rng(7);
  std::set<int32_t> seen;
  for (int i = 0; i < 400; ++i) {
    std::vector<float> logits = row(100 + i);
    int32_t t = Sampler::sample(logits.data(), kVocab, p, ctx, rng).token;
    EXPECT_TRUE(std::find(allowed.begin(), allowed.end(), t) != allowed.end()) << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), allowed.size());  // every allowed token keeps its probability
}

TEST(TokenMask, LogprobsAreOverTheAllowedTokensOnly) {
  std::vector<float> logits = row(3);
  std::vector<int32_t> allowed{1, 2, 35, 66};
  auto mask = mask_of(allowed);
  SamplingParams p;
  p.logprobs = 10;
  SamplingContext ctx;
  ctx.allowed_tokens = mask.data();
  RequestRng rng(2);
  SampleResult r = Sampler::sample(logits.data(), kVocab, p, ctx, rng);
  double mass = 0;
  size_t finite = 0;
  for (const auto& [id, lp] : r.top) {
    if (!std::isfinite(lp)) continue;
    ++finite;
    mass += std::exp(lp);
    EXPECT_TRUE(std::find(allowed.begin(), allowed.end(), id) != allowed.end()) << id;
  }
  EXPECT_EQ(finite, allowed.size());
  EXPECT_NEAR(mass, 1.0, 1e-5);
}

}  // namespace
}  // namespace ps
