#include "tokenizer/json_steps.h"

#include <stdexcept>

namespace ps::json_steps {

void fail(const std::string& origin, const std::string& what) {
  throw std::runtime_error(origin + ": " + what);
}

std::string type_of(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return "";
  return j["type"].get<std::string>();
}

std::vector<std::pair<const nlohmann::json*, std::string>> leaves(const nlohmann::json& root,
                                                                  const std::string& root_name,
                                                                  const char* list_key,
                                                                  const std::string& origin) {
  std::vector<std::pair<const nlohmann::json*, std::string>> out;
  // An explicit stack of (json, where), last pushed first, so nesting depth costs no recursion.
  std::vector<std::pair<const nlohmann::json*, std::string>> stack{{&root, root_name}};
  while (!stack.empty()) {
    auto [j, where] = stack.back();
    stack.pop_back();
    if (type_of(*j) != "Sequence") {
      out.emplace_back(j, std::move(where));
      continue;
    }
    if (!j->contains(list_key) || !(*j)[list_key].is_array()) {
      fail(origin, where + " is a Sequence without a \"" + list_key + "\" array");
    }
    const auto& inner = (*j)[list_key];
    for (size_t i = inner.size(); i-- > 0;) {
      stack.emplace_back(&inner[i], where + "." + list_key + "[" + std::to_string(i) + "]");
    }
  }
  return out;
}

}  // namespace ps::json_steps
