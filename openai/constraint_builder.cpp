#include "openai/constraint_builder.h"

#include <cstdio>

#include "structured/json_schema_to_gbnf.h"

namespace ps {

std::string gbnf_literal(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::shared_ptr<GrammarCompiler> make_grammar_compiler(const Tokenizer& tokenizer,
                                                       std::vector<int32_t> eos_ids) {
  std::vector<int32_t> special;
  const auto table = tokenizer.special_table();
  for (size_t id = 0; id < table->size(); ++id) {
    if ((*table)[id]) special.push_back(static_cast<int32_t>(id));
  }
  return std::make_shared<GrammarCompiler>(tokenizer.bytes_table(), std::move(eos_ids),
                                           CompileLimits{}, std::move(special));
}

std::string tool_calls_gbnf(const ToolRequest& tools, chat::ToolCallFormat format, bool lazy) {
  using chat::ToolCallFormat;
  // The one object every format writes per call: {"name": "f", "<args key>": <f's arguments>}.
  const std::string args_key = format == ToolCallFormat::kLlama3Json ? "parameters" : "arguments";
  std::string rules, alternatives;
  for (size_t i = 0; i < tools.functions.size(); ++i) {
    const ToolFunction& f = tools.functions[i];
    if (tools.choice == ToolChoice::kNamed && f.name != tools.named) continue;
    const std::string args_rule = "tool" + std::to_string(i) + "-args";
    rules += json_schema_to_gbnf(f.parameters, args_rule) + "\n";
    if (!alternatives.empty()) alternatives += " | ";
    alternatives += gbnf_literal("{\"name\": \"" + f.name + "\", \"" + args_key + "\": ") + " " +
                    args_rule + " \"}\"";
  }
  std::string g = "call-object ::= " + alternatives + "\n";
  const bool many = tools.parallel && tools.choice != ToolChoice::kNamed;
  switch (format) {
    case ToolCallFormat::kHermes:
      // Qwen's and Hermes' templates: <tool_call>\n{...}\n</tool_call>, calls on new lines.
      g += "call-body ::= \"\\n\" call-object \"\\n</tool_call>\"\n";
      g += "call ::= \"<tool_call>\" call-body\n";
      g += std::string("root ::= ") + (lazy ? "call-body" : "call") +
           (many ? " (\"\\n\" call)*" : "") + "\n";
      break;
    case ToolCallFormat::kLlama3Json:
      // <|python_tag|> is the trigger only; without it the reply is the call object itself.
      g += std::string("root ::= call-object") + (many ? " (\"; \" call-object)*" : "") + "\n";
      break;
    case ToolCallFormat::kMistral:
      g += std::string("call-list ::= \"[\" call-object") + (many ? " (\", \" call-object)*" : "") +
           " \"]\"\n";
      g += std::string("root ::= ") + (lazy ? "call-list" : "\"[TOOL_CALLS]\" call-list") + "\n";
      break;
    case ToolCallFormat::kHarmony:
    case ToolCallFormat::kQwen3Xml:
      break;  // not constrained (constraint_for)
  }
  return g + rules;
}

std::optional<ConstraintSpec> constraint_for(const OpenAiRequest& r,
                                             std::optional<chat::ToolCallFormat> format) {
  // A harmony model (gpt-oss) writes its own calls between channel markers, which are special
  // tokens the grammar does not see; only tool_choice "auto" reaches here (api/generation.cpp),
  // and it is left unconstrained, as vLLM leaves it.
  if (r.tools.active() && format && *format != chat::ToolCallFormat::kHarmony &&
      *format != chat::ToolCallFormat::kQwen3Xml) {
    const bool lazy = r.tools.choice == ToolChoice::kAuto;
    ConstraintSpec spec;
    spec.kind = ConstraintSpec::Kind::kGbnf;
    spec.text = tool_calls_gbnf(r.tools, *format, lazy);
    if (lazy) spec.trigger = std::string(chat::tool_call_start_tag(*format));
    return spec;
  }
  using K = OutputConstraint::Kind;
  const OutputConstraint& c = r.constraint;
  ConstraintSpec spec;
  switch (c.kind) {
    case K::kNone:
      return std::nullopt;
    case K::kJsonObject:
      spec.kind = ConstraintSpec::Kind::kJsonObject;
      break;
    case K::kJsonSchema:
      spec.kind = ConstraintSpec::Kind::kJsonSchema;
      spec.text = c.text;
      break;
    case K::kRegex:
      spec.kind = ConstraintSpec::Kind::kRegex;
      spec.text = c.text;
      break;
    case K::kChoice:
      spec.kind = ConstraintSpec::Kind::kChoice;
      spec.choices = c.choices;
      break;
    case K::kGrammar:
      spec.kind = ConstraintSpec::Kind::kGbnf;
      spec.text = c.text;
      break;
  }
  return spec;
}

}  // namespace ps
