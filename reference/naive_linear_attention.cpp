#include "reference/naive_linear_attention.h"

namespace ps {
namespace {

at::Tensor linear64(const at::Tensor& x, const at::Tensor& w) {
  return at::linear(x, w.to(at::kDouble));
}

// x / sqrt(sum(x^2) + 1e-6) over the last dimension (HF's l2norm, eps inside the root).
at::Tensor l2_normalize(const at::Tensor& x) {
  return x * at::rsqrt((x * x).sum(-1, /*keepdim=*/true) + 1e-6);
}

}  // namespace

at::Tensor naive_linear_attention(const TorchLayerWeights& w, const ModelConfig& c,
                                  const at::Tensor& x_in) {
  const LinearAttentionShape& s = c.linear;
  const int64_t T = x_in.size(0), K = s.conv_kernel, Hk = s.num_key_heads, Hv = s.num_value_heads,
                dk = s.key_head_dim, dv = s.value_head_dim;
  const at::Tensor x = x_in.to(at::kDouble);
  const at::Tensor qkv = linear64(x, w.in_proj_qkv);  // [T, conv_dim]
  const at::Tensor z = linear64(x, w.in_proj_z).view({T, Hv, dv});
  const at::Tensor b = linear64(x, w.in_proj_b), a = linear64(x, w.in_proj_a);

  // conv[t] = silu(sum_j weight[:, j] * qkv[t - (K - 1) + j]), rows before 0 being zeros.
  const at::Tensor weight = w.conv1d.to(at::kDouble).view({s.conv_dim(), K});
  const at::Tensor padded = at::cat({at::zeros({K - 1, s.conv_dim()}, at::kDouble), qkv}, 0);
  at::Tensor conv = at::zeros_like(qkv);
  for (int64_t j = 0; j < K; ++j) conv = conv + padded.narrow(0, j, T) * weight.select(1, j);
  conv = at::silu(conv);

  at::Tensor q = conv.narrow(1, 0, s.key_dim()).view({T, Hk, dk});
  at::Tensor k = conv.narrow(1, s.key_dim(), s.key_dim()).view({T, Hk, dk});
  const at::Tensor v = conv.narrow(1, 2 * s.key_dim(), s.value_dim()).view({T, Hv, dv});
  const at::Tensor beta = at::sigmoid(b);
  const at::Tensor g =
      -at::exp(w.A_log.to(at::kDouble)) * at::softplus(a + w.dt_bias.to(at::kDouble));  // [T, Hv]
  q = l2_normalize(q.repeat_interleave(Hv / Hk, 1)) / std::sqrt(double(dk));
  k = l2_normalize(k.repeat_interleave(Hv / Hk, 1));

  at::Tensor state = at::zeros({Hv, dk, dv}, at::kDouble);
  std::vector<at::Tensor> outs;
  for (int64_t t = 0; t < T; ++t) {
    state = state * at::exp(g[t]).view({Hv, 1, 1});
    const at::Tensor kt = k[t], qt = q[t];                           // [Hv, dk]
    const at::Tensor predicted = (state * kt.unsqueeze(-1)).sum(1);  // S^T k: [Hv, dv]
    const at::Tensor delta = (v[t] - predicted) * beta[t].unsqueeze(-1);
    state = state + kt.unsqueeze(-1) * delta.unsqueeze(1);
    outs.push_back((state * qt.unsqueeze(-1)).sum(1));  // S^T q
  }
  at::Tensor o = at::stack(outs, 0);  // [T, Hv, dv]
  // Gated RMSNorm per head: the norm's weight applied as is, then silu(z).
  o = o * at::rsqrt(o.pow(2).mean(-1, /*keepdim=*/true) + double(c.rms_norm_eps)) *
      w.linear_norm.to(at::kDouble) * at::silu(z);
  return linear64(o.reshape({T, s.value_dim()}), w.out_proj).to(at::kFloat);
}

}  // namespace ps
