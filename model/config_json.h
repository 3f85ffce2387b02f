#pragma once
// What the config.json readers (model_config, moe_config, rope_scaling) share: their error form
// and the "present and not null" test Hugging Face configs need (a null field means unset).
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

}  // namespace ps::config_json
