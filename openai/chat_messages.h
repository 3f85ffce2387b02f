#pragma once
// The chat part of a request body (POST /v1/chat/completions and /tokenize with messages):
// messages, validated but passed to the chat template as the client sent them (key order
// kept, so tojson prints what was sent), and the fields that steer the template.
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "chat/chat_prompt.h"
#include "openai/api_error.h"

namespace ps {

// `body` is the parsed object (already checked by json_fields::parse_object); `raw` is the
// same text, read again in order. Throws json_fields::Reject naming the field:
//   - roles system, developer (OpenAI's newer name for system, passed as system), user,
//     assistant, tool; content a string, an array of text parts, or null/absent for an
//     assistant turn; name, tool_call_id strings; tool_calls an array; reasoning_content a
//     string;
//   - chat_template_kwargs an object that does not set the request's own fields;
//   - add_generation_prompt (default true) and continue_final_message (vLLM's rules: not
//     both, and only when the final message is the assistant's);
//   - documents an array.
chat::ChatPromptRequest parse_chat_prompt_request(const nlohmann::json& body, std::string_view raw);

}  // namespace ps

namespace ps::chat {
class ChatRenderer;
}

namespace ps {

// The prompt text for `request`, or the 400 a template failure is (the template's own
// raise_exception message included, with its line).
std::variant<std::string, ApiError> render_prompt(const chat::ChatRenderer& renderer,
                                                  const chat::ChatPromptRequest& request);

}  // namespace ps
