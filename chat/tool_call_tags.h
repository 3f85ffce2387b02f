#pragma once
// The tags the tool-call formats write (tool_call_parser.h), shared by the format functions
// (tool_call_formats.cpp) and the streaming parser (tool_call_parser.cpp). Internal to chat/.
#include <string_view>

namespace ps::chat {

inline constexpr std::string_view kHermesOpen = "<tool_call>";
inline constexpr std::string_view kHermesClose = "</tool_call>";
inline constexpr std::string_view kPythonTag = "<|python_tag|>";
inline constexpr std::string_view kMistralOpen = "[TOOL_CALLS]";
inline constexpr std::string_view kHarmonyChannel = "<|channel|>";
inline constexpr std::string_view kXmlFunctionOpen = "<function=";

}  // namespace ps::chat
