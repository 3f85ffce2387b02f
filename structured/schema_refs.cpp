// `$ref` and JSON pointers for SchemaCompiler (schema_compiler.h): escaping a key into a pointer
// token, decoding a local "#/..." reference into a pointer, compiling each reference target once
// (ref_rule, which is what makes recursive schemas finite) and following $ref chains (resolve).
// Split from schema_compiler.cpp, which holds the structural walk.

#include "structured/constraint_spec.h"
#include "structured/schema_compiler.h"

namespace ps {
namespace {

std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "#/$defs/a%20b" -> the JSON pointer "/$defs/a b".
std::string ref_pointer(const std::string& ref, const std::string& ptr) {
  if (ref.empty() || ref[0] != '#') {
    schema_error(child_ptr(ptr, "$ref"),
                 "only local references ('#/$defs/...') are supported, not '" + ref + "'");
  }
  std::string pointer;
  for (size_t i = 1; i < ref.size(); ++i) {
    if (ref[i] != '%') {
      pointer += ref[i];
      continue;
    }
    int hi = i + 2 < ref.size() ? hex_digit(ref[i + 1]) : -1;
    int lo = hi >= 0 ? hex_digit(ref[i + 2]) : -1;
    if (lo < 0) schema_error(child_ptr(ptr, "$ref"), "bad percent-escape in '" + ref + "'");
    pointer += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (!pointer.empty() && pointer[0] != '/') {
    schema_error(child_ptr(ptr, "$ref"), "'$ref': '" + ref +
                                             "' is not a JSON pointer ($anchor "
                                             "names are not supported)");
  }
  return pointer;
}

}  // namespace

std::string child_ptr(const std::string& ptr, const std::string& key) {
  return ptr + "/" + escape_pointer_token(key);
}

std::string SchemaCompiler::ref_rule(const std::string& ref, const std::string& ptr) {
  auto it = ref_rules_.find(ref);
  if (it != ref_rules_.end()) return it->second;
  std::string pointer = ref_pointer(ref, ptr);
  const SchemaJson* target = nullptr;
  try {
    target = &root_.at(SchemaJson::json_pointer(pointer));
  } catch (const std::exception&) {
    schema_error(child_ptr(ptr, "$ref"), "'$ref': '" + ref + "' points at nothing in the schema");
  }
  std::string name = rules_.reserve(rule_hint(pointer.empty() ? "/ref-root" : pointer));
  ref_rules_[ref] = name;
  rules_.define(name, visit(*target, pointer));
  return name;
}

const SchemaJson& SchemaCompiler::resolve(const SchemaJson& s, const std::string& ptr, int depth) {
  if (depth > 32) schema_error(ptr, "'$ref' chain longer than 32 (a reference loop?)");
  if (!s.is_object() || !s.contains("$ref")) return s;
  if (!s["$ref"].is_string()) schema_error(child_ptr(ptr, "$ref"), "'$ref' must be a string");
  std::string ref = s["$ref"].get<std::string>();
  std::string pointer = ref_pointer(ref, ptr);
  try {
    return resolve(root_.at(SchemaJson::json_pointer(pointer)), pointer, depth + 1);
  } catch (const StructuredError&) {
    throw;
  } catch (const std::exception&) {
    schema_error(child_ptr(ptr, "$ref"), "'$ref': '" + ref + "' points at nothing in the schema");
  }
}
}  // namespace ps
