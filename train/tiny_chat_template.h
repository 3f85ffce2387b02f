#pragma once
// The chat template of the shipped tiny model, and the one way training and evaluation turn an
// example into prompt text and reply text: through the project's Jinja engine, with the same
// template the server later reads from tokenizer_config.json, so train and serve prompts are
// identical by construction.
//
// Without tools the template writes exactly ChatML (`<|im_start|>role\n...<|im_end|>\n`). With
// tools it opens with a compact system block (one line per tool: name, parameter names,
// description; the model has only 512 positions) that says how a call is written; assistant
// tool calls are written in the hermes form, one per line:
//   <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>
// and tool results come back as a user turn: <tool_response>\n...\n</tool_response>.
#include <string>

#include <nlohmann/json.hpp>

#include "chat/chat_renderer.h"

namespace ps {

// Its Jinja source (contains the literal <tool_call>, from which the server picks the hermes
// tool-call parser).
const std::string& tiny_chat_template_source();

// A renderer of that template (bos <|im_start|>, eos <|im_end|>), built once.
const chat::ChatRenderer& tiny_chat_renderer();

// The added tokens a call opens and closes with: non-special, so they stay in decoded text.
inline constexpr const char* kToolCallOpen = "<tool_call>";
inline constexpr const char* kToolCallClose = "</tool_call>";

// An example split where the model takes over: `prompt` is the rendering of every message but
// the last, with the assistant generation prompt; `reply` is what the template writes for the
// last (assistant) message after that, without its closing <|im_end|> and newline.
struct RenderedChat {
  std::string prompt;
  std::string reply;
};

// `messages` in OpenAI form, ending in the assistant reply; `tools` null or OpenAI's list.
// Throws std::runtime_error when the template fails, or when the whole conversation does not
// start with the prompt or does not end the reply with <|im_end|>\n (then the reply would not
// be what greedy decoding after the server's prompt must produce).
RenderedChat render_chat(const chat::ChatRenderer& renderer, const nlohmann::ordered_json& messages,
                         const nlohmann::ordered_json& tools);

}  // namespace ps
