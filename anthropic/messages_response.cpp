#include "anthropic/messages_response.h"

#include <random>

namespace ps::anthropic {
namespace {

using nlohmann::json;

std::string sse(const char* name, const json& data) {
  return std::string("event: ") + name +
         "\ndata: " + data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

// A call's arguments as the input object; text that is not a JSON object (a model that wrote
// something else) is kept under "arguments" rather than lost.
json input_of(const std::string& arguments) {
  json v = json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  if (v.is_object()) return v;
  return {{"arguments", arguments}};
}

}  // namespace

std::string new_message_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string id = "msg_";
  for (int i = 0; i < 24; ++i) id += hex[rng() % 16];
  return id;
}

json error_body(const ApiError& e) {
  std::string type = "invalid_request_error";
  if (e.status == 401) type = "authentication_error";
  if (e.status == 403) type = "permission_error";
  if (e.status == 404) type = "not_found_error";
  if (e.status == 408) type = "timeout_error";
  if (e.status == 413) type = "request_too_large";
  if (e.status == 429) type = "rate_limit_error";
  if (e.status == 503) type = "overloaded_error";
  if (e.status >= 500 && e.status != 503) type = "api_error";
  return {{"type", "error"}, {"error", {{"type", type}, {"message", e.message}}}};
}

std::string stop_reason(const std::string& finish_reason, const std::string& stop_string) {
  if (finish_reason == "length") return "max_tokens";
  if (finish_reason == "tool_calls") return "tool_use";
  if (!stop_string.empty()) return "stop_sequence";
  return "end_turn";
}

json usage_body(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens - u.cached_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", u.cached_tokens},
          {"output_tokens", u.completion_tokens}};
}

json message_body(const std::string& id, const std::string& model, const ChoiceOutput& reply,
                  const std::string& stop_string, const Usage& usage) {
  json content = json::array();
  if (reply.reasoning && !reply.reasoning->empty()) {
    // No signature: nothing here signs reasoning; the SDK types accept an empty one.
    content.push_back({{"type", "thinking"}, {"thinking", *reply.reasoning}, {"signature", ""}});
  }
  if (!reply.text.empty()) content.push_back({{"type", "text"}, {"text", reply.text}});
  for (const chat::ToolCall& c : reply.tool_calls) {
    content.push_back(
        {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input_of(c.arguments)}});
  }
  const std::string reason = stop_reason(reply.finish_reason, stop_string);
  return {{"id", id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", model},
          {"content", std::move(content)},
          {"stop_reason", reason},
          {"stop_sequence", reason == "stop_sequence" ? json(stop_string) : json(nullptr)},
          {"usage", usage_body(usage)}};
}

std::string MessageStream::start(const Usage& prompt_usage) {
  json message = {{"id", id_},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", model_},
                  {"content", json::array()},
                  {"stop_reason", nullptr},
                  {"stop_sequence", nullptr},
                  {"usage", usage_body(prompt_usage)}};
  return sse("message_start", {{"type", "message_start"}, {"message", std::move(message)}});
}

std::string MessageStream::open(Block kind, json block) {
  std::string out = close();
  block_ = kind;
  ++index_;
  return out + sse("content_block_start", {{"type", "content_block_start"},
                                           {"index", index_},
                                           {"content_block", std::move(block)}});
}

std::string MessageStream::close() {
  if (block_ == Block::kNone) return "";
  block_ = Block::kNone;
  return sse("content_block_stop", {{"type", "content_block_stop"}, {"index", index_}});
}

std::string MessageStream::delta(const ChunkDelta& d) {
  std::string out;
  auto emit = [&](const json& delta) {
    out += sse("content_block_delta",
               {{"type", "content_block_delta"}, {"index", index_}, {"delta", delta}});
  };
  if (!d.reasoning.empty()) {
    if (block_ != Block::kThinking) {
      out += open(Block::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
    }
    emit({{"type", "thinking_delta"}, {"thinking", d.reasoning}});
  }
  if (!d.text.empty()) {
    if (block_ != Block::kText) out += open(Block::kText, {{"type", "text"}, {"text", ""}});
    emit({{"type", "text_delta"}, {"text", d.text}});
  }
  for (const chat::ToolCallDelta& c : d.tool_calls) {
    if (block_ != Block::kToolUse || c.index != tool_call_) {
      tool_call_ = c.index;
      out +=
          open(Block::kToolUse,
               {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", json::object()}});
    }
    if (!c.arguments.empty()) emit({{"type", "input_json_delta"}, {"partial_json", c.arguments}});
  }
  return out;
}

std::string MessageStream::finish(const std::string& finish_reason, const std::string& stop_string,
                                  const Usage& usage) {
  const std::string reason = stop_reason(finish_reason, stop_string);
  std::string out = close();
  out += sse("message_delta",
             {{"type", "message_delta"},
              {"delta",
               {{"stop_reason", reason},
                {"stop_sequence", reason == "stop_sequence" ? json(stop_string) : json(nullptr)}}},
              {"usage", usage_body(usage)}});
  out += sse("message_stop", {{"type", "message_stop"}});
  return out;
}

std::string MessageStream::error(const ApiError& e) const {
  return sse("error", error_body(e));
}

}  // namespace ps::anthropic
