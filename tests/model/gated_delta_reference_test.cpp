// The gated delta rule (kernels/gated_delta_rule.h, issue #35) against a PyTorch (libtorch)
// reference written here from the math of HF's Qwen3-Next modeling code
// (torch_chunk_gated_delta_rule): L2-normed, scaled q and k repeated over the value heads, the
// chunk's decay mask, the strictly lower triangle solved row by row, then chunk after chunk
// through the state. In double precision; ours runs fp32, chunked and recurrent, within 1e-4
// over 300 tokens, outputs and final state.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "kernels/gated_delta_rule.h"

namespace ps {
namespace {

using at::indexing::Slice;

at::Tensor l2norm(const at::Tensor& x) {
  return x * at::rsqrt((x * x).sum(-1, true) + 1e-6);
}

// q, k [T, Hk, K]; v [T, Hv, V]; g, beta [T, Hv]; state [Hv, K, V]. Returns the outputs
// [T, Hv, V] and the final state.
std::pair<at::Tensor, at::Tensor> torch_reference(at::Tensor q, at::Tensor k, at::Tensor v,
                                                  at::Tensor g, at::Tensor beta, at::Tensor state,
                                                  int64_t C) {
  const int64_t T = q.size(0), Hv = v.size(1), K = q.size(2), V = v.size(2);
  const int64_t repeat = Hv / q.size(1);
  q = l2norm(q.to(at::kDouble)).repeat_interleave(repeat, 1) / std::sqrt(double(K));
  k = l2norm(k.to(at::kDouble)).repeat_interleave(repeat, 1);
  // [Hv, T, D], padded with zeros to whole chunks (a zero key writes nothing, g 0 decays nothing).
  const int64_t pad = (C - T % C) % C, N = (T + pad) / C;
  auto heads_first = [&](const at::Tensor& x) {
    at::Tensor t = x.to(at::kDouble).transpose(0, 1).contiguous();
    return at::constant_pad_nd(t, {0, 0, 0, pad});
  };
  q = heads_first(q);
  k = heads_first(k);
  v = heads_first(v);
  g = at::constant_pad_nd(g.to(at::kDouble).transpose(0, 1).contiguous(), {0, pad});
  beta = at::constant_pad_nd(beta.to(at::kDouble).transpose(0, 1).contiguous(), {0, pad});
  at::Tensor kb = k * beta.unsqueeze(-1), vb = v * beta.unsqueeze(-1);
  q = q.reshape({Hv, N, C, K});
  k = k.reshape({Hv, N, C, K});
  kb = kb.reshape({Hv, N, C, K});
  vb = vb.reshape({Hv, N, C, V});
  at::Tensor gc = g.reshape({Hv, N, C}).cumsum(-1);
  at::Tensor decay = (gc.unsqueeze(-1) - gc.unsqueeze(-2)).tril().exp().tril();
  const auto opts = at::TensorOptions().dtype(at::kBool);
  at::Tensor upper_and_diag = at::ones({C, C}, opts).triu(0);
  at::Tensor attn = -(at::matmul(kb, k.transpose(-1, -2)) * decay).masked_fill(upper_and_diag, 0);
  for (int64_t i = 1; i < C; ++i) {
    at::Tensor row = attn.index({"...", i, Slice(0, i)}).clone();
    at::Tensor sub = attn.index({"...", Slice(0, i), Slice(0, i)}).clone();
    attn.index_put_({"...", i, Slice(0, i)}, row + (row.unsqueeze(-1) * sub).sum(-2));
  }
  attn = attn + at::eye(C, at::TensorOptions().dtype(at::kDouble));
  at::Tensor value = at::matmul(attn, vb);
  at::Tensor k_cumdecay = at::matmul(attn, kb * gc.exp().unsqueeze(-1));
  at::Tensor S = state.to(at::kDouble).clone();
  at::Tensor upper = at::ones({C, C}, opts).triu(1);
  at::Tensor out = at::zeros({Hv, N, C, V}, at::TensorOptions().dtype(at::kDouble));
  for (int64_t n = 0; n < N; ++n) {
    at::Tensor qi = q.select(1, n), ki = k.select(1, n), gi = gc.select(1, n);
    at::Tensor local =
        (at::matmul(qi, ki.transpose(-1, -2)) * decay.select(1, n)).masked_fill(upper, 0);
    at::Tensor v_new = value.select(1, n) - at::matmul(k_cumdecay.select(1, n), S);
    at::Tensor inter = at::matmul(qi * gi.exp().unsqueeze(-1), S);
    out.select(1, n).copy_(inter + at::matmul(local, v_new));
    at::Tensor last = gi.index({"...", -1});
    S = S * last.exp().unsqueeze(-1).unsqueeze(-1) +
        at::matmul((ki * (last.unsqueeze(-1) - gi).exp().unsqueeze(-1)).transpose(-1, -2), v_new);
  }
  out = out.reshape({Hv, N * C, V}).index({Slice(), Slice(0, T)}).transpose(0, 1).contiguous();
  return {out, S};
}

std::vector<float> floats(const at::Tensor& t) {
  at::Tensor c = t.to(at::kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

TEST(GatedDeltaReference, OursMatchesTheTorchChunkedFormOver300Tokens) {
  at::manual_seed(7);
  const int64_t T = 300, Hk = 2, Hv = 4, K = 16, V = 12;
  at::Tensor q = at::randn({T, Hk, K}), k = at::randn({T, Hk, K}), v = at::randn({T, Hv, V});
  // g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b), as the layer computes them.
  at::Tensor g = -at::exp(0.5 * at::randn({Hv})) * at::softplus(at::randn({T, Hv}));
  at::Tensor beta = at::sigmoid(at::randn({T, Hv}));
  at::Tensor state = 0.1 * at::randn({Hv, K, V});
  const auto [want_out, want_state] = torch_reference(q, k, v, g, beta, state, 64);
  // The reference's own chunking does not matter either.
  const auto [out7, state7] = torch_reference(q, k, v, g, beta, state, 7);
  EXPECT_LT((out7 - want_out).abs().max().item<double>(), 1e-9);

  const std::vector<float> qf = floats(q), kf = floats(k), vf = floats(v), gf = floats(g),
                           bf = floats(beta);
  for (int mode = 0; mode < 2; ++mode) {
    std::vector<float> s = floats(state), out(size_t(T * Hv * V));
    GatedDeltaArgs a;
    a.num_tokens = int32_t(T);
    a.num_k_heads = int32_t(Hk);
    a.num_v_heads = int32_t(Hv);
    a.k_dim = int32_t(K);
    a.v_dim = int32_t(V);
    a.q = qf.data();
    a.k = kf.data();
    a.v = vf.data();
    a.q_stride = a.k_stride = Hk * K;
    a.v_stride = a.out_stride = Hv * V;
    a.g = gf.data();
    a.beta = bf.data();
    a.state = s.data();
    a.out = out.data();
    if (mode == 0) {
      gated_delta_rule_chunked(a, 64);
    } else {
      gated_delta_rule_recurrent(a);
    }
    const at::Tensor got_out = at::from_blob(out.data(), {T, Hv, V}).to(at::kDouble);
    const at::Tensor got_state = at::from_blob(s.data(), {Hv, K, V}).to(at::kDouble);
    const char* name = mode == 0 ? "chunked" : "recurrent";
    EXPECT_LE((got_out - want_out).abs().max().item<double>(), 1e-4) << name;
    EXPECT_LE((got_state - want_state).abs().max().item<double>(), 1e-4) << name;
  }
  // Not a vacuous bound: the outputs are of order 1, and the state moved.
  EXPECT_GT(want_out.abs().max().item<double>(), 0.1);
  EXPECT_GT((want_state - state.to(at::kDouble)).abs().max().item<double>(), 0.1);
}

}  // namespace
}  // namespace ps
