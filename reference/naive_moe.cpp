#include "reference/naive_moe.h"

#include <vector>

namespace ps {
namespace {

// Weights may be bf16/f16 views of the checkpoint (the loader keeps them narrow since
// --dtype auto); the oracle widens them exactly, as the runner's kernels do.
at::Tensor widened_linear(const at::Tensor& x, const at::Tensor& w) {
  return at::linear(x, w.to(at::kFloat));
}

at::Tensor expert_mlp(const BasicExpertWeights<at::Tensor>& e, const at::Tensor& x) {
  return widened_linear(at::silu(widened_linear(x, e.gate_proj)) * widened_linear(x, e.up_proj),
                        e.down_proj);
}

// An MXFP4 tensor [..., rows, k / 32, 16] (+ scales [..., rows, k / 32]) as fp32 [..., rows, k]:
// the low nibble of byte i is weight 2i, the high nibble weight 2i + 1, each an E2M1 code times
// its block's 2^(scale - 127) (HF's convert_moe_packed_tensors).
at::Tensor mxfp4_to_float(const at::Tensor& blocks, const at::Tensor& scales) {
  static const float kValues[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  const at::Tensor lut = at::from_blob(const_cast<float*>(kValues), {16}, at::kFloat);
  const at::Tensor b = blocks.to(at::kLong);
  const at::Tensor codes = at::stack({b.bitwise_and(15), b.bitwise_right_shift(4)}, -1);
  std::vector<int64_t> shape = blocks.sizes().vec();  // [..., rows, groups, 16]
  shape.back() = 32;
  const at::Tensor values = lut.index_select(0, codes.flatten()).view(shape);
  const at::Tensor scale = at::exp2(scales.to(at::kFloat) - 127.0f).unsqueeze(-1);
  shape.pop_back();
  shape.back() *= 32;
  return (values * scale).view(shape);
}

// gpt-oss's experts as GptOssExperts computes them: gate/up rows interleaved (even: gate),
// biased, clamped SwiGLU with alpha 1.702, then the biased down projection.
at::Tensor gpt_oss_expert(const BasicMxfp4Experts<at::Tensor>& w, int64_t e, float limit,
                          const at::Tensor& x) {
  const at::Tensor gate_up = mxfp4_to_float(w.gate_up_blocks[e], w.gate_up_scales[e]);
  const at::Tensor down = mxfp4_to_float(w.down_blocks[e], w.down_scales[e]);
  const at::Tensor gu = at::linear(x, gate_up, w.gate_up_bias[e].to(at::kFloat));
  const at::Tensor gate = gu.slice(-1, 0, gu.size(-1), 2).clamp_max(limit);
  const at::Tensor up = gu.slice(-1, 1, gu.size(-1), 2).clamp(-limit, limit);
  const at::Tensor glu = gate * at::sigmoid(gate * 1.702f);
  return at::linear((up + 1) * glu, down, w.down_bias[e].to(at::kFloat));
}

// Router logits: top k, then a softmax over those k (GptOssTopKRouter).
at::Tensor gpt_oss_moe(const TorchMoeLayerWeights& w, const ModelConfig& c, const at::Tensor& x) {
  const MoeConfig& m = c.moe;
  std::vector<at::Tensor> rows;
  for (int64_t t = 0; t < x.size(0); ++t) {
    const at::Tensor xt = x[t];
    const at::Tensor logits = at::linear(xt, w.router.to(at::kFloat), w.router_bias.to(at::kFloat));
    auto [top, idx] = at::topk(logits, m.num_experts_per_tok);
    const at::Tensor weights = at::softmax(top, -1);
    at::Tensor y = at::zeros_like(xt);
    for (int64_t j = 0; j < m.num_experts_per_tok; ++j) {
      y = y + weights[j] * gpt_oss_expert(w.mxfp4, idx[j].item<int64_t>(), m.swiglu_limit, xt);
    }
    rows.push_back(y);
  }
  return at::stack(rows, 0);
}

}  // namespace

at::Tensor naive_moe_mlp(const TorchMoeLayerWeights& w, const ModelConfig& c, const at::Tensor& x) {
  if (c.moe.gpt_oss_experts) return gpt_oss_moe(w, c, x);
  const MoeConfig& m = c.moe;
  const int64_t T = x.size(0);
  std::vector<at::Tensor> rows;
  for (int64_t t = 0; t < T; ++t) {
    const at::Tensor xt = x[t];  // [hidden]
    const at::Tensor probs = at::softmax(widened_linear(xt, w.router), -1, at::kFloat);
    auto [top, idx] = at::topk(probs, m.num_experts_per_tok);
    if (m.norm_topk_prob && !(m.norm_topk_only_above_one && m.num_experts_per_tok == 1)) {
      top = top / (top.sum() + m.norm_topk_epsilon);
    }
    at::Tensor y = at::zeros_like(xt);
    for (int64_t j = 0; j < m.num_experts_per_tok; ++j) {
      y = y + top[j] * expert_mlp(w.experts[size_t(idx[j].item<int64_t>())], xt);
    }
    at::Tensor shared = at::zeros_like(xt);
    for (const BasicExpertWeights<at::Tensor>& s : w.shared) shared = shared + expert_mlp(s, xt);
    // Qwen3-Next / Qwen3.5-MoE: the shared expert's output times sigmoid(x . gate).
    if (w.shared_expert_gate.defined()) {
      shared = shared * at::sigmoid(widened_linear(xt, w.shared_expert_gate));
    }
    y = y + shared;
    rows.push_back(y);
  }
  return at::stack(rows, 0);
}

}  // namespace ps
