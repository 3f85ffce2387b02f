#include "reference/naive_moe.h"

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

}  // namespace

at::Tensor naive_moe_mlp(const TorchMoeLayerWeights& w, const ModelConfig& c, const at::Tensor& x) {
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
    for (const BasicExpertWeights<at::Tensor>& s : w.shared) y = y + expert_mlp(s, xt);
    rows.push_back(y);
  }
  return at::stack(rows, 0);
}

}  // namespace ps
