#include "openai/generation_defaults.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace ps {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

std::optional<double> number(const nlohmann::json& j, const char* key, double lo, double hi,
                             bool lo_open, const std::string& path) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number()) fail(path, std::string(key) + " must be a number");
  double v = j[key].get<double>();
  if (v > hi || v < lo || (lo_open && v == lo)) {
    char range[96];
    std::snprintf(range, sizeof(range), "%s%g, %g]", lo_open ? "(" : "[", lo, hi);
    fail(path, std::string(key) + " is " + std::to_string(v) + ", outside " + range);
  }
  return v;
}

std::string format(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

}  // namespace

GenerationDefaults GenerationDefaults::from_file(const std::string& path) {
  GenerationDefaults d;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return d;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open the generation config");
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) fail(path, "top level must be a JSON object");
  // Same ranges the API accepts from clients.
  if (auto v = number(j, "temperature", 0, 2, false, path)) d.temperature = static_cast<float>(*v);
  if (auto v = number(j, "top_p", 0, 1, true, path)) d.top_p = static_cast<float>(*v);
  if (auto v = number(j, "min_p", 0, 1, false, path)) d.min_p = static_cast<float>(*v);
  if (auto v = number(j, "repetition_penalty", 0, 2, true, path)) {
    d.repetition_penalty = static_cast<float>(*v);
  }
  for (const char* key : {"top_k", "max_new_tokens"}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    if (!j[key].is_number_integer()) fail(path, std::string(key) + " must be an integer");
    int64_t v = j[key].get<int64_t>();
    bool top_k = std::string(key) == "top_k";
    if (v < (top_k ? -1 : 1) || v > (int64_t{1} << 30)) {
      fail(path, std::string(key) + " is " + std::to_string(v) + ", outside [" +
                     (top_k ? "-1" : "1") + ", 2^30]");
    }
    (top_k ? d.top_k : d.max_new_tokens) = static_cast<int32_t>(v);
  }
  if (!d.empty()) d.source = path;
  return d;
}

std::string GenerationDefaults::describe() const {
  if (empty()) return "none";
  std::string out;
  auto add = [&](const char* name, const std::string& value) {
    if (!out.empty()) out += ' ';
    out += std::string(name) + "=" + value;
  };
  if (temperature) add("temperature", format(*temperature));
  if (top_p) add("top_p", format(*top_p));
  if (top_k) add("top_k", std::to_string(*top_k));
  if (min_p) add("min_p", format(*min_p));
  if (repetition_penalty) add("repetition_penalty", format(*repetition_penalty));
  if (max_new_tokens) add("max_new_tokens", std::to_string(*max_new_tokens));
  return out;
}

}  // namespace ps
