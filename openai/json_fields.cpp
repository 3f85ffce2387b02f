#include "openai/json_fields.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace ps::json_fields {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

[[noreturn]] void reject(const std::string& param, const std::string& message) {
  throw Reject{invalid_param(param, message)};
}

json parse_object(std::string_view body) {
  json j;
  // Nesting is bounded (a deep document costs stack when it is destroyed, and no field of ours
  // nests past a few levels) and a key sent twice is refused: which copy wins differs between
  // JSON parsers, so a proxy and this server could read two different requests from one body.
  std::vector<std::set<std::string>> keys;
  auto guard = [&keys](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth) {
      reject("", "request body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    if (event == json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == json::parse_event_t::key && !keys.empty()) {
      std::string key = parsed.get<std::string>();
      if (!keys.back().insert(key).second)
        reject(key, "duplicate key '" + key + "' in the request body");
    }
    return true;
  };
  try {
    j = json::parse(body, guard);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    reject("", "request body is not valid JSON: " + what);
  }
  if (!j.is_object())
    reject("", std::string("request body must be a JSON object, got ") + j.type_name());
  return j;
}

const json* find(const json& obj, const std::string& name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

[[noreturn]] void wrong_type(const std::string& name, const char* want, const json& got) {
  reject(name, "'" + name + "' must be " + want + ", got " + got.type_name());
}

std::optional<double> get_number(const json& obj, const std::string& name) {
  const json* v = find(obj, name);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(name, "a number", *v);
  return v->get<double>();
}

int64_t as_int(const json& v, const std::string& name) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      reject(name, "'" + name + "' is out of range");
    }
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  // 5.0 is an integer to a JavaScript client.
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  wrong_type(name, "an integer", v);
}

std::optional<int64_t> get_int(const json& obj, const std::string& name) {
  const json* v = find(obj, name);
  if (!v) return std::nullopt;
  return as_int(*v, name);
}

std::optional<bool> get_bool(const json& obj, const std::string& name) {
  const json* v = find(obj, name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(name, "a boolean", *v);
  return v->get<bool>();
}

std::optional<std::string> get_string(const json& obj, const std::string& name) {
  const json* v = find(obj, name);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(name, "a string", *v);
  return v->get<std::string>();
}

void check_range(const std::string& name, double v, double lo, double hi, bool lo_open) {
  bool ok = (lo_open ? v > lo : v >= lo) && v <= hi;
  if (!ok) {
    reject(name, "'" + name + "' must be " + (lo_open ? "> " : "between ") + num(lo) +
                     (lo_open ? " and <= " : " and ") + num(hi) + ", got " + num(v));
  }
}

int32_t token_id(const json& v, const std::string& name, int32_t vocab_size) {
  int64_t id = as_int(v, name);
  if (id < 0 || id >= vocab_size) {
    reject(name, "token id " + std::to_string(id) + " in '" + name +
                     "' is outside the vocabulary [0, " + std::to_string(vocab_size) + ")");
  }
  return static_cast<int32_t>(id);
}

}  // namespace ps::json_fields
