#pragma once
// The checkpoint as the CUDA executor uploads it: every matrix contiguous bf16 on the host, q/k/v
// fused into one [q + 2kv, hidden] matrix and gate/up into one [2 * inter, hidden] (one GEMM
// each per step, as on CPU). Torch-free header, so cuda/ reads it without ATen; the
// conversion (cuda_weight_source.cpp) is the only place that touches at::Tensor, at load.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/model_config.h"

namespace ps {

struct ModelWeights;

// Row-major [rows, cols] bf16 bits (a vector has rows == 1).
struct Bf16Host {
  const uint16_t* data = nullptr;
  int64_t rows = 0, cols = 0;
  int64_t numel() const { return rows * cols; }
  int64_t bytes() const { return numel() * 2; }
};

struct Bf16LayerSource {
  Bf16Host input_norm, post_norm;  // [hidden]
  Bf16Host qkv, qkv_bias;          // [q + 2kv, hidden]; bias [q + 2kv] or empty
  Bf16Host q_norm, k_norm;         // [head_dim] or empty
  Bf16Host o_proj;                 // [hidden, q]
  Bf16Host gate_up, down;          // [2 * inter, hidden], [hidden, inter]
};

struct Bf16ModelSource {
  ModelConfig config;
  Bf16Host embed, lm_head, final_norm;
  bool tied = false;  // lm_head is the embedding: upload it once
  std::vector<Bf16LayerSource> layers;
  std::shared_ptr<const void> keep_alive;  // owns the host memory the pointers above view
};

// Throws std::invalid_argument naming the tensor for a missing or misshapen weight, and for
// MoE layers (the CUDA executor runs dense MLPs only).
Bf16ModelSource bf16_model_source(const ModelWeights& weights);

}  // namespace ps
