#pragma once
// A streamed response's events (OpenAI's Responses stream): response.created and
// response.in_progress; then each output item added, fed and done in turn (a reasoning item's
// reasoning_text deltas, a message's output_text deltas, a function_call's arguments deltas),
// each with its content part opened and closed; then response.completed, response.incomplete
// or response.failed carrying the whole response. Every event has a sequence_number counting
// from 0. The stream also keeps the reply it streamed, so the route can store it.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "openai/api_error.h"
#include "openai/openai_response.h"
#include "responses/responses_output.h"

namespace ps::responses {

class ResponseEvents {
 public:
  ResponseEvents(ResponseHeader header, bool summary) : h_(std::move(header)), summary_(summary) {}

  // response.created and response.in_progress; each call returns the SSE text to write
  // ("event: TYPE\ndata: JSON\n\n" per event).
  std::string start();
  // One delta of the reply (reasoning, text, tool-call fragments), in that order.
  std::string delta(const ChunkDelta& d);
  // The open item done, then response.completed (or .incomplete, by the finish reason).
  std::string finish(const std::string& finish_reason, const Usage& usage);
  // The open item done, then response.failed with the error.
  std::string fail(const ApiError& e);

  // The whole response the last event carried (null before finish or fail).
  const nlohmann::json& final_response() const { return final_; }
  // The reply as streamed: text, reasoning and calls.
  const ChoiceOutput& reply() const { return reply_; }

 private:
  enum class Item { kNone, kReasoning, kMessage, kFunctionCall };
  std::string event(const char* type, nlohmann::json fields);
  std::string open(Item kind, nlohmann::json item);
  std::string close();

  ResponseHeader h_;
  bool summary_;
  int64_t sequence_ = 0;
  Item open_ = Item::kNone;
  nlohmann::json item_;      // the open item as output_item.done will carry it
  int32_t call_index_ = -1;  // the pipeline's index of the open function_call's call
  nlohmann::json output_ = nlohmann::json::array();  // the items done so far
  ChoiceOutput reply_;
  nlohmann::json final_;
};

}  // namespace ps::responses
