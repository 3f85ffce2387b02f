#pragma once
// What the config.json readers (model_config, moe_config, rope_scaling) share: their error form
// and the "present and not null" test Hugging Face configs need (a null field means unset).
#include <cstdint>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace ps::config_json {

// Throws std::runtime_error "<origin>: <message>": the file, then what in it is wrong.
[[noreturn]] inline void fail(const std::string& origin, const std::string& message) {
  throw std::runtime_error(origin + ": " + message);
}

inline bool has(const nlohmann::json& j, const char* key) {
  return j.contains(key) && !j.at(key).is_null();
}

// A required integer field in [1, max]: a missing field, another type or a value outside fails
// naming the field.
inline int32_t positive_int(const nlohmann::json& j, const char* key, const std::string& origin,
                            int64_t max = int64_t{1} << 30) {
  if (!has(j, key)) fail(origin, std::string("missing required field \"") + key + "\"");
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max) {
    fail(origin, std::string("field \"") + key + "\" must be a positive integer, got " + v.dump());
  }
  return static_cast<int32_t>(v.get<int64_t>());
}

// A multimodal config.json's language model (Gemma 3's `gemma3`, Qwen3.5's `qwen3_5`): its
// text_config as a `text_type` config.json text (the vision tower is not served), the top level's
// token ids and tying filling what it leaves out. Fails naming the file when there is no
// text_config object or it is of another type.
inline std::string nested_text_config(const nlohmann::json& j, const std::string& origin,
                                      const std::string& wrapper, const std::string& text_type) {
  if (!has(j, "text_config") || !j.at("text_config").is_object()) {
    fail(origin, "model_type " + wrapper + " needs a \"text_config\" object (its language model)");
  }
  nlohmann::json t = j.at("text_config");
  if (has(t, "model_type") && t.at("model_type") != text_type) {
    fail(origin, "text_config.model_type " + t.at("model_type").dump() + " is not supported (" +
                     wrapper + "'s is " + text_type + ")");
  }
  t["model_type"] = text_type;
  for (const char* key : {"eos_token_id", "bos_token_id", "tie_word_embeddings"}) {
    if (!has(t, key) && has(j, key)) t[key] = j.at(key);
  }
  return t.dump();
}

}  // namespace ps::config_json
