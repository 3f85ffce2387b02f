// See cpu_reference.h. Deliberately naive: sort-based filters, double accumulators.
#include "tests/cuda/cpu_reference.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "cuda/philox.cuh"

namespace ps::cuda::ref {

void rms_norm(const float* x, const float* w, float eps, int rows, int width, float* y) {
  for (int r = 0; r < rows; ++r) {
    double ss = 0;
    for (int i = 0; i < width; ++i) ss += double(x[r * width + i]) * x[r * width + i];
    const double inv = 1.0 / std::sqrt(ss / width + eps);
    for (int i = 0; i < width; ++i) y[r * width + i] = float(x[r * width + i] * inv * w[i]);
  }
}

void fused_add_rms_norm(float* x, float* residual, const float* w, float eps, int rows, int width,
                        float (*round)(float)) {
  for (int i = 0; i < rows * width; ++i) residual[i] = round(residual[i] + x[i]);
  rms_norm(residual, w, eps, rows, width, x);
}

void qk_norm_rope(float* qkv, int64_t ld, int rows, const int32_t* positions, int num_heads,
                  int num_kv_heads, int head_dim, const float* q_norm, const float* k_norm,
                  float eps, const float* cos_sin) {
  const int half = head_dim / 2;
  std::vector<double> h(head_dim);
  for (int r = 0; r < rows; ++r) {
    const float* cs = cos_sin + int64_t(positions[r]) * head_dim;
    for (int head = 0; head < num_heads + num_kv_heads; ++head) {
      float* x = qkv + r * ld + int64_t(head) * head_dim;
      const float* w = head < num_heads ? q_norm : k_norm;
      double ss = 0;
      for (int i = 0; i < head_dim; ++i) ss += double(x[i]) * x[i];
      const double inv = w ? 1.0 / std::sqrt(ss / head_dim + eps) : 1.0;
      for (int i = 0; i < head_dim; ++i) h[i] = x[i] * inv * (w ? w[i] : 1.0f);
      for (int i = 0; i < half; ++i) {
        x[i] = float(h[i] * cs[i] - h[i + half] * cs[half + i]);
        x[i + half] = float(h[i + half] * cs[i] + h[i] * cs[half + i]);
      }
    }
  }
}

void silu_and_mul(const float* gu, int rows, int inter, float* out) {
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < inter; ++j) {
      const double g = gu[int64_t(r) * 2 * inter + j], u = gu[int64_t(r) * 2 * inter + inter + j];
      out[int64_t(r) * inter + j] = float(g / (1.0 + std::exp(-g)) * u);
    }
  }
}

void paged_attention(const AttentionCase& c, const float* q, const float* k_cache,
                     const float* v_cache, float* out) {
  const int H = c.num_heads, KVH = c.num_kv_heads, D = c.head_dim, group = H / KVH;
  const int num_seqs = int(c.context_len.size());
  for (int s = 0; s < num_seqs; ++s) {
    const int q0 = c.query_start[s], qlen = c.query_start[s + 1] - q0, ctx = c.context_len[s];
    for (int i = 0; i < qlen; ++i) {
      const int pos = ctx - qlen + i;
      for (int h = 0; h < H; ++h) {
        const int kvh = h / group;
        const float* qr = q + (int64_t(q0 + i) * H + h) * D;
        std::vector<double> score(pos + 1);
        for (int p = 0; p <= pos; ++p) {
          const int64_t blk = c.block_tables[s * c.max_blocks_per_seq + p / c.block_size];
          const float* kr = k_cache + ((blk * c.block_size + p % c.block_size) * KVH + kvh) * D;
          double d = 0;
          for (int e = 0; e < D; ++e) d += double(qr[e]) * kr[e];
          score[p] = d * c.scale;
        }
        double mx = *std::max_element(score.begin(), score.end());
        // A sink joins the softmax's max and denominator and weighs no value.
        if (!c.sinks.empty()) mx = std::max(mx, double(c.sinks[h]));
        double sum = c.sinks.empty() ? 0.0 : std::exp(double(c.sinks[h]) - mx);
        for (double& v : score) sum += (v = std::exp(v - mx));
        float* o = out + (int64_t(q0 + i) * H + h) * D;
        for (int e = 0; e < D; ++e) {
          double acc = 0;
          for (int p = 0; p <= pos; ++p) {
            const int64_t blk = c.block_tables[s * c.max_blocks_per_seq + p / c.block_size];
            acc +=
                score[p] * v_cache[((blk * c.block_size + p % c.block_size) * KVH + kvh) * D + e];
          }
          o[e] = float(acc / sum);
        }
      }
    }
  }
}

SampleRef sample(const float* logits, int vocab, float temperature, int top_k, float top_p,
                 float min_p, uint64_t seed, uint64_t step) {
  SampleRef res;
  const float mx = *std::max_element(logits, logits + vocab);
  double lse = 0;
  for (int i = 0; i < vocab; ++i) lse += std::exp(double(logits[i]) - mx);
  res.kept.assign(vocab, 1);
  if (temperature < 1e-5f) {
    res.token = int(std::max_element(logits, logits + vocab) - logits);  // first max: lowest id
  } else {
    std::vector<double> e(vocab);
    for (int i = 0; i < vocab; ++i) e[i] = std::exp((double(logits[i]) - mx) / temperature);
    std::vector<int> order(vocab);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return e[a] > e[b]; });
    int keep = top_k > 0 && top_k < vocab ? top_k : vocab;
    if (top_p < 1.0f) {
      double total = 0, run = 0;
      for (int j = 0; j < keep; ++j) total += e[order[j]];
      int n = 0;
      while (n < keep && run < top_p * total) run += e[order[n++]];
      keep = std::max(n, 1);
    }
    std::fill(res.kept.begin(), res.kept.end(), 0);
    for (int j = 0; j < keep; ++j) {
      if (e[order[j]] >= min_p) res.kept[order[j]] = 1;  // e_max is 1: min-p is a floor on e
    }
    double best = -INFINITY;
    res.token = -1;
    for (int i = 0; i < vocab; ++i) {
      if (!res.kept[i]) continue;
      const double u = philox_uniform_at(seed, step, uint32_t(i));
      const double g = (double(logits[i]) - mx) / temperature - std::log(-std::log(u));
      if (g > best) best = g, res.token = i;
    }
  }
  res.logprob = float(double(logits[res.token]) - mx - std::log(lse));
  return res;
}

}  // namespace ps::cuda::ref
