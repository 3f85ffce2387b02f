#pragma once
// The request fields that shape what the model may write: tools and tool_choice (chat), and
// response_format / structured_outputs (vLLM's guided decoding, also under its older guided_*
// names). Parsed and validated here; turned into a grammar by api/constraint_builder.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ps {

struct ToolFunction {
  std::string name;
  nlohmann::ordered_json parameters;  // a JSON schema; absent: {"type": "object"}
};

enum class ToolChoice { kNone, kAuto, kRequired, kNamed };

struct ToolRequest {
  std::vector<ToolFunction> functions;  // empty: the request has no tools
  ToolChoice choice = ToolChoice::kNone;
  std::string named;  // kNamed: the function the model must call
  bool parallel = true;
  bool active() const { return !functions.empty() && choice != ToolChoice::kNone; }
};

// What the model's whole reply must match.
struct OutputConstraint {
  enum class Kind { kNone, kJsonObject, kJsonSchema, kRegex, kChoice, kGrammar };
  Kind kind = Kind::kNone;
  std::string text;                  // kJsonSchema: the schema (JSON text); kRegex; kGrammar (GBNF)
  std::vector<std::string> choices;  // kChoice
  std::string param;                 // the field it came from, for errors about it
};

// Throw json_fields::Reject naming the field (call inside json_fields::guarded).
// `tools`: OpenAI's [{"type": "function", "function": {"name", "description", "parameters",
// "strict"}}]; names [a-zA-Z0-9_-]{1,64}, unique. tool_choice: "none" | "auto" | "required" |
// {"type": "function", "function": {"name"}} naming one of them; default "auto" with tools.
// Legacy `functions`/`function_call` are refused with the new names to use.
// `raw` is the same body as text: parameters keep the client's property order (the grammar
// writes members in schema order; nlohmann::json would sort them).
ToolRequest parse_tool_request(const nlohmann::json& body, std::string_view raw);
// At most one of response_format (non-text), structured_outputs {json | regex | choice |
// grammar | json_object}, guided_json, guided_regex, guided_choice, guided_grammar.
// A schema's text keeps the client's property order (read again from `raw`).
OutputConstraint parse_output_constraint(const nlohmann::json& body, std::string_view raw);

}  // namespace ps
