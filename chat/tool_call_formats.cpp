// The tool-call formats by name (tool_call_parser.h): parsing and naming a --tool-call-parser
// value, telling a chat template's format from its source, each format's start tag, and call ids.
// Split from tool_call_parser.cpp, which holds the streaming parser itself.
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "chat/tool_call_parser.h"
#include "chat/tool_call_tags.h"

namespace ps::chat {

std::optional<ToolCallFormat> parse_tool_call_format(std::string_view name) {
  if (name == "hermes") return ToolCallFormat::kHermes;
  if (name == "llama3_json") return ToolCallFormat::kLlama3Json;
  if (name == "mistral") return ToolCallFormat::kMistral;
  if (name == "harmony" || name == "openai") return ToolCallFormat::kHarmony;
  if (name == "qwen3_coder" || name == "qwen3_xml") return ToolCallFormat::kQwen3Xml;
  return std::nullopt;
}

const char* tool_call_format_name(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::kHermes:
      return "hermes";
    case ToolCallFormat::kLlama3Json:
      return "llama3_json";
    case ToolCallFormat::kMistral:
      return "mistral";
    case ToolCallFormat::kHarmony:
      return "harmony";
    case ToolCallFormat::kQwen3Xml:
      return "qwen3_coder";
  }
  return "?";
}

std::optional<ToolCallFormat> detect_tool_call_format(const std::string& source) {
  // Qwen3.5 and Qwen3-Coder write <function=...> inside <tool_call>: before hermes.
  if (source.find(kXmlFunctionOpen) != std::string::npos &&
      source.find(kHermesOpen) != std::string::npos) {
    return ToolCallFormat::kQwen3Xml;
  }
  if (source.find(kHermesOpen) != std::string::npos) return ToolCallFormat::kHermes;
  if (source.find(kMistralOpen) != std::string::npos) return ToolCallFormat::kMistral;
  if (source.find(kPythonTag) != std::string::npos) return ToolCallFormat::kLlama3Json;
  if (source.find(kHarmonyChannel) != std::string::npos) return ToolCallFormat::kHarmony;
  return std::nullopt;
}

std::string_view tool_call_start_tag(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::kHermes:
      return kHermesOpen;
    case ToolCallFormat::kLlama3Json:
      return kPythonTag;
    case ToolCallFormat::kMistral:
      return kMistralOpen;
    case ToolCallFormat::kHarmony:
      return kHarmonyChannel;
    case ToolCallFormat::kQwen3Xml:
      return kHermesOpen;
  }
  return {};
}

std::string random_tool_call_id() {
  static constexpr char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, sizeof(kAlnum) - 2);
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kAlnum[pick(rng)];
  return id;
}

}  // namespace ps::chat
