#pragma once
// The short causal depthwise convolution of Gated DeltaNet layers (issue #35; HF's
// Qwen3NextGatedDeltaNet.conv1d: kernel `linear_conv_kernel_dim`, one filter per channel, no
// bias, then SiLU), over one sequence's new rows with a rolling state, so a prompt split into
// chunks, or decoded a token at a time, gives what one call over everything gives:
//   out[t][c] = silu(sum_j w[c][j] * x[t - (K - 1) + j][c]),  x before the sequence's start = 0
// The state holds the last K - 1 inputs of each channel, oldest first (zeros for a new sequence).
#include <cstdint>

namespace ps {

struct CausalConv1dArgs {
  int32_t num_tokens = 0;
  int32_t channels = 0;
  int32_t kernel = 0;        // K >= 1
  const float* x = nullptr;  // [T, channels], x_stride floats apart
  int64_t x_stride = 0;
  const float* weight = nullptr;  // [channels, K]
  float* state = nullptr;         // [channels, K - 1], read then advanced
  float* out = nullptr;           // [T, channels], out_stride floats apart (may be x itself)
  int64_t out_stride = 0;
};

// Throws std::invalid_argument on inconsistent sizes or missing pointers.
void causal_conv1d_silu(const CausalConv1dArgs& a);

}  // namespace ps
