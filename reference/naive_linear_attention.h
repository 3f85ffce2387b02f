#pragma once
// The oracle's Gated DeltaNet mixer (Qwen3.5's linear-attention layer, issue #35) over one whole
// sequence from zero states: the causal depthwise convolution as a sum of shifted rows, then the
// delta rule token by token, in double precision with plain torch ops, as HF's
// Qwen3_5GatedDeltaNet defines it (its torch_recurrent_gated_delta_rule path). Slow and obviously
// correct; the runner's chunked and recurrent kernels are checked against it.
#include <ATen/ATen.h>

#include "model/model_config.h"
#include "torch_bridge/torch_tensor.h"

namespace ps {

// x: [T, hidden] (input-normed). Returns the mixer's output [T, hidden] (after out_proj).
at::Tensor naive_linear_attention(const TorchLayerWeights& w, const ModelConfig& c,
                                  const at::Tensor& x);

}  // namespace ps
