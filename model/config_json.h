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

}  // namespace ps::config_json
