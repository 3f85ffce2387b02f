#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace ps {

// What a request asks its output to match. The API layer fills it from response_format,
// structured_outputs or tools; GrammarCompiler turns it into a CompiledGrammar.
struct ConstraintSpec {
  enum class Kind { kGbnf, kJsonSchema, kJsonObject, kRegex, kChoice };
  Kind kind = Kind::kGbnf;
  std::string text;                  // GBNF, schema JSON text, or regex
  std::vector<std::string> choices;  // kChoice
  // Non-empty: lazy. The output is free text until it contains `trigger`; from then on the
  // grammar constrains the bytes after the trigger (including the rest of the token that
  // completed it).
  std::string trigger;
};

// A constraint the client got wrong or that exceeds a limit: 400 material. The message names
// the keyword, limit, rule or line:column; `param` is the request field it came from when the
// thrower knows it (the API layer may overwrite it).
struct StructuredError : std::runtime_error {
  StructuredError(const std::string& message, std::string param_name = {})
      : std::runtime_error(message), param(std::move(param_name)) {}
  std::string param;
};

}  // namespace ps
