// The sampler draws from the distribution it documents: softmax(logits / T) restricted by
// top-k, top-p and min-p. Checked statistically on a small vocabulary, and exactly against a
// naive full-sort reference on real-sized vocabularies (where the sampler takes shortcuts).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "sampling/sampler.h"

namespace ps {
namespace {

// Softmax of logits / T in double precision.
std::vector<double> softmax(const std::vector<float>& logits, double t) {
  double m = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p;
  double s = 0;
  for (float x : logits) s += std::exp((x - m) / t);
  for (float x : logits) p.push_back(std::exp((x - m) / t) / s);
  return p;
}

std::vector<int> histogram(const std::vector<float>& logits, const SamplingParams& p, int draws) {
  RequestRng rng(20240607);
  std::vector<int> counts(logits.size(), 0);
  std::vector<float> row;
  for (int i = 0; i < draws; ++i) {
    row = logits;
    counts[Sampler::sample(row.data(), static_cast<int32_t>(row.size()), p, {}, rng).token]++;
  }
  return counts;
}

// Pearson's chi-square over tokens with expected probability > 0; those with probability 0
// must never be drawn.
double chi_square(const std::vector<int>& counts, const std::vector<double>& expected_p, int n) {
  double chi = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (expected_p[i] == 0) {
      EXPECT_EQ(counts[i], 0) << "token " << i << " should be excluded";
      continue;
    }
    double e = expected_p[i] * n;
    chi += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi;
}

// Keeps only `keep` (by index) and renormalizes.
std::vector<double> restrict_to(std::vector<double> p, const std::vector<int>& keep) {
  std::vector<double> out(p.size(), 0.0);
  double s = 0;
  for (int i : keep) s += p[i];
  for (int i : keep) out[i] = p[i] / s;
  return out;
}

const std::vector<float> kLogits = {1.0f, 2.5f, 0.3f, -1.0f, 2.0f, 0.0f, 1.7f, -0.5f};
constexpr int kDraws = 100000;
// 99.9999th percentile of chi-square: dof 7 ~ 37.6, dof 2 ~ 27.6, dof 1 ~ 24. The seed is
// fixed, so the test is deterministic; a wrong distribution gives values in the thousands.
constexpr double kChi7 = 38.0, kChi2 = 28.0, kChi1 = 24.0;

TEST(SamplerDistributionTest, FollowsSoftmaxOverTemperature) {
  for (float t : {0.7f, 1.0f, 2.0f}) {
    SamplingParams p;
    p.temperature = t;
    auto counts = histogram(kLogits, p, kDraws);
    EXPECT_LT(chi_square(counts, softmax(kLogits, t), kDraws), kChi7) << "T=" << t;
  }
  // The test can fail: T=1 draws are far from softmax(logits / 0.7).
  SamplingParams p;
  auto counts = histogram(kLogits, p, kDraws);
  EXPECT_GT(chi_square(counts, softmax(kLogits, 0.7), kDraws), 1000.0);
}

TEST(SamplerDistributionTest, TopKKeepsTheKBest) {
  SamplingParams p;
  p.temperature = 0.9f;
  p.top_k = 3;  // tokens 1 (2.5), 4 (2.0), 6 (1.7)
  auto counts = histogram(kLogits, p, kDraws);
  auto expect = restrict_to(softmax(kLogits, 0.9), {1, 4, 6});
  EXPECT_LT(chi_square(counts, expect, kDraws), kChi2);
}

TEST(SamplerDistributionTest, TopPKeepsTheSmallestPrefixReachingP) {
  // Probabilities 0.5, 0.3, 0.15, 0.05 at T=1.
  std::vector<float> logits = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  SamplingParams p;
  p.top_p = 0.75f;  // 0.5 < 0.75, 0.5 + 0.3 >= 0.75: tokens 1 and 3
  auto counts = histogram(logits, p, kDraws);
  EXPECT_LT(chi_square(counts, restrict_to(softmax(logits, 1.0), {1, 3}), kDraws), kChi1);
  p.top_p = 0.85f;  // now 0.15 is needed too
  counts = histogram(logits, p, kDraws);
  EXPECT_LT(chi_square(counts, restrict_to(softmax(logits, 1.0), {1, 3, 0}), kDraws), kChi2);
  p.top_p = 0.4f;  // the best token alone
  counts = histogram(logits, p, 1000);
  EXPECT_EQ(counts[1], 1000);
}

TEST(SamplerDistributionTest, MinPDropsTokensBelowAFractionOfTheBest) {
  std::vector<float> logits = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  SamplingParams p;
  p.min_p = 0.2f;  // bound 0.1: drops only the 0.05 token
  auto counts = histogram(logits, p, kDraws);
  EXPECT_LT(chi_square(counts, restrict_to(softmax(logits, 1.0), {1, 3, 0}), kDraws), kChi2);
  p.min_p = 0.5f;  // bound 0.25
  counts = histogram(logits, p, kDraws);
  EXPECT_LT(chi_square(counts, restrict_to(softmax(logits, 1.0), {1, 3}), kDraws), kChi1);
}

// ---- Exact agreement with a naive reference on large rows ----------------------------------

struct RefDraw {
  int32_t token;
  bool ambiguous;  // within rounding of a boundary: float and double may disagree
};

// Sorts the whole row, applies top-k, top-p, min-p, and walks the CDF in double precision.
RefDraw reference_sample(const std::vector<float>& l, const SamplingParams& p, double u) {
  const int32_t vocab = static_cast<int32_t>(l.size());
  std::vector<int32_t> order;
  for (int32_t i = 0; i < vocab; ++i) {
    if (std::isfinite(l[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return l[a] > l[b]; });
  if (p.top_k > 0 && p.top_k < vocab) order.resize(std::min<size_t>(order.size(), p.top_k));
  // The same float weights as the sampler, so only summation order differs: any disagreement
  // not within rounding of a boundary is a real bug.
  const float m = l[order[0]];
  const float inv_t = 1.0f / p.temperature;
  std::vector<double> w;
  double total = 0;
  for (int32_t id : order) {
    w.push_back(std::exp((l[id] - m) * inv_t));
    total += w.back();
  }
  const double eps = 1e-9;
  bool ambiguous = false;
  size_t kept = order.size();
  if (p.top_p < 1.0f) {
    double cum = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      double limit = p.top_p * total;
      if (std::abs(cum - limit) < eps * total) ambiguous = true;
      if (cum >= limit) {
        kept = i;
        break;
      }
      cum += w[i];
    }
  }
  for (size_t i = 1; i < kept; ++i) {
    if (p.min_p > 0 && std::abs(w[i] - p.min_p) < eps) ambiguous = true;
    if (w[i] < p.min_p) {
      kept = i;
      break;
    }
  }
  double norm = 0;
  for (size_t i = 0; i < kept; ++i) norm += w[i];
  double target = u * norm, cum = 0;
  for (size_t i = 0; i < kept; ++i) {
    cum += w[i];
    if (std::abs(cum - target) < eps * norm) ambiguous = true;
    if (target < cum) return {order[i], ambiguous};
  }
  return {order[kept - 1], true};
}

std::vector<float> llm_like_row(int32_t vocab, uint32_t seed, float spread) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, spread);
  std::vector<float> row(vocab);
  for (float& x : row) x = dist(gen);
  // A few strong candidates on top, as a trained model gives.
  for (int i = 0; i < 5; ++i) row[gen() % vocab] += 6.0f + i;
  return row;
}

void compare_with_reference(int32_t vocab, const SamplingParams& p, float spread, int trials) {
  RequestRng rng(777);
  int ambiguous = 0;
  for (int t = 0; t < trials; ++t) {
    auto row = llm_like_row(vocab, t, spread);
    RequestRng peek = rng;
    const double u = peek.uniform();
    auto work = row;
    const int32_t got = Sampler::sample(work.data(), vocab, p, {}, rng).token;
    const RefDraw ref = reference_sample(row, p, u);
    if (ref.ambiguous) {
      ++ambiguous;
      continue;
    }
    ASSERT_EQ(got, ref.token) << "vocab " << vocab << " trial " << t << " T=" << p.temperature
                              << " top_k=" << p.top_k << " top_p=" << p.top_p
                              << " min_p=" << p.min_p << " u=" << u;
  }
  EXPECT_LE(ambiguous, 1 + trials / 10);
}

TEST(SamplerDistributionTest, LargeVocabMatchesFullSortReference) {
  struct Setting {
    float t, top_p, min_p;
    int32_t top_k;
  };
  const Setting settings[] = {
      {1.0f, 1.0f, 0.0f, 0},   {0.7f, 0.9f, 0.0f, 0},  {1.0f, 0.95f, 0.05f, 0},
      {1.2f, 1.0f, 0.1f, 0},   {0.8f, 1.0f, 0.0f, 40}, {1.0f, 0.8f, 0.0f, 2000},
      {2.0f, 0.999f, 0.0f, 0}, {5.0f, 1.0f, 0.0f, 0},  {0.3f, 0.5f, 0.0f, 0},
  };
  for (int32_t vocab : {6400, 151936}) {
    for (float spread : {1.0f, 3.0f}) {
      for (const Setting& s : settings) {
        SamplingParams p;
        p.temperature = s.t;
        p.top_p = s.top_p;
        p.min_p = s.min_p;
        p.top_k = s.top_k;
        compare_with_reference(vocab, p, spread, vocab > 10000 ? 4 : 40);
      }
    }
  }
}

// Not a pass/fail timing (docs/architecture.md §7): prints the cost per row so regressions are visible.
TEST(SamplerDistributionTest, ReportsCostAt150kVocab) {
  const int32_t vocab = 151936;
  auto row = llm_like_row(vocab, 1, 2.0f);
  std::vector<float> work(vocab);
  RequestRng rng(1);
  std::vector<int32_t> history(2000);
  for (size_t i = 0; i < history.size(); ++i) history[i] = static_cast<int32_t>(i * 37 % vocab);
  SamplingContext ctx{&history, &history, nullptr};
  struct Named {
    const char* name;
    SamplingParams p;
  };
  std::vector<Named> cases(5);
  cases[0].name = "greedy";
  cases[0].p.temperature = 0;
  cases[1].name = "T=1";
  cases[2].name = "top_p=0.9";
  cases[2].p.top_p = 0.9f;
  cases[3].name = "top_k=50 + penalties + logprobs 5";
  cases[3].p.top_k = 50;
  cases[3].p.repetition_penalty = 1.1f;
  cases[3].p.frequency_penalty = 0.2f;
  cases[3].p.logprobs = 5;
  cases[4].name = "T=3 (flat)";
  cases[4].p.temperature = 3.0f;
  for (const Named& c : cases) {
    const int reps = 50;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      std::copy(row.begin(), row.end(), work.begin());
      Sampler::sample(work.data(), vocab, c.p, ctx, rng);
    }
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                    .count() /
                reps;
    std::printf("[ cost     ] vocab %d, %s: %.0f us per row (incl. copying the row)\n", vocab,
                c.name, us);
  }
}

}  // namespace
}  // namespace ps
