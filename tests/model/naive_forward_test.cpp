// naive_logits against a plain-loop decoder written here in double precision, plus causality.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "checkpoint/random_weights.h"
#include "model/model_weights.h"
#include "reference/naive_forward.h"
#include "tiny_test_util.h"

namespace ps {
namespace {

using Vec = std::vector<double>;

// Row-major [rows, cols] copy of a 2-D weight in double.
struct Mat {
  int64_t rows = 0, cols = 0;
  Vec v;
  explicit Mat(const Tensor& t) : rows(t.size(0)), cols(t.dim() > 1 ? t.size(1) : 1) {
    const std::vector<float> f = testutil::to_vector(t);
    v.assign(f.begin(), f.end());
  }
  double at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

Vec vec(const Tensor& t) {
  const std::vector<float> f = testutil::to_vector(t);
  return Vec(f.begin(), f.end());
}

Vec matvec(const Mat& w, const Vec& x) {
  Vec y(static_cast<size_t>(w.rows), 0.0);
  for (int64_t r = 0; r < w.rows; ++r) {
    for (int64_t c = 0; c < w.cols; ++c) y[r] += w.at(r, c) * x[c];
  }
  return y;
}

Vec rmsnorm(const Vec& x, const Vec& w, double eps, size_t begin = 0, size_t n = 0) {
  if (n == 0) n = x.size();
  double ss = 0.0;
  for (size_t i = 0; i < n; ++i) ss += x[begin + i] * x[begin + i];
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
  Vec out(n);
  for (size_t i = 0; i < n; ++i) out[i] = x[begin + i] * scale * w[i];
  return out;
}

// The decoder of the Hugging Face modeling code, one token at a time with explicit loops.
std::vector<Vec> reference_logits(const ModelWeights& w, const std::vector<int32_t>& tokens) {
  const ModelConfig& c = w.config;
  const size_t T = tokens.size();
  const int64_t hd = c.head_dim, nh = c.num_attention_heads, nkv = c.num_key_value_heads;
  const double eps = c.rms_norm_eps;
  const Mat embed(w.embed_tokens);
  std::vector<Vec> x(T);
  for (size_t t = 0; t < T; ++t) {
    x[t].resize(static_cast<size_t>(c.hidden_size));
    for (int64_t i = 0; i < c.hidden_size; ++i) x[t][i] = embed.at(tokens[t], i);
  }
  auto rope = [&](Vec& head, size_t pos, size_t off) {
    const int64_t half = hd / 2;
    for (int64_t i = 0; i < half; ++i) {
      const double inv_freq = std::pow(static_cast<double>(c.rope_theta), -2.0 * i / hd);
      const double a = static_cast<double>(pos) * inv_freq;
      const double x1 = head[off + i], x2 = head[off + i + half];
      head[off + i] = x1 * std::cos(a) - x2 * std::sin(a);
      head[off + i + half] = x2 * std::cos(a) + x1 * std::sin(a);
    }
  };
  for (const LayerWeights& l : w.layers) {
    const Mat q_proj(l.q_proj), k_proj(l.k_proj), v_proj(l.v_proj), o_proj(l.o_proj);
    const Mat gate(l.gate_proj), up(l.up_proj), down(l.down_proj);
    const Vec ln1 = vec(l.input_layernorm), ln2 = vec(l.post_attention_layernorm);
    std::vector<Vec> q(T), k(T), v(T);
    for (size_t t = 0; t < T; ++t) {
      const Vec h = rmsnorm(x[t], ln1, eps);
      q[t] = matvec(q_proj, h);
      k[t] = matvec(k_proj, h);
      v[t] = matvec(v_proj, h);
      if (c.attention_bias) {
        const Vec qb = vec(l.q_bias), kb = vec(l.k_bias), vb = vec(l.v_bias);
        for (size_t i = 0; i < q[t].size(); ++i) q[t][i] += qb[i];
        for (size_t i = 0; i < k[t].size(); ++i) k[t][i] += kb[i], v[t][i] += vb[i];
      }
      for (int64_t h_ = 0; h_ < nh; ++h_) {
        const size_t off = static_cast<size_t>(h_ * hd);
        if (c.qk_norm) {
          const Vec n = rmsnorm(q[t], vec(l.q_norm), eps, off, static_cast<size_t>(hd));
          std::copy(n.begin(), n.end(), q[t].begin() + static_cast<std::ptrdiff_t>(off));
        }
        rope(q[t], t, off);
      }
      for (int64_t h_ = 0; h_ < nkv; ++h_) {
        const size_t off = static_cast<size_t>(h_ * hd);
        if (c.qk_norm) {
          const Vec n = rmsnorm(k[t], vec(l.k_norm), eps, off, static_cast<size_t>(hd));
          std::copy(n.begin(), n.end(), k[t].begin() + static_cast<std::ptrdiff_t>(off));
        }
        rope(k[t], t, off);
      }
    }
    for (size_t t = 0; t < T; ++t) {
      Vec attn(static_cast<size_t>(nh * hd), 0.0);
      for (int64_t h_ = 0; h_ < nh; ++h_) {
        const int64_t kvh = h_ / (nh / nkv);
        Vec scores(t + 1);
        double top = -1e300;
        for (size_t s = 0; s <= t; ++s) {
          double dot = 0.0;
          for (int64_t d = 0; d < hd; ++d) dot += q[t][h_ * hd + d] * k[s][kvh * hd + d];
          scores[s] = dot / std::sqrt(static_cast<double>(hd));
          top = std::max(top, scores[s]);
        }
        double total = 0.0;
        for (double& s : scores) total += (s = std::exp(s - top));
        for (size_t s = 0; s <= t; ++s) {
          for (int64_t d = 0; d < hd; ++d) {
            attn[h_ * hd + d] += scores[s] / total * v[s][kvh * hd + d];
          }
        }
      }
      const Vec o = matvec(o_proj, attn);
      for (size_t i = 0; i < o.size(); ++i) x[t][i] += o[i];
      const Vec h = rmsnorm(x[t], ln2, eps);
      const Vec g = matvec(gate, h), u = matvec(up, h);
      Vec act(g.size());
      for (size_t i = 0; i < g.size(); ++i) act[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      const Vec d = matvec(down, act);
      for (size_t i = 0; i < d.size(); ++i) x[t][i] += d[i];
    }
  }
  const Mat head(w.lm_head);
  std::vector<Vec> logits(T);
  for (size_t t = 0; t < T; ++t) logits[t] = matvec(head, rmsnorm(x[t], vec(w.norm), eps));
  return logits;
}

// Small random weights scaled up so attention is far from uniform and every norm weight matters.
ModelWeights lively_weights(const std::string& type, bool tied) {
  ModelConfig c = testutil::small_config(type);
  c.hidden_size = 32;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 12;  // q width 48 != hidden: catches hidden/head mix-ups
  c.intermediate_size = 40;
  c.vocab_size = 50;
  c.rope_theta = 100.0f;  // fast rotation, so position errors show
  c.rms_norm_eps = 1e-5f;
  c.tie_word_embeddings = tied;
  ModelWeights w = make_random_weights(c, 11);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(99);
  for (WeightSlot& s : weight_slots(w)) {
    if (s.shape.size() == 1 && s.name.find("norm") != std::string::npos) {
      *s.tensor = from_torch(1.0 + 0.3 * at::randn(s.shape, gen));
    } else {
      *s.tensor = from_torch(to_torch(*s.tensor) * 15.0);
    }
  }
  if (tied) w.lm_head = w.embed_tokens;
  return w;
}

class NaiveVsLoops : public ::testing::TestWithParam<std::string> {};

TEST_P(NaiveVsLoops, MatchesThePlainLoopDecoder) {
  const ModelWeights w = lively_weights(GetParam(), GetParam() != "llama");
  const std::vector<int32_t> tokens = {3, 17, 42, 17, 0, 49, 8};
  const std::vector<float> got = naive_logits(w, tokens);
  const std::vector<Vec> want = reference_logits(w, tokens);
  const int64_t V = w.config.vocab_size;
  ASSERT_EQ(got.size(), tokens.size() * static_cast<size_t>(V));
  double scale = 0.0, worst = 0.0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    for (int64_t i = 0; i < V; ++i) {
      scale = std::max(scale, std::fabs(want[t][i]));
      worst = std::max(worst, std::fabs(want[t][i] - got[t * V + i]));
    }
  }
  EXPECT_GT(scale, 1.0) << "logits too small to tell anything apart";
  EXPECT_LT(worst, 1e-4 * scale) << "max |diff| " << worst << " at logit scale " << scale;
}

INSTANTIATE_TEST_SUITE_P(All, NaiveVsLoops,
                         ::testing::Values("qwen3", "qwen2", "llama", "mistral"));

TEST(NaiveForward, IsCausal) {
  const ModelWeights w = lively_weights("qwen3", true);
  std::vector<int32_t> tokens = {5, 6, 7, 8, 9, 10};
  const std::vector<float> a = naive_logits(w, tokens);
  tokens.back() = 33;
  const std::vector<float> b = naive_logits(w, tokens);
  const size_t V = static_cast<size_t>(w.config.vocab_size);
  const size_t last = (tokens.size() - 1) * V;
  double before = 0.0, at_last = 0.0;
  for (size_t i = 0; i < last; ++i) before = std::max<double>(before, std::fabs(a[i] - b[i]));
  for (size_t i = last; i < a.size(); ++i)
    at_last = std::max<double>(at_last, std::fabs(a[i] - b[i]));
  EXPECT_LT(before, 1e-5);
  EXPECT_GT(at_last, 1e-2);
  // A prefix alone gives the prefix's rows.
  const std::vector<float> prefix = naive_logits(w, {5, 6, 7});
  for (size_t i = 0; i < prefix.size(); ++i) ASSERT_NEAR(prefix[i], a[i], 1e-4) << i;
}

TEST(NaiveForward, PositionMatters) {
  // With RoPE, the same token pair in swapped order gives different last-row logits.
  const ModelWeights w = lively_weights("llama", false);
  const std::vector<float> ab = naive_logits(w, {4, 9, 4});
  const std::vector<float> ba = naive_logits(w, {9, 4, 4});
  const size_t V = static_cast<size_t>(w.config.vocab_size);
  double diff = 0.0;
  for (size_t i = 2 * V; i < 3 * V; ++i) diff = std::max<double>(diff, std::fabs(ab[i] - ba[i]));
  EXPECT_GT(diff, 1e-3);
}

TEST(NaiveForward, RejectsTokensOutsideTheVocabulary) {
  const ModelWeights w = lively_weights("qwen3", true);
  EXPECT_THROW(naive_logits(w, {1, 50}), std::out_of_range);
  EXPECT_THROW(naive_logits(w, {-1}), std::out_of_range);
  EXPECT_TRUE(naive_logits(w, {}).empty());
}

}  // namespace
}  // namespace ps
