#pragma once
// The decoder forward used for training: a padded batch [B, T] at once, differentiable, over
// the same ModelWeights layout (and the same math) as reference/naive_forward.cpp, so what the
// trainer learns is what the loader and the engine compute.
#include <cstdint>
#include <vector>

namespace at {
class Tensor;
}

namespace ps {

struct ModelWeights;
struct TorchWeights;

// ids: int64 [B, T]; returns fp32 logits [B, T, vocab]. Causal: position t sees 0..t only, so
// padding after a sequence's end does not change its logits.
at::Tensor train_logits(const TorchWeights& weights, const at::Tensor& ids);

// One unpadded sequence, row-major [tokens.size(), vocab]: for comparing with naive_logits.
std::vector<float> train_logits_single(const ModelWeights& weights,
                                       const std::vector<int32_t>& tokens);

}  // namespace ps
