#pragma once
#include <optional>
#include <string>

#include "app/flags.h"
#include "chat/chat_renderer.h"
#include "chat/reasoning_parser.h"
#include "chat/tool_call_parser.h"

namespace ps {

// --chat-template NAME|FILE wins; else the checkpoint's own template; else chatml, with a note
// on stderr naming `command`, so the user knows to pass the flag. A template that does not
// parse is an error naming its file and line (the command exits, it never guesses).
chat::ChatRenderer chat_renderer_from_flags(const Flags& flags, const std::string& dir,
                                            const char* command);

// --reasoning-parser qwen3|deepseek_r1|harmony|none|auto (default auto: what the template calls
// for).
std::optional<chat::ReasoningStyle> reasoning_from_flags(const Flags& flags,
                                                         const chat::ChatRenderer& renderer);

// --tool-call-parser hermes|llama3_json|mistral|harmony|none|auto (default auto: the format the
// tools template writes, when its source makes it clear; none otherwise, and requests with tools
// are then refused with a message naming the flag).
std::optional<chat::ToolCallFormat> tool_parser_from_flags(const Flags& flags,
                                                           const chat::ChatRenderer& renderer);

}  // namespace ps
