#include "reference/naive_forward.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/layer_types.h"
#include "reference/naive_linear_attention.h"
#include "reference/naive_moe.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {
namespace {

// x * rsqrt(mean(x^2) + eps) * w over the last dimension, as HF's RMSNorm (fp32 throughout);
// Gemma's Gemma3RMSNorm scales by (1 + w) instead.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, float eps, bool gemma = false) {
  return x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * (gemma ? w + 1.0 : w);
}

// bf16/f16 matrices (loader.h LoadOptions) are widened here, exactly, as the runner's kernels do.
at::Tensor dense(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias = {}) {
  return at::linear(x, w.to(at::kFloat),
                    bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt);
}

// cos and sin tables [T, 1, rotary_dim] for positions 0..T-1, built with the same fp32 ops as
// HF: angle = position * inv_freq (rope_frequencies: the RoPE scaling the config asks for), both
// halves of the rotated part share it, and cos/sin carry the attention factor (yarn).
std::pair<at::Tensor, at::Tensor> rope_tables(int64_t T, const RopeFrequencies& rope) {
  const at::Tensor inv_freq =
      at::from_blob(const_cast<float*>(rope.inv_freq.data()), {int64_t(rope.inv_freq.size())});
  const at::Tensor pos = at::arange(T, at::kLong).to(at::kFloat);
  const at::Tensor freqs = at::outer(pos, inv_freq);  // [T, rotary_dim / 2]
  const at::Tensor emb = at::cat({freqs, freqs}, -1).unsqueeze(1);
  return {emb.cos() * rope.attention_factor, emb.sin() * rope.attention_factor};
}

// Neox-style rotation of the head's first rotary_dim floats (cos.size(-1)): the first half of
// those pairs with the second half; the rest of the head passes through unrotated.
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t rot = cos.size(-1), half = rot / 2;
  const at::Tensor r = x.narrow(-1, 0, rot);
  const at::Tensor rotated = at::cat({-r.narrow(-1, half, half), r.narrow(-1, 0, half)}, -1);
  const at::Tensor out = r * cos + rotated * sin;
  if (rot == x.size(-1)) return out;
  return at::cat({out, x.narrow(-1, rot, x.size(-1) - rot)}, -1);
}

at::Tensor attention(const TorchLayerWeights& l, const ModelConfig& c, const at::Tensor& x,
                     const at::Tensor& cos, const at::Tensor& sin, bool rotate, int32_t window) {
  const int64_t T = x.size(0);
  const int64_t hd = c.head_dim;
  at::Tensor q = dense(x, l.q_proj, l.q_bias);
  at::Tensor gate;  // Qwen3.5: each head's q_proj rows give its query, then its output gate
  if (c.attn_output_gate) {
    const at::Tensor both = q.view({T, c.num_attention_heads, 2 * hd});
    gate = both.narrow(-1, hd, hd).reshape({T, c.q_size()});
    q = both.narrow(-1, 0, hd);
  }
  q = q.reshape({T, c.num_attention_heads, hd});
  at::Tensor k = dense(x, l.k_proj, l.k_bias).view({T, c.num_key_value_heads, hd});
  at::Tensor v = dense(x, l.v_proj, l.v_bias).view({T, c.num_key_value_heads, hd});
  if (c.qk_norm) {
    q = rms_norm(q, l.q_norm, c.rms_norm_eps, c.norms_add_one());
    k = rms_norm(k, l.k_norm, c.rms_norm_eps, c.norms_add_one());
  }
  if (rotate) {  // a NoPE layer (smollm3's no_rope_layers) attends by content alone
    q = apply_rope(q, cos, sin);
    k = apply_rope(k, cos, sin);
  }
  // GQA: query head h reads kv head h / group.
  const int64_t group = c.num_attention_heads / c.num_key_value_heads;
  k = k.repeat_interleave(group, 1);
  v = v.repeat_interleave(group, 1);

  q = q.transpose(0, 1);  // [heads, T, hd]
  k = k.transpose(0, 1);
  v = v.transpose(0, 1);
  at::Tensor scores = at::matmul(q, k.transpose(1, 2)) * c.attention_scale();
  if (c.attn_logit_softcapping > 0) {  // Gemma 2: cap * tanh(s / cap), before the mask
    scores = at::tanh(scores / c.attn_logit_softcapping) * c.attn_logit_softcapping;
  }
  at::Tensor masked = at::ones({T, T}, at::kBool).triu(1);                      // the future
  if (window > 0) masked = masked | at::ones({T, T}, at::kBool).tril(-window);  // q - k >= W
  scores = scores.masked_fill(masked, -std::numeric_limits<float>::infinity());
  at::Tensor probs;
  if (l.sinks.defined()) {  // gpt-oss: each head's sink logit joins the softmax, then is dropped
    const at::Tensor sink = l.sinks.to(at::kFloat).view({-1, 1, 1}).expand({-1, T, 1});
    probs = at::softmax(at::cat({scores, sink}, -1), -1).narrow(-1, 0, T);
  } else {
    probs = at::softmax(scores, -1);
  }
  const at::Tensor out = at::matmul(probs, v);  // [heads, T, hd]
  at::Tensor merged = out.transpose(0, 1).reshape({T, c.q_size()});
  if (gate.defined()) merged = merged * at::sigmoid(gate);
  return dense(merged, l.o_proj, l.o_bias);
}

}  // namespace

