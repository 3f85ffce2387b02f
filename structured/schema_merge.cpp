// allOf folded into one schema, and the disjointness test that oneOf needs. Both reason about
// what the *generated* outputs can be (closed objects, see json_schema_to_gbnf.h), which is
// narrower than what the schema accepts, and both refuse what they cannot decide.

#include <algorithm>
#include <cmath>

#include "structured/constraint_spec.h"
#include "structured/schema_compiler.h"

namespace ps {
namespace {

void expand_nullable(SchemaJson& s, const std::string& ptr) {
  if (!s.contains("nullable")) return;
  auto types = declared_types(s, ptr);
  if (types) {
    SchemaJson list = SchemaJson::array();
    for (const auto& t : *types) list.push_back(t);
    s["type"] = list;
    s.erase("nullable");
  }
}

std::set<std::string> type_set(const SchemaJson& s) {
  std::set<std::string> out;
  if (s["type"].is_array()) {
    for (const auto& t : s["type"]) out.insert(t.get<std::string>());
  } else {
    out.insert(s["type"].get<std::string>());
  }
  return out;
}

}  // namespace

SchemaJson SchemaCompiler::merge_all_of(const SchemaJson& s, const std::string& ptr, int depth) {
  if (depth > 32) schema_error(ptr, "allOf/$ref nested deeper than 32 (a reference loop?)");
  // The parts: every allOf branch (references followed, nested allOf flattened) and the
  // keywords beside allOf / $ref.
  std::vector<std::pair<SchemaJson, std::string>> parts;
  SchemaJson own = SchemaJson::object();
  for (const auto& [k, v] : s.items()) {
    if (k != "allOf" && k != "$ref" && !is_annotation(k)) own[k] = v;
  }
  parts.emplace_back(own, ptr);
  if (s.contains("$ref")) {
    SchemaJson ref_only = SchemaJson::object();
    ref_only["$ref"] = s["$ref"];
    parts.emplace_back(resolve(ref_only, ptr), ptr + "/$ref");
  }
  if (s.contains("allOf")) {
    const auto& all = s["allOf"];
    if (!all.is_array() || all.empty()) {
      schema_error(child_ptr(ptr, "allOf"), "'allOf' must be a non-empty array");
    }
    for (size_t i = 0; i < all.size(); ++i) {
      parts.emplace_back(all[i], child_ptr(child_ptr(ptr, "allOf"), std::to_string(i)));
    }
  }
  SchemaJson out = SchemaJson::object();
  std::vector<SchemaJson> closers;  // parts whose additionalProperties is not true
  for (auto& [part_in, pptr] : parts) {
    SchemaJson part = resolve(part_in, pptr);
    if (part.is_boolean()) {
      if (!part.get<bool>()) schema_error(pptr, "the schema false matches nothing");
      continue;
    }
    if (!part.is_object()) schema_error(pptr, "a schema must be an object or a boolean");
    if (part.contains("allOf") || part.contains("$ref")) part = merge_all_of(part, pptr, depth + 1);
    expand_nullable(part, pptr);
    for (const auto& [k, v] : part.items()) {
      if (is_annotation(k) || k == "$defs" || k == "definitions") continue;
      if (k == "properties") {
        if (!v.is_object()) schema_error(child_ptr(pptr, k), "'properties' must be an object");
        for (const auto& [name, sub] : v.items()) {
          auto& props = out["properties"];
          if (props.contains(name) && props[name] != sub) {
            props[name] = SchemaJson{{"allOf", SchemaJson::array({props[name], sub})}};
          } else {
            props[name] = sub;
          }
        }
      } else if (k == "required") {
        if (!v.is_array()) schema_error(child_ptr(pptr, k), "'required' must be an array");
        auto& req = out["required"];
        for (const auto& name : v) {
          if (std::find(req.begin(), req.end(), name) == req.end()) req.push_back(name);
        }
      } else if (k == "additionalProperties") {
        if (v != true) closers.push_back(part);
      } else if (k == "type") {
        if (!out.contains("type")) {
          out["type"] = v;
          continue;
        }
        std::set<std::string> a = type_set(out), b = type_set(part), both;
        for (const auto& t : a) {
          if (b.count(t) || (t == "integer" && b.count("number"))) both.insert(t);
        }
        for (const auto& t : b) {
          if (t == "integer" && a.count("number")) both.insert(t);
        }
        if (both.empty()) schema_error(child_ptr(pptr, k), "the allOf branches share no type");
        SchemaJson list = SchemaJson::array();
        for (const auto& t : both) list.push_back(t);
        out["type"] = list;
      } else if (out.contains(k) && out[k] != v) {
        schema_error(child_ptr(pptr, k), "allOf branches give '" + k +
                                             "' different values; merging those is not "
                                             "supported");
      } else {
        out[k] = v;
      }
    }
  }
  // A part with additionalProperties false / a schema also judges the members other parts add.
  for (const auto& c : closers) {
    const auto& ap = c["additionalProperties"];
    if (!out.contains("properties")) continue;
    SchemaJson kept = SchemaJson::object();
    for (const auto& [name, sub] : out["properties"].items()) {
      bool own_member = c.contains("properties") && c["properties"].contains(name);
      if (own_member) {
        kept[name] = sub;
      } else if (ap == false) {
        bool required = out.contains("required") &&
                        std::find(out["required"].begin(), out["required"].end(), name) !=
                            out["required"].end();
        if (required) {
          schema_error(child_ptr(ptr, "allOf"), "'" + name +
                                                    "' is required by one allOf branch and "
                                                    "forbidden by another's additionalProperties");
        }
      } else {
        kept[name] = SchemaJson{{"allOf", SchemaJson::array({sub, ap})}};
      }
    }
    out["properties"] = kept;
  }
  for (const auto& c : closers) {
    const auto& ap = c["additionalProperties"];
    if (!out.contains("additionalProperties") || ap == false) {
      out["additionalProperties"] = ap;
    } else if (out["additionalProperties"] != false && out["additionalProperties"] != ap) {
      out["additionalProperties"] =
          SchemaJson{{"allOf", SchemaJson::array({out["additionalProperties"], ap})}};
    }
  }
  return out;
}

namespace {

const std::set<std::string> kEveryType = {"null",   "boolean", "integer", "number",
                                          "string", "array",   "object"};

std::string type_of_value(const SchemaJson& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return std::floor(v.get<double>()) == v.get<double>() ? "integer" : "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

// The JSON types outputs of `s` can have; nullopt: unknown (any).
std::optional<std::set<std::string>> output_types(const SchemaJson& s, const std::string& ptr) {
  if (!s.is_object()) return std::nullopt;
  std::set<std::string> out;
  if (s.contains("const") || s.contains("enum")) {
    if (s.contains("const")) out.insert(type_of_value(s["const"]));
    if (s.contains("enum") && s["enum"].is_array() && !s.contains("const")) {
      for (const auto& v : s["enum"]) out.insert(type_of_value(v));
    }
    return out;
  }
  auto declared = declared_types(s, ptr);
  if (!declared) return std::nullopt;
  out = *declared;
  if (out.count("number")) out.insert("integer");  // 1 and 1.0 are numbers and integers
  return out;
}

// The types `s` accepts.
std::set<std::string> accepted_types(const SchemaJson& s, const std::string& ptr) {
  if (!s.is_object()) return kEveryType;
  auto declared = declared_types(s, ptr);
  if (!declared) return kEveryType;
  auto out = *declared;
  if (out.count("number")) out.insert("integer");
  return out;
}

std::optional<std::vector<SchemaJson>> value_set(const SchemaJson& s) {
  if (!s.is_object()) return std::nullopt;
  if (s.contains("const")) return std::vector<SchemaJson>{s["const"]};
  if (s.contains("enum") && s["enum"].is_array()) {
    return std::vector<SchemaJson>(s["enum"].begin(), s["enum"].end());
  }
  return std::nullopt;
}

bool names(const SchemaJson& s, const char* key, const std::string& name) {
  if (!s.is_object() || !s.contains(key)) return false;
  const auto& v = s[key];
  if (v.is_object()) return v.contains(name);
  if (v.is_array()) return std::find(v.begin(), v.end(), SchemaJson(name)) != v.end();
  return false;
}

}  // namespace

// True when no output generated for `a` is valid under `b` (a conservative yes).
bool SchemaCompiler::outputs_fail(const SchemaJson& a_in, const SchemaJson& b_in,
                                  const std::string& ptr, int depth) {
  if (depth > 16) return false;
  const SchemaJson& a = resolve(a_in, ptr);
  const SchemaJson& b = resolve(b_in, ptr);
  if (!a.is_object() || !b.is_object()) return false;
  if (a.contains("anyOf") || a.contains("oneOf") || a.contains("allOf")) return false;
  if (auto out = output_types(a, ptr)) {
    auto acc = accepted_types(b, ptr);
    bool overlap = false;
    for (const auto& t : *out) overlap = overlap || acc.count(t);
    if (!overlap) return true;
  }
  auto va = value_set(a), vb = value_set(b);
  if (va && vb) {
    bool overlap = false;
    for (const auto& x : *va) {
      for (const auto& y : *vb) overlap = overlap || x == y;
    }
    if (!overlap) return true;
  }
  auto out = output_types(a, ptr);
  bool objects_only = out && out->size() == 1 && out->count("object");
  if (!objects_only) return false;
  bool a_closed = !a.contains("additionalProperties") || a["additionalProperties"] == false;
  // b requires a member a's outputs never have.
  if (b.contains("required") && b["required"].is_array() && a_closed) {
    for (const auto& r : b["required"]) {
      if (!r.is_string()) continue;
      std::string name = r.get<std::string>();
      if (!names(a, "properties", name) && !names(a, "required", name)) return true;
    }
  }
  if (!a.contains("required") || !a["required"].is_array()) return false;
  for (const auto& r : a["required"]) {
    if (!r.is_string()) continue;
    std::string name = r.get<std::string>();
    // a always writes `name`; b forbids it, or judges it by a schema a's value fails.
    if (!names(b, "properties", name)) {
      if (b.contains("additionalProperties") && b["additionalProperties"] == false) return true;
      continue;
    }
    if (names(a, "properties", name) &&
        outputs_fail(a["properties"][name], b["properties"][name], ptr, depth + 1)) {
      return true;
    }
  }
  return false;
}

}  // namespace ps
