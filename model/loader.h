#pragma once
// Torch-free view of a loaded checkpoint. The tensors live behind ModelWeights (model_weights.h,
// which includes ATen and is only included by model/ sources).
#include <cstdint>
#include <memory>
#include <string>

#include "model/model_config.h"

namespace ps {

struct ModelWeights;

struct LoadedModel {
  ModelConfig config;
  std::shared_ptr<const ModelWeights> weights;  // fp32, CPU
};

// Reads config.json (+ generation_config.json) and model.safetensors or the sharded
// model.safetensors.index.json. Throws std::runtime_error naming the file and tensor on any
// malformed input; never returns a half-loaded model.
LoadedModel load_model(const std::string& model_dir);

// Seeded random weights of the given shape (the same ones make-tiny-model writes).
LoadedModel random_model(const ModelConfig& config, uint64_t seed);

}  // namespace ps
