#pragma once
// `pagedserve make-tiny-model`: a complete Hugging Face-layout checkpoint with seeded random
// weights and a tokenizer learned by our own BPE trainer. Nothing is downloaded.
#include <cstdint>
#include <string>

#include "model/model_config.h"

namespace ps {

enum class WeightDtype { kF32, kBF16, kF16 };

struct TinyModelOptions {
  ModelConfig config;  // defaults: the DESIGN's tiny shape (qwen3, 512 hidden, 8 layers, ...)
  WeightDtype dtype = WeightDtype::kF32;
  int32_t shards = 1;  // > 1 writes model-0000i-of-0000n.safetensors + index json
  uint64_t seed = 0;
};

// Writes config.json, model.safetensors (or shards + model.safetensors.index.json),
// tokenizer.json, tokenizer_config.json, generation_config.json into `dir` (created).
// Throws std::runtime_error naming the path on failure.
void write_tiny_model(const std::string& dir, const TinyModelOptions& options);

}  // namespace ps
