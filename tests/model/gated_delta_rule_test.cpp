// The gated delta rule (kernels/gated_delta_rule.h, issue #35): the chunked prefill form equals
// the token-by-token recurrent form, in outputs and in the state it leaves, for every chunk size
// (1, 7, 64, the whole sequence) and for a prompt split anywhere (the state carries over), with
// key heads shared by several value heads; bad shapes are refused.
#include "kernels/gated_delta_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace ps {
namespace {

struct Inputs {
  int32_t T, Hk, Hv, K, V;
  std::vector<float> q, k, v, g, beta, state;
};

// Random inputs shaped as a layer gives them: g = -exp(A_log) * softplus(a + dt_bias) (<= 0),
// beta = sigmoid(b).
Inputs random_inputs(int32_t T, int32_t Hk, int32_t Hv, int32_t K, int32_t V, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  Inputs in{T, Hk, Hv, K, V, {}, {}, {}, {}, {}, {}};
  auto fill = [&](std::vector<float>& x, size_t count) {
    x.resize(count);
    for (float& e : x) e = n01(rng);
  };
  fill(in.q, size_t(T) * Hk * K);
  fill(in.k, size_t(T) * Hk * K);
  fill(in.v, size_t(T) * Hv * V);
  in.g.resize(size_t(T) * Hv);
  in.beta.resize(size_t(T) * Hv);
  for (size_t i = 0; i < in.g.size(); ++i) {
    const float a = n01(rng), a_log = 0.5f * n01(rng);
    in.g[i] = -std::exp(a_log) * std::log1p(std::exp(a));
    in.beta[i] = 1.0f / (1.0f + std::exp(-n01(rng)));
  }
  fill(in.state, size_t(Hv) * K * V);
  for (float& s : in.state) s *= 0.1f;
  return in;
}

GatedDeltaArgs args_for(const Inputs& in, int32_t begin, int32_t count, std::vector<float>* state,
                        std::vector<float>* out) {
  GatedDeltaArgs a;
  a.num_tokens = count;
  a.num_k_heads = in.Hk;
  a.num_v_heads = in.Hv;
  a.k_dim = in.K;
  a.v_dim = in.V;
  a.q_stride = a.k_stride = int64_t{in.Hk} * in.K;
  a.v_stride = a.out_stride = int64_t{in.Hv} * in.V;
  a.q = in.q.data() + begin * a.q_stride;
  a.k = in.k.data() + begin * a.k_stride;
  a.v = in.v.data() + begin * a.v_stride;
  a.g = in.g.data() + int64_t{begin} * in.Hv;
  a.beta = in.beta.data() + int64_t{begin} * in.Hv;
  a.state = state->data();
  a.out = out->data() + begin * a.out_stride;
  return a;
}

struct Result {
  std::vector<float> out, state;
};

Result recurrent(const Inputs& in) {
  Result r{std::vector<float>(size_t(in.T) * in.Hv * in.V), in.state};
  gated_delta_rule_recurrent(args_for(in, 0, in.T, &r.state, &r.out));
  return r;
}

// Prefill split at `cuts` (each piece chunked with `chunk`), the state carried between pieces.
Result chunked(const Inputs& in, int32_t chunk, std::vector<int32_t> cuts = {}) {
  Result r{std::vector<float>(size_t(in.T) * in.Hv * in.V), in.state};
  cuts.push_back(in.T);
  int32_t begin = 0;
  for (int32_t end : cuts) {
    gated_delta_rule_chunked(args_for(in, begin, end - begin, &r.state, &r.out), chunk);
    begin = end;
  }
  return r;
}

float max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

TEST(GatedDeltaRule, ChunkedEqualsRecurrentForEveryChunkSize) {
  const Inputs in = random_inputs(300, 2, 4, 16, 12, 1);
  const Result want = recurrent(in);
  for (int32_t chunk : {1, 7, 64, 300}) {
    const Result got = chunked(in, chunk);
    EXPECT_LE(max_diff(got.out, want.out), 1e-4f) << "chunk " << chunk;
    EXPECT_LE(max_diff(got.state, want.state), 1e-4f) << "chunk " << chunk;
  }
}

TEST(GatedDeltaRule, APromptSplitAnywhereContinuesFromTheState) {
  const Inputs in = random_inputs(150, 1, 3, 8, 8, 2);
  const Result want = recurrent(in);
  const Result got = chunked(in, 64, {1, 40, 41, 105});
  EXPECT_LE(max_diff(got.out, want.out), 1e-4f);
  EXPECT_LE(max_diff(got.state, want.state), 1e-4f);
  // Decoding after a chunked prefill: one token at a time from the prefill's state.
  Result tail{std::vector<float>(want.out.size()), in.state};
  gated_delta_rule_chunked(args_for(in, 0, 120, &tail.state, &tail.out), 64);
  for (int32_t t = 120; t < in.T; ++t) {
    gated_delta_rule_recurrent(args_for(in, t, 1, &tail.state, &tail.out));
  }
  EXPECT_LE(max_diff(tail.out, want.out), 1e-4f);
  EXPECT_LE(max_diff(tail.state, want.state), 1e-4f);
}

// The check can fail: another state, or value heads reading the wrong key head, changes the
// outputs by far more than the bound.
TEST(GatedDeltaRule, OutputsDependOnTheStateAndOnWhichKeyHeadEachValueHeadReads) {
  Inputs in = random_inputs(20, 2, 4, 8, 8, 3);
  const Result base = recurrent(in);
  Inputs other = in;
  for (float& s : other.state) s += 0.5f;
  EXPECT_GT(max_diff(recurrent(other).out, base.out), 1e-2f);
  Inputs swapped = in;  // key heads 0 and 1 swapped: value heads 0-1 and 2-3 read the other one
  for (int32_t t = 0; t < in.T; ++t) {
    for (int32_t d = 0; d < in.K; ++d) {
      std::swap(swapped.k[size_t(t) * 2 * in.K + d], swapped.k[size_t(t) * 2 * in.K + in.K + d]);
      std::swap(swapped.q[size_t(t) * 2 * in.K + d], swapped.q[size_t(t) * 2 * in.K + in.K + d]);
    }
  }
  EXPECT_GT(max_diff(recurrent(swapped).out, base.out), 1e-2f);
}

TEST(GatedDeltaRule, RefusesInconsistentShapes) {
  Inputs in = random_inputs(4, 2, 3, 8, 8, 4);  // 3 value heads over 2 key heads
  std::vector<float> state(size_t(3) * 8 * 8), out(size_t(4) * 3 * 8);
  EXPECT_THROW(gated_delta_rule_recurrent(args_for(in, 0, 4, &state, &out)), std::invalid_argument);
  Inputs ok = random_inputs(4, 1, 2, 8, 8, 5);
  GatedDeltaArgs a = args_for(ok, 0, 4, &state, &out);
  EXPECT_THROW(gated_delta_rule_chunked(a, 0), std::invalid_argument);
  a.g = nullptr;
  EXPECT_THROW(gated_delta_rule_chunked(a, 64), std::invalid_argument);
}

}  // namespace
}  // namespace ps
