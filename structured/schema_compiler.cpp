// The structural walk of SchemaCompiler (schema_compiler.h): keyword checks, alternatives
// (anyOf/oneOf), enum/const and the dispatch on type, plus the helpers the compiler's files share.
// The shared string/number/any-value rules are schema_base_rules.cpp's, $ref is schema_refs.cpp's.
#include "structured/schema_compiler.h"

#include <cmath>
#include <limits>

#include "structured/char_set.h"
#include "structured/constraint_spec.h"
#include "structured/gbnf_text.h"
#include "structured/integer_range.h"
#include "structured/json_formats.h"
#include "structured/number_range.h"
#include "structured/regex_gbnf.h"

namespace ps {
namespace {

const std::set<std::string> kAnnotations = {
    "title",      "description",     "examples",        "default",  "$schema",
    "$id",        "$comment",        "$anchor",         "readOnly", "writeOnly",
    "deprecated", "contentEncoding", "contentMediaType"};

// Keywords the walk reads; anything neither here nor an annotation is refused.
const std::set<std::string> kEnforced = {"type",
                                         "enum",
                                         "const",
                                         "nullable",
                                         "properties",
                                         "required",
                                         "additionalProperties",
                                         "items",
                                         "prefixItems",
                                         "additionalItems",
                                         "minItems",
                                         "maxItems",
                                         "minLength",
                                         "maxLength",
                                         "pattern",
                                         "format",
                                         "minimum",
                                         "maximum",
                                         "exclusiveMinimum",
                                         "exclusiveMaximum",
                                         "anyOf",
                                         "oneOf",
                                         "allOf",
                                         "$ref",
                                         "$defs",
                                         "definitions",
                                         "uniqueItems"};

const std::set<std::string> kAllTypes = {"null",   "boolean", "integer", "number",
                                         "string", "array",   "object"};

// Keywords that say which type a schema without `type` is about.
const std::map<std::string, std::string> kTypeOfKeyword = {{"properties", "object"},
                                                           {"required", "object"},
                                                           {"additionalProperties", "object"},
                                                           {"items", "array"},
                                                           {"prefixItems", "array"},
                                                           {"additionalItems", "array"},
                                                           {"minItems", "array"},
                                                           {"maxItems", "array"},
                                                           {"minLength", "string"},
                                                           {"maxLength", "string"},
                                                           {"pattern", "string"},
                                                           {"format", "string"},
                                                           {"minimum", "number"},
                                                           {"maximum", "number"},
                                                           {"exclusiveMinimum", "number"},
                                                           {"exclusiveMaximum", "number"}};

}  // namespace

long non_negative_count(const SchemaJson& s, const char* key, const std::string& ptr) {
  const auto& v = s.at(key);
  if (!v.is_number_integer() || v.get<long long>() < 0) {
    schema_error(child_ptr(ptr, key), std::string("'") + key + "' must be a non-negative integer");
  }
  if (v.get<long long>() > 100000) {
    schema_error(child_ptr(ptr, key), std::string("'") + key + "' over 100000 is not supported");
  }
  return static_cast<long>(v.get<long long>());
}

std::string rule_hint(const std::string& ptr) {
  std::string h;
  for (char c : ptr.empty() ? std::string("/schema") : ptr) {
    h += c == '/' ? '-' : c;
  }
  if (!h.empty() && h[0] == '-') h.erase(0, 1);
  if (h.size() > 48) h = h.substr(h.size() - 48);
  return h;
}

namespace {}  // namespace

bool is_annotation(const std::string& key) {
  return kAnnotations.count(key) != 0;
}

bool names_are_any_string(const SchemaJson& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (!v.is_object()) return false;
  for (const auto& [key, value] : v.items()) {
    if (is_annotation(key)) continue;
    if (key != "type" || value != "string") return false;
  }
  return true;
}

void schema_error(const std::string& ptr, const std::string& what) {
  throw StructuredError(what + " (at JSON pointer '" + (ptr.empty() ? "" : ptr) + "')",
                        ptr.empty() ? "/" : ptr);
}

std::string dump_json_text(const SchemaJson& v) {
  if (v.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, x] : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += SchemaJson(k).dump() + ": " + dump_json_text(x);
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + dump_json_text(v[i]);
    return out + "]";
  }
  return v.dump();
}

