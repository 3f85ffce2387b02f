#pragma once
// POST /v1/messages and /v1/messages/count_tokens bodies (Anthropic's Messages API), translated
// into the OpenAI chat body that /v1/chat/completions takes, so both routes run one pipeline:
// system -> a system message; text blocks -> text parts; an assistant's tool_use blocks ->
// tool_calls; a user's tool_result blocks -> tool messages (before the turn's text);
// tools[].input_schema -> function parameters; tool_choice auto|any|tool|none -> auto|required|
// the named function|none; stop_sequences -> stop; thinking enabled|disabled -> the template's
// enable_thinking. What Messages requires that chat does not (max_tokens) and what this server
// cannot do (images, server tools) are errors naming the Messages field.
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "openai/api_error.h"

namespace ps::anthropic {

enum class MessagesRoute { kCreate, kCountTokens };

// The OpenAI chat body for `body`, or the client's mistake. kCountTokens does not require
// max_tokens (count_tokens takes none) and never streams.
std::variant<nlohmann::json, ApiError> translate_messages_request(std::string_view body,
                                                                  MessagesRoute route);

}  // namespace ps::anthropic