std::vector<float> naive_logits(const ModelWeights& ps_weights,
                                const std::vector<int32_t>& tokens) {
  const TorchWeights weights = to_torch(ps_weights);  // zero-copy views
  const ModelConfig& c = weights.config;
  const int64_t T = static_cast<int64_t>(tokens.size());
  if (T == 0) return {};
  for (int32_t t : tokens) {
    if (t < 0 || t >= c.vocab_size) {
      throw std::out_of_range("naive_logits: token id " + std::to_string(t) +
                              " is outside the vocabulary of " + std::to_string(c.vocab_size));
    }
  }
  const at::Tensor ids =
      at::from_blob(const_cast<int32_t*>(tokens.data()), {T}, at::kInt).to(at::kLong);
  at::Tensor x = weights.embed_tokens.index_select(0, ids).to(at::kFloat);
  const bool gemma = c.gemma_layout();
  if (gemma) {  // sqrt(hidden_size) in the embedding's dtype, as Gemma3TextScaledWordEmbedding
    x = x * at::scalar_tensor(std::sqrt(double(c.hidden_size)), at::kFloat)
                .to(weights.embed_tokens.scalar_type())
                .to(at::kFloat);
  }
  const auto [cos, sin] = rope_tables(T, rope_frequencies(c));
  const auto [cos_local, sin_local] = rope_tables(T, sliding_rope_frequencies(c));
  const float eps = c.rms_norm_eps;

  for (size_t i = 0; i < weights.layers.size(); ++i) {
    const TorchLayerWeights& l = weights.layers[i];
    const auto layer = static_cast<int32_t>(i);
    const bool sliding = c.layer_is_sliding(layer);
    const at::Tensor normed = rms_norm(x, l.input_layernorm, eps, c.norms_add_one());
    at::Tensor a =
        c.layer_is_linear(layer)
            ? naive_linear_attention(l, c, normed)
            : attention(l, c, normed, sliding ? cos_local : cos, sliding ? sin_local : sin,
                        c.layer_uses_rope(layer), c.layer_window(layer));
    if (gemma) {  // Gemma3DecoderLayer: each branch normed before its residual add
      const at::Tensor h = x + rms_norm(a, l.post_attention_layernorm, eps, true);
      const at::Tensor n = rms_norm(h, l.pre_feedforward_layernorm, eps, true);
      const at::Tensor gate = at::gelu(dense(n, l.gate_proj), "tanh");
      x = h + rms_norm(dense(gate * dense(n, l.up_proj), l.down_proj), l.post_feedforward_layernorm,
                       eps, true);
      continue;
    }
    const at::Tensor h = x + a;
    const at::Tensor n = rms_norm(h, l.post_attention_layernorm, eps, c.norms_add_one());
    x = h + (l.moe.defined()
                 ? naive_moe_mlp(l.moe, c, n)
                 : dense(at::silu(dense(n, l.gate_proj)) * dense(n, l.up_proj), l.down_proj));
  }
  at::Tensor logits = dense(rms_norm(x, weights.norm, eps, c.norms_add_one()), weights.lm_head);
  if (c.final_logit_softcapping > 0) {  // Gemma 2
    logits = at::tanh(logits / c.final_logit_softcapping) * c.final_logit_softcapping;
  }
  logits = logits.contiguous();
  const float* p = logits.data_ptr<float>();
  return std::vector<float>(p, p + logits.numel());
}

}  // namespace ps
