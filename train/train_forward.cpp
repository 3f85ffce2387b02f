#include "train/train_forward.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "model/model_weights.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {
namespace {

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, float eps) {
  return x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * w;
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias) {
  return at::linear(x, w, bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt);
}

// cos/sin [T, 1, head_dim], built with the fp32 ops the naive forward uses (HF's formula), so
// trained weights see exactly the rotation they are served with.
std::pair<at::Tensor, at::Tensor> rope_tables(int64_t T, int64_t head_dim, float theta) {
  const at::Tensor exponent = at::arange(0, head_dim, 2, at::kLong).to(at::kFloat) / head_dim;
  const at::Tensor inv_freq = at::reciprocal(at::pow(static_cast<double>(theta), exponent));
  const at::Tensor pos = at::arange(T, at::kLong).to(at::kFloat);
  const at::Tensor emb = at::cat({at::outer(pos, inv_freq), at::outer(pos, inv_freq)}, -1);
  return {emb.cos().unsqueeze(1), emb.sin().unsqueeze(1)};
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

// x: [B, T, hidden] -> [B, T, hidden].
at::Tensor attention(const TorchLayerWeights& l, const ModelConfig& c, const at::Tensor& x,
                     const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& future) {
  const int64_t B = x.size(0);
  const int64_t T = x.size(1);
  const int64_t hd = c.head_dim;
  at::Tensor q = linear(x, l.q_proj, l.q_bias).view({B, T, c.num_attention_heads, hd});
  at::Tensor k = linear(x, l.k_proj, l.k_bias).view({B, T, c.num_key_value_heads, hd});
  at::Tensor v = linear(x, l.v_proj, l.v_bias).view({B, T, c.num_key_value_heads, hd});
  if (c.qk_norm) {
    q = rms_norm(q, l.q_norm, c.rms_norm_eps);
    k = rms_norm(k, l.k_norm, c.rms_norm_eps);
  }
  q = apply_rope(q, cos, sin).transpose(1, 2);  // [B, heads, T, hd]
  k = apply_rope(k, cos, sin).transpose(1, 2);
  v = v.transpose(1, 2);
  const int64_t group = c.num_attention_heads / c.num_key_value_heads;
  k = k.repeat_interleave(group, 1);
  v = v.repeat_interleave(group, 1);
  at::Tensor scores = at::matmul(q, k.transpose(2, 3)) / std::sqrt(static_cast<double>(hd));
  scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
  const at::Tensor out = at::matmul(at::softmax(scores, -1), v);  // [B, heads, T, hd]
  return at::linear(out.transpose(1, 2).reshape({B, T, c.q_size()}), l.o_proj);
}

}  // namespace

at::Tensor train_logits(const TorchWeights& w, const at::Tensor& ids) {
  const ModelConfig& c = w.config;
  const int64_t T = ids.size(1);
  at::Tensor x = at::embedding(w.embed_tokens, ids);
  const auto [cos, sin] = rope_tables(T, c.head_dim, c.rope_theta);
  const at::Tensor future = at::ones({T, T}, at::kBool).triu(1);
  for (const TorchLayerWeights& l : w.layers) {
    const at::Tensor h =
        x + attention(l, c, rms_norm(x, l.input_layernorm, c.rms_norm_eps), cos, sin, future);
    const at::Tensor n = rms_norm(h, l.post_attention_layernorm, c.rms_norm_eps);
    x = h +
        at::linear(at::silu(at::linear(n, l.gate_proj)) * at::linear(n, l.up_proj), l.down_proj);
  }
  // Tied checkpoints train one matrix for both ends; lm_head may not even be set then.
  const at::Tensor& head = c.tie_word_embeddings ? w.embed_tokens : w.lm_head;
  return at::linear(rms_norm(x, w.norm, c.rms_norm_eps), head);
}

std::vector<float> train_logits_single(const ModelWeights& weights,
                                       const std::vector<int32_t>& tokens) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  const at::Tensor ids =
      at::from_blob(const_cast<int32_t*>(tokens.data()), {1, T}, at::kInt).to(at::kLong);
  const at::NoGradGuard no_grad;
  const at::Tensor logits = train_logits(to_torch(weights), ids).contiguous();
  const float* p = logits.data_ptr<float>();
  return std::vector<float>(p, p + logits.numel());
}

}  // namespace ps
