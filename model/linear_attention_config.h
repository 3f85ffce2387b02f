#pragma once
// Qwen3.5's hybrid decoder (issue #35; HF model_type `qwen3_5_text`, or `qwen3_5` with the text
// model in `text_config`; the MoE `qwen3_5_moe_text` / `qwen3_5_moe`; Qwen3-Next's `qwen3_next`,
// whose layer_types may follow from full_attention_interval): three of every four layers are Gated
// DeltaNet linear attention (config.json `layer_types` "linear_attention", shaped by the `linear_*`
// fields), the rest full attention with a sigmoid output gate, q/k norms and partial RoPE; every
// decoder norm scales by (1 + w). Text-only positions are equal on MRoPE's three axes, so its
// sections rotate as plain RoPE. Read, checked and written back beside model_config.cpp's fields.
#include <string>

#include <nlohmann/json.hpp>

#include "model/model_config.h"

namespace ps {

// A multimodal `qwen3_5` (`qwen3_5_moe`) config.json's language model: its text_config as a
// qwen3_5_text (qwen3_5_moe_text) config.json text (the vision tower is not served), the top
// level's token ids and tying filling what it leaves out. Throws std::runtime_error naming the file
// and field.
std::string qwen3_5_text_config(const nlohmann::json& config, const std::string& origin);

// rope_parameters without MRoPE's section fields (text-only: plain RoPE), for the RoPE reader.
nlohmann::json without_mrope_fields(const nlohmann::json& rope_parameters);

// Fills c's layer_types (each "linear_attention" or "full_attention"), linear shape and output
// gate from a hybrid config.json. Every `linear_*` field is required. Throws
// std::runtime_error naming the file and field.
void read_linear_attention_fields(const nlohmann::json& config, const std::string& origin,
                                  ModelConfig* c);
// Positive sizes, value heads a multiple of key heads, at least one full-attention layer.
void validate_linear_attention(const ModelConfig& c, const std::string& origin);
// Adds layer_types, the linear_* fields and the gate (from_dir reads them back).
void write_linear_attention_fields(const ModelConfig& c, nlohmann::json* config);

}  // namespace ps
