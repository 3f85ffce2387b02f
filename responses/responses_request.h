#pragma once
// POST /v1/responses bodies (OpenAI's Responses API), translated into the OpenAI chat body that
// /v1/chat/completions takes, so the route runs the one request pipeline: instructions -> a
// system message; input (a string, or items: messages with input_text/output_text parts,
// function_call and function_call_output items, reasoning items) -> chat messages; function
// tools (and namespaces of them) -> chat tools (other tool types are refused by name); tool_choice,
// parallel_tool_calls; text.format -> response_format; max_output_tokens -> max_completion_tokens;
// reasoning.effort
// -> the template's reasoning_effort. What the request asks of the response object (its echoed
// fields) is kept beside the chat body, and previous_response_id / store for the store
// (responses/response_store.h), which the route consults.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "openai/api_error.h"

namespace ps::responses {

struct ResponsesRequest {
  // The chat body without "messages" (the history is joined in by chat_body()); ordered, so a
  // schema's properties and a tool's parameters keep the client's order, which a grammar and a
  // template follow.
  nlohmann::ordered_json chat;
  // instructions as a system message, or null: a previous response's instructions are not
  // carried over (as OpenAI documents), so they stay out of the stored conversation.
  nlohmann::ordered_json instructions;
  // This request's input as chat messages (appended to a previous response's conversation).
  nlohmann::ordered_json input_messages = nlohmann::ordered_json::array();
  std::optional<std::string> previous_response_id;
  bool store = false;
  bool stream = false;
  // The response object's fields that echo the request (instructions, tools, tool_choice, text,
  // reasoning, temperature, top_p, max_output_tokens, parallel_tool_calls, metadata, user,
  // store, previous_response_id, truncation).
  nlohmann::json echo;
  // The namespace of each function a namespace tool holds (by function name): its calls say it.
  std::map<std::string, std::string> namespaces;
  // reasoning.summary was asked for: reasoning items carry the reasoning as their summary too.
  bool summary = false;
};

// The translation of `body`, or the client's mistake naming the Responses field.
std::variant<ResponsesRequest, ApiError> parse_responses_request(std::string_view body);

// The chat body to run: the instructions, then `history` (a stored conversation's messages,
// oldest first), then this request's input.
nlohmann::ordered_json chat_body(const ResponsesRequest& request,
                                 const nlohmann::ordered_json& history);

}  // namespace ps::responses
