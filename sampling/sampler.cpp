#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sampling/bucketed_draw.h"
#include "sampling/top_tokens.h"

namespace ps {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Scratch {
  std::vector<ScoredToken> cand;
  std::vector<float> weight;  // exp((logit - max) / T) of each candidate: the best has 1
  std::vector<ScoredToken> top;
};
thread_local Scratch t_scratch;

// NaN -> -inf, +inf -> float max (so max - max stays 0); returns the argmax, lowest id on ties.
int32_t sanitize_and_argmax(float* logits, int32_t vocab) {
  constexpr float kMax = std::numeric_limits<float>::max();
  int32_t best = 0;
  float best_value = -kInf;
  for (int32_t i = 0; i < vocab; ++i) {
    float x = logits[i];
    if (!(x <= kMax)) {  // one comparison catches both NaN and +inf
      x = std::isnan(x) ? -kInf : kMax;
      logits[i] = x;
    }
    if (x > best_value) {
      best_value = x;
      best = i;
    }
  }
  return best;
}

// top-k path: the k best tokens are few, so they are simply sorted; then top-p over the
// top-k distribution, min-p, and the inverse CDF.
int32_t draw_top_k(const float* logits, int32_t vocab, const SamplingParams& p, float max_logit,
                   double u) {
  Scratch& s = t_scratch;
  select_top_tokens(logits, vocab, p.top_k, s.cand);
  const float inv_t = 1.0f / p.temperature;
  s.weight.resize(s.cand.size());
  double total = 0;
  for (size_t i = 0; i < s.cand.size(); ++i) {
    s.weight[i] = std::exp((s.cand[i].logit - max_logit) * inv_t);
    total += s.weight[i];
  }
  const std::vector<float>& w = s.weight;
  size_t kept = s.cand.size();
  while (kept > 1 && w[kept - 1] == 0.0f) --kept;  // -inf or underflowed: probability 0
  if (p.top_p < 1.0f) {
    const double limit = static_cast<double>(p.top_p) * total;
    double cum = 0;
    size_t n = 0;
    for (; n < kept && cum < limit; ++n) cum += w[n];
    kept = n;
  }
  for (size_t i = 1; i < kept; ++i) {
    if (w[i] < p.min_p) {  // w is p / p_max
      kept = i;
      break;
    }
  }
  double norm = 0;
  for (size_t i = 0; i < kept; ++i) norm += w[i];
  const double target = u * norm;
  double cum = 0;
  for (size_t i = 0; i < kept; ++i) {
    cum += w[i];
    if (target < cum) return s.cand[i].id;
  }
  return s.cand[kept - 1].id;  // rounding put the target past the end
}

void fill_logprobs(const float* logits, int32_t vocab, float max_logit, int32_t n,
                   SampleResult& r) {
  double sum = 0;
  for (int32_t i = 0; i < vocab; ++i) sum += std::exp(logits[i] - max_logit);
  const float log_z = max_logit + static_cast<float>(std::log(sum));
  r.logprob = logits[r.token] - log_z;
  if (n <= 0) return;
  select_top_tokens(logits, vocab, n, t_scratch.top);
  r.top.reserve(t_scratch.top.size());
  for (const ScoredToken& t : t_scratch.top) r.top.emplace_back(t.id, t.logit - log_z);
}

// Word at a time: a word of 32 allowed tokens (most words of a permissive mask) costs one
// test, a word of none (most words of a strict mask) one straight fill.
void apply_token_mask(float* logits, int32_t vocab, const uint32_t* allowed) {
  const int32_t words = (vocab + 31) / 32;
  for (int32_t w = 0; w < words; ++w) {
    const uint32_t bits = allowed[w];
    if (bits == ~uint32_t{0}) continue;
    const int32_t base = w * 32;
    const int32_t end = std::min(base + 32, vocab);
    if (bits == 0) {
      std::fill(logits + base, logits + end, -kInf);
      continue;
    }
    for (int32_t t = base; t < end; ++t) {
      if (!(bits >> (t - base) & 1)) logits[t] = -kInf;
    }
  }
}

}  // namespace

SampleResult Sampler::sample(float* logits, int32_t vocab, const SamplingParams& p,
                             const SamplingContext& ctx, RequestRng& rng) {
  if (ctx.allowed_tokens) apply_token_mask(logits, vocab, ctx.allowed_tokens);
  apply_logit_processors(logits, vocab, p, ctx);
  const int32_t argmax = sanitize_and_argmax(logits, vocab);
  const float max_logit = logits[argmax];

  SampleResult r;
  if (p.greedy()) {
    r.token = argmax;
  } else {
    // Drawn before any early exit, so the request's stream advances once per token always.
    const double u = rng.uniform();
    // A row with no finite logit (everything suppressed) has nothing to draw from.
    if (max_logit == -kInf) {
      r.token = argmax;
    } else if (p.top_k > 0 && p.top_k < vocab) {
      r.token = draw_top_k(logits, vocab, p, max_logit, u);
    } else {
      r.token = draw_bucketed(logits, vocab, max_logit, p, u);
    }
  }
  if (p.logprobs >= 0) {
    if (max_logit == -kInf) {
      r.logprob = -kInf;  // nothing had any probability
    } else {
      fill_logprobs(logits, vocab, max_logit, p.logprobs, r);
    }
  }
  return r;
}

SampleResult Sampler::score(float* logits, int32_t vocab, int32_t token, int32_t top_n) {
  const int32_t argmax = sanitize_and_argmax(logits, vocab);
  SampleResult r;
  r.token = token;
  fill_logprobs(logits, vocab, logits[argmax], top_n, r);
  const ScoredToken self{logits[token], token};
  r.rank = 1;
  for (int32_t i = 0; i < vocab; ++i) r.rank += ranks_before({logits[i], i}, self) ? 1 : 0;
  return r;
}

}  // namespace ps
