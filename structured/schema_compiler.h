#pragma once
// The JSON Schema walk behind json_schema_to_gbnf(): one GBNF rule per schema node it reaches,
// named after the node's JSON pointer; `$ref` targets are compiled once each, which is what
// makes recursive schemas finite.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "structured/gbnf_text.h"

namespace ps {

using SchemaJson = nlohmann::ordered_json;

class SchemaCompiler {
 public:
  SchemaCompiler(const SchemaJson& root, const std::string& root_rule);
  std::string compile();

  // Shared pieces, also used for json_object_gbnf().
  std::string any_value();
  std::string any_object();

 private:
  std::string visit(const SchemaJson& s, const std::string& ptr);
  std::string visit_alternatives(const SchemaJson& s, const std::string& ptr);
  std::string visit_enum(const SchemaJson& s, const std::string& ptr);
  std::string visit_typed(const SchemaJson& s, const std::string& ptr);
  std::string ref_rule(const std::string& ref, const std::string& ptr);

  std::string object_expr(const SchemaJson& s, const std::string& ptr);
  std::string array_expr(const SchemaJson& s, const std::string& ptr);
  std::string string_expr(const SchemaJson& s, const std::string& ptr);
  std::string integer_expr(const SchemaJson& s, const std::string& ptr);
  std::string number_expr(const SchemaJson& s, const std::string& ptr);
  std::string key_not_in(const std::vector<std::string>& names, const std::string& ptr);

  // allOf (and $ref beside other keywords) folded into one schema without either.
  SchemaJson merge_all_of(const SchemaJson& s, const std::string& ptr, int depth);
  // A $ref chain followed to a schema that is not a bare $ref.
  const SchemaJson& resolve(const SchemaJson& s, const std::string& ptr, int depth = 0);
  // oneOf is only sound when no output of one branch is valid under another.
  bool outputs_fail(const SchemaJson& a, const SchemaJson& b, const std::string& ptr, int depth);

  std::string string_rule();       // a whole JSON string
  std::string string_rest_rule();  // its content and closing quote
  std::string any_chars_rule();    // any JSON string content, no quote
  std::string escape_rule();       // what follows a backslash
  std::string raw_chars();         // the class of characters written as themselves
  std::string bounded_string(long lo, long hi, const std::string& ptr);
  std::string number_rule();

  const SchemaJson& root_;
  GbnfRules rules_;
  std::map<std::string, std::string> ref_rules_;  // "#/..." -> rule name
  std::map<std::string, std::string> shared_;     // "value", "string", ... -> rule name
  int depth_ = 0;
};

// Helpers shared by the compiler's files.
[[noreturn]] void schema_error(const std::string& ptr, const std::string& what);
std::string child_ptr(const std::string& ptr, const std::string& key);
// json.dumps's default form: ", " and ": " separators, UTF-8 kept.
std::string dump_json_text(const SchemaJson& v);
// The types a schema's `type` (+ nullable) names, or nullopt when it names none.
std::optional<std::set<std::string>> declared_types(const SchemaJson& s, const std::string& ptr);
bool is_annotation(const std::string& key);
// A propertyNames schema every member name meets: true, {} or {"type": "string"}.
bool names_are_any_string(const SchemaJson& v);
// "/properties/a" -> "properties-a": a readable rule name for a schema node.
std::string rule_hint(const std::string& ptr);
// The value of a count keyword of `s` (minLength, maxItems, ...; present): a non-negative
// integer up to 100000, else a schema error naming it.
long non_negative_count(const SchemaJson& s, const char* key, const std::string& ptr);

}  // namespace ps
