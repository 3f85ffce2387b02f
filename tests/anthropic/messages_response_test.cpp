// Messages answers: the whole message's blocks and stop reasons, usage, the error shape per
// status, and the stream's event sequence as blocks open, change kind and close.
#include "anthropic/messages_response.h"

#include <gtest/gtest.h>

#include "tests/sse_events.h"

namespace ps::anthropic {
namespace {

using nlohmann::json;

std::vector<std::pair<std::string, json>> events_of(const std::string& sse) {
  return ps::testing::named_events(sse);
}

TEST(MessagesResponse, StopReasons) {
  EXPECT_EQ(stop_reason("stop", ""), "end_turn");
  EXPECT_EQ(stop_reason("stop", "END"), "stop_sequence");
  EXPECT_EQ(stop_reason("length", ""), "max_tokens");
  EXPECT_EQ(stop_reason("tool_calls", ""), "tool_use");
}

TEST(MessagesResponse, UsageSplitsCachedInput) {
  Usage u;
  u.prompt_tokens = 10;
  u.cached_tokens = 4;
  u.completion_tokens = 3;
  EXPECT_EQ(usage_body(u), json({{"input_tokens", 6},
                                 {"cache_creation_input_tokens", 0},
                                 {"cache_read_input_tokens", 4},
                                 {"output_tokens", 3}}));
}

TEST(MessagesResponse, WholeMessageHasThinkingTextAndToolUseBlocks) {
  ChoiceOutput o;
  o.reasoning = "think";
  o.text = "Sure.";
  o.tool_calls = {{"call_1", "get_weather", R"({"city":"Paris"})"}, {"call_2", "f", "not json"}};
  o.finish_reason = "tool_calls";
  json m = message_body("msg_x", "tiny", o, "", Usage{});
  EXPECT_EQ(m["id"], "msg_x");
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["model"], "tiny");
  ASSERT_EQ(m["content"].size(), 4u);
  EXPECT_EQ(m["content"][0],
            json({{"type", "thinking"}, {"thinking", "think"}, {"signature", ""}}));
  EXPECT_EQ(m["content"][1], json({{"type", "text"}, {"text", "Sure."}}));
  EXPECT_EQ(m["content"][2]["input"], json({{"city", "Paris"}}));
  // Arguments that are not a JSON object are kept, not lost.
  EXPECT_EQ(m["content"][3]["input"], json({{"arguments", "not json"}}));
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_TRUE(m["stop_sequence"].is_null());

  ChoiceOutput plain;
  plain.text = "a";
  plain.finish_reason = "stop";
  json s = message_body("msg_y", "tiny", plain, "END", Usage{});
  EXPECT_EQ(s["stop_reason"], "stop_sequence");
  EXPECT_EQ(s["stop_sequence"], "END");
  ChoiceOutput empty;
  empty.finish_reason = "length";
  EXPECT_EQ(message_body("msg_z", "tiny", empty, "", Usage{})["content"], json::array());
}

TEST(MessagesResponse, ErrorShapePerStatus) {
  const std::vector<std::pair<int, std::string>> cases = {
      {400, "invalid_request_error"}, {401, "authentication_error"},
      {403, "permission_error"},      {404, "not_found_error"},
      {408, "timeout_error"},         {413, "request_too_large"},
      {429, "rate_limit_error"},      {500, "api_error"},
      {503, "overloaded_error"}};
  for (const auto& [status, type] : cases) {
    ApiError e;
    e.status = status;
    e.message = "why";
    EXPECT_EQ(error_body(e),
              json({{"type", "error"}, {"error", {{"type", type}, {"message", "why"}}}}))
        << status;
  }
}

TEST(MessagesResponse, MessageIdsAreFreshAndPrefixed) {
  const std::string a = new_message_id(), b = new_message_id();
  EXPECT_EQ(a.rfind("msg_", 0), 0u);
  EXPECT_EQ(a.size(), 28u);
  EXPECT_NE(a, b);
}

TEST(MessagesResponse, StreamOpensChangesAndClosesBlocks) {
  MessageStream s("msg_1", "tiny");
  Usage prompt;
  prompt.prompt_tokens = 7;
  std::string sse = s.start(prompt);
  ChunkDelta thinking;
  thinking.reasoning = "hm";
  sse += s.delta(thinking);
  ChunkDelta more;
  more.reasoning = "m";
  more.text = "Hi";
  sse += s.delta(more);
  ChunkDelta call;
  call.tool_calls = {{0, "call_1", "f", ""}};
  sse += s.delta(call);
  ChunkDelta args;
  args.tool_calls = {{0, "", "", R"({"a":)"}, {0, "", "", "1}"}};
  sse += s.delta(args);
  ChunkDelta second;
  second.tool_calls = {{1, "call_2", "g", "{}"}};
  sse += s.delta(second);
  sse += s.delta(ChunkDelta{});  // nothing new: no event
  Usage total = prompt;
  total.completion_tokens = 9;
  sse += s.finish("tool_calls", "", total);

  auto ev = events_of(sse);
  std::vector<std::string> names;
  for (auto& [name, data] : ev) names.push_back(name);
  const std::vector<std::string> want = {
      "message_start",       "content_block_start", "content_block_delta",
      "content_block_delta",  // thinking: hm, m
      "content_block_stop",  "content_block_start", "content_block_delta",
      "content_block_stop",                                                 // text: Hi
      "content_block_start", "content_block_delta", "content_block_delta",  // tool 0: {"a": 1}
      "content_block_stop",  "content_block_start", "content_block_delta",
      "content_block_stop",  // tool 1
      "message_delta",       "message_stop"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(ev[0].second["message"]["usage"]["input_tokens"], 7);
  EXPECT_EQ(ev[0].second["message"]["content"], json::array());
  EXPECT_EQ(ev[1].second["content_block"]["type"], "thinking");
  EXPECT_EQ(ev[2].second["delta"], json({{"type", "thinking_delta"}, {"thinking", "hm"}}));
  EXPECT_EQ(ev[5].second["index"], 1);
  EXPECT_EQ(ev[6].second["delta"], json({{"type", "text_delta"}, {"text", "Hi"}}));
  EXPECT_EQ(
      ev[8].second["content_block"],
      json({{"type", "tool_use"}, {"id", "call_1"}, {"name", "f"}, {"input", json::object()}}));
  EXPECT_EQ(ev[9].second["delta"],
            json({{"type", "input_json_delta"}, {"partial_json", R"({"a":)"}}));
  EXPECT_EQ(ev[12].second["index"], 3);
  EXPECT_EQ(ev[12].second["content_block"]["name"], "g");
  EXPECT_EQ(ev[15].second["delta"],
            json({{"stop_reason", "tool_use"}, {"stop_sequence", nullptr}}));
  EXPECT_EQ(ev[15].second["usage"]["output_tokens"], 9);
}

TEST(MessagesResponse, StreamErrorEvent) {
  MessageStream s("msg_1", "tiny");
  ApiError e;
  e.status = 503;
  e.message = "shutting down";
  auto ev = events_of(s.error(e));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].second["error"]["type"], "overloaded_error");
}

}  // namespace
}  // namespace ps::anthropic