std::optional<std::set<std::string>> declared_types(const SchemaJson& s, const std::string& ptr) {
  if (!s.contains("type")) return std::nullopt;
  std::set<std::string> types;
  const auto& t = s["type"];
  auto add = [&](const SchemaJson& name) {
    if (!name.is_string() || !kAllTypes.count(name.get<std::string>())) {
      schema_error(child_ptr(ptr, "type"), "unknown type " + name.dump());
    }
    types.insert(name.get<std::string>());
  };
  if (t.is_array()) {
    if (t.empty()) schema_error(child_ptr(ptr, "type"), "an empty type list matches nothing");
    for (const auto& x : t) add(x);
  } else {
    add(t);
  }
  if (s.contains("nullable")) {
    if (!s["nullable"].is_boolean()) schema_error(child_ptr(ptr, "nullable"), "must be a boolean");
    if (s["nullable"].get<bool>()) types.insert("null");
  }
  return types;
}

SchemaCompiler::SchemaCompiler(const SchemaJson& root, const std::string& root_rule)
    : root_(root), rules_(root_rule) {}

std::string SchemaCompiler::compile() {
  rules_.define_root(visit(root_, ""));
  return rules_.text();
}

std::string SchemaCompiler::visit(const SchemaJson& s, const std::string& ptr) {
  if (++depth_ > 200) schema_error(ptr, "schema nested too deeply (over 200 levels)");
  struct Leave {
    int& d;
    ~Leave() { --d; }
  } leave{depth_};

  if (s.is_boolean()) {
    if (s.get<bool>()) return any_value();
    schema_error(ptr, "the schema false matches nothing");
  }
  if (!s.is_object()) schema_error(ptr, "a schema must be an object or a boolean");
  bool assertions_beside_ref = false;
  for (const auto& [key, value] : s.items()) {
    if (is_annotation(key)) continue;
    // Every member name is a string: propertyNames that says only that (Claude Code's tool
    // schemas do) holds of every object, and needs no enforcing.
    if (key == "propertyNames" && names_are_any_string(value)) continue;
    if (!kEnforced.count(key)) {
      schema_error(child_ptr(ptr, key), "the JSON Schema keyword '" + key + "' is not supported");
    }
    if (key != "$ref" && key != "$defs" && key != "definitions") assertions_beside_ref = true;
  }
  if (s.contains("uniqueItems") && !(s["uniqueItems"].is_boolean() && !s["uniqueItems"])) {
    schema_error(child_ptr(ptr, "uniqueItems"), "'uniqueItems': true is not supported");
  }
  if (s.contains("allOf") || (s.contains("$ref") && assertions_beside_ref)) {
    SchemaJson merged = merge_all_of(s, ptr, 0);
    return visit(merged, ptr);
  }
  if (s.contains("$ref"))
    return ref_rule(s["$ref"].is_string() ? s["$ref"].get<std::string>() : "", ptr);
  std::string expr;
  if (s.contains("anyOf") || s.contains("oneOf")) {
    expr = visit_alternatives(s, ptr);
  } else if (s.contains("enum") || s.contains("const")) {
    expr = visit_enum(s, ptr);
  } else {
    expr = visit_typed(s, ptr);
  }
  return rules_.add(rule_hint(ptr), expr);
}

