#pragma once
// Seeded random weights for a config: what make-tiny-model writes and random_model returns.
// Each tensor's values depend only on (seed, tensor name, element index), so they do not change
// with sharding, dtype or the order tensors are made in, nor across runs and machines.
#include <cstdint>

#include "model/model_weights.h"

namespace ps {

// Linear weights, embeddings and biases ~ normal(0, 0.02); RMSNorm weights 1. Validates the
// config first (std::runtime_error).
// `dtype` (f32, bf16, f16): each tensor is rounded to it as soon as it is made, so a large
// checkpoint never holds all of its weights in fp32 at once (make-tiny-model at gpt-oss-20b's
// shape: 10 GB of MXFP4 experts beside 3.7 GB of bf16, not 6 GB more of fp32).
ModelWeights make_random_weights(const ModelConfig& config, uint64_t seed,
                                 DType dtype = DType::f32);

}  // namespace ps
