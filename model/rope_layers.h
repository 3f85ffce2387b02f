#pragma once
// Which layers apply RoPE (SmolLM3's `no_rope_layers`: 1 for a RoPE layer, 0 for a NoPE layer,
// which attends by content alone; without the field, every no_rope_layer_interval-th layer is
// NoPE, as transformers' SmolLM3Config builds it). Read, checked and written back beside
// model_config.cpp's fields.
#include <string>

#include <nlohmann/json.hpp>

namespace ps {

struct ModelConfig;

// Fills c->rope_layers from a smollm3 config.json (after num_hidden_layers); throws
// std::runtime_error naming the file and field. A sliding window is refused: SmolLM3's released
// configs have none, and this engine has no window mask yet.
void read_rope_layers(const nlohmann::json& config, const std::string& origin, ModelConfig* c);
// One entry per layer, 0/1, and only smollm3 carries them.
void validate_rope_layers(const ModelConfig& c, const std::string& origin);
// Adds no_rope_layers for a smollm3 config (from_dir reads it back).
void write_rope_layers(const ModelConfig& c, nlohmann::json* config);

}  // namespace ps
