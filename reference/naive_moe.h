#pragma once
// The oracle's sparse MLP: each token routed and run through its experts on its own, with plain
// torch ops, as HF's Qwen3MoeSparseMoeBlock, MiniMind's MOEFeedForward and GptOssMLP (MXFP4 experts
// widened by plain torch ops) define it. Slow and obviously correct; MoeLayer's grouped forward is
// checked against it.
#include <ATen/ATen.h>

#include "model/model_config.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {

// x: [T, hidden] (post-attention-normed). Returns the MLP output [T, hidden].
at::Tensor naive_moe_mlp(const TorchMoeLayerWeights& w, const ModelConfig& c, const at::Tensor& x);

}  // namespace ps
