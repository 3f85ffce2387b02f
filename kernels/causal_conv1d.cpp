#include "kernels/causal_conv1d.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/parallel_for.h"

namespace ps {

void causal_conv1d_silu(const CausalConv1dArgs& a) {
  if (a.num_tokens < 0 || a.channels <= 0 || a.kernel <= 0) {
    throw std::invalid_argument("causal_conv1d: needs channels >= 1 and kernel >= 1");
  }
  if (!a.weight || (a.kernel > 1 && !a.state) || (a.num_tokens > 0 && (!a.x || !a.out))) {
    throw std::invalid_argument("causal_conv1d: missing input, weight, state or output");
  }
  const int32_t T = a.num_tokens, K = a.kernel, H = K - 1;
  // Channels are independent; each reads all its inputs before writing (out may alias x).
  parallel_for(0, a.channels, 64, [&](int64_t c0, int64_t c1) {
    std::vector<float> window(size_t(H + T));
    for (int64_t c = c0; c < c1; ++c) {
      float* st = H > 0 ? a.state + c * H : nullptr;  // K = 1 keeps no state
      for (int32_t j = 0; j < H; ++j) window[size_t(j)] = st[j];
      for (int32_t t = 0; t < T; ++t) window[size_t(H + t)] = a.x[t * a.x_stride + c];
      const float* w = a.weight + c * K;
      for (int32_t t = 0; t < T; ++t) {
        float s = 0;
        for (int32_t j = 0; j < K; ++j) s += w[j] * window[size_t(t + j)];
        a.out[t * a.out_stride + c] = s / (1.0f + std::exp(-s));
      }
      for (int32_t j = 0; j < H; ++j) st[j] = window[size_t(T + j)];
    }
  });
}

}  // namespace ps
