#pragma once
// Seeded random weights for a config: what make-tiny-model writes and random_model returns.
// Each tensor's values depend only on (seed, tensor name, element index), so they do not change
// with sharding, dtype or the order tensors are made in, nor across runs and machines.
#include <cstdint>

#include "model/model_weights.h"

namespace ps {

// Linear weights, embeddings and biases ~ normal(0, 0.02); RMSNorm weights 1. Validates the
// config first (std::runtime_error).
ModelWeights make_random_weights(const ModelConfig& config, uint64_t seed);

}  // namespace ps
