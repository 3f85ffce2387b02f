#pragma once
// Measures what this machine can do, so benchmark figures can be read as fractions of its own
// limits (issue: "hold the engine to the machine's own limits, measured in the same run").
#include <cstdint>

#include "model/model_config.h"

namespace ps {

struct MachineLimits {
  double read_bandwidth_gbs = 0;  // summing a buffer far larger than the caches
  double gemm_gflops = 0;         // a large fp32 GEMM through the same BLAS as the model
};

MachineLimits probe_machine();

// fp32 bytes of all weights, and matmul FLOPs per token (2 per weight that a token multiplies;
// the embedding lookup is a gather, not a matmul; attention is excluded and noted as such).
int64_t weight_bytes(const ModelConfig& c);
int64_t matmul_flops_per_token(const ModelConfig& c);

}  // namespace ps
