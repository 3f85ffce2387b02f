#pragma once
// Reading typed, range-checked fields out of a JSON request body. A mistake throws Reject,
// which the parse functions turn into the ApiError they return; callers never see a throw.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "openai/api_error.h"

namespace ps::json_fields {

using nlohmann::json;

struct Reject {
  ApiError error;
};

[[noreturn]] void reject(const std::string& param, const std::string& message);
[[noreturn]] void wrong_type(const std::string& name, const char* want, const json& got);

// Deeper request bodies are refused; OpenAI request fields nest a few levels at most.
inline constexpr int kMaxJsonDepth = 64;

// The body as a JSON object; malformed JSON is rejected with where the parser stopped, and so
// are bodies nested past kMaxJsonDepth and objects that repeat a key.
json parse_object(std::string_view body);

// A present, non-null field; null counts as absent, as in OpenAI's API.
const json* find(const json& obj, const std::string& name);

std::optional<double> get_number(const json& obj, const std::string& name);
int64_t as_int(const json& v, const std::string& name);  // 5.0 counts as an integer
std::optional<int64_t> get_int(const json& obj, const std::string& name);
std::optional<bool> get_bool(const json& obj, const std::string& name);
std::optional<std::string> get_string(const json& obj, const std::string& name);

// `lo_open`: the lower bound itself is not allowed (top_p > 0).
void check_range(const std::string& name, double v, double lo, double hi, bool lo_open = false);
// A token id in [0, vocab_size).
int32_t token_id(const json& v, const std::string& name, int32_t vocab_size);

// Runs a parse function, turning Reject (and any JSON shape we did not foresee, which is
// still the client's input and never a 500) into an ApiError.
template <typename T, typename F>
std::variant<T, ApiError> guarded(F&& f) {
  try {
    return f();
  } catch (const Reject& r) {
    return r.error;
  } catch (const json::exception& e) {
    return invalid_param("", std::string("invalid request: ") + e.what());
  }
}

}  // namespace ps::json_fields