std::string SchemaCompiler::visit_alternatives(const SchemaJson& s, const std::string& ptr) {
  bool any_of = s.contains("anyOf");
  const char* key = any_of ? "anyOf" : "oneOf";
  const auto& branches = s[key];
  if (!branches.is_array() || branches.empty()) {
    schema_error(child_ptr(ptr, key), std::string("'") + key + "' must be a non-empty array");
  }
  // Keywords beside anyOf/oneOf apply to every branch: each branch becomes allOf [rest, branch].
  SchemaJson rest = SchemaJson::object();
  for (const auto& [k, v] : s.items()) {
    if (k != key && !is_annotation(k) && k != "$defs" && k != "definitions") rest[k] = v;
  }
  std::vector<SchemaJson> merged;
  for (size_t i = 0; i < branches.size(); ++i) {
    std::string bptr = child_ptr(child_ptr(ptr, key), std::to_string(i));
    if (rest.empty()) {
      merged.push_back(branches[i]);
    } else {
      SchemaJson both = SchemaJson::object();
      both["allOf"] = SchemaJson::array({rest, branches[i]});
      merged.push_back(merge_all_of(both, bptr, 0));
    }
  }
  if (!any_of) {
    for (size_t i = 0; i < merged.size(); ++i) {
      for (size_t j = i + 1; j < merged.size(); ++j) {
        std::string optr = child_ptr(ptr, "oneOf");
        if (!outputs_fail(merged[i], merged[j], optr, 0) ||
            !outputs_fail(merged[j], merged[i], optr, 0)) {
          schema_error(optr, "'oneOf' branches " + std::to_string(i) + " and " + std::to_string(j) +
                                 " may both match one value, so 'exactly one' cannot be "
                                 "enforced; use anyOf, or tell them apart by type, const/enum or "
                                 "required properties");
        }
      }
    }
  }
  std::vector<std::string> alts;
  for (size_t i = 0; i < merged.size(); ++i) {
    alts.push_back(visit(merged[i], child_ptr(child_ptr(ptr, key), std::to_string(i))));
  }
  return gbnf_alternatives(alts);
}

std::string SchemaCompiler::visit_enum(const SchemaJson& s, const std::string& ptr) {
  for (const auto& [k, v] : s.items()) {
    if (k != "enum" && k != "const" && k != "type" && k != "nullable" && !is_annotation(k) &&
        k != "$defs" && k != "definitions") {
      schema_error(child_ptr(ptr, k), "'" + k + "' beside enum/const is not supported");
    }
  }
  std::vector<SchemaJson> values;
  if (s.contains("const")) values.push_back(s["const"]);
  if (s.contains("enum")) {
    if (!s["enum"].is_array()) schema_error(child_ptr(ptr, "enum"), "'enum' must be an array");
    for (const auto& v : s["enum"]) {
      if (!s.contains("const") || v == s["const"]) values.push_back(v);
    }
    if (s.contains("const")) values.erase(values.begin());
  }
  auto types = declared_types(s, ptr);
  std::vector<std::string> alts;
  for (const auto& v : values) {
    if (types) {
      std::string t = v.is_null()             ? "null"
                      : v.is_boolean()        ? "boolean"
                      : v.is_number_integer() ? "integer"
                      : v.is_number()         ? "number"
                      : v.is_string()         ? "string"
                      : v.is_array()          ? "array"
                                              : "object";
      bool ok = types->count(t) || (t == "integer" && types->count("number")) ||
                (t == "number" && types->count("integer") &&
                 std::floor(v.get<double>()) == v.get<double>());
      if (!ok) continue;
    }
    alts.push_back(gbnf_literal(dump_json_text(v)));
  }
  if (alts.empty()) schema_error(ptr, "no value of 'enum'/'const' fits the schema's 'type'");
  return gbnf_alternatives(alts);
}

std::string SchemaCompiler::visit_typed(const SchemaJson& s, const std::string& ptr) {
  std::set<std::string> types;
  if (auto declared = declared_types(s, ptr)) {
    types = *declared;
  } else {
    for (const auto& [k, v] : s.items()) {
      auto it = kTypeOfKeyword.find(k);
      if (it != kTypeOfKeyword.end()) types.insert(it->second);
    }
    if (types.empty()) return any_value();
    if (s.contains("nullable") && s["nullable"] == true) types.insert("null");
  }
  if (types.count("number") && types.count("integer")) types.erase("integer");
  std::vector<std::string> alts;
  // A fixed order, so equal schemas give equal text.
  for (const char* t : {"object", "array", "string", "integer", "number", "boolean", "null"}) {
    if (!types.count(t)) continue;
    std::string name = t;
    if (name == "object") alts.push_back(object_expr(s, ptr));
    if (name == "array") alts.push_back(array_expr(s, ptr));
    if (name == "string") alts.push_back(string_expr(s, ptr));
    if (name == "integer") alts.push_back(integer_expr(s, ptr));
    if (name == "number") alts.push_back(number_expr(s, ptr));
    if (name == "boolean") alts.push_back("(\"true\" | \"false\")");
    if (name == "null") alts.push_back("\"null\"");
  }
  return gbnf_alternatives(alts);
}

}  // namespace ps
