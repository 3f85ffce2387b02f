#pragma once
// Per-layer attention kinds (config.json `layer_types`: "full_attention" or
// "sliding_attention") and the Gemma 3 fields that go with them: the sliding window, the local
// layers' own RoPE base (`rope_local_base_freq`, with no rope_scaling), `query_pre_attn_scalar`.
// Without `layer_types`, every `sliding_window_pattern`-th layer (6 by default) is global and the
// rest slide, as transformers' Gemma3TextConfig builds it. Read, checked and written back beside
// model_config.cpp's fields.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model_config.h"
#include "model/rope_scaling.h"

namespace ps {

// A multimodal `gemma3` config.json's language model: its text_config as a gemma3_text
// config.json text (the vision tower is not served), the top level's token ids and tying filling
// what it leaves out. Throws std::runtime_error naming the file and field.
std::string gemma3_text_config(const nlohmann::json& config, const std::string& origin);

// Fills c's Gemma fields from a gemma3_text or gemma2 config.json (after num_hidden_layers,
// head_dim and the RoPE fields): Gemma 2 alternates sliding and global layers (pattern 2), has
// one RoPE base and soft-caps scores and logits; Gemma 3 refuses soft-capping. Throws
// std::runtime_error naming the file and field, also for what the engine does not do
// (bidirectional attention, another activation).
void read_gemma_fields(const nlohmann::json& config, const std::string& origin, ModelConfig* c);
// c->layer_types from config.json's `layer_types` list (one "full_attention" or
// "sliding_attention" per layer, checked), or `fallback` when the config has none.
void read_layer_types(const nlohmann::json& config, const std::string& origin,
                      std::vector<LayerType> fallback, ModelConfig* c);
// Writes layer_types and sliding_window.
void write_layer_types(const ModelConfig& c, nlohmann::json* config);
// One known kind per layer, a positive window when any layer slides, and only the Gemma
// families and gpt_oss carry them.
void validate_layer_types(const ModelConfig& c, const std::string& origin);
// Adds layer_types, sliding_window, rope_local_base_freq, query_pre_attn_scalar and the
// activation for a gemma3_text config (from_dir reads them back).
void write_gemma3_fields(const ModelConfig& c, nlohmann::json* config);

// The RoPE of a sliding layer: rope_local_base_freq with no scaling (Gemma 3); other families'
// sliding layers rotate as their full ones.
RopeFrequencies sliding_rope_frequencies(const ModelConfig& c);

}  // namespace ps
