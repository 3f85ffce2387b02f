#include "structured/json_schema_to_gbnf.h"

#include "structured/constraint_spec.h"
#include "structured/gbnf_text.h"
#include "structured/schema_compiler.h"

namespace ps {

std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                const std::string& root_rule) {
  return SchemaCompiler(schema, root_rule).compile();
}

std::string json_schema_to_gbnf(const nlohmann::json& schema, const std::string& root_rule) {
  return json_schema_to_gbnf(nlohmann::ordered_json::parse(schema.dump()), root_rule);
}

std::string json_schema_to_gbnf_text(std::string_view schema_json, const std::string& root_rule) {
  nlohmann::ordered_json schema;
  try {
    schema = nlohmann::ordered_json::parse(schema_json);
  } catch (const nlohmann::json::parse_error& e) {
    throw StructuredError(std::string("the JSON schema is not valid JSON: ") + e.what(), "schema");
  }
  return json_schema_to_gbnf(schema, root_rule);
}

std::string json_object_gbnf(const std::string& root_rule) {
  nlohmann::ordered_json any_object = {{"type", "object"}, {"additionalProperties", true}};
  return json_schema_to_gbnf(any_object, root_rule);
}

std::string choice_gbnf(const std::vector<std::string>& choices, const std::string& root_rule) {
  if (choices.empty()) throw StructuredError("choice needs at least one string", "choice");
  GbnfRules rules(root_rule);
  std::string body;
  for (size_t i = 0; i < choices.size(); ++i) {
    std::string lit;
    try {
      lit = gbnf_literal(choices[i]);
    } catch (const std::invalid_argument&) {
      throw StructuredError("choice " + std::to_string(i) + " is not valid UTF-8", "choice");
    }
    body += (i ? " | " : "") + lit;
  }
  rules.define_root(body);
  return rules.text();
}

}  // namespace ps
