#pragma once
// Messages API answers (Anthropic's shapes), rendered from what the one pipeline produced: a
// whole message, the stream's named events, and errors. Pure functions and one small state
// machine, so tests check the exact shapes the @anthropic-ai/sdk client parses.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "openai/api_error.h"
#include "openai/openai_response.h"

namespace ps::anthropic {

// "msg_" and 24 random hex digits.
std::string new_message_id();

// {"type": "error", "error": {"type", "message"}}: invalid_request_error (400, 413, 422),
// authentication_error (401), permission_error (403), not_found_error (404), request_too_large
// (413), rate_limit_error (429), overloaded_error (503), api_error (other 5xx); timeout_error
// for a 408.
nlohmann::json error_body(const ApiError& error);

// end_turn | max_tokens | stop_sequence | tool_use, from the pipeline's finish reason
// ("stop" | "length" | "tool_calls") and the stop string that ended the reply ("" if none).
std::string stop_reason(const std::string& finish_reason, const std::string& stop_string);

// usage: input_tokens (not read from the prefix cache), cache_read_input_tokens (read from it),
// cache_creation_input_tokens (0: nothing is billed for writing it), output_tokens.
nlohmann::json usage_body(const Usage& usage);

// The whole message of a non-streamed reply: thinking, text and tool_use blocks in that order.
nlohmann::json message_body(const std::string& id, const std::string& model,
                            const ChoiceOutput& reply, const std::string& stop_string,
                            const Usage& usage);

// The stream's events: message_start, then each content block opened, fed and closed in turn
// (content_block_start / _delta / _stop: thinking_delta, text_delta, input_json_delta),
// message_delta (stop_reason, usage) and message_stop. Each call returns the SSE text
// ("event: NAME\ndata: JSON\n\n") to write.
class MessageStream {
 public:
  MessageStream(std::string id, std::string model) : id_(std::move(id)), model_(std::move(model)) {}
  std::string start(const Usage& prompt_usage);
  // One delta of the reply (reasoning, text, tool-call fragments), in that order.
  std::string delta(const ChunkDelta& d);
  std::string finish(const std::string& finish_reason, const std::string& stop_string,
                     const Usage& usage);
  std::string error(const ApiError& e) const;

 private:
  enum class Block { kNone, kThinking, kText, kToolUse };
  std::string open(Block kind, nlohmann::json block);
  std::string close();
  std::string id_, model_;
  Block block_ = Block::kNone;
  int32_t index_ = -1;      // the open (or last) block's index
  int32_t tool_call_ = -1;  // the pipeline's index of the open tool_use block's call
};

}  // namespace ps::anthropic
