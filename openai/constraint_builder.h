#pragma once
// A request's output constraint as the grammar compiler takes it: response_format /
// structured_outputs map one to one; tools become a grammar of the model's own call format
// (--tool-call-parser) whose arguments follow each function's parameter schema.
//   tool_choice required: the reply is one call (or several, with parallel_tool_calls);
//   named: one call of that function;
//   auto: free text, constrained only once the model opens a call (a lazy grammar triggered
//         by the format's start tag), so a call it starts is always well formed;
//   none: no constraint from tools.
#include <memory>
#include <optional>
#include <string>

#include "chat/tool_call_parser.h"
#include "openai/openai_request.h"
#include "structured/constraint_spec.h"
#include "structured/grammar_compiler.h"
#include "tokenizer/tokenizer.h"

namespace ps {

// nullopt: the reply is free. Throws StructuredError for a schema the grammar cannot enforce.
std::optional<ConstraintSpec> constraint_for(const OpenAiRequest& request,
                                             std::optional<chat::ToolCallFormat> format);

// The GBNF of the calls `tools` allows in `format` (lazy: what follows the start tag).
std::string tool_calls_gbnf(const ToolRequest& tools, chat::ToolCallFormat format, bool lazy);

// The server's compiler over the tokenizer's token bytes; `eos_ids` end a grammar's output and
// special tokens are never allowed unless a grammar spells their text.
std::shared_ptr<GrammarCompiler> make_grammar_compiler(const Tokenizer& tokenizer,
                                                       std::vector<int32_t> eos_ids);

// `text` as a GBNF string literal.
std::string gbnf_literal(const std::string& text);

}  // namespace ps
