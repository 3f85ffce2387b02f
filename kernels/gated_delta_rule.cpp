#include "kernels/gated_delta_rule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/parallel_for.h"

namespace ps {
namespace {

constexpr float kL2Eps = 1e-6f;  // HF's l2norm eps

void check(const GatedDeltaArgs& a) {
  if (a.num_tokens < 0 || a.num_k_heads <= 0 || a.num_v_heads <= 0 || a.k_dim <= 0 ||
      a.v_dim <= 0 || a.num_v_heads % a.num_k_heads != 0) {
    throw std::invalid_argument(
        "gated_delta_rule: needs positive head counts and dims, value heads a multiple of key "
        "heads");
  }
  if (!a.state || (a.num_tokens > 0 && (!a.q || !a.k || !a.v || !a.g || !a.beta || !a.out))) {
    throw std::invalid_argument("gated_delta_rule: missing input, state or output");
  }
}

// One head's normalized query (scaled) and key rows, token by token: [T, k_dim] each.
void normalized_rows(const GatedDeltaArgs& a, int32_t key_head, std::vector<float>* q,
                     std::vector<float>* k) {
  const int32_t T = a.num_tokens, K = a.k_dim;
  const float scale = 1.0f / std::sqrt(float(K));
  q->resize(size_t(T) * K);
  k->resize(size_t(T) * K);
  for (int32_t t = 0; t < T; ++t) {
    const float* qs = a.q + t * a.q_stride + int64_t{key_head} * K;
    const float* ks = a.k + t * a.k_stride + int64_t{key_head} * K;
    float qq = 0, kk = 0;
    for (int32_t i = 0; i < K; ++i) {
      qq += qs[i] * qs[i];
      kk += ks[i] * ks[i];
    }
    const float qn = scale / std::sqrt(qq + kL2Eps), kn = 1.0f / std::sqrt(kk + kL2Eps);
    for (int32_t i = 0; i < K; ++i) {
      (*q)[size_t(t) * K + i] = qs[i] * qn;
      (*k)[size_t(t) * K + i] = ks[i] * kn;
    }
  }
}

void recurrent_head(const GatedDeltaArgs& a, int32_t h) {
  const int32_t K = a.k_dim, V = a.v_dim, Hv = a.num_v_heads;
  std::vector<float> q, k;
  normalized_rows(a, h / (Hv / a.num_k_heads), &q, &k);
  float* S = a.state + int64_t{h} * K * V;
  std::vector<float> delta(V);
  for (int32_t t = 0; t < a.num_tokens; ++t) {
    const float decay = std::exp(a.g[int64_t{t} * Hv + h]);
    const float beta = a.beta[int64_t{t} * Hv + h];
    const float* kt = &k[size_t(t) * K];
    const float* qt = &q[size_t(t) * K];
    const float* vt = a.v + t * a.v_stride + int64_t{h} * V;
    for (int32_t j = 0; j < V; ++j) delta[j] = 0;
    for (int32_t i = 0; i < K; ++i) {
      float* row = S + int64_t{i} * V;
      for (int32_t j = 0; j < V; ++j) {
        row[j] *= decay;
        delta[j] += row[j] * kt[i];
      }
    }
    for (int32_t j = 0; j < V; ++j) delta[j] = beta * (vt[j] - delta[j]);
    float* o = a.out + t * a.out_stride + int64_t{h} * V;
    for (int32_t j = 0; j < V; ++j) o[j] = 0;
    for (int32_t i = 0; i < K; ++i) {
      float* row = S + int64_t{i} * V;
      for (int32_t j = 0; j < V; ++j) {
        row[j] += kt[i] * delta[j];
        o[j] += row[j] * qt[i];
      }
    }
  }
}

// One head, chunk by chunk. Within a chunk of C tokens with cumulative log decay G:
//   A[i][j] = -(beta_i k_i . k_j) exp(G_i - G_j) for j < i, solved forward into T = (I - A)^-1
//   U = T (beta v), W = T (beta exp(G) k)        (what the chunk writes, before the state's part)
//   v_new = U - W S
//   o_i = exp(G_i) q_i S + sum_{j <= i} (q_i . k_j) exp(G_i - G_j) v_new_j
//   S = exp(G_last) S + sum_i exp(G_last - G_i) k_i v_new_i^T
void chunked_head(const GatedDeltaArgs& a, int32_t h, int32_t chunk) {
  const int32_t K = a.k_dim, V = a.v_dim, Hv = a.num_v_heads;
  std::vector<float> q, k;
  normalized_rows(a, h / (Hv / a.num_k_heads), &q, &k);
  float* S = a.state + int64_t{h} * K * V;
  std::vector<float> G, beta, A, U, W, vnew, row;  // reused from chunk to chunk
  for (int32_t t0 = 0; t0 < a.num_tokens; t0 += chunk) {
    const int32_t C = std::min(chunk, a.num_tokens - t0);
    G.assign(C, 0);
    beta.assign(C, 0);
    float acc = 0;
    for (int32_t i = 0; i < C; ++i) {
      acc += a.g[int64_t{t0 + i} * Hv + h];
      G[i] = acc;
      beta[i] = a.beta[int64_t{t0 + i} * Hv + h];
    }
    const float* kc = &k[size_t(t0) * K];
    const float* qc = &q[size_t(t0) * K];
    auto dot_k = [&](const float* x, int32_t j) {
      float s = 0;
      for (int32_t d = 0; d < K; ++d) s += x[d] * kc[size_t(j) * K + d];
      return s;
    };
    // A, strictly lower, then the forward substitution HF runs row by row, then + I.
    A.assign(size_t(C) * C, 0);
    for (int32_t i = 1; i < C; ++i) {
      for (int32_t j = 0; j < i; ++j) {
        A[size_t(i) * C + j] = -beta[i] * dot_k(kc + size_t(i) * K, j) * std::exp(G[i] - G[j]);
      }
    }
    for (int32_t i = 1; i < C; ++i) {
      row.assign(A.begin() + size_t(i) * C, A.begin() + size_t(i) * C + i);
      for (int32_t j = 0; j < i; ++j) {
        float s = row[j];
        for (int32_t m = j + 1; m < i; ++m) s += row[m] * A[size_t(m) * C + j];
        A[size_t(i) * C + j] = s;
      }
    }
    for (int32_t i = 0; i < C; ++i) A[size_t(i) * C + i] = 1;
    // U = T (beta v) [C, V]; W = T (beta exp(G) k) [C, K].
    U.assign(size_t(C) * V, 0);
    W.assign(size_t(C) * K, 0);
    for (int32_t i = 0; i < C; ++i) {
      for (int32_t j = 0; j <= i; ++j) {
        const float t = A[size_t(i) * C + j];
        if (t == 0) continue;
        const float* vj = a.v + (t0 + j) * a.v_stride + int64_t{h} * V;
        const float bv = t * beta[j], bk = t * beta[j] * std::exp(G[j]);
        for (int32_t d = 0; d < V; ++d) U[size_t(i) * V + d] += bv * vj[d];
        for (int32_t d = 0; d < K; ++d) W[size_t(i) * K + d] += bk * kc[size_t(j) * K + d];
      }
    }
    // v_new = U - W S; o_i = exp(G_i) q_i S + local attention over v_new.
    vnew = U;
    for (int32_t i = 0; i < C; ++i) {
      float* o = a.out + (t0 + i) * a.out_stride + int64_t{h} * V;
      const float gi = std::exp(G[i]);
      for (int32_t d = 0; d < V; ++d) o[d] = 0;
      for (int32_t r = 0; r < K; ++r) {
        const float* srow = S + int64_t{r} * V;
        const float w = W[size_t(i) * K + r], qv = gi * qc[size_t(i) * K + r];
        for (int32_t d = 0; d < V; ++d) {
          vnew[size_t(i) * V + d] -= w * srow[d];
          o[d] += qv * srow[d];
        }
      }
    }
    for (int32_t i = 0; i < C; ++i) {
      float* o = a.out + (t0 + i) * a.out_stride + int64_t{h} * V;
      for (int32_t j = 0; j <= i; ++j) {
        float s = 0;
        for (int32_t d = 0; d < K; ++d) s += qc[size_t(i) * K + d] * kc[size_t(j) * K + d];
        s *= std::exp(G[i] - G[j]);
        for (int32_t d = 0; d < V; ++d) o[d] += s * vnew[size_t(j) * V + d];
      }
    }
    const float glast = G[C - 1];
    const float keep = std::exp(glast);
    for (int32_t r = 0; r < K; ++r) {
      float* srow = S + int64_t{r} * V;
      for (int32_t d = 0; d < V; ++d) srow[d] *= keep;
      for (int32_t i = 0; i < C; ++i) {
        const float w = kc[size_t(i) * K + r] * std::exp(glast - G[i]);
        for (int32_t d = 0; d < V; ++d) srow[d] += w * vnew[size_t(i) * V + d];
      }
    }
  }
}

}  // namespace

void gated_delta_rule_recurrent(const GatedDeltaArgs& a) {
  check(a);
  parallel_for(0, a.num_v_heads, 1, [&](int64_t b, int64_t e) {
    for (int64_t h = b; h < e; ++h) recurrent_head(a, int32_t(h));
  });
}

void gated_delta_rule_chunked(const GatedDeltaArgs& a, int32_t chunk) {
  check(a);
  if (chunk < 1) throw std::invalid_argument("gated_delta_rule: chunk must be >= 1");
  parallel_for(0, a.num_v_heads, 1, [&](int64_t b, int64_t e) {
    for (int64_t h = b; h < e; ++h) chunked_head(a, int32_t(h), chunk);
  });
}

}  // namespace ps
