#pragma once
// Torch-free view of a loaded checkpoint. The tensors live behind ModelWeights (model_weights.h,
// which includes ATen and is only included by model/ sources).
#include <cstdint>
#include <memory>
#include <string>

#include "model/model_config.h"
#include "model/model_dtype.h"

namespace ps {

struct ModelWeights;

struct LoadedModel {
  ModelConfig config;
  std::shared_ptr<const ModelWeights> weights;  // CPU; fp32 unless loaded with another dtype
};

struct LoadOptions {
  // The embedding and projection matrices' dtype in memory (norms and biases are always fp32).
  // bf16/f16 matrices stored at that dtype are zero-copy views of the mapped file (the runner
  // packs them and releases their pages); other pairs are converted at load.
  ModelDtype dtype = ModelDtype::f32;
};

// What ModelDtype::auto_dtype means for the checkpoint in `model_dir`: its first layer's q_proj
// dtype (bf16 or f16; a linear-attention first layer: its in_proj_qkv, else the embedding), else
// f32. Throws like load_model on an unreadable checkpoint.
ModelDtype resolve_model_dtype(const std::string& model_dir, ModelDtype asked);

// Reads config.json (+ generation_config.json) and model.safetensors or the sharded
// model.safetensors.index.json. Throws std::runtime_error naming the file and tensor on any
// malformed input; never returns a half-loaded model.
LoadedModel load_model(const std::string& model_dir);  // fp32 matrices
LoadedModel load_model(const std::string& model_dir, const LoadOptions& options);

// Seeded random weights of the given shape (the same ones make-tiny-model writes).
LoadedModel random_model(const ModelConfig& config, uint64_t seed);

}  // namespace ps
