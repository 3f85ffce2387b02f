#pragma once
// Writes a Hugging Face checkpoint directory from weights in memory: shared by `convert`,
// `merge-lora` and their tests. Torch-free header.
#include <string>
#include <vector>

#include "checkpoint/tiny_model.h"  // WeightDtype

namespace ps {

struct ModelWeights;

// "f32" | "bf16" | "f16" -> WeightDtype; throws std::runtime_error naming `flag` otherwise.
WeightDtype parse_weight_dtype(const std::string& text, const std::string& flag);

// Creates `dir`, copies each file of `copy_files` into it under its own name (tokenizer.json,
// tokenizer_config.json, ...), then writes config.json (with torch_dtype), generation_config.json
// (unless one was copied) and model.safetensors in `dtype`. Stale shards and a stale
// model.safetensors.index.json in `dir` are removed so the loader cannot pick them up.
// Throws std::runtime_error naming the path on I/O failure.
// Writes all tensors of `weights` (canonical Hugging Face names) to one safetensors file in
// `dtype`. Throws std::runtime_error naming the path on I/O failure.
void write_weights_safetensors(const std::string& path, const ModelWeights& weights,
                               WeightDtype dtype);

void write_checkpoint(const std::string& dir, const ModelWeights& weights, WeightDtype dtype,
                      const std::vector<std::string>& copy_files);

}  // namespace ps
