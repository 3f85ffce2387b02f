#pragma once
// What the config.json tests share: a real config's text, a field replaced in one, and the
// error a text gets from ModelConfig::from_json.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "model/model_config.h"

namespace ps::config_text {

// TinyLlama-style: no tie_word_embeddings key, rope_theta written as an integer.
constexpr const char* kLlama = R"({
  "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 5632,
  "max_position_embeddings": 2048, "model_type": "llama", "num_attention_heads": 32,
  "num_hidden_layers": 22, "num_key_value_heads": 4, "rms_norm_eps": 1e-05,
  "rope_scaling": null, "rope_theta": 10000.0, "vocab_size": 32000})";

inline std::string with(const char* base, const std::string& key, const std::string& value) {
  auto j = nlohmann::json::parse(base);
  j[key] = nlohmann::json::parse(value);
  return j.dump();
}

inline std::string error_of(const std::string& text) {
  try {
    ModelConfig::from_json(text, "/models/x/config.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace ps::config_text
