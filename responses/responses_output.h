#pragma once
// Responses API answers (OpenAI's `response` object), rendered from what the one pipeline
// produced: the output items of a reply (reasoning, message, function_call), the response object
// around them, usage, and the reply as the chat turn a later previous_response_id continues
// from. Pure functions, so tests check the exact shapes the openai client parses.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "openai/api_error.h"
#include "openai/openai_response.h"

namespace ps::responses {

// `prefix` and 24 random hex digits: resp_, msg_, fc_, rs_.
std::string new_id(const char* prefix);

// What every rendering of one response repeats.
struct ResponseHeader {
  std::string id;  // resp_...
  int64_t created_at = 0;
  std::string model;
  nlohmann::json echo;  // ResponsesRequest::echo
  // ResponsesRequest::namespaces: a call to a namespaced function names its namespace.
  std::map<std::string, std::string> namespaces;
};

// The state a finished reply leaves the response in: "completed", or "incomplete" when it ran
// out of max_output_tokens (or the context).
bool is_incomplete(const std::string& finish_reason);

// usage: input_tokens (cached_tokens of them read from the prefix cache), output_tokens,
// total_tokens.
nlohmann::json usage_body(const Usage& usage);

// The output items of a whole reply, in order: a reasoning item (when the reply reasoned; with
// `summary`, the reasoning is its summary too), a message (when it has text), one function_call
// per call.
nlohmann::json output_items(const ChoiceOutput& reply, bool summary,
                            const std::map<std::string, std::string>& namespaces = {});

// A function_call item (arguments as given; status left to the caller).
nlohmann::json function_call_item(const std::string& call_id, const std::string& name,
                                  const std::string& arguments,
                                  const std::map<std::string, std::string>& namespaces);

// The response object. `status`: in_progress | completed | incomplete | failed; `usage` null
// (left out) until the reply is done; `error` set for failed.
nlohmann::json response_object(const ResponseHeader& h, const std::string& status,
                               nlohmann::json output, const nlohmann::json& usage,
                               const std::optional<ApiError>& error = std::nullopt);

// The reply as the assistant chat turn a stored conversation continues with.
nlohmann::ordered_json assistant_turn(const ChoiceOutput& reply);

}  // namespace ps::responses
