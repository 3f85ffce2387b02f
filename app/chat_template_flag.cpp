// The chat template and reasoning parser choice shared by `serve` and `chat`, so both render
// prompts and split replies alike.
#include "app/chat_template_flag.h"

#include <cstdio>
#include <stdexcept>

namespace ps {

chat::ChatRenderer chat_renderer_from_flags(const Flags& flags, const std::string& dir,
                                            const char* command) {
  std::string notice;
  try {
    chat::ChatRenderer r = chat::ChatRenderer::load(flags.str("chat-template", ""), dir, &notice);
    if (!notice.empty()) std::fprintf(stderr, "pagedserve %s: %s\n", command, notice.c_str());
    return r;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

std::optional<chat::ReasoningStyle> reasoning_from_flags(const Flags& flags,
                                                         const chat::ChatRenderer& renderer) {
  const std::string name = flags.str("reasoning-parser", "auto");
  if (name == "auto") return renderer.detected_reasoning_style();
  if (name == "none") return std::nullopt;
  if (auto style = chat::parse_reasoning_style(name)) return style;
  throw UsageError("--reasoning-parser " + name +
                   ": unknown; use qwen3, deepseek_r1, harmony, none or auto");
}

std::optional<chat::ToolCallFormat> tool_parser_from_flags(const Flags& flags,
                                                           const chat::ChatRenderer& renderer) {
  const std::string name = flags.str("tool-call-parser", "auto");
  if (name == "auto") return chat::detect_tool_call_format(renderer.tools_source());
  if (name == "none") return std::nullopt;
  if (auto format = chat::parse_tool_call_format(name)) return format;
  throw UsageError("--tool-call-parser " + name +
                   ": unknown; use hermes, llama3_json, mistral, harmony, none or auto");
}

}  // namespace ps
