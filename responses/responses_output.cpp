#include "responses/responses_output.h"

#include <chrono>
#include <random>

namespace ps::responses {

using nlohmann::json;
using nlohmann::ordered_json;

std::string new_id(const char* prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += hex[rng() % 16];
  return id;
}

bool is_incomplete(const std::string& finish_reason) {
  return finish_reason == "length";
}

json usage_body(const Usage& u) {
  return {{"input_tokens", u.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", u.cached_tokens}, {"cache_write_tokens", 0}}},
          {"output_tokens", u.completion_tokens},
          // The reasoning parser splits text, not tokens: a reasoning token count is not known.
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

json function_call_item(const std::string& call_id, const std::string& name,
                        const std::string& arguments,
                        const std::map<std::string, std::string>& namespaces) {
  json item = {{"type", "function_call"},
               {"id", new_id("fc_")},
               {"call_id", call_id},
               {"name", name},
               {"arguments", arguments}};
  if (auto it = namespaces.find(name); it != namespaces.end()) item["namespace"] = it->second;
  return item;
}

json output_items(const ChoiceOutput& reply, bool summary,
                  const std::map<std::string, std::string>& namespaces) {
  json items = json::array();
  const char* status = is_incomplete(reply.finish_reason) ? "incomplete" : "completed";
  if (reply.reasoning && !reply.reasoning->empty()) {
    json sum = json::array();
    if (summary) sum.push_back({{"type", "summary_text"}, {"text", *reply.reasoning}});
    items.push_back({{"type", "reasoning"},
                     {"id", new_id("rs_")},
                     {"summary", std::move(sum)},
                     {"content", {{{"type", "reasoning_text"}, {"text", *reply.reasoning}}}},
                     {"status", status}});
  }
  if (!reply.text.empty() || reply.tool_calls.empty()) {
    items.push_back({{"type", "message"},
                     {"id", new_id("msg_")},
                     {"role", "assistant"},
                     {"status", status},
                     {"content",
                      {{{"type", "output_text"},
                        {"text", reply.text},
                        {"annotations", json::array()},
                        {"logprobs", json::array()}}}}});
  }
  for (const chat::ToolCall& c : reply.tool_calls) {
    json item = function_call_item(c.id, c.name, c.arguments, namespaces);
    item["status"] = "completed";
    items.push_back(std::move(item));
  }
  return items;
}

json response_object(const ResponseHeader& h, const std::string& status, json output,
                     const json& usage, const std::optional<ApiError>& error) {
  json r = h.echo;
  r["id"] = h.id;
  r["object"] = "response";
  r["created_at"] = h.created_at;
  r["status"] = status;
  r["completed_at"] = nullptr;
  if (status == "completed") {
    r["completed_at"] = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  }
  r["model"] = h.model;
  r["output"] = std::move(output);
  r["error"] = nullptr;
  if (error) r["error"] = {{"code", "server_error"}, {"message", error->message}};
  r["incomplete_details"] = nullptr;
  if (status == "incomplete") r["incomplete_details"] = {{"reason", "max_output_tokens"}};
  // Until the reply is done there is no usage; OpenAI's schema has no null for it: left out.
  if (!usage.is_null()) r["usage"] = usage;
  return r;
}

ordered_json assistant_turn(const ChoiceOutput& reply) {
  ordered_json turn = {{"role", "assistant"}, {"content", reply.text}};
  if (!reply.tool_calls.empty()) {
    if (reply.text.empty()) turn["content"] = nullptr;
    ordered_json calls = ordered_json::array();
    for (const chat::ToolCall& c : reply.tool_calls) {
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    turn["tool_calls"] = std::move(calls);
  }
  return turn;
}

}  // namespace ps::responses
