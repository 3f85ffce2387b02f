#include "model/naive_moe.h"

namespace ps {
namespace {

at::Tensor expert_mlp(const ExpertWeights& e, const at::Tensor& x) {
  return at::linear(at::silu(at::linear(x, e.gate_proj)) * at::linear(x, e.up_proj), e.down_proj);
}

}  // namespace

at::Tensor naive_moe_mlp(const MoeLayerWeights& w, const ModelConfig& c, const at::Tensor& x) {
  const MoeConfig& m = c.moe;
  const int64_t T = x.size(0);
  std::vector<at::Tensor> rows;
  for (int64_t t = 0; t < T; ++t) {
    const at::Tensor xt = x[t];  // [hidden]
    const at::Tensor probs = at::softmax(at::linear(xt, w.router), -1, at::kFloat);
    auto [top, idx] = at::topk(probs, m.num_experts_per_tok);
    if (m.norm_topk_prob && !(m.norm_topk_only_above_one && m.num_experts_per_tok == 1)) {
      top = top / (top.sum() + m.norm_topk_epsilon);
    }
    at::Tensor y = at::zeros_like(xt);
    for (int64_t j = 0; j < m.num_experts_per_tok; ++j) {
      y = y + top[j] * expert_mlp(w.experts[size_t(idx[j].item<int64_t>())], xt);
    }
    for (const ExpertWeights& s : w.shared) y = y + expert_mlp(s, xt);
    rows.push_back(y);
  }
  return at::stack(rows, 0);
}

}  // namespace ps
